// Looks at the metadata libhdf5 reads through the driver, before libhdf5 sees it, for the
// corruptions libhdf5 1.10.8 reads past its buffers or allocates without bound on (found by the
// fuzz stage; tests/fuzz/regressions/hdf5/). It costs no I/O: it reads bytes libhdf5 reads anyway.
//
//  - Local heaps (the link names of old-style groups, h5py's default): libhdf5 copies a name with
//    strdup/strcmp from its offset to the first NUL, past the end of the heap's data segment when
//    a corrupt heap holds no NUL after it (1.14 bounds a name by the segment). The guard sets the
//    last byte of every segment to 0 as it is read: a valid heap ends in a name's NUL padding or
//    in free space, so nothing a valid file says changes; a corrupt name is cut at the end of its
//    heap. A heap whose segment ends past the file's allocated end is refused before libhdf5
//    allocates the size it claims (terabytes, from one flipped byte).
//  - Version 1 object headers: libhdf5 protects the heap and B-tree a group's symbol table
//    message names without checking the address (an undefined one made it copy from a null
//    pointer), and allocates the size a header's first chunk claims before reading it (4 GiB
//    from a flipped byte). Addresses and chunks past the file's allocated end are refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dlio/status.h"

namespace dlio::format_internal::hdf5 {

class MetadataGuard {
 public:
  enum class Kind { kSuperblock, kObjectHeader, kLocalHeap, kOther };

  // Called with the bytes of every read of a read-only file (`kind` from the read's memory type):
  // learns the sizes of offsets and lengths from the superblock, and checks or mends the object
  // headers and local heaps the read holds. Corruption naming `path` and the offsets when a read
  // says something `eoa`, the file's allocated end, rules out.
  Status OnRead(Kind kind, uint64_t addr, uint8_t* buf, size_t size, uint64_t eoa,
                const std::string& path);

 private:
  void LearnSizes(const uint8_t* buf, size_t size);
  Status CheckHeap(uint64_t addr, const uint8_t* buf, size_t size, uint64_t eoa,
                   const std::string& path);
  void TerminateHeaps(uint64_t addr, uint8_t* buf, size_t size) const;
  Status CheckObjectHeader(uint64_t addr, const uint8_t* buf, size_t size, uint64_t eoa,
                           const std::string& path);
  Status CheckMessages(uint64_t header, const uint8_t* p, size_t n, uint64_t eoa,
                       const std::string& path);
  uint64_t Offset(const uint8_t* p) const;
  uint64_t Length(const uint8_t* p) const;

  unsigned offset_bytes_ = 8, length_bytes_ = 8;  // the superblock's, 8 until it is read
  std::set<uint64_t> segment_ends_;               // address of the last byte of each heap segment
  std::set<uint64_t> continuations_;              // addresses of object header continuation chunks
  // A first chunk longer than the read that brought its header: its bytes so far, how many are
  // missing and the address its rest will be read at. libhdf5 reads that rest right after the
  // header's speculative read, so any other object header read drops it (one at most, never
  // stale).
  struct PartialChunk {
    uint64_t header = 0;
    std::vector<uint8_t> bytes;
    uint64_t missing = 0;
    uint64_t rest_at = 0;
  };
  std::optional<PartialChunk> partial_;
};

}  // namespace dlio::format_internal::hdf5
