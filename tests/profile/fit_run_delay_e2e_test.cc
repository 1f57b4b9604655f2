// train.computation_time of real Python loops profiled by `dlio-run profile`, quiet and beside 4
// CPU hogs: the tracer records each thread's run-queue delay and fit leaves the delay within a
// pause out of it, so both runs fit the same compute (docs/profiling.md). One loop computes 10 ms
// of CPU time per batch in a busy loop (on a loaded host it waits for a CPU inside it), the other
// sleeps 10 ms (it waits only to be woken). Without the delays (DLIO_PRELOAD_NO_RUN_DELAY=1) the
// busy loop fitted 0.026 s at load 28 and 0.136 s beside the hogs.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dlio/config.h"
#include "profile/cpu_hog.h"
#include "profile/fit_closed_loop.h"
#include "test_util.h"

namespace dlio {
namespace {

using testing::RunCommand;
using testing::TempDir;

constexpr int kSkipped = 77;  // the ctest SKIP_RETURN_CODE of this executable

// 8 npz files of 100 KB read whole by np.load, 3 passes, `compute` after each batch of 2.
std::string Loop(const std::string& compute) {
  return "import os, sys, time\n"
         "import numpy as np\n"
         "d = sys.argv[1]\n"
         "def busy(s):\n"
         "    t = time.thread_time()\n"
         "    while time.thread_time() - t < s: pass\n"
         "if sys.argv[2] == 'make':\n"
         "    os.makedirs(d + '/train', exist_ok=True)\n"
         "    for i in range(8):\n"
         "        np.savez(d + '/train/s%d.npz' % i, x=np.zeros((1, 100000), np.uint8))\n"
         "    sys.exit(0)\n"
         "for epoch in range(3):\n"
         "    for i in range(8):\n"
         "        x = np.load(d + '/train/s%d.npz' % i)['x']\n"
         "        if i % 2 == 1: " +
         compute + "\n";
}

// The loop's computation_time as fitted from its profile beside `hogs` busy processes.
double FittedCompute(const std::string& compute, int hogs) {
  const std::string python = testing::SystemPython();
  if (RunCommand("'" + python + "' -c 'import numpy'").exit_code != 0) {
    std::fprintf(stderr, "skipped: Debian's python3 has no numpy\n");
    std::exit(kSkipped);
  }
  TempDir dir;
  const std::string data = dir / "data", script = dir / "loop.py";
  testing::WriteTextFile(script, Loop(compute));
  const std::string run = "'" + python + "' " + script + " " + data;
  REQUIRE(RunCommand(run + " make").exit_code == 0);
  std::string yaml;
  {
    testing::CpuHog busy(hogs);
    REQUIRE(busy.size() == hogs);
    yaml = fit_test::ProfileAndFit(dir, data, run + " run");
  }
  const size_t at = yaml.find("computation_time:");
  REQUIRE(at != std::string::npos);
  UNSCOPED_INFO(hogs << " hogs: " << yaml.substr(at, yaml.find('\n', at) - at));
  const WorkloadConfig got = fit_test::Load(dir / "fit.yaml");
  CHECK(got.reader.batch_size == 2);
  return got.train.computation_time.mean;
}

void CheckSameCompute(const std::string& compute) {
  const double quiet = FittedCompute(compute, 0);
  const double loaded = FittedCompute(compute, 4);
  // 10 ms a batch, plus the interpreter's own time between the reads and the compute.
  CHECK(quiet > 0.009);
  CHECK(quiet < 0.0125);
  CHECK(loaded == Approx(quiet).epsilon(0.25));
}

TEST_CASE("fit: a busy loop's compute is the same quiet and beside 4 CPU hogs") {
  CheckSameCompute("busy(0.01)");
}

TEST_CASE("fit: a sleeping loop's compute is the same quiet and beside 4 CPU hogs") {
  CheckSameCompute("time.sleep(0.01)");
}

}  // namespace
}  // namespace dlio
