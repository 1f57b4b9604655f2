// A forward-only raw-deflate stream over one ZIP member, reading its compressed bytes with
// File::ReadAt in requests of transfer_size and checking the member's CRC-32 when a pass ends.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dlio/status.h"
#include "dlio/storage.h"
#include "format/zip.h"

namespace dlio::format_internal {

// Requires external synchronization (one stream position).
class ZipInflater {
 public:
  // `file` must outlive the inflater. transfer_size 0 reads the compressed member in one request.
  ZipInflater(File* file, const ZipMember& m, uint64_t transfer_size, bool verify);
  ~ZipInflater();
  ZipInflater(const ZipInflater&) = delete;
  ZipInflater& operator=(const ZipInflater&) = delete;

  uint64_t pos() const { return pos_; }

  // Compressed bytes per request from the next restart on (0: the whole member in one).
  void SetTransferSize(uint64_t transfer_size) { next_transfer_ = transfer_size; }

  // Writes uncompressed bytes [from, from + n) of the member to dst; going back restarts the
  // stream from the member's start. Corruption naming the file, member and offset when the
  // deflate data is damaged or truncated, or (with verify) the CRC differs at the end.
  Status Read(uint64_t from, uint64_t n, uint8_t* dst);

 private:
  std::string Where() const;
  void SizeInput(uint64_t transfer_size);
  Status Restart();
  Status Produce(uint8_t* dst, uint64_t n);

  File* file_;
  ZipMember m_;
  bool verify_;
  z_stream zs_{};
  bool init_ = false, ended_ = false;
  std::vector<uint8_t> in_, scratch_;
  uint64_t in_pos_ = 0, pos_ = 0;
  std::optional<uint64_t> next_transfer_;
  uint32_t crc_ = 0;
};

}  // namespace dlio::format_internal
