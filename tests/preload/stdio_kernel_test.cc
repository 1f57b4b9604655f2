// The kernel requests libdlio_preload.so derives beneath stdio calls (preload/trace/stdio_kernel.h)
// held against strace watching the same run: stdio_program.c (fread/fwrite of many sizes with the
// default, a 64 KiB, a 300-byte and no buffer, fseek in and out of the buffer, reads past the end)
// and numpy's np.load of .npy files of four sizes. The read and write system calls on the data
// files must be equal row by row: file, offset, size requested, bytes moved, in order. The traced
// side is the tracer's POSIX reads and writes plus its SYSCALL requests, in recording order.
// Skipped (77) without strace, where ptrace is not permitted, or without numpy.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dlio/profile.h"
#include "preload_test_util.h"
#include "test_util.h"

namespace {

using dlio::preload_test::ArgOr;
using dlio::preload_test::ReadEvents;
using dlio::preload_test::TraceFiles;
using dlio::testing::RunCommand;
using dlio::testing::StraceCommand;
using dlio::testing::TempDir;

constexpr int kSkipped = 77;  // the ctest SKIP_RETURN_CODE of this executable
const std::string kDlioRun = DLIO_BINARY_DIR "/apps/dlio-run/dlio-run";

struct Request {
  std::string file;
  bool write;
  int64_t offset, size, ret;
  bool operator==(const Request& o) const {
    return file == o.file && write == o.write && offset == o.offset && size == o.size &&
           ret == o.ret;
  }
};

std::string Rows(const std::vector<Request>& rs) {
  std::string s;
  for (const Request& r : rs) {
    s += r.file + (r.write ? " write @" : " read @") + std::to_string(r.offset) + " +" +
         std::to_string(r.size) + " = " + std::to_string(r.ret) + "\n";
  }
  return s;
}

bool InDir(const std::string& path, const std::string& dir) {
  return path.rfind(dir + "/", 0) == 0;
}

void SkipUnless(bool ok, const std::string& why) {
  if (ok) return;
  std::fprintf(stderr, "SKIPPED: %s\n", why.c_str());
  std::fflush(stderr);
  std::exit(kSkipped);
}

// The read and write system calls on files under `dir` in an strace log (ImportStrace follows
// each descriptor's position through dup, lseek and the transfers).
std::vector<Request> StraceRequests(const std::string& log, const std::string& dir) {
  dlio::ProfileTrace t;
  const auto stats = dlio::ImportStrace(log, &t);
  REQUIRE(stats.ok());
  std::vector<Request> out;
  for (size_t i = 0; i < t.size(); ++i) {
    const bool write = t.kind[i] == dlio::OpKind::kWrite;
    if ((write || t.kind[i] == dlio::OpKind::kRead) && InDir(t.String(t.path[i]), dir)) {
      out.push_back({t.String(t.path[i]), write, t.offset[i], t.size_bytes[i], t.ret[i]});
    }
  }
  return out;
}

// The tracer's requests on files under `dir`: POSIX reads and writes and the SYSCALL requests
// beneath stdio calls, in the order they were recorded.
std::vector<Request> TracedRequests(const std::string& out_dir, const std::string& dir) {
  std::vector<Request> out;
  const auto traces = TraceFiles(out_dir);
  REQUIRE(traces.size() == 1);
  for (const auto& e : ReadEvents(traces[0])) {
    const std::string name = e.at("name");
    const dlio::OpKind kind = dlio::OpKindOfCall(name);
    const bool kernel = e.at("cat") == "SYSCALL";
    const bool posix = e.at("cat") == "POSIX" && name != "mmap.touched" &&
                       (kind == dlio::OpKind::kRead || kind == dlio::OpKind::kWrite);
    if (!kernel && !posix) continue;
    const std::string file = e.at("args").at("fname");
    if (!InDir(file, dir)) continue;
    const bool write = kernel ? name == "stdio.write" : kind == dlio::OpKind::kWrite;
    out.push_back({file, write, ArgOr(e, "offset"), ArgOr(e, "count"), ArgOr(e, "ret")});
  }
  return out;
}

// Runs `program` under strace and `dlio-run profile --data-dir data`; both sides' requests.
std::pair<std::vector<Request>, std::vector<Request>> RunBoth(const TempDir& tmp,
                                                              const std::string& data,
                                                              const std::string& program) {
  SkipUnless(RunCommand("strace -o /dev/null true").exit_code == 0,
             "strace is missing or ptrace is not permitted here");
  const std::string log = tmp / "strace.log";
  const std::string out = tmp / "prof";
  const auto run =
      RunCommand(StraceCommand("-f -ttt -T -o '" + log + "' '" + kDlioRun + "' profile --output '" +
                               out + "' --data-dir '" + data + "' -- " + program));
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  return {StraceRequests(log, data), TracedRequests(out, data)};
}

TEST_CASE("stdio: the system calls beneath fread, fwrite, fseek and fclose, as strace sees them") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directory(data);
  const auto [seen, traced] = RunBoth(tmp, data, "'" DLIO_STDIO_PROGRAM "' '" + data + "'");
  INFO("strace:\n" << Rows(seen) << "traced:\n" << Rows(traced));
  CHECK(seen.size() > 90);  // four files written and read back, every buffer kind
  CHECK(traced == seen);
}

TEST_CASE("stdio: np.load of .npy files reads what strace sees, beneath numpy's one fread") {
  const std::string python = dlio::testing::SystemPython();
  SkipUnless(RunCommand("'" + python + "' -c 'import numpy'").exit_code == 0,
             python + " cannot import numpy (python3-numpy, which ./setup.sh installs)");
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directory(data);
  std::string files;
  const int64_t sizes[] = {100, 5000, 1 << 20, 3000001};
  for (size_t i = 0; i < 4; ++i) {
    const std::string f = data + "/a" + std::to_string(i) + ".npy";
    const auto made =
        RunCommand("'" + python + "' -c 'import numpy as np; np.save(\"" + f + "\", np.arange(" +
                   std::to_string(sizes[i]) + ", dtype=np.uint8))'");
    REQUIRE(made.exit_code == 0);
    files += " '" + f + "'";
  }
  const std::string load =
      "import sys, numpy as np\nfor p in sys.argv[1:]:\n    for _ in range(2): np.load(p)\n";
  dlio::testing::WriteTextFile(tmp / "load.py", load);
  const auto [seen, traced] =
      RunBoth(tmp, data, "'" + python + "' '" + (tmp / "load.py") + "'" + files);
  INFO("strace:\n" << Rows(seen) << "traced:\n" << Rows(traced));
  // Each load: Python's header read, numpy's seek back over it (a read of the 128-byte header,
  // glibc's exact read after an fseek on a fresh stream), then the array's direct read and the
  // fill for its tail.
  CHECK(seen.size() >= 28);
  CHECK(traced == seen);
}

}  // namespace
