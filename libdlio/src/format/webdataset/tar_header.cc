#include "format/webdataset/tar_header.h"

#include <algorithm>
#include <cstring>

namespace dlio::format_internal::tar {
namespace {

// Field offsets and widths of the ustar header.
constexpr size_t kName = 0, kNameLen = 100;
constexpr size_t kMode = 100, kUid = 108, kGid = 116, kSize = 124, kMtime = 136, kChksum = 148;
constexpr size_t kType = 156, kMagic = 257, kUname = 265, kGname = 297, kPrefix = 345;
constexpr uint64_t kMaxOctalSize = (uint64_t{1} << 33) - 1;  // 11 octal digits: 8 GiB - 1

void PutString(uint8_t* block, size_t at, size_t width, std::string_view s) {
  std::memcpy(block + at, s.data(), std::min(width, s.size()));
}

// tarfile's itn for the values it writes: width-1 zero-padded octal digits and a NUL.
void PutOctal(uint8_t* block, size_t at, size_t width, uint64_t v) {
  for (size_t i = width - 1; i-- > 0;) {
    block[at + i] = static_cast<uint8_t>('0' + (v & 7));
    v >>= 3;
  }
  block[at + width - 1] = 0;
}

// The checksum's sum: every byte, the checksum field's eight counted as spaces (one plain pass
// the compiler vectorizes; 0 only for an all-zero block).
uint64_t UnsignedSum(const uint8_t* block) {
  uint32_t sum = 0;
  for (size_t i = 0; i < kBlock; ++i) sum += block[i];
  for (size_t i = kChksum; i < kChksum + 8; ++i) sum -= block[i];
  return sum + 8 * uint32_t{' '};
}

int64_t SignedSum(const uint8_t* block) {
  int64_t sum = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    sum += (i >= kChksum && i < kChksum + 8) ? ' ' : static_cast<int8_t>(block[i]);
  }
  return sum;
}

// One header block with tarfile's checksum ("%06o\0" then the field's last space).
void AppendBlock(std::string* out, std::string_view name, uint32_t mode, uint64_t size,
                 uint64_t mtime, char type, std::string_view uname, std::string_view gname) {
  uint8_t b[kBlock] = {};
  PutString(b, kName, kNameLen, name);
  PutOctal(b, kMode, 8, mode & 07777);
  PutOctal(b, kUid, 8, 0);
  PutOctal(b, kGid, 8, 0);
  PutOctal(b, kSize, 12, size);
  PutOctal(b, kMtime, 12, mtime);
  b[kType] = static_cast<uint8_t>(type);
  std::memcpy(b + kMagic,
              "ustar\0"
              "00",
              8);
  PutString(b, kUname, 32, uname);
  PutString(b, kGname, 32, gname);
  PutOctal(b, kChksum, 7, UnsignedSum(b));
  b[kChksum + 7] = ' ';
  out->append(reinterpret_cast<const char*>(b), kBlock);
}

// "<len> <key>=<value>\n", where len counts the whole record including its own digits.
std::string PaxRecord(std::string_view key, std::string_view value) {
  const size_t body = key.size() + value.size() + 3;
  size_t len = body + 1;
  while (body + std::to_string(len).size() != len) len = body + std::to_string(len).size();
  return std::to_string(len) + " " + std::string(key) + "=" + std::string(value) + "\n";
}

std::string_view Cstr(const uint8_t* field, size_t width) {
  const auto* p = reinterpret_cast<const char*>(field);
  return {p, strnlen(p, width)};
}

Status Bad(const std::string& path, uint64_t offset, const std::string& what) {
  return Status::Corruption(path, ": tar header at offset ", offset, ": ", what);
}

// tarfile's nti: octal digits (NUL or space terminated, spaces around), or GNU base-256.
Result<uint64_t> Numeric(const uint8_t* b, size_t at, size_t width, const char* field,
                         const std::string& path, uint64_t offset) {
  const uint8_t* f = b + at;
  if (f[0] == 0x80 || f[0] == 0xff) {
    if (f[0] == 0xff) return Bad(path, offset, std::string("negative ") + field);
    uint64_t v = 0;
    for (size_t i = 1; i < width; ++i) {
      if (v >> 55) return Bad(path, offset, std::string(field) + " exceeds 2^63");
      v = (v << 8) | f[i];
    }
    return v;
  }
  std::string_view s = Cstr(f, width);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '7') {
      return Bad(path, offset, std::string(field) + " is not octal ('" + std::string(s) + "')");
    }
    if (v >> 60) return Bad(path, offset, std::string(field) + " exceeds 2^63");
    v = v * 8 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

}  // namespace

