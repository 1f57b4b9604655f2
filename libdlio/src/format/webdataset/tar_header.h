// POSIX tar headers as Python's tarfile (PAX_FORMAT, its default) and GNU tar write them: a
// 512-byte ustar header per member, preceded by a pax extended header ("././@PaxHeader", type 'x')
// when a name does not fit the 100-byte field or a size does not fit 11 octal digits (8 GiB - 1).
// Readers also take GNU tar's long names (type 'L') and base-256 sizes. docs/formats.md,
// "webdataset".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dlio/status.h"

namespace dlio::format_internal::tar {

inline constexpr uint64_t kBlock = 512;
// tarfile's RECORDSIZE (20 blocks, GNU tar's default blocking factor): archives end on a record
// boundary, and tarfile's stream mode (r|) reads the file in requests of this size.
inline constexpr uint64_t kRecord = 20 * kBlock;

inline uint64_t PadToBlock(uint64_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

// The metadata our writer gives every member (WebDataset's TarWriter defaults).
struct MemberMeta {
  uint32_t mode = 0444;
  uint64_t mtime = 0;  // fixed, so a regenerated shard has the same bytes
  std::string uname = "bigdata";
  std::string gname = "bigdata";
};

// Appends the header block(s) of a regular file `name` of `size` bytes: tarfile's bytes exactly.
void AppendMemberHeader(std::string* out, const std::string& name, uint64_t size,
                        const MemberMeta& meta);

// One parsed 512-byte header. `zero`: an all-zero block (the end-of-archive marker).
struct Header {
  bool zero = false;
  char type = '0';
  std::string name;  // prefix + "/" + name when the ustar prefix is set
  uint64_t size = 0;
};

// Parses the block at `offset` of `path`: Corruption naming both for a bad checksum, a numeric
// field that is neither octal nor base-256, or a size past 2^63.
Result<Header> ParseHeader(const uint8_t* block, const std::string& path, uint64_t offset);

// What a pax extended header (type 'x') overrides in the next member: path and size.
struct PaxOverride {
  bool has_path = false, has_size = false;
  std::string path;
  uint64_t size = 0;
};

// Parses pax records "<len> <key>=<value>\n" of the header at `offset`; Corruption naming the
// file and offset for a malformed record.
Status ParsePax(std::string_view records, const std::string& path, uint64_t offset,
                PaxOverride* out);

// Pax and GNU long-name payloads larger than this are refused (tarfile reads them whole too).
inline constexpr uint64_t kMaxExtendedBytes = 1 << 20;

// The header `h` at `offset` is a pax ('x'), global pax ('g') or GNU long-name ('L') header.
inline bool IsExtended(const Header& h) { return h.type == 'x' || h.type == 'g' || h.type == 'L'; }

// Corruption naming the file and offset when `h`'s payload exceeds kMaxExtendedBytes or the
// `remaining` bytes of the file.
Status CheckExtendedSize(const Header& h, uint64_t remaining, const std::string& path,
                         uint64_t offset);

// Applies the payload of the extended header `h` at `offset` to the member that follows, as
// CPython's tarfile does: 'x' records (ParsePax) and an 'L' name; 'g' records change nothing read
// here. When several headers precede one member, the first one's values win (tarfile reads the
// next header before it applies a header's own values, so the outermost are applied last).
Status ApplyExtended(const Header& h, std::string_view payload, const std::string& path,
                     uint64_t offset, PaxOverride* out);

// WebDataset's sample key of a member name: the path up to the first '.' of its last component
// (its base_plus_ext); false for a name whose last component has no '.' (WebDataset skips it).
bool SampleKey(std::string_view name, std::string_view* key);

}  // namespace dlio::format_internal::tar
