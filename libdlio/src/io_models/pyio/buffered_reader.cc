#include "io_models/pyio/buffered_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "io_models/pyio/python_bytes.h"

namespace dlio::pyio {

size_t PythonBufferSize(uint64_t st_blksize) {
  return st_blksize > 1 ? static_cast<size_t>(st_blksize) : kPythonDefaultBufferSize;
}

uint64_t HostBlockSize(Storage* storage, const File& file) {
  constexpr uint64_t kLocal = 4096;
  if (file.block_size() > 0) return file.block_size();
  if (storage == nullptr || !storage->capabilities().host_files) return kLocal;
  struct stat st {};
  if (::stat(file.path().c_str(), &st) != 0 || st.st_blksize <= 0) return kLocal;
  return static_cast<uint64_t>(st.st_blksize);
}

size_t PythonBufferSize(Storage* storage, const File& file) {
  return PythonBufferSize(HostBlockSize(storage, file));
}

Result<std::unique_ptr<File>> OpenAsPython(Storage* storage, const std::string& path) {
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kRead));
  DLIO_RETURN_NOT_OK(file->Size().status());
  return file;
}

BufferedReader::BufferedReader(File* file, size_t buffer_size)
    : BufferedReader(file, buffer_size, /*resume_at=*/0) {
  (void)RawTell();  // _buffered_init's _buffered_raw_tell; CPython clears its error
}

BufferedReader::BufferedReader(File* file, size_t buffer_size, uint64_t resume_at)
    : file_(file),
      buffer_size_(std::max<size_t>(1, buffer_size)),
      buffer_mask_((buffer_size_ & (buffer_size_ - 1)) == 0 ? buffer_size_ - 1 : 0),
      buffer_(buffer_size_),
      abs_pos_(resume_at) {}

Status BufferedReader::RawTell() { return file_->Seek(0, SEEK_CUR).status(); }

int64_t BufferedReader::ReadAhead() const { return read_end_ != -1 ? read_end_ - pos_ : 0; }

int64_t BufferedReader::RawOffset() const {
  return raw_pos_ >= 0 && read_end_ != -1 ? raw_pos_ - pos_ : 0;
}

size_t BufferedReader::MinusLastBlock(size_t n) const {
  return buffer_mask_ != 0 ? n & ~buffer_mask_ : buffer_size_ * (n / buffer_size_);
}

Result<size_t> BufferedReader::RawRead(uint8_t* dst, size_t n) {
  DLIO_ASSIGN_OR_RETURN(size_t got, file_->ReadSomeAt(abs_pos_, n, dst));
  abs_pos_ += got;
  return got;
}

Result<size_t> BufferedReader::FillBuffer() {
  const int64_t start = read_end_ != -1 ? read_end_ : 0;
  DLIO_ASSIGN_OR_RETURN(size_t got, RawRead(buffer_.data() + start, buffer_size_ - start));
  read_end_ = start + static_cast<int64_t>(got);
  raw_pos_ = read_end_;
  return got;
}

Result<size_t> BufferedReader::Read(size_t n, uint8_t* dst) {
  const int64_t have = ReadAhead();
  if (static_cast<int64_t>(n) <= have) {  // _bufferedreader_read_fast
    // dst may be null when n is 0 (an empty vector's data())
    if (n > 0) std::memcpy(dst, buffer_.data() + pos_, n);
    pos_ += static_cast<int64_t>(n);
    return n;
  }
  // Python reads into a new bytes object (python_bytes.h), whose bytes the caller then copies.
  PythonBytes bytes(n);
  if (bytes.data() == nullptr) return ReadGeneric(n, dst);
  DLIO_ASSIGN_OR_RETURN(size_t got, ReadGeneric(n, bytes.data()));
  std::memcpy(dst, bytes.data(), got);
  return got;
}

Result<size_t> BufferedReader::ReadInto(size_t n, uint8_t* dst) {
  const int64_t have = ReadAhead();
  if (static_cast<int64_t>(n) > have) return ReadGeneric(n, dst);
  if (n > 0) std::memcpy(dst, buffer_.data() + pos_, n);
  pos_ += static_cast<int64_t>(n);
  return n;
}

Result<size_t> BufferedReader::Read1(size_t n, uint8_t* dst, bool python_bytes) {
  if (n == 0) return n;
  const int64_t have = ReadAhead();
  if (have > 0) {
    const size_t m = std::min(n, static_cast<size_t>(have));
    std::memcpy(dst, buffer_.data() + pos_, m);
    pos_ += static_cast<int64_t>(m);
    return m;
  }
  read_end_ = -1;  // _bufferedreader_reset_buf
  PythonBytes bytes(python_bytes ? n : 0);
  if (!python_bytes || bytes.data() == nullptr) return RawRead(dst, n);
  DLIO_ASSIGN_OR_RETURN(const size_t got, RawRead(bytes.data(), n));
  std::memcpy(dst, bytes.data(), got);
  return got;
}

