#include "pipeline/bounded_read_buffer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

namespace dlio::pipeline_internal {
namespace {

uint64_t PageRound(uint64_t n) {
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

}  // namespace

uint64_t BoundedReadBuffer::PhysicalBytesFor(uint64_t head, uint64_t ring) {
  return PageRound(head) + PageRound(ring == 0 ? 1 : ring);
}

BoundedReadBuffer::~BoundedReadBuffer() {
  Unmap();
  if (fd_ >= 0) ::close(fd_);
}

void BoundedReadBuffer::Unmap() {
  if (data_ != nullptr) ::munmap(data_, span_);
  data_ = nullptr;
  span_ = 0;
}

Status BoundedReadBuffer::Init(const std::string& name, uint64_t head, uint64_t ring,
                               uint64_t span) {
  if (fd_ >= 0) return Status::FailedPrecondition("BoundedReadBuffer ", name_, ": Init twice");
  name_ = name;
  head_ = PageRound(head);
  ring_ = PageRound(ring == 0 ? 1 : ring);
  fd_ = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd_ < 0) return Status::FromErrno(errno, "memfd_create " + name);
  // The pages are allocated and cleared now, once: the mappings below only point at them.
  if (::fallocate(fd_, 0, 0, static_cast<off_t>(head_ + ring_)) != 0) {
    return Status::FromErrno(errno,
                             StrCat("allocating ", head_ + ring_, " bytes of read buffer ", name));
  }
  return Cover(span);
}

Status BoundedReadBuffer::Cover(uint64_t span) {
  if (fd_ < 0) return Status::FailedPrecondition("BoundedReadBuffer: Cover before Init");
  if (data_ != nullptr && span <= span_) return Status::OK();
  uint8_t* mapped = nullptr;
  DLIO_RETURN_NOT_OK(MapSpan(SpanFor(span), &mapped));
  Unmap();
  data_ = mapped;
  span_ = SpanFor(span);
  return Status::OK();
}

Status BoundedReadBuffer::Reclaim(SampleBuffer* buffer) {
  if (data_ == nullptr || buffer->data() == data_) return Status::OK();
  DLIO_RETURN_NOT_OK(Cover(buffer->capacity()));
  buffer->Borrow(data_, span_);  // frees the heap's copy
  return Status::OK();
}

uint64_t BoundedReadBuffer::SpanFor(uint64_t span) const {
  const uint64_t rings = span <= head_ ? 1 : (span - head_ + ring_ - 1) / ring_;
  return head_ + rings * ring_;
}

Status BoundedReadBuffer::MapSpan(uint64_t total, uint8_t** out) const {
  const uint64_t rings = (total - head_) / ring_;
  // Reserve the whole range first, so the pieces land side by side.
  void* base =
      ::mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    return Status::FromErrno(errno, StrCat("reserving ", total, " bytes for read buffer ", name_));
  }
  auto* p = static_cast<uint8_t*>(base);
  auto place = [&](uint64_t at, uint64_t bytes, uint64_t file_offset) {
    void* got = ::mmap(p + at, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_POPULATE,
                       fd_, static_cast<off_t>(file_offset));
    return got != MAP_FAILED;
  };
  bool ok = head_ == 0 || place(0, head_, 0);  // one mapping of the head
  for (uint64_t r = 0; ok && r < rings; ++r) ok = place(head_ + r * ring_, ring_, head_);
  if (!ok) {
    const int err = errno;
    ::munmap(base, total);
    return Status::FromErrno(err, StrCat("mapping ", total, " bytes of read buffer ", name_, " in ",
                                         rings + 1, " pieces (the limit is vm.max_map_count)"));
  }
  *out = p;
  return Status::OK();
}

}  // namespace dlio::pipeline_internal