void AppendMemberHeader(std::string* out, const std::string& name, uint64_t size,
                        const MemberMeta& meta) {
  // tarfile's create_pax_header: a record per field that does not fit, path before size.
  std::string records;
  if (name.size() > kNameLen) records += PaxRecord("path", name);
  const bool big = size > kMaxOctalSize;
  if (big) records += PaxRecord("size", std::to_string(size));
  if (!records.empty()) {
    AppendBlock(out, "././@PaxHeader", 0, records.size(), 0, 'x', "", "");
    out->append(records);
    out->append(PadToBlock(records.size()) - records.size(), '\0');
  }
  AppendBlock(out, name, meta.mode, big ? 0 : size, meta.mtime, '0', meta.uname, meta.gname);
}

Result<Header> ParseHeader(const uint8_t* b, const std::string& path, uint64_t offset) {
  Header h;
  const uint64_t unsigned_sum = UnsignedSum(b);
  h.zero = unsigned_sum == 8 * uint64_t{' '} &&
           std::all_of(b, b + kBlock, [](uint8_t c) { return c == 0; });
  if (h.zero) return h;
  DLIO_ASSIGN_OR_RETURN(uint64_t sum, Numeric(b, kChksum, 8, "checksum", path, offset));
  if (sum != unsigned_sum && static_cast<int64_t>(sum) != SignedSum(b)) {
    return Bad(path, offset,
               "checksum " + std::to_string(sum) + " does not match the header's bytes (" +
                   std::to_string(unsigned_sum) + ")");
  }
  DLIO_ASSIGN_OR_RETURN(h.size, Numeric(b, kSize, 12, "size", path, offset));
  h.type = static_cast<char>(b[kType]);
  h.name = std::string(Cstr(b + kName, kNameLen));
  const std::string_view prefix = Cstr(b + kPrefix, 155);
  if (std::memcmp(b + kMagic, "ustar\0", 6) == 0 && !prefix.empty()) {
    h.name = std::string(prefix) + "/" + h.name;
  }
  return h;
}

Status ParsePax(std::string_view records, const std::string& path, uint64_t offset,
                PaxOverride* out) {
  size_t pos = 0;
  while (pos < records.size() && records[pos] != '\0') {
    size_t len = 0, i = pos;
    while (i < records.size() && records[i] >= '0' && records[i] <= '9' && len < (1u << 30)) {
      len = len * 10 + static_cast<size_t>(records[i++] - '0');
    }
    if (i == pos || i >= records.size() || records[i] != ' ' || len <= i + 1 - pos ||
        len > records.size() - pos || records[pos + len - 1] != '\n') {
      return Bad(path, offset, "malformed pax record at byte " + std::to_string(pos));
    }
    const std::string_view kv = records.substr(i + 1, pos + len - 1 - (i + 1));
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos) return Bad(path, offset, "pax record without '='");
    const std::string_view key = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (key == "path") {
      out->has_path = true;
      out->path = std::string(value);
    } else if (key == "size") {
      uint64_t v = 0;
      if (value.empty() || value.size() > 19) return Bad(path, offset, "bad pax size");
      for (char c : value) {
        if (c < '0' || c > '9') return Bad(path, offset, "pax size is not decimal");
        v = v * 10 + static_cast<uint64_t>(c - '0');
      }
      out->has_size = true;
      out->size = v;
    }
    pos += len;
  }
  return Status::OK();
}

Status CheckExtendedSize(const Header& h, uint64_t remaining, const std::string& path,
                         uint64_t offset) {
  if (h.size <= kMaxExtendedBytes && h.size <= remaining) return Status::OK();
  return Bad(path, offset,
             "extended header of " + std::to_string(h.size) + " bytes (at most " +
                 std::to_string(kMaxExtendedBytes) + ", and within the file)");
}

Status ApplyExtended(const Header& h, std::string_view payload, const std::string& path,
                     uint64_t offset, PaxOverride* out) {
  PaxOverride own;
  if (h.type == 'x') {
    DLIO_RETURN_NOT_OK(ParsePax(payload, path, offset, &own));
  } else if (h.type == 'L') {
    own.has_path = true;
    own.path = std::string(payload.substr(0, payload.find('\0')));
  }
  if (own.has_path && !out->has_path) {
    out->has_path = true;
    out->path = std::move(own.path);
  }
  if (own.has_size && !out->has_size) {
    out->has_size = true;
    out->size = own.size;
  }
  return Status::OK();
}

bool SampleKey(std::string_view name, std::string_view* key) {
  const size_t slash = name.rfind('/');
  const size_t base = slash == std::string_view::npos ? 0 : slash + 1;
  const size_t dot = name.find('.', base);
  if (dot == std::string_view::npos || dot == base) return false;
  *key = name.substr(0, dot);
  return true;
}

}  // namespace dlio::format_internal::tar
