#include "pipeline/buffer_pool.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

namespace dlio::pipeline_internal {

void BufferPool::Add(size_t n) {
  for (size_t i = 0; i < n; ++i) free_.emplace_back();
}

Status BufferPool::Reserve(uint64_t bytes, uint64_t count, uint64_t* reserved) {
  *reserved = 0;
  if (bytes == 0) return Status::OK();
  const size_t n = count == 0 ? free_.size() : std::min<size_t>(count, free_.size());
  // Take pops from the back: reserve the buffers it hands out first.
  for (size_t i = free_.size() - n; i < free_.size(); ++i) {
    SampleBuffer& buffer = free_[i];
    DLIO_RETURN_NOT_OK(buffer.Resize(bytes));
    std::memset(buffer.data(), 0, bytes);  // the first touch happens here, not in epoch 1
    *reserved += buffer.capacity();
  }
  return Status::OK();
}

SampleBuffer& BufferPool::Take(std::vector<SampleBuffer>* buffers, std::vector<uint8_t>* holds,
                               size_t j) {
  if (!(*holds)[j]) {
    std::lock_guard<std::mutex> lock(mu_);
    // Never empty: the pool has a buffer for every sample of every slot.
    assert(!free_.empty());
    std::swap((*buffers)[j], free_.back());
    free_.pop_back();
    (*holds)[j] = 1;
  }
  return (*buffers)[j];
}

void BufferPool::Give(std::vector<SampleBuffer>* buffers, std::vector<uint8_t>* holds) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t j = 0; j < holds->size(); ++j) {
    if (!(*holds)[j]) continue;
    free_.push_back(std::move((*buffers)[j]));  // capacity reserved: no allocation
    (*holds)[j] = 0;
  }
}

}  // namespace dlio::pipeline_internal
