#include "trace/thread_buffers.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>

namespace dlio::trace_internal {
namespace {

// Ids are handed out once per tracer instance; the counter is the only process-wide state and
// carries no behaviour (it just keeps thread_local cache keys unique).
std::atomic<uint64_t> next_instance_id{1};

struct CacheEntry {
  uint64_t instance_id = 0;
  ThreadBuffer* buffer = nullptr;
};
constexpr size_t kCacheSlots = 8;
thread_local std::array<CacheEntry, kCacheSlots> tls_cache;
thread_local size_t tls_next_slot = 0;

}  // namespace

namespace {

// The calling thread's id, cached. A forked child (the pytorch pipeline's worker processes) starts
// with a copy of the forking thread's cache, which names the parent's thread: the atfork handler
// clears it in the child's only thread.
thread_local int32_t tls_tid = 0;
void ForgetTidInChild() { tls_tid = 0; }

}  // namespace

int32_t CurrentTid() {
  static const bool registered = (::pthread_atfork(nullptr, nullptr, ForgetTidInChild) == 0);
  (void)registered;
  if (tls_tid == 0) tls_tid = static_cast<int32_t>(::syscall(SYS_gettid));
  return tls_tid;
}

std::string CurrentThreadName() {
  char name[64] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0 || name[0] == '\0') {
    return "thread " + std::to_string(CurrentTid());
  }
  return name;
}

ThreadBuffers::ThreadBuffers(size_t reserve)
    : instance_id_(next_instance_id.fetch_add(1, std::memory_order_relaxed)), reserve_(reserve) {}

ThreadBuffer* ThreadBuffers::Local() {
  for (const CacheEntry& e : tls_cache) {
    if (e.instance_id == instance_id_) return e.buffer;
  }
  return Register();
}

ThreadBuffer* ThreadBuffers::Register() {
  const int32_t tid = CurrentTid();
  ThreadBuffer* raw = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A thread evicted from its own cache (it uses many tracers) gets its old buffer back; a
    // reused tid belongs to a thread that has exited, so sharing its buffer is safe too.
    for (auto& b : buffers_) {
      if (b->tid == tid) raw = b.get();
    }
    if (raw == nullptr) {
      auto buffer = std::make_unique<ThreadBuffer>();
      buffer->events.reserve(reserve_);
      buffer->tid = tid;
      buffer->name = CurrentThreadName();
      raw = buffer.get();
      buffers_.push_back(std::move(buffer));
    }
  }
  tls_cache[tls_next_slot] = {instance_id_, raw};
  tls_next_slot = (tls_next_slot + 1) % kCacheSlots;
  return raw;
}

void ThreadBuffers::ForEach(const std::function<void(ThreadBuffer&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& b : buffers_) {
    std::lock_guard<std::mutex> block(b->mu);
    fn(*b);
  }
}

int32_t FileNames::Intern(std::string_view path) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ids_.find(std::string(path));
  if (it != ids_.end()) return it->second;
  const auto id = static_cast<int32_t>(names_.size());
  names_.emplace_back(path);
  ids_.emplace(names_.back(), id);
  return id;
}

std::string FileNames::Name(int32_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (id < 0 || static_cast<size_t>(id) >= names_.size()) return "";
  return names_[static_cast<size_t>(id)];
}

std::string_view FileNames::NameView(int32_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (id < 0 || static_cast<size_t>(id) >= names_.size()) return {};
  return names_[static_cast<size_t>(id)];
}

}  // namespace dlio::trace_internal
