// Lazy dlsym(RTLD_NEXT) of an interposed function, shared by the interposers of preload/.
#pragma once

#include <dlfcn.h>

#include <atomic>

namespace dlio::preload {

// The next definition of `name`, stored in `*slot` on first use (hooks may run before the
// library's constructor). `in_hook` (the calling thread's reentrancy flag) is set meanwhile, so
// what dlsym calls passes through.
inline void* ResolveNextIn(std::atomic<void*>* slot, const char* name, bool& in_hook) {
  void* fn = slot->load(std::memory_order_relaxed);
  if (fn == nullptr) {
    const bool saved = in_hook;
    in_hook = true;
    fn = dlsym(RTLD_NEXT, name);
    in_hook = saved;
    slot->store(fn, std::memory_order_relaxed);
  }
  return fn;
}

}  // namespace dlio::preload
