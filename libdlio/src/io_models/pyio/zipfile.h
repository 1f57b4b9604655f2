// Python's zipfile reading an archive, emulated over a BufferedReader so the requests are the
// ones CPython 3.11's Lib/zipfile.py makes: _EndRecData (read() of the last 22 bytes, the
// comment search, the ZIP64 locator), the central directory in one read, and per member
// ZipFile.open (local header, name, extra) and ZipExtFile.read (compressed reads of at least
// MIN_READ_SIZE through the shared file, zlib decompression with max_length, CRC-32 of every
// byte handed out, checked at the member's end).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlio/status.h"
#include "io_models/pyio/buffered_reader.h"

namespace dlio::pyio {

// zipfile.ZipInfo: what ZipFile.open needs of a member.
struct ZipInfo {
  std::string filename;
  uint16_t flag_bits = 0;
  uint16_t compress_type = 0;  // 0 stored, 8 deflated
  uint32_t crc = 0;
  uint64_t compress_size = 0;
  uint64_t file_size = 0;
  uint64_t header_offset = 0;  // of the local header (with the archive's concat offset)
};

class ZipExtFile;

// zipfile.ZipFile(fp) in mode "r". `fp` must outlive it and its members; requires external
// synchronization (one owner), as the Python object.
class ZipFile {
 public:
  // _RealGetContents. Corruption naming the file when it is not a zip (BadZipFile).
  static Result<ZipFile> Read(BufferedReader* fp);

  const std::vector<ZipInfo>& infolist() const { return members_; }
  // getinfo(name); nullptr when absent.
  const ZipInfo* GetInfo(const std::string& name) const;
  // open(name): reads the local header. Unimplemented for encrypted members and compression
  // other than stored and deflated. Without `check_crc` the CRC-32 is computed but a mismatch
  // is not an error; without `compute_crc` it is not computed at all (reader.client_costs none).
  Result<std::unique_ptr<ZipExtFile>> Open(const ZipInfo& info, bool check_crc = true,
                                           bool compute_crc = true) const;

 private:
  explicit ZipFile(BufferedReader* fp) : fp_(fp) {}
  BufferedReader* fp_;
  std::vector<ZipInfo> members_;
};

// zipfile.ZipExtFile over zipfile._SharedFile: each read of the archive seeks the shared file to
// the member's own position first.
class ZipExtFile {
 public:
  ZipExtFile(BufferedReader* fp, uint64_t data_pos, const ZipInfo& info, bool check_crc = true,
             bool compute_crc = true);
  ~ZipExtFile();
  ZipExtFile(const ZipExtFile&) = delete;
  ZipExtFile& operator=(const ZipExtFile&) = delete;

  // read(n): appends up to `n` bytes (fewer only at the member's end) to `out`. Corruption naming
  // the member for a bad CRC-32, truncated or undecodable data.
  Status Read(size_t n, std::vector<uint8_t>* out);
  // read(n) as the bytes object Python returns, built as ZipExtFile.read builds it (the
  // leftover of the read buffer, then `buf += data` per raw read), so a caller can keep it
  // alive as long as the Python code it emulates does.
  Result<PythonBytes> ReadObject(size_t n);
  // read(n) with ReadObject's requests, into `dst` (room for `n` bytes): a stored member's raw
  // reads land there directly, with no bytes object between (reader.client_costs none).
  // Returns the bytes written (fewer than `n` only at the member's end).
  Result<size_t> ReadInto(size_t n, uint8_t* dst);

 private:
  Result<PythonBytes> Read1(size_t n);               // _read1
  Result<size_t> Read1Into(size_t n, uint8_t* dst);  // _read1 of a stored member, in place
  Status UpdateCrc(const uint8_t* data, size_t n);
  Result<PythonBytes> Read2(size_t n);  // _read2
  Status Decompress(const std::vector<uint8_t>& in, size_t max_length, std::vector<uint8_t>* out);
  Status Flush(std::vector<uint8_t>* out);
  Status Where(const std::string& what) const;

  BufferedReader* fp_;
  uint64_t pos_;         // _SharedFile._pos
  uint64_t data_start_;  // file offset of the member's data, for errors
  bool check_crc_;
  bool compute_crc_;
  ZipInfo info_;
  uint64_t compress_left_, left_;
  bool eof_ = false;
  PythonBytes readbuffer_;
  size_t offset_ = 0;
  uint32_t running_crc_ = 0;
  struct Inflater;
  std::unique_ptr<Inflater> inflater_;  // deflated members
};

}  // namespace dlio::pyio
