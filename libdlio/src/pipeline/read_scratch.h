// A reader thread's own buffer for a pipeline whose consumer reads no sample byte
// (PipelineOptions::deliver_sample_bytes false): every sample the thread reads lands in it, so
// the client's only copy is the storage read's, into memory that stays warm in the CPU's caches.
// For readers that stream a sample front to back (PipelineOptions::samples_stream) it is a
// BoundedReadBuffer without a head: one ring of kRingBytes (256 KiB) mapped over the whole span,
// private to the thread (a ring shared by all of a process's readers was tried and saved nothing
// more: docs/performance.md). Otherwise it is one plain buffer of the span, touched once when made,
// in which a format may hand a sample it holds as a view instead of copying it
// (SampleBuffer::views_allowed: it then keeps the memory the view is of, e.g. a parquet row group,
// alive until the thread's next read), with one landing buffer (SampleBuffer::landing) that the
// formats read such bytes into, the thread's every row group in the same pages.
#pragma once

#include <cstdint>
#include <string>

#include "dlio/format.h"
#include "dlio/status.h"
#include "pipeline/bounded_read_buffer.h"

namespace dlio::pipeline_internal {

class ReadScratch {
 public:
  // The ring of a streaming reader's buffer: 256 KiB, the farthest a streaming reader reads back
  // (FormatCapabilities::streams_samples) and numpy's read piece. Smaller than the pytorch
  // workers' 1 MiB (BoundedReadBuffer::kRingBytes) because dlio-run runs one reader per
  // accelerator thread, up to 32 in a process, whose rings together then stay nearer the cores'
  // L2 (docs/performance.md, "The most accelerators one client keeps at the AU target").
  static constexpr uint64_t kRingBytes = uint64_t{256} << 10;

  // `span`: the sample size the buffer covers before any read (0: grown by the first reads).
  // `landing`: the capacity the landing buffer of a buffer that is not bounded gets, and touches,
  // here (PipelineOptions::reserve_landing_bytes; 0: grown by the first read that lands bytes).
  Status Init(const std::string& name, bool bounded, uint64_t span, uint64_t landing = 0);
  SampleBuffer& buffer() { return buffer_; }
  // After a read: a sample larger than a bounded buffer's span was read into the heap; the span
  // grows to it over the same ring and the heap's copy is freed.
  Status AfterRead();
  // The memory the buffer holds (a bounded one: its ring, whatever its span; else the buffer's
  // and its landing buffer's).
  uint64_t physical_bytes() const;

 private:
  BoundedReadBuffer bounded_;
  SampleBuffer buffer_;
  bool use_bounded_ = false;
};

}  // namespace dlio::pipeline_internal