Result<PythonBytes> BufferedReader::ReadObject(size_t n) {
  PythonBytes bytes(n);
  if (bytes.failed(n)) {
    return Status::ResourceExhausted(file_->path(), ": no memory for a read of ", n,
                                     " bytes (Python's MemoryError)");
  }
  const int64_t have = ReadAhead();
  if (static_cast<int64_t>(n) <= have) {  // _bufferedreader_read_fast copies into a new object
    if (n > 0) std::memcpy(bytes.data(), buffer_.data() + pos_, n);
    pos_ += static_cast<int64_t>(n);
    return bytes;
  }
  DLIO_ASSIGN_OR_RETURN(size_t got, ReadGeneric(n, bytes.data()));
  bytes.Shrink(got);
  return bytes;
}

Result<size_t> BufferedReader::ReadGeneric(size_t n, uint8_t* dst) {
  const int64_t have = ReadAhead();
  // _bufferedreader_read_generic: what is buffered, then whole blocks straight into the caller's
  // memory, then the last partial block through the buffer.
  size_t written = 0, remaining = n;
  if (have > 0) {
    std::memcpy(dst, buffer_.data() + pos_, static_cast<size_t>(have));
    written = static_cast<size_t>(have);
    remaining -= written;
    pos_ += have;
  }
  read_end_ = -1;
  while (remaining > 0) {
    const size_t r = MinusLastBlock(remaining);
    if (r == 0) break;
    DLIO_ASSIGN_OR_RETURN(size_t got, RawRead(dst + written, r));
    if (got == 0) return written;
    remaining -= got;
    written += got;
  }
  pos_ = 0;
  raw_pos_ = 0;
  read_end_ = 0;
  while (remaining > 0 && read_end_ < static_cast<int64_t>(buffer_size_)) {
    DLIO_ASSIGN_OR_RETURN(size_t got, FillBuffer());
    if (got == 0) return written;
    const size_t take = std::min(remaining, got);
    std::memcpy(dst + written, buffer_.data() + pos_, take);
    written += take;
    pos_ += static_cast<int64_t>(take);
    remaining -= take;
  }
  return written;
}

Result<uint64_t> BufferedReader::FileSize() {
  if (!file_size_) {
    DLIO_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
    file_size_ = size;
    size_fresh_ = true;
  }
  return *file_size_;
}

Result<size_t> BufferedReader::Readinto(size_t n, uint8_t* dst) {
  size_t written = 0;
  const int64_t have = ReadAhead();
  if (have > 0) {
    written = std::min(n, static_cast<size_t>(have));
    std::memcpy(dst, buffer_.data() + pos_, written);
    pos_ += static_cast<int64_t>(written);
    if (written == n) return n;
  }
  read_end_ = -1;
  pos_ = 0;
  while (written < n) {
    const size_t remaining = n - written;
    if (remaining > buffer_size_) {
      DLIO_ASSIGN_OR_RETURN(const size_t got, RawRead(dst + written, remaining));
      if (got == 0) break;
      written += got;
      continue;
    }
    DLIO_ASSIGN_OR_RETURN(const size_t got, FillBuffer());
    if (got == 0) break;
    const size_t take = std::min(remaining, got);
    std::memcpy(dst + written, buffer_.data() + pos_, take);
    pos_ += static_cast<int64_t>(take);
    written += take;
  }
  return written;
}

Result<size_t> BufferedReader::RawReadAll(const std::function<uint8_t*(size_t)>& room) {
  read_end_ = -1;
  // FileIO.readall: lseek(0, SEEK_CUR), an fstat (FileSize's, when nothing counted it yet), a
  // buffer one byte larger than the rest of the file, read until read(2) returns 0 (the second
  // request is the 1-byte read that finds the end).
  DLIO_RETURN_NOT_OK(RawTell());
  if (file_size_ && !size_fresh_) {
    DLIO_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
    file_size_ = size;
  }
  DLIO_ASSIGN_OR_RETURN(uint64_t end, FileSize());
  size_fresh_ = false;
  size_t bufsize = end >= abs_pos_ ? static_cast<size_t>(end - abs_pos_ + 1) : 8192;
  size_t got_total = 0;
  for (;;) {
    if (got_total >= bufsize) bufsize = got_total + std::max<size_t>(8192, got_total >> 3);
    uint8_t* dst = room(bufsize);
    if (dst == nullptr) {
      return Status::ResourceExhausted(
          file_->path(), ": the file grew to ", std::max<uint64_t>(end, got_total),
          " bytes or more after it was opened, while it was read whole from offset ", abs_pos_);
    }
    DLIO_ASSIGN_OR_RETURN(size_t got, RawRead(dst + got_total, bufsize - got_total));
    if (got == 0) break;
    got_total += got;
  }
  return got_total;
}

