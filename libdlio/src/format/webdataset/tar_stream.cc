#include "format/webdataset/tar_stream.h"

#include <algorithm>
#include <cstring>

#include "format/io_util.h"

namespace dlio::format_internal::tar {

TarStream::TarStream(File* file, uint64_t file_size, uint64_t read_size, bool direct,
                     size_t python_buffer)
    : file_(file),
      path_(file->path()),
      file_size_(file_size),
      read_size_(std::max<uint64_t>(read_size, kBlock)),
      buf_(new uint8_t[static_cast<size_t>(read_size_)]),
      buf_size_(static_cast<size_t>(read_size_)),
      direct_(direct),
      python_buffer_(python_buffer) {
  Restart(0);
}

void TarStream::Restart(uint64_t offset) {
  buf_offset_ = offset;
  have_ = pos_ = 0;
  ended_ = false;
  if (python_buffer_ == 0) return;
  // The first time Python's open(path, "rb"); a restart (dlio's, no Python call) a new buffer
  // at `offset` with no request. _StreamProxy's first block only when the stream starts at the
  // archive's start.
  python_ = python_ ? std::make_unique<pyio::BufferedReader>(file_, python_buffer_, offset)
                    : std::make_unique<pyio::BufferedReader>(file_, python_buffer_);
  proxy_pending_ = offset == 0;
}

// One request of read_size_ bytes where the previous one ended; 0 at the end of the file.
Result<size_t> TarStream::Fill() {
  buf_offset_ += have_;
  have_ = pos_ = 0;
  if (python_) {
    const size_t n = proxy_pending_ ? static_cast<size_t>(kBlock) : buf_size_;
    proxy_pending_ = false;
    DLIO_ASSIGN_OR_RETURN(have_, python_->ReadInto(n, buf_.get()));
    return have_;
  }
  DLIO_ASSIGN_OR_RETURN(have_, file_->ReadAt(buf_offset_, FillBytes(), buf_.get()));
  return have_;
}

size_t TarStream::FillBytes() const {
  const bool small = direct_ && (large_members_ || !member_seen_);
  return small ? std::min<size_t>(buf_size_, kFillAfterDirect) : buf_size_;
}

// The next n bytes (the buffer is empty) straight into dst, in read_size_ requests.
Status TarStream::ReadDirect(uint64_t n, uint8_t* dst) {
  const uint64_t at = buf_offset_ + have_;
  if (n > file_size_ - std::min(file_size_, at)) {
    return Status::Corruption(path_, ": the file ends at offset ", file_size_, ", ",
                              n - (file_size_ - std::min(file_size_, at)),
                              " bytes short of the member being read");
  }
  // The next fill (the padding, the next headers and small members: the request Fill would make
  // next, short at the end of the file) joins the last request when it fits in read_size_ beside
  // it: one request of the two ranges (File::ReadTwoAt), or the same two requests as before.
  const uint64_t last = n % read_size_ == 0 ? read_size_ : n % read_size_;
  const uint64_t tail = FillBytes();
  if (last + tail > read_size_) {
    DLIO_RETURN_NOT_OK(ReadRange(file_, at, n, read_size_, dst));
    buf_offset_ = at + n;
    have_ = pos_ = 0;
    return Status::OK();
  }
  DLIO_RETURN_NOT_OK(ReadRange(file_, at, n - last, read_size_, dst));
  DLIO_ASSIGN_OR_RETURN(size_t got,
                        file_->ReadTwoAt(at + n - last, static_cast<size_t>(last), dst + n - last,
                                         static_cast<size_t>(tail), buf_.get()));
  if (got < last) {
    return Status::Corruption(path_, ": short read at offset ", at + n - last, ": wanted ", last,
                              " bytes, got ", got, " (file ends early)");
  }
  buf_offset_ = at + n;
  have_ = got - static_cast<size_t>(last);
  pos_ = 0;
  return Status::OK();
}

Status TarStream::Take(uint64_t n, uint8_t* dst) {
  if (direct_ && dst != nullptr && n >= kDirectBytes) large_members_ = true;
  while (n > 0) {
    if (pos_ == have_) {
      if (direct_ && dst != nullptr && n >= kDirectBytes) return ReadDirect(n, dst);
      DLIO_ASSIGN_OR_RETURN(size_t got, Fill());
      if (got == 0) {
        return Status::Corruption(path_, ": the file ends at offset ", Tell(), ", ", n,
                                  " bytes short of the member being read");
      }
    }
    const size_t k = static_cast<size_t>(std::min<uint64_t>(n, have_ - pos_));
    if (dst != nullptr) {
      std::memcpy(dst, buf_.get() + pos_, k);
      dst += k;
    }
    pos_ += k;
    n -= k;
  }
  return Status::OK();
}

Status TarStream::SkipPadding(const Member& m) {
  return Take(PadToBlock(m.size) - m.size, nullptr);
}

// The payload of a pax ('x', 'g') or GNU long-name ('L') header at `at` (ApplyExtended).
Status TarStream::ReadExtended(const Header& h, uint64_t at, PaxOverride* pax) {
  DLIO_RETURN_NOT_OK(CheckExtendedSize(h, file_size_ - std::min(file_size_, Tell()), path_, at));
  std::string data(h.size, '\0');
  DLIO_RETURN_NOT_OK(Take(h.size, reinterpret_cast<uint8_t*>(data.data())));
  DLIO_RETURN_NOT_OK(Take(PadToBlock(h.size) - h.size, nullptr));
  return ApplyExtended(h, data, path_, at, pax);
}

Result<bool> TarStream::Next(Member* m) {
  PaxOverride pax;
  uint64_t first = Tell();
  uint8_t block[kBlock];
  while (!ended_) {
    const uint64_t at = Tell();
    if (at >= file_size_) return false;  // tarfile: an empty read ends the archive too
    if (file_size_ - at < kBlock) {
      return Status::Corruption(path_, ": truncated tar header at offset ", at, " (the file ends ",
                                "at ", file_size_, ")");
    }
    DLIO_RETURN_NOT_OK(Take(kBlock, block));
    DLIO_ASSIGN_OR_RETURN(Header h, ParseHeader(block, path_, at));
    if (h.zero) ended_ = true;
    if (h.zero) return false;
    if (IsExtended(h)) {
      DLIO_RETURN_NOT_OK(ReadExtended(h, at, &pax));
      continue;
    }
    const uint64_t size = pax.has_size ? pax.size : h.size;
    if (size > file_size_ - Tell()) {
      return Status::Corruption(path_, ": tar header at offset ", at, ": member size ", size,
                                " runs past the end of the file (", file_size_, " bytes)");
    }
    if (h.type != '0' && h.type != '\0' && h.type != '7') {  // not a regular file: skipped
      DLIO_RETURN_NOT_OK(Take(PadToBlock(size), nullptr));
      pax = PaxOverride{};
      first = Tell();
      continue;
    }
    member_seen_ = true;
    m->name = pax.has_path ? pax.path : h.name;
    m->header_offset = first;
    m->data_offset = Tell();
    m->size = size;
    return true;
  }
  return false;
}

}  // namespace dlio::format_internal::tar
