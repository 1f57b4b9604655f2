// The parts of the ZIP format numpy's .npz uses: stored and deflated members, ZIP64 extras and
// end records, read from the central directory (never by scanning local headers).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::format_internal {

inline constexpr uint16_t kZipStored = 0;
inline constexpr uint16_t kZipDeflate = 8;

struct ZipMember {
  std::string name;
  uint16_t method = kZipStored;
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_offset = 0;  // of the local header
  uint64_t data_offset = 0;   // of the member's bytes (after the local header); 0 until located
};

struct ZipDirectory {
  std::vector<ZipMember> members;
  uint64_t cd_offset = 0, cd_size = 0;
  bool zip64 = false;
};

// Reads the end record(s) and the central directory. Corruption naming `file->path()` and the
// offset when a record is missing, has a bad signature or points outside the file.
Result<ZipDirectory> ReadZipDirectory(File* file, uint64_t file_size);

// Parses `entries` central directory entries from `cd`, the bytes at dir->cd_offset, into
// dir->members (ZIP64 extras applied). Corruption naming file->path() and the offset of an entry
// with a bad signature or one that overruns `cd`.
Status ParseZipCentralDirectory(const File* file, const std::vector<uint8_t>& cd, uint64_t entries,
                                ZipDirectory* dir);

// Reads member `m`'s local header and its m.compressed_size stored bytes into `data` in one
// request (File::ReadTwoAt), and the bytes again at their real offset when the local header's
// name or extra field moves them. Corruption naming `where` and the offset for a bad local header
// signature, a member that runs past the central directory, or a short read.
Status ReadZipMemberBytes(File* file, const ZipDirectory& dir, const ZipMember& m,
                          const std::string& where, uint8_t* data);

// Reads `member`'s local header and sets member->data_offset; checks the data lies before the
// central directory.
Status LocateZipMember(File* file, const ZipDirectory& dir, ZipMember* member);

// Writes one member at `offset` of `file`: its local header, then the bytes that `produce` feeds
// to its sink (stored, or raw-deflated at `level`). Returns the member as it belongs in the
// central directory. Uses ZIP64 local extras when the sizes may reach 4 GiB or `force_zip64`.
using ZipProducer = std::function<Status(const std::function<Status(const uint8_t*, size_t)>&)>;
Result<ZipMember> WriteZipMember(File* file, uint64_t offset, const std::string& name,
                                 uint64_t uncompressed_size, bool deflate, int level,
                                 bool force_zip64, const ZipProducer& produce);

// Writes one deflated member at `offset` of `file` whose data is the first `literals` bytes
// `produce` feeds (exactly that many), then zeros up to `uncompressed_size`, as a raw deflate
// stream of SizedDeflateBytes(literals, uncompressed_size - literals) bytes (sized_deflate.h): a
// member of a chosen compressed size. Returns the member as WriteZipMember does.
Result<ZipMember> WriteSizedZipMember(File* file, uint64_t offset, const std::string& name,
                                      uint64_t uncompressed_size, uint64_t literals,
                                      bool force_zip64, const ZipProducer& produce);

// Writes the central directory and end records at `offset` (ZIP64 records when needed or forced).
Status WriteZipDirectory(File* file, uint64_t offset, const std::vector<ZipMember>& members,
                         bool force_zip64);

}  // namespace dlio::format_internal
