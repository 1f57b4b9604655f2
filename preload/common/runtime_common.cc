#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "env.h"
#include "hook_scope.h"
#include "real.h"

namespace dlio::preload {
namespace {

__attribute__((tls_model("initial-exec"))) thread_local bool t_in_hook = false;

void WriteStderr(const char* text) {
  size_t n = std::strlen(text);
  while (n > 0) {
    const long w = syscall(SYS_write, 2, text, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    text += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

bool& InHook() { return t_in_hook; }

void FailUnresolved(const char* name, const char* why) {
  WriteStderr("dlio preload: cannot resolve the next definition of ");
  WriteStderr(name);
  WriteStderr(" (dlsym RTLD_NEXT: ");
  WriteStderr(why != nullptr ? why : "no such symbol");
  WriteStderr("); aborting\n");
  std::abort();
}

void* ResolveNext(std::atomic<void*>* slot, const char* name) {
  void* fn = slot->load(std::memory_order_relaxed);
  if (fn == nullptr) {
    HookScope scope;
    fn = dlsym(RTLD_NEXT, name);
    if (fn == nullptr) FailUnresolved(name, dlerror());
    slot->store(fn, std::memory_order_relaxed);
  }
  return fn;
}

const char* EnvValue(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

bool EnvPresent(const char* name) { return std::getenv(name) != nullptr; }

EnvIntResult EnvInt(const char* name, int64_t min, int64_t max, int64_t* out) {
  const char* v = EnvValue(name);
  if (v == nullptr) return EnvIntResult::kUnset;
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || n < min || n > max) return EnvIntResult::kBad;
  *out = n;
  return EnvIntResult::kOk;
}

int64_t RankFromEnvironment() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    int64_t rank = -1;
    if (EnvInt(name, 0, INT64_MAX, &rank) == EnvIntResult::kOk) return rank;
  }
  return -1;
}

}  // namespace dlio::preload
