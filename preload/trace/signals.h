// The tracer's handler of the termination signals, and the program's view of their dispositions
// (hooks_signal.cc).
#pragma once

namespace dlio::preload {

// Installs the handler that writes the trace out for SIGTERM, SIGINT and SIGHUP where the program
// left them at SIG_DFL (DLIO_PRELOAD_SIGNALS=0: none, and the hooks pass every call through).
// Called by the constructor.
void InstallSignalHandlers();

}  // namespace dlio::preload
