// Per-thread event buffers shared by the in-memory and trace-file tracers, and the file-name
// table behind Tracer::InternFile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dlio/tracer.h"

namespace dlio::trace_internal {

// The calling thread's kernel thread id (gettid), cached per thread.
int32_t CurrentTid();
// The calling thread's name (pthread_getname_np; "thread <tid>" when it has none).
std::string CurrentThreadName();

// One thread's events. Only its owner thread appends, so `mu` is uncontended on the hot path;
// it exists so Flush()/Events() from another thread can drain the buffer safely.
struct ThreadBuffer {
  std::mutex mu;
  std::vector<TraceEvent> events;
  std::string scratch;  // formatting space reused by the owner (file tracer)
  int32_t tid = 0;
  std::string name;    // the thread's name (pthread_getname_np) when it registered
  bool named = false;  // its thread_name metadata event is written (file tracer)
};

// The set of per-thread buffers of one tracer instance. A thread registers its buffer under
// `mu_` the first time it records; afterwards it finds it through a small thread_local cache
// keyed by this instance's unique id (ids are never reused, so a cache entry of a destroyed
// tracer can never be mistaken for a live one). Safe for concurrent use.
class ThreadBuffers {
 public:
  // `reserve` events are reserved in each new buffer, so appends up to that count allocate nothing.
  explicit ThreadBuffers(size_t reserve);
  ThreadBuffers(const ThreadBuffers&) = delete;
  ThreadBuffers& operator=(const ThreadBuffers&) = delete;

  // The calling thread's buffer (registered on first use). Never null.
  ThreadBuffer* Local();
  // Calls fn on every buffer with its mutex held.
  void ForEach(const std::function<void(ThreadBuffer&)>& fn);

 private:
  ThreadBuffer* Register();

  const uint64_t instance_id_;
  const size_t reserve_;
  std::mutex mu_;
  std::vector<std::unique_ptr<ThreadBuffer>> buffers_;
};

// path <-> small id. Safe for concurrent use; names returned by Name() stay valid for the life
// of the table (a deque never moves its elements on push_back).
class FileNames {
 public:
  int32_t Intern(std::string_view path);
  // "" when unknown.
  std::string Name(int32_t id) const;
  // A view of the name that stays valid for the life of the table ("" when unknown); avoids a
  // copy on the formatting path.
  std::string_view NameView(int32_t id) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, int32_t> ids_;
  std::deque<std::string> names_;
};

}  // namespace dlio::trace_internal
