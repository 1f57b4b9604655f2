#include "format/hdf5/hdf5_metadata_guard.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace dlio::format_internal::hdf5 {
namespace {

constexpr uint8_t kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
constexpr uint64_t kUndefined = std::numeric_limits<uint64_t>::max();
constexpr uint16_t kContinuationMessage = 0x0010, kSymbolTableMessage = 0x0011;
constexpr uint8_t kSharedMessage = 0x02;

// A little-endian field of `n` bytes; kUndefined when it does not fit 64 bits (an address no
// file of this driver reaches).
uint64_t Field(const uint8_t* p, unsigned n) {
  uint64_t v = 0;
  for (unsigned k = n; k-- > 0;) {
    if (k >= 8) {
      if (p[k] != 0) return kUndefined;
      continue;
    }
    v = v << 8 | p[k];
  }
  return v;
}

bool ValidFieldSize(unsigned n) { return n == 2 || n == 4 || n == 8 || n == 16 || n == 32; }

}  // namespace

uint64_t MetadataGuard::Offset(const uint8_t* p) const { return Field(p, offset_bytes_); }
uint64_t MetadataGuard::Length(const uint8_t* p) const { return Field(p, length_bytes_); }

void MetadataGuard::LearnSizes(const uint8_t* buf, size_t size) {
  // Superblock versions 0 and 1 keep the two sizes at bytes 13 and 14, versions 2 and 3 at 9, 10.
  if (size < 15 || std::memcmp(buf, kSignature, sizeof kSignature) != 0) return;
  const size_t at = buf[8] < 2 ? 13 : 9;
  if (ValidFieldSize(buf[at]) && ValidFieldSize(buf[at + 1])) {
    offset_bytes_ = buf[at];
    length_bytes_ = buf[at + 1];
  }
}

Status MetadataGuard::CheckHeap(uint64_t at, const uint8_t* buf, size_t size, uint64_t eoa,
                                const std::string& path) {
  // "HEAP", version 0, 3 reserved bytes, the segment's size, the free list's head, its address.
  const size_t header = 8 + 2 * size_t{length_bytes_} + offset_bytes_;
  if (size < header || std::memcmp(buf, "HEAP", 4) != 0) return Status::OK();
  const uint64_t bytes = Length(buf + 8);
  const uint64_t addr = Offset(buf + 8 + 2 * length_bytes_);
  if (bytes == 0) return Status::OK();  // libhdf5 refuses it
  if (bytes > eoa || addr > eoa - bytes) {
    return Status::Corruption(path, ": the local heap at file offset ", at, " claims ", bytes,
                              " bytes at file offset ", addr,
                              ", past the allocated end of the file (", eoa, " bytes)");
  }
  segment_ends_.insert(addr + bytes - 1);
  return Status::OK();
}

void MetadataGuard::TerminateHeaps(uint64_t addr, uint8_t* buf, size_t size) const {
  // A segment may follow its header in the read that brought the header, or come in its own.
  for (auto it = segment_ends_.lower_bound(addr); it != segment_ends_.end() && *it - addr < size;
       ++it) {
    buf[*it - addr] = 0;
  }
}

// A version 1 header: version 1, a reserved 0, the number of messages (2 bytes), the reference
// count (4), the first chunk's size (4), 4 reserved bytes, then the chunk's messages; a
// continuation chunk (at an address a continuation message gave) is messages only. Each message:
// type (2), size (2), flags (1), 3 reserved bytes, then its data. Version 2 headers carry a
// checksum libhdf5 verifies first.
Status MetadataGuard::CheckObjectHeader(uint64_t addr, const uint8_t* buf, size_t size,
                                        uint64_t eoa, const std::string& path) {
  size_t at = 0, end = size;
  if (continuations_.count(addr) == 0) {
    if (size < 16 || buf[0] != 1 || buf[1] != 0) return Status::OK();
    at = 16;
    end = static_cast<size_t>(std::min<uint64_t>(size, 16 + uint64_t{Field(buf + 8, 4)}));
  }
  while (at + 8 <= end) {
    const uint16_t type = static_cast<uint16_t>(Field(buf + at, 2));
    const size_t bytes = Field(buf + at + 2, 2);
    const uint8_t flags = buf[at + 4];
    const uint8_t* data = buf + at + 8;
    if (bytes > end - at - 8) break;
    at += 8 + bytes;
    if ((flags & kSharedMessage) != 0) continue;
    if (type == kContinuationMessage && bytes >= offset_bytes_) {
      continuations_.insert(Offset(data));
    } else if (type == kSymbolTableMessage && bytes >= 2 * size_t{offset_bytes_}) {
      const uint64_t btree = Offset(data), heap = Offset(data + offset_bytes_);
      if (btree >= eoa || heap >= eoa) {
        return Status::Corruption(path, ": the object header at file offset ", addr,
                                  " gives its group's B-tree at file offset ", btree,
                                  " and name heap at ", heap,
                                  ", past the allocated end of the file (", eoa, " bytes)");
      }
    }
  }
  return Status::OK();
}

Status MetadataGuard::OnRead(Kind kind, uint64_t addr, uint8_t* buf, size_t size, uint64_t eoa,
                             const std::string& path) {
  switch (kind) {
    case Kind::kSuperblock:
      LearnSizes(buf, size);
      return Status::OK();
    case Kind::kObjectHeader:
      return CheckObjectHeader(addr, buf, size, eoa, path);
    case Kind::kLocalHeap:
      DLIO_RETURN_NOT_OK(CheckHeap(addr, buf, size, eoa, path));
      TerminateHeaps(addr, buf, size);
      return Status::OK();
    case Kind::kOther:
      return Status::OK();
  }
  return Status::OK();
}

}  // namespace dlio::format_internal::hdf5
