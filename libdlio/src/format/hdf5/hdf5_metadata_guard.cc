#include "format/hdf5/hdf5_metadata_guard.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

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

// A chunk's messages: type (2 bytes), size (2), flags (1), 3 reserved bytes, then the data.
Status MetadataGuard::CheckMessages(uint64_t header, const uint8_t* p, size_t n, uint64_t eoa,
                                    const std::string& path) {
  for (size_t at = 0; at + 8 <= n;) {
    const uint16_t type = static_cast<uint16_t>(Field(p + at, 2));
    const size_t bytes = Field(p + at + 2, 2);
    const uint8_t flags = p[at + 4];
    const uint8_t* data = p + at + 8;
    if (bytes > n - at - 8) break;
    at += 8 + bytes;
    if ((flags & kSharedMessage) != 0) continue;
    if (type == kContinuationMessage && bytes >= offset_bytes_) {
      continuations_.insert(Offset(data));
    } else if (type == kSymbolTableMessage && bytes >= 2 * size_t{offset_bytes_}) {
      const uint64_t btree = Offset(data), heap = Offset(data + offset_bytes_);
      if (btree >= eoa || heap >= eoa) {
        return Status::Corruption(path, ": the object header at file offset ", header,
                                  " gives its group's B-tree at file offset ", btree,
                                  " and name heap at ", heap,
                                  ", past the allocated end of the file (", eoa, " bytes)");
      }
    }
  }
  return Status::OK();
}

// A version 1 header: version 1, a reserved 0, the number of messages (2 bytes), the reference
// count (4), the first chunk's size (4), 4 reserved bytes, then the chunk's messages. libhdf5
// reads it speculatively (512 bytes) and a longer first chunk's rest in a second read at the end
// of the first; a continuation chunk (at an address a continuation message gave) is messages
// only. Version 2 headers carry a checksum libhdf5 verifies first.
Status MetadataGuard::CheckObjectHeader(uint64_t addr, const uint8_t* buf, size_t size,
                                        uint64_t eoa, const std::string& path) {
  if (continuations_.count(addr) != 0) return CheckMessages(addr, buf, size, eoa, path);
  std::optional<PartialChunk> pending = std::move(partial_);
  partial_.reset();
  if (pending && pending->rest_at == addr) {
    PartialChunk chunk = std::move(*pending);
    const size_t take = static_cast<size_t>(std::min<uint64_t>(size, chunk.missing));
    chunk.bytes.insert(chunk.bytes.end(), buf, buf + take);
    return CheckMessages(chunk.header, chunk.bytes.data(), chunk.bytes.size(), eoa, path);
  }
  if (size < 16 || buf[0] != 1 || buf[1] != 0) return Status::OK();
  const uint64_t chunk = Field(buf + 8, 4);
  if (addr > eoa || 16 + chunk > eoa - addr) {
    return Status::Corruption(path, ": the object header at file offset ", addr,
                              " claims a first chunk of ", chunk,
                              " bytes, past the allocated end of the file (", eoa, " bytes)");
  }
  if (16 + chunk > size) {  // the rest comes in the next read, at the end of this one
    partial_ = PartialChunk{addr, std::vector<uint8_t>(buf + 16, buf + size), 16 + chunk - size,
                            addr + size};
    return Status::OK();
  }
  return CheckMessages(addr, buf + 16, static_cast<size_t>(chunk), eoa, path);
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
