#include <algorithm>

#include "dlio/tracer.h"
#include "trace/thread_buffers.h"

namespace dlio {

struct MemoryTracer::Impl {
  trace_internal::ThreadBuffers buffers{1024};
  trace_internal::FileNames names;
};

MemoryTracer::MemoryTracer() : impl_(std::make_unique<Impl>()) {}
MemoryTracer::~MemoryTracer() = default;

int32_t MemoryTracer::InternFile(std::string_view path) { return impl_->names.Intern(path); }

void MemoryTracer::Record(const TraceEvent& event) {
  trace_internal::ThreadBuffer* b = impl_->buffers.Local();
  std::lock_guard<std::mutex> lock(b->mu);
  b->events.push_back(event);
  if (b->events.back().tid == 0) b->events.back().tid = b->tid;
}

std::vector<TraceEvent> MemoryTracer::Events() const {
  std::vector<TraceEvent> out;
  impl_->buffers.ForEach([&](trace_internal::ThreadBuffer& b) {
    out.insert(out.end(), b.events.begin(), b.events.end());
  });
  std::stable_sort(out.begin(), out.end(), [](const TraceEvent& a, const TraceEvent& b) {
    return a.start_us < b.start_us;
  });
  return out;
}

std::string MemoryTracer::FileName(int32_t file_id) const { return impl_->names.Name(file_id); }

}  // namespace dlio
