// Trace files on a disk that takes no more bytes: no empty trace or temporary is left, and the
// error carries the errno text. The disk is full for a forked child through RLIMIT_FSIZE (its
// writes fail with EFBIG), so no mount is needed.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <string>

#include "dlio/tracer.h"
#include "test_util.h"

namespace dlio {
namespace {

namespace fs = std::filesystem;

// Runs `body` in a child whose files cannot grow; returns the child's exit code (body's result:
// 0 when every expectation held, else the number of the failed one).
int WithFullDisk(int (*body)(const std::string&), const std::string& dir) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead of killing
    struct rlimit none = {0, 0};
    if (::setrlimit(RLIMIT_FSIZE, &none) != 0) ::_exit(100);
    ::_exit(body(dir));
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return 101;
  return WEXITSTATUS(status);
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

int TraceOnFullDisk(const std::string& dir) {
  const std::string path = dir + "/trace-0.pfw";
  {
    TraceFileOptions options;
    options.path = path;
    auto tracer = MakeTraceFileTracer(options);
    if (!tracer.ok()) return 1;
    TraceEvent e;
    e.name = "read";
    e.cat = "POSIX";
    (*tracer)->Record(e);
    Status flushed = (*tracer)->Flush();
    if (flushed.ok()) return 2;
    if (!Contains(flushed.message(), path) || !Contains(flushed.message(), std::strerror(EFBIG))) {
      return 3;
    }
  }
  return fs::exists(path) ? 4 : 0;
}

int MergeOnFullDisk(const std::string& dir) {
  auto merged = MergeTraceFiles({dir + "/in/trace-0.pfw"}, dir + "/merged.pfw");
  if (merged.ok()) return 1;
  if (!Contains(merged.status().message(), std::strerror(EFBIG))) return 2;
  return 0;  // what is left in `dir` is checked by the parent
}

TEST_CASE("a trace file that a full disk refuses is not left empty") {
  testing::TempDir dir;
  CHECK(WithFullDisk(TraceOnFullDisk, dir.path()) == 0);
  CHECK(fs::is_empty(dir.path()));
}

TEST_CASE("a trace merge onto a full disk leaves neither output nor temporary") {
  testing::TempDir dir;
  fs::create_directories(dir / "in");
  testing::WriteTextFile(dir / "in/trace-0.pfw",
                         "[\n{\"id\":1,\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":0,\"tid\":1,"
                         "\"ts\":1,\"dur\":1,\"ph\":\"X\",\"args\":{}},\n]\n");
  CHECK(WithFullDisk(MergeOnFullDisk, dir.path()) == 0);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    names.push_back(e.path().filename().string());
  }
  CHECK(names == std::vector<std::string>{"in"});
}

}  // namespace
}  // namespace dlio
