#include "pipeline/read_scratch.h"

#include <cstring>
#include <memory>

namespace dlio::pipeline_internal {

Status ReadScratch::Init(const std::string& name, bool bounded, uint64_t span) {
  use_bounded_ = bounded;
  if (bounded) {
    DLIO_RETURN_NOT_OK(bounded_.Init(name, 0, kRingBytes, span));
    buffer_.Borrow(bounded_.data(), bounded_.span());
    return Status::OK();
  }
  buffer_.set_views_allowed(true);  // the pipeline's consumer reads no byte of these samples
  buffer_.set_landing(std::make_shared<AlignedBuffer>());  // this thread's, reused by every read
  if (span == 0) return Status::OK();
  DLIO_RETURN_NOT_OK(buffer_.Resize(span));
  std::memset(buffer_.data(), 0, span);  // the first touch happens here, not in epoch 1
  return Status::OK();
}

Status ReadScratch::AfterRead() { return use_bounded_ ? bounded_.Reclaim(&buffer_) : Status::OK(); }

uint64_t ReadScratch::physical_bytes() const {
  return use_bounded_ ? bounded_.physical_bytes() : buffer_.capacity();
}

}  // namespace dlio::pipeline_internal
