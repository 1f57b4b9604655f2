// Owner tokens of processes that have ended, for tests of leftover cleanup (core/owner_stamp.h).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/owner_stamp.h"

namespace dlio::testing {

// The pid of a child that exited and was reaped: no process has it (until the pid is reused).
inline uint64_t DeadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  if (child < 0) throw std::runtime_error("fork failed");
  int status = 0;
  if (::waitpid(child, &status, 0) != child) throw std::runtime_error("waitpid failed");
  return static_cast<uint64_t>(child);
}

// A token of a dead process of this host and pid namespace.
inline std::string DeadOwnerToken(uint64_t random = 0x1234) {
  OwnerStamp stamp = ThisProcessStamp();
  stamp.pid = DeadPid();
  stamp.start = 0;
  return OwnerToken(stamp, random);
}

}  // namespace dlio::testing
