// A bounded, adaptive poll that a pipeline thread makes before it sleeps on a condition variable
// (docs/architecture.md, "The batch the consumer sleeps on"). Sleeping costs the sleeper a
// futex wait and two context switches, and the thread that makes the awaited state true a
// futex wake (an inter-processor interrupt when the sleeper's CPU halted); when the state comes
// true within a few tens of microseconds, polling for it first costs neither. The poll is only a
// hint: the caller then takes its mutex and checks the real predicate, and sleeps if it does not
// hold, so a poll can never lose a wake-up.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <utility>

namespace dlio::pipeline_internal {

// One CPU pause while polling (lets the sibling hyperthread run, saves power).
inline void SpinPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Whether the host has a CPU for a poller now: its runnable threads (the caller included, as
// /proc/loadavg's fourth field counts them at this instant) fit on the CPUs this process may
// use, and so do the poller and the `pipeline_threads` threads of its pipeline that the batch it
// takes may wake (readers waiting for room; the instant's count misses those asleep). False
// when that cannot be read. A poller beside more runnable threads than CPUs takes a CPU from one
// of them, maybe the thread it waits for.
bool HostHasSpareCpu(uint64_t pipeline_threads = 0);
// The runnable threads in the text of /proc/loadavg ("0.52 0.58 0.59 2/467 1234": 2), or -1.
int64_t RunnableInLoadavg(const char* text);

// How long the polls last and when they stop paying. Not thread-safe: one per waiting thread.
class SpinBeforeSleep {
 public:
  // The longest poll, the gap between two clock reads in a poll that says the poller was taken
  // off its CPU, the failed polls in a row after which polls stop, how often a poll is tried
  // then, and how often (in calls) the host's spare CPU is checked.
  static constexpr int64_t kMaxNanos = 100'000;
  static constexpr int64_t kPreemptedNanos = 20'000;
  static constexpr uint32_t kFailuresToStop = 3;
  static constexpr uint32_t kProbeEvery = 64;
  static constexpr uint32_t kCpuCheckEvery = 32;

  // `spare_cpu` (HostHasSpareCpu unless a test's) is asked at the first call and every
  // kCpuCheckEvery-th: while it says no, Poll does not poll.
  explicit SpinBeforeSleep(
      std::function<bool()> spare_cpu = [] { return HostHasSpareCpu(); },
      int64_t max_nanos = kMaxNanos)
      : spare_cpu_(std::move(spare_cpu)), max_(max_nanos) {}

  // Polls ready() until it returns true (then true) or the budget is spent, the poller was
  // preempted, or polls do not pay or find no spare CPU (then false: the caller sleeps). `lock`
  // (may be null) is released while polling or asking for a spare CPU (a read of /proc), and
  // held again when Poll returns; it is not touched otherwise.
  template <class Ready>
  bool Poll(const Ready& ready, std::unique_lock<std::mutex>* lock = nullptr) {
    const bool ask_cpu = calls_++ % kCpuCheckEvery == 0;
    int64_t budget = ask_cpu ? 0 : NextBudget();
    if (!ask_cpu && budget == 0) return false;
    if (lock != nullptr) lock->unlock();
    if (ask_cpu) {
      spare_ = spare_cpu_();
      budget = NextBudget();
    }
    const bool seen = budget > 0 && PollFor(budget, ready);
    if (lock != nullptr) lock->lock();
    return seen;
  }

  // The next poll's budget while the host has a spare CPU: 0 once polls stopped paying.
  int64_t budget_nanos() const { return failures_ < kFailuresToStop ? max_ : 0; }
  // What the last ask of the host said (false before the first Poll): the poller has a CPU of
  // its own, so that its wake-up takes none from another thread.
  bool spare_cpu() const { return spare_; }

 private:
  template <class Ready>
  bool PollFor(int64_t budget, const Ready& ready) {
    using Steady = std::chrono::steady_clock;
    using std::chrono::nanoseconds;
    const Steady::time_point start = Steady::now();
    Steady::time_point last = start;
    bool seen = false, preempted = false;
    while (!(seen = ready())) {
      for (int i = 0; i < 8 && !(seen = ready()); ++i) SpinPause();
      if (seen) break;
      const Steady::time_point now = Steady::now();
      preempted = nanoseconds(now - last).count() > kPreemptedNanos;
      if (preempted || nanoseconds(now - start).count() > budget) break;
      last = now;
    }
    Adapt(seen && !preempted);
    return seen;
  }
  // The budget of the next poll: 0 skips it (no spare CPU; or polls stopped paying, except
  // every kProbeEvery-th call).
  int64_t NextBudget() {
    if (!spare_) return 0;
    if (failures_ < kFailuresToStop) return max_;
    if (++idle_calls_ < kProbeEvery) return 0;
    idle_calls_ = 0;
    return max_;
  }
  // A poll that saw the state starts polling again; kFailuresToStop in a row that did not (a
  // batch that takes longer than the budget, or a busy CPU) stop it.
  void Adapt(bool paid) {
    if (paid) {
      failures_ = 0;
    } else if (failures_ < kFailuresToStop) {
      ++failures_;
    }
  }

  const std::function<bool()> spare_cpu_;
  const int64_t max_;
  uint32_t failures_ = 0;
  uint64_t calls_ = 0;
  bool spare_ = false;
  uint32_t idle_calls_ = 0;
};

}  // namespace dlio::pipeline_internal
