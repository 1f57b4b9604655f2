// Reads a text file line by line, plain or gzip (detected by content), in large blocks.
#ifndef DLIO_SRC_PROFILE_LINE_READER_H_
#define DLIO_SRC_PROFILE_LINE_READER_H_

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "dlio/status.h"

namespace dlio::profile_internal {

// Requires external synchronization. Lines are returned without their "\n" (and "\r").
class LineReader {
 public:
  LineReader() = default;
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  Status Open(const std::string& path);
  // Sets *line to the next line (valid until the next call) and returns true; false at the end
  // or on an error (then status() is not ok).
  bool Next(std::string_view* line);
  const Status& status() const { return status_; }
  // The file's size on disk and whether it is gzip: lets importers reserve.
  int64_t file_size() const { return file_size_; }
  bool gzip() const { return gz_ != nullptr; }
  int64_t line_number() const { return line_number_; }

 private:
  bool Fill();
  // Appends up to kBlock bytes to buf_ from gz_ or fd_; the count, 0 at the end, -1 on error.
  int64_t ReadBlock(char* dst);

  gzFile gz_ = nullptr;  // gzip files (every member of a concatenation)
  int fd_ = -1;          // plain files: read directly, without zlib's copy
  std::string path_;
  // [pos_, len_) of buf_ (capacity cap_) is unread. Not a std::string: resize would zero every
  // block before it is read into.
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0, len_ = 0, pos_ = 0;
  int64_t file_size_ = -1;
  bool eof_ = false;
  int64_t line_number_ = 0;
  Status status_;
};

}  // namespace dlio::profile_internal

#endif  // DLIO_SRC_PROFILE_LINE_READER_H_
