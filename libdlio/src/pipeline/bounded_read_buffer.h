// A pytorch worker's read buffer whose memory does not grow with the sample: the first `head`
// bytes are its own, and every byte past them goes through one `ring` of memory mapped again
// and again over the rest of the buffer's span (the same pages of a memfd at every ring-sized
// step). A read of a whole sample is still one call of the sample's size into one contiguous
// buffer, so the storage sees the same requests; the worker keeps what it collates (the head:
// DLIO's record_length_bytes_resize) and the rest is overwritten as it streams through.
//
// Only for readers that write a sample front to back and read none of its bytes back after more
// than a ring's worth of later bytes were written (FormatCapabilities::streams_samples): bytes
// less than `ring` apart never share memory, so a CRC or an inflate window over the last bytes
// written sees them intact.
#pragma once

#include <cstdint>
#include <string>

#include "dlio/format.h"
#include "dlio/pipeline.h"
#include "dlio/status.h"

namespace dlio::pipeline_internal {

class BoundedReadBuffer {
 public:
  // The ring of the pytorch workers (1 MiB: a few x the largest read-back distance a streaming
  // reader may use, 256 KiB: FormatCapabilities::streams_samples).
  static constexpr uint64_t kRingBytes = kBoundedReadRingBytes;

  BoundedReadBuffer() = default;
  ~BoundedReadBuffer();
  BoundedReadBuffer(const BoundedReadBuffer&) = delete;
  BoundedReadBuffer& operator=(const BoundedReadBuffer&) = delete;

  // Allocates head + ring bytes (rounded up to pages) and maps a span of at least `span` bytes,
  // every page already in the page tables (no fault on the first write).
  Status Init(const std::string& name, uint64_t head, uint64_t ring, uint64_t span);
  // Maps a span of at least `span` bytes over the same memory (never shrinks; moves data()).
  Status Cover(uint64_t span);
  // After a read into `buffer` (which borrows this buffer's span): a sample larger than the span
  // was read into the heap instead (SampleBuffer grows there). The span then grows to it over the
  // same memory, `buffer` borrows it again and the heap's copy is freed, so that a reader holds
  // no more than one sample of heap, and only while reading it. Nothing to do otherwise.
  Status Reclaim(SampleBuffer* buffer);

  uint8_t* data() const { return data_; }
  uint64_t span() const { return span_; }
  uint64_t head() const { return head_; }
  // The memory behind the buffer, whatever its span: head + ring (rounded up to pages).
  uint64_t physical_bytes() const { return head_ + ring_; }
  static uint64_t PhysicalBytesFor(uint64_t head, uint64_t ring);

 private:
  uint64_t SpanFor(uint64_t span) const;  // head + whole rings (at least one) covering `span`
  Status MapSpan(uint64_t total, uint8_t** out) const;
  void Unmap();

  int fd_ = -1;
  std::string name_;
  uint64_t head_ = 0, ring_ = 0, span_ = 0;
  uint8_t* data_ = nullptr;
};

}  // namespace dlio::pipeline_internal
