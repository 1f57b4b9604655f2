// The batch pipeline's pool of sample buffers: a LIFO free list. A reader takes the most recently
// released buffer for each sample and a batch's buffers come back when its lease is released, so
// with a consumer that keeps up the same few (cache-warm) buffers cycle instead of the whole
// ring's. The pool holds a buffer for every sample of every pooled batch, so taking never finds it
// empty and nothing is allocated per sample.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "dlio/format.h"
#include "dlio/status.h"

namespace dlio::pipeline_internal {

// Take and Give are safe for concurrent use; Add and Reserve run before any thread takes a buffer.
class BufferPool {
 public:
  // Adds `n` empty buffers (room for them in the free list is reserved by `capacity`).
  void Add(size_t n);
  void ReserveSlots(size_t capacity) { free_.reserve(capacity); }
  // Gives `count` free buffers (0: every one) a capacity of `bytes` and touches them, so
  // first-touch page faults happen here rather than in the first epoch. They are the buffers
  // Take hands out first. Returns the bytes reserved in *reserved.
  Status Reserve(uint64_t bytes, uint64_t count, uint64_t* reserved);
  // A pooled batch's buffers: buffers[j] came from the pool when holds[j] is 1.
  // buffers[j], taken from the pool when the batch does not hold one for sample j yet.
  SampleBuffer& Take(std::vector<SampleBuffer>* buffers, std::vector<uint8_t>* holds, size_t j);
  // Returns every buffer the batch holds to the pool (no allocation: room is reserved).
  void Give(std::vector<SampleBuffer>* buffers, std::vector<uint8_t>* holds);

 private:
  std::mutex mu_;
  std::vector<SampleBuffer> free_;  // most recently released last
};

}  // namespace dlio::pipeline_internal
