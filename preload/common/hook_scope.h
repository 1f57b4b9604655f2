// The per-thread reentrancy flag of an interposer (one per library: each links its own copy of
// preload/common/) and the scope that sets it.
#pragma once

namespace dlio::preload {

// The calling thread's reentrancy flag: set while a hook does its own work (records an event,
// talks to the cache server, resolves a symbol), so the calls it makes itself pass straight
// through the hooks.
bool& InHook();

// Sets the flag for its lifetime and restores what it found: a scope nested inside another
// (a hook calling a hooked function, a constructor, a fork handler) leaves the outer one set.
class HookScope {
 public:
  HookScope() : flag_(InHook()), saved_(flag_) { flag_ = true; }
  ~HookScope() { flag_ = saved_; }
  HookScope(const HookScope&) = delete;
  HookScope& operator=(const HookScope&) = delete;

 private:
  bool& flag_;
  bool saved_;
};

}  // namespace dlio::preload
