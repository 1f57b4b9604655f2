// Names that say which process made a temporary file or folder, so that a later run can tell the
// leftovers of a dead dlio process (removed) from the work of a live one (left alone).
//
// A token is "<host>_<pidns>_<pid>_<start>_<16 hex digits>": the host name (characters other than
// [A-Za-z0-9.-] replaced by '-'), the inode of the process's pid namespace, its pid, its start time
// (clock ticks after boot, /proc/<pid>/stat) and random digits that make the name unique within
// the process. A process is dead for certain only when it ran on this host, in this pid namespace,
// and no process with its pid and start time exists; anything else (another host, another
// container, a system without /proc) counts as alive, so its files are never removed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dlio {

struct OwnerStamp {
  std::string host;     // sanitized as in tokens
  uint64_t pid_ns = 0;  // 0: unknown
  uint64_t pid = 0;
  uint64_t start = 0;  // 0: unknown
};

// This process (measured on every call).
OwnerStamp ThisProcessStamp();

// A token naming this process, unique per call.
std::string UniqueOwnerToken();
// The token for `stamp` with the given random part (tests make tokens of other processes).
std::string OwnerToken(const OwnerStamp& stamp, uint64_t random);

// The stamp of a token (the whole of `token`), or nullopt when it is not one.
std::optional<OwnerStamp> ParseOwnerToken(std::string_view token);

// Whether the process `stamp` names has provably ended (see above).
bool OwnerIsDead(const OwnerStamp& stamp);

// Whether `name` is "<stem><infix><token>" with a token of a dead owner: then it is a leftover of
// a dead dlio process (the infix names dlio's temporaries, e.g. ".tmp-"). The token is the part
// after the last `infix`.
bool IsDeadOwnersLeftover(std::string_view name, std::string_view infix);

}  // namespace dlio
