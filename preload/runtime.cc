#include "runtime.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "event_writer.h"
#include "fd_table.h"
#include "path_filter.h"
#include "resolve_next.h"
#include "signals.h"
#include "trace_call.h"

namespace dlio::preload {
namespace {

std::atomic<bool> g_active{false};
std::atomic<bool> g_finished{false};

__attribute__((tls_model("initial-exec"))) thread_local bool t_in_hook = false;

// The first rank variable a launcher set (Open MPI, MPICH/PMI, PMIx, Slurm), or -1.
int64_t RankFromEnvironment() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') {
      char* end = nullptr;
      const long r = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && r >= 0) return r;
    }
  }
  return -1;
}

void PrepareFork() {
  InHook() = true;
  FdTable::Get().LockForFork();
  WriterPrepareFork();
}

// Parent and child now share every open file description: positions come from the kernel.
void ParentAfterFork() {
  FdTable::Get().ForgetAllPositions(/*locked=*/true);
  WriterParentAfterFork();
  FdTable::Get().UnlockAfterFork();
  InHook() = false;
}

void ChildAfterFork() {
  FdTable::Get().ForgetAllPositions(/*locked=*/true);
  WriterChildAfterFork();
  FdTable::Get().UnlockAfterFork();
  InHook() = false;
}

__attribute__((constructor)) void Init() {
  InHook() = true;
  if (std::getenv("DLIO_PRELOAD_DISABLE") != nullptr) {
    InHook() = false;
    return;
  }
  static PathFilter filter;
  filter.Configure(std::getenv("DLIO_PRELOAD_DATA_DIRS"));
  WriterOptions options;
  const char* dir = std::getenv("DLIO_PRELOAD_OUTPUT");
  if (dir != nullptr && *dir != '\0') options.output_dir = dir;
  options.rank = RankFromEnvironment();
  ConfigureWriter(options);
  pthread_atfork(PrepareFork, ParentAfterFork, ChildAfterFork);
  InstallSignalHandlers();
  SetFilter(&filter);
  g_active.store(true, std::memory_order_release);
  InHook() = false;
}

__attribute__((destructor)) void Fini() { FinishTrace(true); }

const PathFilter* g_filter = nullptr;

}  // namespace

void SetFilter(const PathFilter* filter) { g_filter = filter; }
const PathFilter* Filter() { return g_filter; }

RealSlots& Slots() {
  static RealSlots slots;  // zero-initialized before any code runs
  return slots;
}

void* ResolveReal(std::atomic<void*>* slot, const char* name) {
  return ResolveNextIn(slot, name, t_in_hook);
}

bool Active() { return g_active.load(std::memory_order_acquire); }

bool& InHook() { return t_in_hook; }

bool FinishTraceInSignal() {
  if (static_cast<int64_t>(syscall(SYS_getpid)) != WriterPid() || g_finished.exchange(true)) {
    return false;
  }
  g_active.store(false, std::memory_order_release);
  FlushAllBuffers(/*footer=*/true, /*in_signal=*/true, /*seal=*/true);
  return true;
}

void FinishTrace(bool final) {
  // A child sharing this memory without fork's handlers (clone) must not end the parent's trace.
  if (static_cast<int64_t>(syscall(SYS_getpid)) != WriterPid()) return;
  if (final ? g_finished.exchange(true) : g_finished.load(std::memory_order_acquire)) return;
  const bool saved = t_in_hook;
  t_in_hook = true;
  if (final) RecordOpenMappings();
  if (final) g_active.store(false, std::memory_order_release);
  FlushAllBuffers(/*footer=*/true, /*in_signal=*/false, /*seal=*/final);
  t_in_hook = saved;
}

int64_t NowMicros() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

}  // namespace dlio::preload
