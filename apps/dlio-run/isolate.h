// Runs part of dlio-run in a child process, so that a crash inside a library it calls (libhdf5
// on a corrupt file: docs/formats.md, "Corrupt files") becomes an error naming the file instead
// of killing dlio-run.
#pragma once

#include <functional>
#include <string>

#include "dlio/status.h"

namespace dlio_run {

// Runs `body` in a forked child and returns the child's exit code (what `body` returned; the
// child writes to the inherited stdout and stderr). When the child dies of a signal: Corruption
// "<what>: the reader crashed on it (signal N, <name>) ...". When fork fails, runs `body` here.
// Only for single-threaded callers: the child has only the calling thread.
dlio::Result<int> RunIsolated(const std::string& what, const std::function<int()>& body);

}  // namespace dlio_run
