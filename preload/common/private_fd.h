// The one descriptor an interposer keeps for itself (the tracer's trace file, the cache client's
// connection), kept where the program never meets it: at a high number (below the soft
// RLIMIT_NOFILE, at most 65535), close-on-exec, and hidden from the program's descriptor calls.
// The program's descriptor numbers, its close() results and its errno stay those of a run
// without the interposer:
//  - a descriptor the program opens gets the lowest free number, which ours never takes;
//  - close(), dup*(), fcntl() of our number fail with EBADF, as in a run without us;
//  - dup2()/dup3() onto our number first move ours to another free high number (Vacate);
//  - close_range()/closefrom() close around it (CloseRangeAround).
// Each interposer library links its own copy: the tracer's and the cache client's descriptors
// are distinct, and each library's hooks pass the other's on to it.
//
// Safe for concurrent use: a thread reading or writing the descriptor holds a Use, and Vacate
// waits until no Use holds the old number before it closes it, so bytes of ours never land in a
// file the program put at that number.
#pragma once

#include <atomic>

namespace dlio::preload {

class PrivateFd {
 public:
  // The library's descriptor (constant-initialized, usable before any constructor).
  static PrivateFd& Get();

  // A hold on the current descriptor for the time of a read or write (fd() -1: none).
  class Use {
   public:
    explicit Use(PrivateFd& p);
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;
    int fd() const { return fd_; }

   private:
    PrivateFd& p_;
    int fd_;
  };

  // Moves `fd` (just opened, close-on-exec or not) to a free high number and keeps it there; `fd`
  // itself is closed. When no high number is free: keeps `fd` as it is when `keep_low`, else
  // closes it. Returns the descriptor kept, or -1. Requires no descriptor kept already.
  int Adopt(int fd, bool keep_low);
  // Whether `fd` is the kept descriptor.
  bool Is(int fd) const { return fd >= 0 && fd_.load() == fd; }
  // The kept descriptor's number now (-1: none), for a decision, not for I/O (see Use).
  int Peek() const { return fd_.load(); }
  // Closes the kept descriptor once no Use holds it.
  void Close();
  // Stops keeping the descriptor without closing it (its number is the program's now).
  void Drop();
  // The program is about to put a descriptor at `fd` (dup2, dup3): when ours is there it moves
  // to another free high number (or, when none is free, is closed).
  void Vacate(int fd);
  // In a fork child: no other thread exists any more to release its Use.
  void ResetUsersAfterFork() { users_.store(0); }

 private:
  void WaitForUsers() const;

  std::atomic<int> fd_{-1};
  std::atomic<int> users_{0};
};

// A free descriptor number at least this high is where PrivateFd keeps its descriptor: 64 below
// the soft RLIMIT_NOFILE (capped at 65536), so a program meets it only when it has nearly every
// descriptor it may have open.
int HighFdBase();

// close_range(first, last, flags) through `next`, skipping `keep`'s descriptor: one call per
// stretch of the range around it. Returns 0 or -1 with errno (the first failure).
int CloseRangeAround(unsigned first, unsigned last, int flags, int (*next)(unsigned, unsigned, int),
                     const PrivateFd& keep);

// closefrom(lowfd)'s fallback when the kernel has no close_range: closes every open descriptor
// >= lowfd (read from /proc/self/fd) through `close_fn`, except `keep`'s.
void CloseFromBySearch(int lowfd, int (*close_fn)(int), const PrivateFd& keep);

}  // namespace dlio::preload
