#include "runtime.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/env.h"
#include "common/fd_table.h"
#include "common/path_filter.h"
#include "event_writer.h"
#include "signals.h"
#include "trace_call.h"

namespace dlio::preload {
namespace {

std::atomic<bool> g_active{false};
std::atomic<bool> g_finished{false};
// Set once by the constructor, before tracing starts (g_active's release publishes it).
bool g_count_faults = true;

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
  HookScope scope;
  if (EnvPresent("DLIO_PRELOAD_DISABLE")) return;
  static PathFilter filter;
  filter.Configure(EnvValue("DLIO_PRELOAD_DATA_DIRS"));
  WriterOptions options;
  if (const char* dir = EnvValue("DLIO_PRELOAD_OUTPUT"); dir != nullptr) options.output_dir = dir;
  options.rank = RankFromEnvironment();
  options.run_delay = !EnvPresent("DLIO_PRELOAD_NO_RUN_DELAY");
  g_count_faults = !EnvPresent("DLIO_PRELOAD_NO_FAULTS");
  ConfigureWriter(options);
  pthread_atfork(PrepareFork, ParentAfterFork, ChildAfterFork);
  InstallSignalHandlers();
  SetFilter(&filter);
  g_active.store(true, std::memory_order_release);
}

__attribute__((destructor)) void Fini() { FinishTrace(true); }

const PathFilter* g_filter = nullptr;

}  // namespace

void SetFilter(const PathFilter* filter) { g_filter = filter; }
const PathFilter* Filter() { return g_filter; }

bool Active() { return g_active.load(std::memory_order_acquire); }

bool CountingFaults() { return g_count_faults; }

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
  HookScope scope;
  if (final) RecordOpenMappings();
  if (final) g_active.store(false, std::memory_order_release);
  FlushAllBuffers(/*footer=*/true, /*in_signal=*/false, /*seal=*/final);
}

int64_t NowMicros() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

}  // namespace dlio::preload
