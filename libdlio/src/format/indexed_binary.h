// indexed_binary and mmap_indexed_binary share one layout (DLIO's): sample bytes back to back in
// the data file, plus "<file>.off.idx" (uint64 byte offset of each sample) and "<file>.sz.idx"
// (uint64 size of each sample), little-endian, one entry per sample. This header joins the
// format (indexed_binary_format.cc) and its memory-mapped reader (indexed_binary_mmap.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dlio/format.h"

namespace dlio::format_internal {

inline std::string OffsetIndexPath(const std::string& path) { return path + ".off.idx"; }
inline std::string SizeIndexPath(const std::string& path) { return path + ".sz.idx"; }

// The entries of an index file whose `size` bytes are `raw`: Corruption naming `path` when the
// size is not a multiple of 8.
Result<std::vector<uint64_t>> ParseIndex(const std::string& path, const uint8_t* raw,
                                         uint64_t size);
// Checks that the two indexes of `path` (a data file of `size` bytes) agree and that every
// sample lies inside the file; Corruption naming the index file, the entry and the data file.
Status CheckIndexes(const std::string& path, uint64_t size, const std::vector<uint64_t>& offsets,
                    const std::vector<uint64_t>& sizes);
// The DescribeJson of a reader of `format` over `path`.
std::string DescribeIndexedBinary(const std::string& format, const std::string& path,
                                  uint64_t file_size, const FormatReader& reader);

// The reader of the mmap model (reader.io_model mmap), as np.memmap does it: maps the two index
// files and copies their entries out, then maps the data file for the reader's lifetime; a
// sample is a copy out of the mapping (np.array(memmap[offset:offset + size])), so its pages
// fault in instead of being read. Unimplemented naming the storage when it cannot map files.
Result<std::unique_ptr<FormatReader>> OpenMmapIndexedBinary(Storage* storage,
                                                            const std::string& format,
                                                            const std::string& path,
                                                            const FormatOptions& options);

}  // namespace dlio::format_internal
