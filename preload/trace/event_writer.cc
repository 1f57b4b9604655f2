#include "event_writer.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/private_fd.h"
#include "run_delay.h"
#include "runtime.h"
#include "trace/pfw_codec.h"

namespace dlio::preload {
namespace {

constexpr size_t kBufferBytes = 256 * 1024;

// One thread's formatted events. The owner appends under `lock` (uncontended except while
// another thread flushes everything at exit); buffers are never unmapped, only reused.
struct ThreadBuffer {
  std::atomic_flag lock = ATOMIC_FLAG_INIT;
  std::atomic<bool> in_use{false};
  ThreadBuffer* next = nullptr;
  int32_t tid = 0;
  bool named = false;
  size_t len = 0;
  char data[kBufferBytes];
};

struct Writer {
  WriterOptions options;
  std::atomic_flag lock = ATOMIC_FLAG_INIT;  // guards the file (PrivateFd), the list, the header
  std::atomic<ThreadBuffer*> buffers{nullptr};
  // The trace file's descriptor is PrivateFd::Get(): high, hidden from the program, moved away
  // when the program dup2s onto it. Its file, to notice when the program replaced it anyway (raw
  // system calls) and the number now names a file of its own, which must never receive trace
  // bytes.
  char path[4096] = {};
  dev_t dev = 0;
  ino_t ino = 0;
  int64_t pid = 0;
  bool sealed = false;  // the footer is written: later events (a hook still running) are dropped
  std::atomic<int64_t> next_id{1};
  pthread_key_t key;
  bool key_made = false;
};

Writer& W() {
  static Writer writer;
  return writer;
}

void SpinLock(std::atomic_flag& f) {
  while (f.test_and_set(std::memory_order_acquire)) sched_yield();
}

// A signal handler must not wait for a lock the interrupted thread may hold: it gives up.
bool TryLockBriefly(std::atomic_flag& f) {
  for (int i = 0; i < 100; ++i) {
    if (!f.test_and_set(std::memory_order_acquire)) return true;
    sched_yield();
  }
  return false;
}

bool Lock(std::atomic_flag& f, bool in_signal) {
  if (in_signal) return TryLockBriefly(f);
  SpinLock(f);
  return true;
}
void SpinUnlock(std::atomic_flag& f) { f.clear(std::memory_order_release); }

__attribute__((tls_model("initial-exec"))) thread_local ThreadBuffer* t_buffer = nullptr;
// Shared-memory objects the thread created since its last recorded event (RecordEvent).
__attribute__((tls_model("initial-exec"))) thread_local int64_t t_shm_created = 0;

// --- formatting (trace/pfw_codec.h) -------------------------------------------------------

// A metadata event naming the process or thread `tid` (tid 0: the process).
size_t PutNameEvent(char* p, size_t cap, int64_t pid, int32_t tid, const char* name, size_t len) {
  return pfw::EncodeNameMetadata(0, tid == 0 ? pfw::kProcessName : pfw::kThreadName, pid, tid, name,
                                 len, pfw::kLineEnd, p, cap);
}

// Reads a small /proc file (comm) with raw syscalls; returns its length without the newline.
// (It takes the lowest free descriptor for an instant: ThreadName avoids it where it can.)
size_t ReadSmallFile(const char* path, char* out, size_t cap) {
  const long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  long n = syscall(SYS_read, fd, out, cap);
  syscall(SYS_close, fd);
  if (n <= 0) return 0;
  while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\0')) --n;
  return static_cast<size_t>(n);
}

// The calling thread's name (prctl: no descriptor needed), or its process's when `process` (the
// main thread's, read from /proc when another thread asks). `out` holds at least 256 bytes.
size_t ThreadName(bool process, char* out) {
  if (!process || syscall(SYS_gettid) == syscall(SYS_getpid)) {
    char name[17] = {};
    if (syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0) == 0) {
      const size_t n = strnlen(name, 16);
      std::memcpy(out, name, n);
      return n;
    }
  }
  return ReadSmallFile("/proc/self/comm", out, 200);
}

// --- file -----------------------------------------------------------------------------------

void WriteAll(int fd, const char* data, size_t len) {
  while (len > 0) {
    const long n = syscall(SYS_write, fd, data, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a full disk loses events; the traced program is never disturbed
    data += n;
    len -= static_cast<size_t>(n);
  }
}

// True when fd is still the trace file. Requires W().lock.
bool StillOurs(const Writer& w, int fd) {
  struct stat st;
  return fd >= 0 && syscall(SYS_fstat, fd, &st) == 0 && st.st_dev == w.dev && st.st_ino == w.ino;
}

// Keeps a new descriptor of the trace file out of the program's way (at a low number only when
// no high one is free: better a trace than none).
int KeepFile(long fd) { return PrivateFd::Get().Adopt(static_cast<int>(fd), /*keep_low=*/true); }

// Reopens the trace file by name after the program took its descriptor (appending; the header
// is there already). Requires W().lock.
void ReopenLocked(Writer& w) {
  const long fd = syscall(SYS_openat, AT_FDCWD, w.path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return;
  if (StillOurs(w, static_cast<int>(fd))) {
    KeepFile(fd);
  } else {  // replaced by another file meanwhile: leave it alone
    syscall(SYS_close, fd);
    w.path[0] = '\0';
  }
}

// Opens trace-<pid>.pfw (trace-<pid>-<n>.pfw when taken: an earlier image of this pid before
// exec, or an older run) without ever replacing a file, and writes the header. Requires W().lock.
void OpenFileLocked() {
  Writer& w = W();
  if (PrivateFd::Get().Peek() >= 0) return;
  char path[4096];
  long fd = -1;
  for (int attempt = 0; attempt < 1000 && fd < 0; ++attempt) {
    pfw::Out o(path, sizeof path);
    o.Raw(w.options.output_dir).Raw("/trace-").Int(w.pid);
    if (attempt > 0) o.Char('-').Int(attempt);
    o.Raw(".pfw").Char('\0');
    if (!o.ok()) return;
    fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
                 0644);
    if (fd >= 0) {
      std::memcpy(w.path, path, o.size());
    } else if (errno != EEXIST) {
      return;
    }
  }
  if (fd < 0) return;
  struct stat st;
  if (syscall(SYS_fstat, fd, &st) == 0) {
    w.dev = st.st_dev;
    w.ino = st.st_ino;
  }
  KeepFile(fd);
  char header[2048];
  char comm[256];
  size_t n = ThreadName(/*process=*/true, comm);
  if (w.options.rank >= 0) {
    pfw::Out c(comm + n, sizeof comm - n);
    c.Raw(" (rank ").Int(w.options.rank).Char(')');
    n += c.size();
  }
  header[0] = '[';
  header[1] = '\n';
  const size_t h = 2 + PutNameEvent(header + 2, sizeof header - 2, w.pid, 0, comm, n);
  PrivateFd::Use use(PrivateFd::Get());
  if (use.fd() >= 0) WriteAll(use.fd(), header, h);
}

// Makes PrivateFd hold the trace file: checks the one it holds, reopens or opens it. Requires
// W().lock.
void EnsureFileLocked(Writer& w) {
  if (PrivateFd::Get().Peek() < 0) {
    // Lost without a footer (moved away with no high number free): the same file, by name.
    if (w.path[0] != '\0') return ReopenLocked(w);
    return OpenFileLocked();
  }
  bool ours = false;
  {
    PrivateFd::Use use(PrivateFd::Get());
    ours = StillOurs(w, use.fd());
  }
  if (ours) return;
  PrivateFd::Get().Drop();  // not closed: the number is the program's now
  ReopenLocked(w);
}

// Appends b's bytes to the file. Requires b.lock.
void WriteOut(ThreadBuffer& b, bool in_signal = false) {
  if (b.len == 0) return;
  Writer& w = W();
  if (!Lock(w.lock, in_signal)) return;
  if (w.sealed) {
    SpinUnlock(w.lock);
    b.len = 0;
    return;
  }
  EnsureFileLocked(w);
  PrivateFd::Use use(PrivateFd::Get());  // held while writing: the number cannot move meanwhile
  SpinUnlock(w.lock);
  // O_APPEND: each write lands whole at the end, whichever thread writes.
  if (use.fd() >= 0) WriteAll(use.fd(), b.data, b.len);
  b.len = 0;
}

// Encodes a line into b with `encode(p, cap)` (the bytes written, 0 when they do not fit),
// writing b out first when its free space is too small. A line longer than a whole buffer is
// dropped. Requires b.lock.
template <typename Encode>
bool Append(ThreadBuffer& b, const Encode& encode) {
  size_t n = encode(b.data + b.len, kBufferBytes - b.len);
  if (n == 0 && b.len > 0) {
    WriteOut(b);
    n = encode(b.data, kBufferBytes);
  }
  b.len += n;
  return n > 0;
}

void OnThreadExit(void* arg) {
  auto* b = static_cast<ThreadBuffer*>(arg);
  HookScope scope;
  SpinLock(b->lock);
  WriteOut(*b);
  b->named = false;
  SpinUnlock(b->lock);
  b->in_use.store(false, std::memory_order_release);
  t_buffer = nullptr;
  CloseThreadRunDelay();
}

ThreadBuffer* LocalBuffer() {
  if (t_buffer != nullptr) return t_buffer;
  Writer& w = W();
  for (ThreadBuffer* b = w.buffers.load(std::memory_order_acquire); b != nullptr; b = b->next) {
    bool expected = false;
    if (b->in_use.compare_exchange_strong(expected, true)) {
      t_buffer = b;
      break;
    }
  }
  if (t_buffer == nullptr) {
    void* mem = mmap(nullptr, sizeof(ThreadBuffer), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return nullptr;
    auto* b = new (mem) ThreadBuffer();
    b->in_use.store(true, std::memory_order_relaxed);
    SpinLock(w.lock);
    b->next = w.buffers.load(std::memory_order_relaxed);
    w.buffers.store(b, std::memory_order_release);
    SpinUnlock(w.lock);
    t_buffer = b;
  }
  t_buffer->tid = static_cast<int32_t>(syscall(SYS_gettid));
  t_buffer->named = false;
  if (w.key_made) pthread_setspecific(w.key, t_buffer);
  return t_buffer;
}

}  // namespace

void ConfigureWriter(const WriterOptions& options) {
  Writer& w = W();
  w.options = options;
  w.pid = static_cast<int64_t>(getpid());
  if (!w.key_made) w.key_made = pthread_key_create(&w.key, OnThreadExit) == 0;
}

int64_t WriterPid() { return W().pid; }

void RecordEvent(const IoEvent& e) {
  ThreadBuffer* b = LocalBuffer();
  if (b == nullptr) return;
  Writer& w = W();
  SpinLock(b->lock);
  if (!b->named) {
    char comm[256];
    const size_t n = ThreadName(/*process=*/false, comm);  // b is the calling thread's
    b->named = Append(
        *b, [&](char* p, size_t cap) { return PutNameEvent(p, cap, w.pid, b->tid, comm, n); });
  }
  pfw::Event line;
  line.id = w.next_id.fetch_add(1, std::memory_order_relaxed);
  line.name = e.name;
  line.cat = e.cat;
  line.pid = w.pid;
  line.tid = b->tid;
  line.ts_us = e.start_us;
  line.dur_us = e.dur_us;
  if (e.file != nullptr) {
    line.fname = e.file->path;
    line.fname_len = e.file->len;
    line.fname_plain = e.file->plain;
  }
  line.count = e.count;
  line.offset = e.offset;
  line.ret = e.ret;  // every interposed call returned something: always written
  line.faults = e.faults;
  if (w.options.run_delay) line.run_delay = ThreadRunDelay(e.start_us + e.dur_us);
  line.shm = t_shm_created;
  if (Append(*b,
             [&](char* p, size_t cap) { return pfw::EncodeEvent(line, pfw::kLineEnd, p, cap); })) {
    t_shm_created = 0;
  }
  SpinUnlock(b->lock);
}

void NoteSharedMemoryCreated() { ++t_shm_created; }

void FlushLocalBuffer() {
  ThreadBuffer* b = t_buffer;
  if (b == nullptr) return;
  SpinLock(b->lock);
  WriteOut(*b);
  SpinUnlock(b->lock);
}

void FlushAllBuffers(bool footer, bool in_signal, bool seal) {
  Writer& w = W();
  for (ThreadBuffer* b = w.buffers.load(std::memory_order_acquire); b != nullptr; b = b->next) {
    if (!Lock(b->lock, in_signal)) continue;
    WriteOut(*b, in_signal);
    SpinUnlock(b->lock);
  }
  if (!footer || !Lock(w.lock, in_signal)) return;
  if (PrivateFd::Get().Peek() >= 0) EnsureFileLocked(w);
  if (PrivateFd::Use use(PrivateFd::Get()); use.fd() >= 0) {
    // Closes the array the way dlio's tracer does: a last metadata event without the comma.
    char tail[256];
    const size_t n = pfw::EncodeSortIndexMetadata(
        w.pid, w.options.rank >= 0 ? w.options.rank : w.pid, pfw::kLastLineEnd, tail, sizeof tail);
    WriteAll(use.fd(), tail, n);
  }
  // In a signal handler the process dies next, and a thread the signal interrupted may be writing.
  if (!in_signal) PrivateFd::Get().Close();
  w.path[0] = '\0';  // closed by its footer: events after a failed exec go to a new file
  w.sealed = seal;
  SpinUnlock(w.lock);
}

void WriterPrepareFork() { SpinLock(W().lock); }

void WriterParentAfterFork() { SpinUnlock(W().lock); }

void WriterChildAfterFork() {
  Writer& w = W();
  // The parent writes out every buffer it had, this thread's included: the child drops its copies.
  // The other threads do not exist here: their buffers become free for reuse.
  for (ThreadBuffer* b = w.buffers.load(std::memory_order_relaxed); b != nullptr; b = b->next) {
    b->lock.clear();
    b->len = 0;
    b->named = false;
    b->in_use.store(b == t_buffer, std::memory_order_relaxed);
  }
  if (t_buffer != nullptr) t_buffer->tid = static_cast<int32_t>(syscall(SYS_gettid));
  ResetRunDelayAfterFork();
  t_shm_created = 0;  // the forking thread's count was the parent's
  PrivateFd::Get().ResetUsersAfterFork();
  bool ours = false;
  {
    PrivateFd::Use use(PrivateFd::Get());
    ours = StillOurs(w, use.fd());
  }
  if (ours) {
    PrivateFd::Get().Close();
  } else {
    PrivateFd::Get().Drop();
  }
  w.path[0] = '\0';
  w.pid = static_cast<int64_t>(getpid());
  w.sealed = false;
  w.next_id.store(1, std::memory_order_relaxed);
  w.lock.clear();
}

}  // namespace dlio::preload
