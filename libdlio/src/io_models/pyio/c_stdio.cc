#include "io_models/pyio/c_stdio.h"

#include <algorithm>
#include <cstring>

namespace dlio::pyio {

size_t GlibcBufferSize(uint64_t st_blksize) {
  constexpr size_t kBufSiz = 8192;
  return st_blksize > 0 && st_blksize < kBufSiz ? static_cast<size_t>(st_blksize) : kBufSiz;
}

CStdioReader::CStdioReader(File* file, size_t buffer_size)
    : file_(file), size_(std::max<size_t>(1, buffer_size)), buf_(size_) {}

Result<size_t> CStdioReader::SysRead(uint8_t* dst, size_t n) {
  DLIO_ASSIGN_OR_RETURN(size_t got, file_->ReadSomeAt(fd_pos_, n, dst));
  fd_pos_ += got;
  return got;
}

Status CStdioReader::Allocate() {
  if (allocated_) return Status::OK();
  allocated_ = true;
  return file_->Size().status();
}

Status CStdioReader::SysSeek(uint64_t offset) {
  return file_->Seek(static_cast<int64_t>(offset), SEEK_SET).status();
}

Result<uint64_t> CStdioReader::Tell() {
  const uint64_t buffered = read_end_ - read_ptr_;
  if (offset_ >= 0) return static_cast<uint64_t>(offset_) - buffered;
  DLIO_RETURN_NOT_OK(file_->Seek(0, SEEK_CUR).status());  // do_ftell asks the kernel
  return fd_pos_ - buffered;
}

Status CStdioReader::Seek(int64_t offset, bool from_current) {
  DLIO_RETURN_NOT_OK(Allocate());
  const bool must_be_exact = read_base_ == read_end_;
  if (from_current) {
    offset -= static_cast<int64_t>(read_end_ - read_ptr_);
    if (offset_ < 0) {  // "dumb": a plain lseek relative to the descriptor
      offset += static_cast<int64_t>(fd_pos_);
      if (offset < 0) return Status::InvalidArgument(file_->path(), ": fseek before the start");
      DLIO_RETURN_NOT_OK(SysSeek(static_cast<uint64_t>(offset)));
      fd_pos_ = static_cast<uint64_t>(offset);
      offset_ = offset;
      read_base_ = read_ptr_ = read_end_ = 0;
      eof_ = false;
      return Status::OK();
    }
    offset += offset_;
  }
  if (offset < 0) return Status::InvalidArgument(file_->path(), ": fseek before the start");
  // Within the buffer: move the read pointer only.
  if (offset_ >= 0) {
    const int64_t start = offset_ - static_cast<int64_t>(read_end_);
    if (offset >= start && offset < offset_) {
      read_base_ = 0;
      read_ptr_ = static_cast<size_t>(offset - start);
      eof_ = false;
      fd_pos_ = static_cast<uint64_t>(offset_);  // resync: lseek(_offset, SEEK_SET)
      return SysSeek(fd_pos_);
    }
  }
  // Seek to a block boundary and read up to the target (the whole block unless the buffer was
  // empty).
  uint64_t base = static_cast<uint64_t>(offset) & ~static_cast<uint64_t>(size_ - 1);
  uint64_t delta = static_cast<uint64_t>(offset) - base;
  if (delta > size_) {
    base = static_cast<uint64_t>(offset);
    delta = 0;
  }
  DLIO_RETURN_NOT_OK(SysSeek(base));
  fd_pos_ = base;
  size_t count = 0;
  if (delta > 0) {
    DLIO_ASSIGN_OR_RETURN(count, SysRead(buf_.data(), must_be_exact ? delta : size_));
    if (count < delta) {  // short file: glibc seeks the rest
      DLIO_RETURN_NOT_OK(SysSeek(static_cast<uint64_t>(offset)));
      fd_pos_ = static_cast<uint64_t>(offset);
      offset_ = offset;
      read_base_ = read_ptr_ = read_end_ = 0;
      eof_ = false;
      return Status::OK();
    }
  }
  read_base_ = 0;
  read_ptr_ = static_cast<size_t>(delta);
  read_end_ = count;
  offset_ = static_cast<int64_t>(base + count);
  eof_ = false;
  return Status::OK();
}

Result<bool> CStdioReader::Underflow() {
  if (eof_) return false;  // EOF is sticky (C11)
  DLIO_RETURN_NOT_OK(Allocate());
  read_base_ = read_ptr_ = read_end_ = 0;
  DLIO_ASSIGN_OR_RETURN(size_t got, SysRead(buf_.data(), size_));
  if (got == 0) {
    eof_ = true;
    offset_ = -1;
    return false;
  }
  read_end_ = got;
  if (offset_ >= 0) offset_ += static_cast<int64_t>(got);
  return true;
}

Result<size_t> CStdioReader::Read(size_t n, uint8_t* dst) {
  DLIO_RETURN_NOT_OK(Allocate());  // _IO_file_xsgetn allocates the buffer first
  size_t want = n;
  while (want > 0) {
    const size_t have = read_end_ - read_ptr_;
    if (want <= have) {
      std::memcpy(dst, buf_.data() + read_ptr_, want);
      read_ptr_ += want;
      want = 0;
      break;
    }
    if (have > 0) {
      std::memcpy(dst, buf_.data() + read_ptr_, have);
      dst += have;
      want -= have;
      read_ptr_ += have;
    }
    if (want < size_) {
      DLIO_ASSIGN_OR_RETURN(bool more, Underflow());
      if (!more) break;
      continue;
    }
    // Whole blocks straight into the caller's memory.
    read_base_ = read_ptr_ = read_end_ = 0;
    size_t count = want;
    if (size_ >= 128) count -= want % size_;
    DLIO_ASSIGN_OR_RETURN(size_t got, SysRead(dst, count));
    if (got == 0) {
      eof_ = true;
      break;
    }
    dst += got;
    want -= got;
    if (offset_ >= 0) offset_ += static_cast<int64_t>(got);
  }
  return n - want;
}

}  // namespace dlio::pyio
