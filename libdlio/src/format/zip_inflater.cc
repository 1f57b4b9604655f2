#include "format/zip_inflater.h"

#include <algorithm>

namespace dlio::format_internal {

ZipInflater::ZipInflater(File* file, const ZipMember& m, uint64_t transfer_size, bool verify)
    : file_(file), m_(m), verify_(verify) {
  SizeInput(transfer_size);
}

void ZipInflater::SizeInput(uint64_t transfer_size) {
  const uint64_t chunk = transfer_size == 0 ? m_.compressed_size : transfer_size;
  in_.resize(static_cast<size_t>(std::max<uint64_t>(1, std::min(chunk, m_.compressed_size))));
}

ZipInflater::~ZipInflater() {
  if (init_) inflateEnd(&zs_);
}

Status ZipInflater::Read(uint64_t from, uint64_t n, uint8_t* dst) {
  if (!init_ || from < pos_) DLIO_RETURN_NOT_OK(Restart());
  while (pos_ < from) {
    if (scratch_.empty()) scratch_.resize(256 << 10);
    const uint64_t skip = std::min<uint64_t>(from - pos_, scratch_.size());
    DLIO_RETURN_NOT_OK(Produce(scratch_.data(), skip));
  }
  return Produce(dst, n);
}

std::string ZipInflater::Where() const { return file_->path() + " member '" + m_.name + "'"; }

Status ZipInflater::Restart() {
  if (!init_) {
    if (inflateInit2(&zs_, -15) != Z_OK) return Status::Internal("inflateInit2 failed");
    init_ = true;
  } else {
    inflateReset(&zs_);
  }
  zs_.avail_in = 0;  // nothing points into in_ any more: it may be resized
  if (next_transfer_) {
    SizeInput(*next_transfer_);
    next_transfer_.reset();
  }
  in_pos_ = pos_ = 0;
  crc_ = static_cast<uint32_t>(crc32(0, nullptr, 0));
  ended_ = false;
  return Status::OK();
}

Status ZipInflater::Produce(uint8_t* dst, uint64_t n) {
  while (n > 0) {
    if (ended_) {
      return Status::Corruption(Where(), " at offset ", m_.data_offset,
                                ": deflate stream ends after ", pos_,
                                " bytes, central directory says ", m_.uncompressed_size);
    }
    if (zs_.avail_in == 0 && in_pos_ < m_.compressed_size) {
      const uint64_t len = std::min<uint64_t>(in_.size(), m_.compressed_size - in_pos_);
      DLIO_RETURN_NOT_OK(file_->ReadExactAt(m_.data_offset + in_pos_, len, in_.data()));
      zs_.next_in = in_.data();
      zs_.avail_in = static_cast<uInt>(len);
      in_pos_ += len;
    }
    // At most 256 KiB a call: the CRC below reads back what the call wrote, while it is in cache
    // and before a streaming buffer reuses its memory (FormatCapabilities::streams_samples).
    const uInt want = static_cast<uInt>(std::min<uint64_t>(n, uint64_t{1} << 18));
    zs_.next_out = dst;
    zs_.avail_out = want;
    const int ret = inflate(&zs_, Z_NO_FLUSH);
    const uInt got = want - zs_.avail_out;
    if (ret != Z_OK && ret != Z_STREAM_END && !(ret == Z_BUF_ERROR && got > 0)) {
      const uint64_t at = m_.data_offset + in_pos_ - zs_.avail_in;
      if (ret == Z_BUF_ERROR) {
        return Status::Corruption(Where(), ": deflate data truncated at offset ", at);
      }
      return Status::Corruption(Where(), ": bad deflate data near offset ", at, ": ",
                                (zs_.msg ? zs_.msg : "error"));
    }
    if (verify_) crc_ = static_cast<uint32_t>(crc32_z(crc_, dst, got));
    pos_ += got;
    dst += got;
    n -= got;
    if (ret == Z_STREAM_END) ended_ = true;
    if (pos_ == m_.uncompressed_size && verify_ && crc_ != m_.crc32) {
      return Status::Corruption(Where(), " at offset ", m_.data_offset, ": CRC mismatch (computed ",
                                crc_, ", central directory says ", m_.crc32, ")");
    }
  }
  return Status::OK();
}

}  // namespace dlio::format_internal
