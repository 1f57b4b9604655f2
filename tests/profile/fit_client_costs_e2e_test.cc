// reader.client_costs fitted to real Python programs traced by `dlio-run profile`, as the
// fidelity loops trace them: a client-bound DataLoader (np.load, then ~15 ms of numpy work per
// sample in its workers) gets `framework`; so does an I/O-bound one whose np.load reads fault in
// fresh pages (4 MiB loads, no work: client-bound inside its reads); one that reads into a
// buffer of its own (readinto) keeps the default (its workers' first reads, into a buffer new to
// each, given as fresh pages); pandas.read_csv, which parses each 256 KiB
// chunk before it reads the next, gets `framework` (client work within its streams). All quiet and
// beside a CPU hog (the gaps' rule reads the programs' times; the pages' rule counts faults). The
// np.load one is profiled without --data-dir, as a user would: the runtime's and the launcher's I/O
// is traced too, and fit must leave it out (docs/profiling.md).
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

std::string Program(const std::string& name) {
  return std::string(DLIO_SOURCE_DIR) + "/tests/fidelity/programs/" + name + ".py";
}

// The programs import numpy and torch (pandas_csv: numpy and pandas).
void RequireModules(const std::string& python, const std::string& program) {
  const std::string modules = program == "pandas_csv" ? "numpy, pandas" : "numpy, torch";
  if (RunCommand("'" + python + "' -c 'import " + modules + "'").exit_code != 0) {
    std::fprintf(stderr, "skipped: Debian's python3 lacks one of %s\n", modules.c_str());
    std::exit(kSkipped);
  }
}

// The program's dataset made, its run traced (beside `hog` busy processes; only its data, or
// with `whole` every file, as a profile without --data-dir has it) and fitted.
WorkloadConfig FitProgram(const std::string& program, int hog, bool whole = false) {
  const std::string python = testing::SystemPython();
  RequireModules(python, program);
  TempDir dir;
  const std::string data = dir / "data";
  auto make = RunCommand("'" + python + "' " + Program(program) + " make " + data);
  INFO(make.output);
  REQUIRE(make.exit_code == 0);
  std::string yaml;
  {
    testing::CpuHog busy(hog);
    REQUIRE(busy.size() == hog);
    yaml = fit_test::ProfileAndFit(dir, whole ? "" : data,
                                   "'" + python + "' " + Program(program) + " run " + data);
  }
  const size_t at = yaml.find("client_costs:");
  REQUIRE(at != std::string::npos);
  const size_t begin = yaml.rfind('\n', at) + 1;
  UNSCOPED_INFO(yaml.substr(begin, yaml.find('\n', at) - begin));
  return fit_test::Load(dir / "fit.yaml");
}

ClientCosts FitClientCosts(const std::string& program, int hog) {
  return FitProgram(program, hog).reader.client_costs;
}

// torch_npz_large traced whole (no --data-dir): the python runtime's imports, tempfile's probe
// in each DataLoader worker (4 files of 4 bytes under /tmp), multiprocessing's folders are left
// out; the workload is the one fitted from the data alone. Its np.load arrays fault in fresh
// pages inside the reads (about 9% of them: glibc reuses its heap for the rest): framework.
void CheckWholeProfile(const WorkloadConfig& got) {
  CHECK(got.reader.client_costs == ClientCosts::kFramework);
  CHECK_FALSE(got.workflow.checkpoint);
  CHECK(got.side_io.read_file.empty());
  CHECK(got.dataset.num_files_train == 16);
  CHECK(got.dataset.num_samples_per_file == 1);
  CHECK(got.reader.read_threads == 2);
  CHECK(got.train.epochs == 2);
}

TEST_CASE("fit client_costs: a client-bound DataLoader (numpy work per sample) is framework") {
  CHECK(FitClientCosts("torch_npz_augment", 0) == ClientCosts::kFramework);
}

TEST_CASE(
    "fit client_costs: an I/O-bound DataLoader whose loads fault in fresh pages is framework") {
  CheckWholeProfile(FitProgram("torch_npz_large", 0, /*whole=*/true));
}

TEST_CASE(
    "fit client_costs: an I/O-bound DataLoader reading into its own buffer keeps the default") {
  const WorkloadConfig got = FitProgram("torch_npy_readinto", 0);
  CHECK(got.reader.client_costs == ClientCosts::kNone);
  // Its 2 workers a pass each allocate their 2 MiB buffer on their first sample: 4 of the 32
  // reads of 2 MiB fault in all their pages, which the emulation's reads are given as a share.
  CHECK(got.reader.fresh_page_share == Approx(0.125).margin(0.0015));
}

TEST_CASE("fit client_costs: pandas parsing each chunk of its files is framework") {
  CHECK(FitClientCosts("pandas_csv", 0) == ClientCosts::kFramework);
}

// Not under the sanitizers: the same fit on the same programs as the cases above, only slower
// and beside busy processes (40 s of a serial run there); what it checks is the timing rule.
#ifndef DLIO_TEST_SANITIZED
TEST_CASE("fit client_costs: the choices hold beside a CPU hog") {
  // 3 busy processes beside the program's 3 on 2 cores: every time stretches, the ratios hold.
  CHECK(FitClientCosts("torch_npz_augment", 3) == ClientCosts::kFramework);
  CheckWholeProfile(FitProgram("torch_npz_large", 3, /*whole=*/true));
  CHECK(FitClientCosts("torch_npy_readinto", 3) == ClientCosts::kNone);
  CHECK(FitClientCosts("pandas_csv", 3) == ClientCosts::kFramework);
}
#endif

}  // namespace
}  // namespace dlio
