// The exit codes of dlio-run and its subcommands: 0 done, 1 the work itself failed (a run's
// error, a file that could not be written), 2 the input was refused before any work (usage,
// config, a trace or report that does not parse).
#pragma once

namespace dlio_run {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRunError = 1;
inline constexpr int kExitWriteError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitBadTrace = 2;

}  // namespace dlio_run
