// SIGTERM, SIGINT and SIGHUP at their default action (a PyTorch or multiprocessing pool
// terminates its workers with SIGTERM) get a handler that writes the trace out, then dies of the
// signal as the program would have. The program never sees that handler: sigaction and signal
// answer what it set, SIG_DFL until it sets something else (Python's signal.getsignal reads it at
// startup). Setting SIG_DFL keeps the handler installed; a handler of the program's or SIG_IGN
// replaces it, and the tracer no longer flushes on that signal.
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/env.h"
#include "runtime.h"
#include "signals.h"

namespace dlio::preload {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};
constexpr int kCount = sizeof kSignals / sizeof kSignals[0];

// One termination signal: whether the tracer's handler is installed, and then what the program
// sees instead (the disposition it set last, SIG_DFL).
struct Watched {
  bool ours = false;
  struct sigaction view = {};
};

struct SignalState {
  std::atomic<bool> enabled{false};
  std::atomic_flag lock = ATOMIC_FLAG_INIT;
  Watched watched[kCount];
};

SignalState& State() {
  static SignalState state;
  return state;
}

int IndexOf(int sig) {
  for (int i = 0; i < kCount; ++i) {
    if (kSignals[i] == sig) return i;
  }
  return -1;
}

// sigaction is async-signal-safe: a handler may call it while its thread holds the lock, so
// signals are blocked meanwhile.
class Locked {
 public:
  Locked() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved_);
    while (State().lock.test_and_set(std::memory_order_acquire)) sched_yield();
  }
  ~Locked() {
    State().lock.clear(std::memory_order_release);
    pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

 private:
  sigset_t saved_;
};

void OnTerminationSignal(int sig) {
  const int saved_errno = errno;
  InHook() = true;
  FinishTraceInSignal();
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  DLIO_REAL(sigaction)(sig, &dfl, nullptr);  // resolved by InstallSignalHandlers
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  errno = saved_errno;
}

struct sigaction HandlerAction() {
  struct sigaction sa = {};
  sa.sa_handler = OnTerminationSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  return sa;
}

// sigaction for a watched signal (index i). Requires the lock.
int WatchedSigaction(int i, const struct sigaction* act, struct sigaction* oldact) {
  Watched& w = State().watched[i];
  const int sig = kSignals[i];
  auto real = DLIO_REAL(sigaction);
  struct sigaction prev = {};
  if (act == nullptr) {  // a query
    if (!w.ours) return real(sig, nullptr, oldact);
    if (oldact != nullptr) *oldact = w.view;
    return 0;
  }
  const struct sigaction wanted = *act;  // act and oldact may be the same
  if (wanted.sa_handler == SIG_DFL) {    // also sa_sigaction: the same storage
    if (w.ours) {
      prev = w.view;
    } else {
      const struct sigaction handler = HandlerAction();
      if (real(sig, &handler, &prev) != 0) return -1;
    }
    w.view = wanted;
    w.ours = true;
  } else {
    if (real(sig, &wanted, &prev) != 0) return -1;
    if (w.ours) prev = w.view;
    w.ours = false;
  }
  if (oldact != nullptr) *oldact = prev;
  return 0;
}

// signal() and its variants as sigaction with their flags (glibc's: the signal blocked in its
// handler, SA_RESTART; sysv_signal: reset to SIG_DFL on delivery, not blocked, not restarted).
__sighandler_t SignalAs(int sig, __sighandler_t handler, int flags) {
  const int i = IndexOf(sig);
  struct sigaction sa = {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  if ((flags & SA_NODEFER) == 0) sigaddset(&sa.sa_mask, sig);
  sa.sa_flags = flags;
  struct sigaction old = {};
  if (handler == SIG_ERR) {
    errno = EINVAL;
    return SIG_ERR;
  }
  Locked lock;
  return WatchedSigaction(i, &sa, &old) == 0 ? old.sa_handler : SIG_ERR;
}

bool Watching(int sig) {
  return State().enabled.load(std::memory_order_acquire) && IndexOf(sig) >= 0;
}

}  // namespace

void InstallSignalHandlers() {
  const char* v = EnvValue("DLIO_PRELOAD_SIGNALS");
  if (v != nullptr && std::strcmp(v, "0") == 0) return;
  auto real = DLIO_REAL(sigaction);
  Locked lock;
  for (int i = 0; i < kCount; ++i) {
    struct sigaction old = {};
    if (real(kSignals[i], nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    const struct sigaction handler = HandlerAction();
    if (real(kSignals[i], &handler, nullptr) != 0) continue;
    State().watched[i].ours = true;
    State().watched[i].view = old;
  }
  State().enabled.store(true, std::memory_order_release);
}

}  // namespace dlio::preload

using dlio::preload::Watching;

DLIO_PRELOAD_EXPORT int sigaction(int sig, const struct sigaction* act, struct sigaction* oldact) {
  if (!Watching(sig)) return DLIO_REAL(sigaction)(sig, act, oldact);
  dlio::preload::Locked lock;
  return dlio::preload::WatchedSigaction(dlio::preload::IndexOf(sig), act, oldact);
}

DLIO_PRELOAD_EXPORT __sighandler_t signal(int sig, __sighandler_t handler) {
  if (!Watching(sig)) return DLIO_REAL(signal)(sig, handler);
  return dlio::preload::SignalAs(sig, handler, SA_RESTART);
}

DLIO_PRELOAD_EXPORT __sighandler_t bsd_signal(int sig, __sighandler_t handler) {
  if (!Watching(sig)) return DLIO_REAL(bsd_signal)(sig, handler);
  return dlio::preload::SignalAs(sig, handler, SA_RESTART);
}

DLIO_PRELOAD_EXPORT __sighandler_t sysv_signal(int sig, __sighandler_t handler) {
  if (!Watching(sig)) return DLIO_REAL(sysv_signal)(sig, handler);
  return dlio::preload::SignalAs(sig, handler, SA_RESETHAND | SA_NODEFER);
}

DLIO_PRELOAD_EXPORT __sighandler_t __sysv_signal(int sig, __sighandler_t handler) {
  if (!Watching(sig)) return DLIO_REAL(__sysv_signal)(sig, handler);
  return dlio::preload::SignalAs(sig, handler, SA_RESETHAND | SA_NODEFER);
}
