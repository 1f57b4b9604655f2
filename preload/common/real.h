// The real (next) definitions of interposed functions, for both interposers (libdlio_preload.so
// and libdlio_cache_preload.so), each linking its own copy of preload/common/.
//
// DLIO_REAL(fn) is the next definition of `fn` after the calling library: the other
// interposer's when both are preloaded, then libc's. Each call site keeps one constant-initialized
// slot, filled on first use (hooks may run before the library's constructor: another library's
// constructor doing I/O). A symbol that cannot be resolved is never called through a null
// pointer: FailUnresolved names it on stderr and aborts the process (Darshan's MAP_OR_FAIL), since
// a hook without its real function can neither do the call nor report it as the program expects.
#pragma once

#include <atomic>

namespace dlio::preload {

// dlsym(RTLD_NEXT, name), stored in `*slot` on first use, with the calling thread's reentrancy
// flag set meanwhile (what dlsym calls passes through). Never returns null.
void* ResolveNext(std::atomic<void*>* slot, const char* name);

// Writes "dlio preload: cannot resolve the next definition of NAME (DLERROR); aborting" to
// stderr with raw system calls and aborts.
[[noreturn]] void FailUnresolved(const char* name, const char* why);

}  // namespace dlio::preload

// `fn` must be declared (libc's headers, or the hook that interposes it).
#define DLIO_REAL(fn)                                                                   \
  ([]() {                                                                               \
    static std::atomic<void*> slot{nullptr};                                            \
    return reinterpret_cast<decltype(&::fn)>(::dlio::preload::ResolveNext(&slot, #fn)); \
  }())
