// A tar archive read as one forward stream, the way tarfile's stream mode (r|) reads it: every
// request is `read_size` bytes at the offset where the previous one ended; members are parsed as
// the stream passes them. With `direct` (dlio's native reads), member data of at least
// kDirectBytes that the buffer does not hold is read straight into the caller's memory in
// `read_size` requests, and once the stream has met such a member its fills are at most
// kFillAfterDirect bytes (the padding, the next headers and small members), so the next large
// member's bytes are not read into the buffer first: one copy of a large sample's bytes, as a
// plain pread loop. A direct stream's fills are kFillAfterDirect bytes too until it has seen a
// member (its first fill cannot know the members' sizes), then `read_size` while every member
// seen is small; the buffer is not zeroed, so its pages are touched only as far as fills reach.
// With `python_buffer` > 0 (WebDataset's tarfile.open(fileobj=open(path, "rb"), mode="r|*")), every
// request goes through Python's BufferedReader of that many bytes instead, after _StreamProxy's
// 512-byte read that tarfile then takes as the stream's first block: the same bytes in the same
// order, split into the read(2) calls CPython makes (docs/io_models.md, "tarfile"). Not thread-safe
// (its owner locks).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlio/storage.h"
#include "format/webdataset/tar_header.h"
#include "io_models/pyio/buffered_reader.h"

namespace dlio::format_internal::tar {

// A regular file member: its name (after pax and GNU long-name headers) and where its data is.
struct Member {
  std::string name;
  uint64_t header_offset = 0;  // its first header (the pax or long-name one when present)
  uint64_t data_offset = 0;
  uint64_t size = 0;
};

inline constexpr uint64_t kDirectBytes = 64 << 10;
inline constexpr uint64_t kFillAfterDirect = 16 << 10;

class TarStream {
 public:
  TarStream(File* file, uint64_t file_size, uint64_t read_size, bool direct = false,
            size_t python_buffer = 0);

  // Starts over at `offset` (a member's first header), as a new stream would.
  void Restart(uint64_t offset);
  uint64_t Tell() const { return buf_offset_ + pos_; }

  // The next regular file member, its data not consumed yet; false at the end of the archive (a
  // zero block, or the end of the file on a block boundary). Corruption naming the file and the
  // header's offset for a truncated or bad header, or a size past the end of the file.
  Result<bool> Next(Member* m);
  // Copies the next `n` bytes into dst (nullptr: skips them). Corruption when the file ends first.
  Status Take(uint64_t n, uint8_t* dst);
  // Consumes a member's data padding (the stream must be at the end of its data).
  Status SkipPadding(const Member& m);

 private:
  Result<size_t> Fill();
  Status ReadDirect(uint64_t n, uint8_t* dst);
  Status ReadExtended(const Header& h, uint64_t at, PaxOverride* pax);

  File* file_;
  std::string path_;
  uint64_t file_size_;
  uint64_t read_size_;
  // How many bytes the next fill asks for (not the python_ path's).
  size_t FillBytes() const;

  std::unique_ptr<uint8_t[]> buf_;  // buf_size_ bytes, not initialized
  size_t buf_size_;
  uint64_t buf_offset_ = 0;  // file offset of buf_[0]
  size_t have_ = 0, pos_ = 0;
  bool ended_ = false;
  bool direct_;
  size_t python_buffer_;
  std::unique_ptr<pyio::BufferedReader> python_;  // with python_buffer_ > 0
  bool proxy_pending_ = false;                    // _StreamProxy's block is the next fill
  bool large_members_ = false;  // a member of >= kDirectBytes was met: small fills
  bool member_seen_ = false;    // a regular member's header was parsed
};

}  // namespace dlio::format_internal::tar
