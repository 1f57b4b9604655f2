// Reads a text file line by line, plain or gzip (detected by content), in large blocks.
#ifndef DLIO_SRC_PROFILE_LINE_READER_H_
#define DLIO_SRC_PROFILE_LINE_READER_H_

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "dlio/profile.h"
#include "dlio/status.h"

namespace dlio::profile_internal {

// Opens `path` for reading only when it is a regular file: a FIFO or a device is refused at once
// (opened without blocking, then checked) with an error naming the file, instead of a wait for a
// writer or a read without end. Returns the descriptor (close-on-exec), which the caller closes.
Result<int> OpenTraceFile(const std::string& path);

// Requires external synchronization. Lines are returned without their "\n" (and "\r"). A line
// longer than `max_line` bytes is an error naming file and line: the reader holds at most
// `max_line` plus one block of 1 MiB, however long the line, and looks at every byte once.
class LineReader {
 public:
  explicit LineReader(size_t max_line = kMaxTraceLineBytes) : max_line_(max_line) {}
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Fails naming the file when it cannot be opened or is not a regular file (OpenTraceFile).
  Status Open(const std::string& path);
  // Sets *line to the next line (valid until the next call) and returns true; false at the end
  // or on an error (then status() is not ok).
  bool Next(std::string_view* line);
  const Status& status() const { return status_; }
  // The file's size on disk and whether it is gzip: lets importers reserve.
  int64_t file_size() const { return file_size_; }
  bool gzip() const { return gz_ != nullptr; }
  int64_t line_number() const { return line_number_; }
  // Bytes searched for "\n" so far (for tests: at most the bytes read, whatever the lines).
  int64_t bytes_scanned() const { return bytes_scanned_; }

 private:
  bool Fill();
  // Reads up to `n` bytes to dst from gz_ or fd_; the count, 0 at the end, -1 on error.
  int64_t ReadBlock(char* dst, size_t n);
  bool LineTooLong();

  size_t max_line_;
  gzFile gz_ = nullptr;  // gzip files (every member of a concatenation)
  int fd_ = -1;          // plain files: read directly, without zlib's copy
  std::string path_;
  // [pos_, len_) of buf_ (capacity cap_) is unread; [pos_, scan_) of it holds no "\n". Not a
  // std::string: it would zero (touch) every page of the reservation.
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0, len_ = 0, pos_ = 0, scan_ = 0;
  int64_t file_size_ = -1;
  bool eof_ = false;
  int64_t line_number_ = 0;
  int64_t bytes_scanned_ = 0;
  Status status_;
};

}  // namespace dlio::profile_internal

#endif  // DLIO_SRC_PROFILE_LINE_READER_H_
