#include "core/thread_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace dlio {

void LowerThisThreadPriority(int increment) {
  if (increment <= 0) return;
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, tid);
  if (now == -1 && errno != 0) return;
  (void)::setpriority(PRIO_PROCESS, tid, std::min(19, now + increment));
}

}  // namespace dlio
