// fd -> a reference-counted entry, for the descriptors an interposer follows (the tracer's
// FileRef, the cache's CachedFile). Descriptors without an entry cost one relaxed atomic load.
// Safe for concurrent use; no allocation (constant-initialized, usable before any constructor).
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdint>

namespace dlio::preload {

// `Entry` has a `std::atomic<int32_t> refs`; `Release` drops one reference (freeing the entry at
// the last).
template <typename Entry, void (*Release)(Entry*)>
class RefTable {
 public:
  static constexpr int kMaxFds = 1 << 16;  // larger descriptors are never followed

  // Cheap test without taking a reference.
  bool Has(int fd) const {
    return fd >= 0 && fd < kMaxFds && entries_[fd].load(std::memory_order_relaxed) != nullptr;
  }
  // A new reference to fd's entry (drop it with Release), or nullptr.
  Entry* Acquire(int fd) {
    if (!Has(fd)) return nullptr;
    Lock();
    Entry* e = entries_[fd].load(std::memory_order_relaxed);
    if (e != nullptr) e->refs.fetch_add(1, std::memory_order_relaxed);
    Unlock();
    return e;
  }
  // fd now names `e` (the table takes over one reference; nullptr clears); the entry it replaces
  // is released after the lock.
  void Set(int fd, Entry* e) {
    if (fd < 0 || fd >= kMaxFds) {
      if (e != nullptr) Release(e);
      return;
    }
    Lock();
    Entry* old = entries_[fd].exchange(e, std::memory_order_acq_rel);
    Unlock();
    if (old != nullptr) Release(old);
  }
  // new_fd names what old_fd names (nothing: new_fd's entry is cleared).
  void Dup(int old_fd, int new_fd) {
    if (new_fd < 0 || new_fd >= kMaxFds || old_fd == new_fd) return;
    Set(new_fd, Acquire(old_fd));
  }
  // Held across fork so the child never inherits a locked table.
  void LockForFork() { Lock(); }
  void UnlockAfterFork() { Unlock(); }

 protected:
  void Lock() {
    while (lock_.test_and_set(std::memory_order_acquire)) sched_yield();
  }
  void Unlock() { lock_.clear(std::memory_order_release); }

  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  std::atomic<Entry*> entries_[kMaxFds] = {};
};

}  // namespace dlio::preload