Status BufferedReader::ReadAll(std::vector<uint8_t>* out) {
  out->clear();
  const int64_t have = ReadAhead();
  if (have > 0) {
    out->assign(buffer_.begin() + pos_, buffer_.begin() + pos_ + have);
    pos_ += have;
  }
  const size_t base = out->size();
  DLIO_ASSIGN_OR_RETURN(const size_t got, RawReadAll([&](size_t n) {
                          out->resize(base + n);
                          return out->data() + base;
                        }));
  out->resize(base + got);
  return Status::OK();
}

Result<PythonBytes> BufferedReader::ReadAllObject() {
  const size_t have = static_cast<size_t>(std::max<int64_t>(ReadAhead(), 0));
  PythonBytes head(have);
  if (head.failed(have)) {
    return Status::ResourceExhausted(file_->path(), ": no memory for a bytes object of ", have,
                                     " bytes");
  }
  if (have > 0) {
    std::memcpy(head.data(), buffer_.data() + pos_, have);
    pos_ += static_cast<int64_t>(have);
  }
  PythonBytes rest;
  size_t wanted = 0;  // the size the C library refused, if it did
  Result<size_t> got = RawReadAll([&](size_t n) -> uint8_t* {
    if (rest.Resize(n)) return rest.data();
    wanted = n;
    return nullptr;
  });
  if (wanted > 0) {
    return Status::ResourceExhausted(file_->path(), ": no memory for a bytes object of ", wanted,
                                     " bytes");
  }
  if (!got.ok()) return got.status();
  rest.Shrink(*got);
  return PythonBytes::Concat(std::move(head), std::move(rest));
}

Result<size_t> BufferedReader::ReadAllInto(uint8_t* dst, size_t capacity) {
  const size_t have = static_cast<size_t>(std::max<int64_t>(ReadAhead(), 0));
  if (have > capacity) {
    return Status::ResourceExhausted(file_->path(), ": ", have, " buffered bytes do not fit ",
                                     capacity);
  }
  if (have > 0) {
    std::memcpy(dst, buffer_.data() + pos_, have);
    pos_ += static_cast<int64_t>(have);
  }
  DLIO_ASSIGN_OR_RETURN(const size_t got, RawReadAll([&](size_t n) {
                          return n <= capacity - have ? dst + have : nullptr;
                        }));
  return have + got;
}

Result<uint64_t> BufferedReader::Seek(int64_t offset, int whence) {
  if (whence != 2) {
    const int64_t current = static_cast<int64_t>(abs_pos_);
    const int64_t avail = ReadAhead();
    if (avail > 0) {
      const int64_t rel = whence == 0 ? offset - (current - RawOffset()) : offset;
      if (rel >= -pos_ && rel <= avail) {
        pos_ += rel;
        return static_cast<uint64_t>(current - avail + rel);
      }
    }
  }
  // _io__Buffered_seek_impl past the buffer: _buffered_raw_seek, then the buffer is dropped.
  int64_t target = offset;
  if (whence == 1) target = static_cast<int64_t>(abs_pos_) + offset - RawOffset();
  const Result<uint64_t> at =
      whence == 2 ? file_->Seek(offset, SEEK_END) : file_->Seek(target, SEEK_SET);
  if (!at.ok()) {
    return Status::InvalidArgument(file_->path(), ": seek to offset ", offset,
                                   whence == 2 ? " from the end" : "", " (", at.status().message(),
                                   ")");
  }
  if (whence == 2 && !file_size_) SetKnownSize(*at - static_cast<uint64_t>(offset));
  abs_pos_ = *at;
  raw_pos_ = -1;
  read_end_ = -1;
  return abs_pos_;
}

Result<uint64_t> BufferedReader::Tell() {
  DLIO_RETURN_NOT_OK(RawTell());
  return Position();
}

uint64_t BufferedReader::Position() const {
  const int64_t pos = static_cast<int64_t>(abs_pos_) - RawOffset();
  return pos < 0 ? 0 : static_cast<uint64_t>(pos);
}

}  // namespace dlio::pyio
