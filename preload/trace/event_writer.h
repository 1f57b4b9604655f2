// The trace file of one process: dlio's .pfw format (one Chrome "X" event per line inside
// "[" ... "]", each line ending in ","), written from per-thread buffers with raw syscalls so
// the tracer's own I/O is never traced. A buffer goes to the file when full, when its thread
// ends, and at exit, _exit and exec; the file opens on the first write-out.
// A thread also writes its buffer out when it closes a traced file, and a termination signal
// left at its default action flushes everything before the process dies.
#pragma once

#include <cstdint>

#include "common/fd_table.h"

namespace dlio::preload {

struct IoEvent {
  const char* name = "";  // string literal: "read", "pwrite64", ...
  const char* cat = "POSIX";
  int64_t start_us = 0;
  int64_t dur_us = 0;
  const FileRef* file = nullptr;
  int64_t offset = -1;  // -1: does not apply
  int64_t count = -1;   // bytes requested
  int64_t ret = 0;      // bytes transferred, a new fd or position, 0, or -errno (always written)
  int64_t faults = -1;  // minor page faults inside the call (pfw::kFaults); -1: not measured
};

struct WriterOptions {
  const char* output_dir = ".";  // must outlive the writer (environment string)
  int64_t rank = -1;             // from the launcher's environment; -1 when not under MPI
  bool run_delay = true;         // record each thread's run-queue delay (run_delay.h)
};

// Called by the constructor (and in a forked child, to start a file of its own).
void ConfigureWriter(const WriterOptions& options);

// The process the trace file belongs to (0 before ConfigureWriter).
int64_t WriterPid();

// Formats `event` into the calling thread's buffer. Never blocks on other threads' buffers.
// The event carries the shared-memory objects the thread created since its previous event
// (NoteSharedMemoryCreated, pfw::kSharedCreated).
void RecordEvent(const IoEvent& event);

// Counts a shared-memory object the calling thread created (shm_open with O_CREAT): its next
// recorded event carries the count. A forked child's threads start at 0.
void NoteSharedMemoryCreated();

// Writes the calling thread's buffer out (at the close of a traced file, so a process killed
// later keeps the events of the files it had finished with).
void FlushLocalBuffer();

// Writes every buffer out; `footer` closes the JSON array and the file. `in_signal`: from a
// signal handler, where a buffer whose lock is held (by the interrupted thread) is skipped
// rather than waited for. `seal`: the process is ending; events recorded after this are dropped
// (rather than starting a new file).
void FlushAllBuffers(bool footer, bool in_signal = false, bool seal = false);

// fork: the prepare handler locks the writer; the parent unlocks; the child discards what its
// parent will write (every buffer) and starts a new file on its first write-out.
void WriterPrepareFork();
void WriterParentAfterFork();
void WriterChildAfterFork();

}  // namespace dlio::preload
