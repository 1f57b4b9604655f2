// The calling thread's run-queue delay (Linux's /proc/thread-self/schedstat: nanoseconds runnable
// but waiting for a CPU), recorded with its events (pfw::kRunDelay) so that `fit` can take what
// other processes' competition for the CPU added to a pause out of the program's compute time.
//
// One descriptor per thread, opened on first use with raw system calls and kept at a high number
// (close-on-exec), as PrivateFd keeps the trace file: the program's descriptor numbers stay those
// of a run without the tracer. Read at most once per pfw::kRunDelayEveryUs of the thread's time:
// a loop of small calls pays one read per 200 us, and every event after a pause that long carries
// the value, as does the last event at most 200 us before the pause began.
#pragma once

#include <cstdint>

namespace dlio::preload {

// The calling thread's run-queue delay so far in microseconds, read now when its last read is
// pfw::kRunDelayEveryUs or more before `now_us`; -1 when not read this time, or when the kernel
// keeps no schedstats (or the descriptor was lost: then never again in this thread).
int64_t ThreadRunDelay(int64_t now_us);

// Closes the calling thread's descriptor (the thread ends).
void CloseThreadRunDelay();

// In a fork child: the descriptors inherited name the parent's threads. Closes them all (the
// calling thread's and the other threads'); the child's thread opens its own on its next read.
void ResetRunDelayAfterFork();

}  // namespace dlio::preload
