#include "pipeline/read_scratch.h"

#include <cstring>
#include <memory>

namespace dlio::pipeline_internal {

Status ReadScratch::Init(const std::string& name, bool bounded, uint64_t span, uint64_t landing) {
  use_bounded_ = bounded;
  if (bounded) {
    DLIO_RETURN_NOT_OK(bounded_.Init(name, 0, kRingBytes, span));
    buffer_.Borrow(bounded_.data(), bounded_.span());
    return Status::OK();
  }
  buffer_.set_views_allowed(true);  // the pipeline's consumer reads no byte of these samples
  auto lent = std::make_shared<AlignedBuffer>();  // this thread's, reused by every read
  if (landing != 0) {
    DLIO_RETURN_NOT_OK(lent->Resize(landing));
    std::memset(lent->data(), 0, lent->capacity());  // its first touch, not epoch 1's
    DLIO_RETURN_NOT_OK(lent->Resize(0));
  }
  buffer_.set_landing(std::move(lent));
  if (span == 0) return Status::OK();
  DLIO_RETURN_NOT_OK(buffer_.Resize(span));
  std::memset(buffer_.data(), 0, span);  // the first touch happens here, not in epoch 1
  return Status::OK();
}

Status ReadScratch::AfterRead() { return use_bounded_ ? bounded_.Reclaim(&buffer_) : Status::OK(); }

uint64_t ReadScratch::physical_bytes() const {
  if (use_bounded_) return bounded_.physical_bytes();
  return buffer_.capacity() + (buffer_.landing() ? buffer_.landing()->capacity() : 0);
}

}  // namespace dlio::pipeline_internal
