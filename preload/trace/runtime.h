// State shared by the interposed functions of libdlio_preload.so: the process-wide setup
// (configuration, fork and exit handling). The real functions (DLIO_REAL), the per-thread
// reentrancy flag (InHook, HookScope) and the environment reader are preload/common/'s.
//
// Nothing here may call an interposed function on the tracing path: files are written with raw
// syscalls, memory comes from mmap, and every hook checks InHook() before recording.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/hook_scope.h"
#include "common/real.h"

#define DLIO_PRELOAD_EXPORT extern "C" __attribute__((visibility("default")))

namespace dlio::preload {

// True once the constructor has read the configuration and until the trace is finalized
// (process exit, _exit, exec). Before and after, hooks only pass calls through.
bool Active();

// Whether data calls of pfw::kFaultsMinBytes or more count the thread's page faults (two
// getrusage calls each); false with DLIO_PRELOAD_NO_FAULTS set.
bool CountingFaults();

// Flushes every thread's events and closes the trace file (idempotent). `final` false (exec)
// closes the file without marking the process as finished, so a failed exec traces on into a
// new file.
void FinishTrace(bool final);
// The same from a termination signal's handler (a buffer another thread holds locked is skipped);
// false when the trace was finished already, or belongs to another process.
bool FinishTraceInSignal();

class PathFilter;
// The filter configured by the constructor (nullptr before).
void SetFilter(const PathFilter* filter);
const PathFilter* Filter();

// Wall-clock microseconds (the same clock as dlio's own tracer).
int64_t NowMicros();

}  // namespace dlio::preload
