// A reader thread's own buffer for a pipeline whose consumer reads no sample byte
// (PipelineOptions::deliver_sample_bytes false): every sample the thread reads lands in it, so
// the client's only copy is the storage read's, into memory that stays warm in the CPU's caches.
// For readers that stream a sample front to back (PipelineOptions::samples_stream) it is a
// BoundedReadBuffer without a head: one 1 MiB ring mapped over the whole span. Otherwise it is
// one plain buffer of the span, touched once when made, in which a format may hand a sample it
// holds as a view instead of copying it (SampleBuffer::views_allowed: it then keeps the memory
// the view is of, e.g. a parquet row group, alive until the thread's next read).
#pragma once

#include <cstdint>
#include <string>

#include "dlio/format.h"
#include "dlio/status.h"
#include "pipeline/bounded_read_buffer.h"

namespace dlio::pipeline_internal {

class ReadScratch {
 public:
  // `span`: the sample size the buffer covers before any read (0: grown by the first reads).
  Status Init(const std::string& name, bool bounded, uint64_t span);
  SampleBuffer& buffer() { return buffer_; }
  // After a read: a sample larger than a bounded buffer's span was read into the heap; the span
  // grows to it over the same ring and the heap's copy is freed.
  Status AfterRead();
  // The memory the buffer holds (a bounded one: its ring, whatever its span).
  uint64_t physical_bytes() const;

 private:
  BoundedReadBuffer bounded_;
  SampleBuffer buffer_;
  bool use_bounded_ = false;
};

}  // namespace dlio::pipeline_internal
