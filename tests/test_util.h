// Helpers shared by the tests: a temporary directory per fixture, running commands.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "dlio/status.h"

namespace dlio::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved
};

// Runs `command` through /bin/sh, capturing its output.
CommandResult RunCommand(const std::string& command);

// "strace ARGS", for RunCommand, with LeakSanitizer's exit-time check off in the traced processes:
// LeakSanitizer cannot work under ptrace and aborts the sanitized build's dlio-run at exit (CI's
// asan stage); the same code runs leak-checked without strace elsewhere.
inline std::string StraceCommand(const std::string& args) {
  return "ASAN_OPTIONS=\"${ASAN_OPTIONS}:detect_leaks=0\" strace " + args;
}

// Writes / reads a whole file with plain stdio (independent of dlio's Storage).
void WriteTextFile(const std::string& path, const std::string& text);
std::string ReadTextFile(const std::string& path);

// The build's dlio-run program (DLIO_BINARY_DIR/apps/dlio-run/dlio-run).
std::string DlioRun();

// Debian's python3 with numpy, or "" when it is missing (interop tests then fail loudly).
std::string SystemPython();

// The peer projects' folder `dir` (DLIO_PEERS_DIR) when it holds `entry`; else prints why and
// exits 77, ctest's skip code (register the test with SKIP_RETURN_CODE 77).
std::string PeersDirOrSkip(const std::string& dir, const std::string& entry);

// Whether glibc serves malloc(n) with a mapping of its own (the chunk's IS_MMAPPED bit) in a
// forked child after `before` ran there: 1 yes, 0 no (the heap), -1 unknown (also under a
// sanitizer's allocator, or any whose chunks are not laid out as glibc's). In a child, so that
// neither `before` nor the probe's free moves this process's mmap and trim thresholds.
int MallocMapsInChild(size_t n, const std::function<void()>& before);

}  // namespace dlio::testing
