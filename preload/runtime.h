// State shared by the interposed functions of libdlio_preload.so: the real libc functions, the
// per-thread reentrancy flag and the process-wide setup (configuration, fork and exit handling).
//
// Nothing here may call an interposed function on the tracing path: files are written with raw
// syscalls, memory comes from mmap, and every hook checks InHook() before recording.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#define DLIO_PRELOAD_EXPORT extern "C" __attribute__((visibility("default")))

namespace dlio::preload {

// Pointers to the next definition (libc's) of every interposed function.
struct RealFunctions {
  int (*open)(const char*, int, ...);
  int (*open64)(const char*, int, ...);
  int (*openat)(int, const char*, int, ...);
  int (*openat64)(int, const char*, int, ...);
  int (*creat)(const char*, mode_t);
  int (*creat64)(const char*, mode_t);
  int (*close)(int);
  ssize_t (*read)(int, void*, size_t);
  ssize_t (*pread)(int, void*, size_t, off_t);
  ssize_t (*pread64)(int, void*, size_t, off64_t);
  ssize_t (*write)(int, const void*, size_t);
  ssize_t (*pwrite)(int, const void*, size_t, off_t);
  ssize_t (*pwrite64)(int, const void*, size_t, off64_t);
  off_t (*lseek)(int, off_t, int);
  off64_t (*lseek64)(int, off64_t, int);
  int (*fsync)(int);
  int (*fdatasync)(int);
  void (*_exit)(int);
  void (*_Exit)(int);
  int (*execve)(const char*, char* const[], char* const[]);
  int (*execv)(const char*, char* const[]);
  int (*execvp)(const char*, char* const[]);
  int (*execvpe)(const char*, char* const[], char* const[]);
  int (*__open_2)(const char*, int);
  int (*__open64_2)(const char*, int);
  int (*__openat_2)(int, const char*, int);
  int (*__openat64_2)(int, const char*, int);
  ssize_t (*__read_chk)(int, void*, size_t, size_t);
  ssize_t (*__pread_chk)(int, void*, size_t, off_t, size_t);
  ssize_t (*__pread64_chk)(int, void*, size_t, off64_t, size_t);
  // vectored I/O
  ssize_t (*readv)(int, const struct iovec*, int);
  ssize_t (*writev)(int, const struct iovec*, int);
  ssize_t (*preadv)(int, const struct iovec*, int, off_t);
  ssize_t (*preadv64)(int, const struct iovec*, int, off64_t);
  ssize_t (*pwritev)(int, const struct iovec*, int, off_t);
  ssize_t (*pwritev64)(int, const struct iovec*, int, off64_t);
  // stdio
  FILE* (*fopen)(const char*, const char*);
  FILE* (*fopen64)(const char*, const char*);
  size_t (*fread)(void*, size_t, size_t, FILE*);
  size_t (*fwrite)(const void*, size_t, size_t, FILE*);
  int (*fseek)(FILE*, long, int);
  int (*fseeko)(FILE*, off_t, int);
  int (*fseeko64)(FILE*, off64_t, int);
  int (*fclose)(FILE*);
  // metadata and mappings
  int (*stat)(const char*, struct stat*);
  int (*stat64)(const char*, struct stat64*);
  int (*lstat)(const char*, struct stat*);
  int (*lstat64)(const char*, struct stat64*);
  int (*fstat)(int, struct stat*);
  int (*fstat64)(int, struct stat64*);
  int (*fstatat)(int, const char*, struct stat*, int);
  int (*fstatat64)(int, const char*, struct stat64*, int);
  int (*statx)(int, const char*, int, unsigned, struct statx*);
  int (*__xstat)(int, const char*, struct stat*);
  int (*__xstat64)(int, const char*, struct stat64*);
  int (*__lxstat)(int, const char*, struct stat*);
  int (*__lxstat64)(int, const char*, struct stat64*);
  int (*__fxstat)(int, int, struct stat*);
  int (*__fxstat64)(int, int, struct stat64*);
  int (*__fxstatat)(int, int, const char*, struct stat*, int);
  int (*__fxstatat64)(int, int, const char*, struct stat64*, int);
  void* (*mmap)(void*, size_t, int, int, int, off_t);
  void* (*mmap64)(void*, size_t, int, int, int, off64_t);
  int (*munmap)(void*, size_t);
  // calls that move a position the hooks do not record, or start processes without fork
  ssize_t (*preadv2)(int, const struct iovec*, int, off_t, int);
  ssize_t (*preadv64v2)(int, const struct iovec*, int, off64_t, int);
  ssize_t (*pwritev2)(int, const struct iovec*, int, off_t, int);
  ssize_t (*pwritev64v2)(int, const struct iovec*, int, off64_t, int);
  ssize_t (*sendfile)(int, int, off_t*, size_t);
  ssize_t (*sendfile64)(int, int, off64_t*, size_t);
  ssize_t (*copy_file_range)(int, off64_t*, int, off64_t*, size_t, unsigned);
  ssize_t (*splice)(int, off64_t*, int, off64_t*, size_t, unsigned);
  int (*posix_spawn)(pid_t*, const char*, const void*, const void*, char* const[], char* const[]);
  int (*posix_spawnp)(pid_t*, const char*, const void*, const void*, char* const[], char* const[]);
  int (*system)(const char*);
  // signal dispositions (hooks_signal.cc)
  int (*sigaction)(int, const struct sigaction*, struct sigaction*);
  void (*(*signal)(int, void (*)(int)))(int);
  void (*(*bsd_signal)(int, void (*)(int)))(int);
  void (*(*sysv_signal)(int, void (*)(int)))(int);
  void (*(*__sysv_signal)(int, void (*)(int)))(int);
  FILE* (*popen)(const char*, const char*);
};

// Resolves `*slot` with dlsym(RTLD_NEXT, name) on first use: hooks may run before the library's
// constructor (another library's constructor doing I/O).
void* ResolveReal(std::atomic<void*>* slot, const char* name);

// The real functions. Each entry is resolved lazily; use DLIO_REAL(name).
struct RealSlots {
  std::atomic<void*> slots[sizeof(RealFunctions) / sizeof(void*)];
};
RealSlots& Slots();

#define DLIO_REAL(fn)                                                                           \
  (reinterpret_cast<decltype(::dlio::preload::RealFunctions::fn)>(::dlio::preload::ResolveReal( \
      &::dlio::preload::Slots()                                                                 \
           .slots[offsetof(::dlio::preload::RealFunctions, fn) / sizeof(void*)],                \
      #fn)))

// True once the constructor has read the configuration and until the trace is finalized
// (process exit, _exit, exec). Before and after, hooks only pass calls through.
bool Active();

// The calling thread's reentrancy flag: set while a hook records, so I/O done on the tracing
// path (dlsym, getcwd, the writer) is never traced.
bool& InHook();

// Sets the calling thread's reentrancy flag for its lifetime.
class HookScope {
 public:
  HookScope() : flag_(InHook()) { flag_ = true; }
  ~HookScope() { flag_ = false; }
  HookScope(const HookScope&) = delete;
  HookScope& operator=(const HookScope&) = delete;

 private:
  bool& flag_;
};

// Flushes every thread's events and closes the trace file (idempotent). `final` false (exec)
// closes the file without marking the process as finished, so a failed exec traces on into a
// new file.
void FinishTrace(bool final);
// The same from a termination signal's handler (a buffer another thread holds locked is skipped);
// false when the trace was finished already, or belongs to another process.
bool FinishTraceInSignal();

class PathFilter;
// The filter configured by the constructor (nullptr before).
void SetFilter(const PathFilter* filter);
const PathFilter* Filter();

// Wall-clock microseconds (the same clock as dlio's own tracer).
int64_t NowMicros();

}  // namespace dlio::preload
