#include "test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace dlio::testing {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/dlio-test-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + templ);
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

CommandResult RunCommand(const std::string& command) {
  CommandResult result;
  std::string full = command + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) return result;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) result.output.append(buf, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

void WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string PeersDirOrSkip(const std::string& dir, const std::string& entry) {
  if (!std::filesystem::is_directory(std::filesystem::path(dir) / entry)) {
    std::fprintf(stderr, "no %s in the peers folder %s: skipped\n", entry.c_str(), dir.c_str());
    std::exit(77);
  }
  return dir;
}

std::string DlioRun() { return DLIO_BINARY_DIR "/apps/dlio-run/dlio-run"; }

std::string SystemPython() {
#ifdef DLIO_SYSTEM_PYTHON
  std::string py = DLIO_SYSTEM_PYTHON;
  if (!py.empty() && py.find("NOTFOUND") == std::string::npos) return py;
#endif
  return "/usr/bin/python3";
}

namespace {

// glibc keeps a chunk's size, with its flags, in the word before the block (read through an
// integer address: it lies outside the block the compiler knows of).
size_t ChunkSizeField(const void* p) {
  const uintptr_t field = reinterpret_cast<uintptr_t>(p) - sizeof(size_t);
  return *reinterpret_cast<const size_t*>(field);
}

}  // namespace

int MallocMapsInChild(size_t n, const std::function<void()>& before) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return -1;  // the sanitizer's allocator, not glibc's: no thresholds to ask about
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
  return -1;
#endif
#endif
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only glibc's chunk layout tells the answer: a small block's size field holds its size.
    void* small = std::malloc(64);
    const size_t small_size = small != nullptr ? (ChunkSizeField(small) & ~size_t{7}) : 0;
    if (small_size < 72 || small_size > 96) ::_exit(3);
    before();
    void* p = std::malloc(n);
    ::_exit(p == nullptr ? 2 : (ChunkSizeField(p) & 2) != 0 ? 1 : 0);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status) < 2 ? WEXITSTATUS(status) : -1;
}

}  // namespace dlio::testing
