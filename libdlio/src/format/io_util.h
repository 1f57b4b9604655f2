// Helpers shared by the format readers and writers: request splitting, little-endian fields,
// JSON snippets for DescribeJson, and cleanup of files a failed writer created.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::format_internal {

// Bytes per WriteAt of our writers (generation is not a tuned knob; 4 MiB keeps memory small).
inline constexpr size_t kWriteChunk = 4u << 20;

// Writes a stream of bytes at `offset` onward in WriteAt calls that end on multiples of `chunk`
// in the file (the last one excepted), whatever pieces the stream comes in: 128 + 4 MiB + 4 MiB
// from an .npy's header becomes 4 MiB - 128, 4 MiB, ..., 128. The page cache allocates a written
// range's folios by the write's length and alignment, so writes that cross chunk boundaries
// leave small folios after each one, which a reader's mapping then faults in page by page, where
// a file np.save wrote in one call maps whole (docs/fidelity.md, "How the data was written").
// Copies only the pieces that straddle a boundary (at most `chunk` bytes held). Flush writes what
// is held; call it once at the end.
class ChunkAlignedWriter {
 public:
  ChunkAlignedWriter(File* file, uint64_t offset, size_t chunk)
      : file_(file), pos_(offset), chunk_(chunk) {}
  Status Write(const uint8_t* p, size_t n);
  Status Flush();
  uint64_t end() const { return pos_ + held_.size(); }

 private:
  File* file_;
  uint64_t pos_;  // file offset of held_'s first byte
  size_t chunk_;
  std::vector<uint8_t> held_;
};

// Copies `n` bytes front to back, in pieces of 64 KiB: a destination mapped as a ring smaller
// than `n` (pipeline/read_scratch.h) then ends holding the last bytes, as reads into it leave it.
// One memcpy does not promise that: glibc copies a large block backward when source and
// destination share their offset within a page (it avoids 4 KiB aliasing), where it does not
// use `rep movsb` for that size (AMD's CPUs, past their L2 size).
inline void CopyFrontToBack(uint8_t* dst, const uint8_t* src, size_t n) {
  constexpr size_t kPiece = size_t{64} << 10;
  for (size_t at = 0; at < n; at += kPiece)
    std::memcpy(dst + at, src + at, std::min(kPiece, n - at));
}

// Reads exactly [offset, offset + n) into dst as requests of `transfer_size` bytes each (0 = one
// request): the request size a user tunes, so the split is exact. With O_DIRECT the storage
// backend bounces unaligned requests through its own aligned buffers, so the traced request is
// still the one asked for. Corruption naming the path and offset on a short read.
Status ReadRange(File* file, uint64_t offset, uint64_t n, uint64_t transfer_size, uint8_t* dst);

// A data file opened for reading as every format's reader opens it (O_DIRECT when the workload
// asks for it), and its size.
struct SizedFile {
  std::unique_ptr<File> file;
  uint64_t size = 0;
};
FileOptions ReadFileOptions(const FormatOptions& options);
Result<SizedFile> OpenSized(Storage* storage, const std::string& path,
                            const FormatOptions& options);

// OutOfRange "<path>: sample <i> of <n>" when i >= n, the message every reader gives.
Status CheckSampleIndex(const std::string& path, uint64_t i, uint64_t n);

// The one sample size of `spec` for formats that store a 2-D array (npy, npz); InvalidArgument
// naming `path` and the first sample that differs.
Result<uint64_t> UniformSampleSize(const FileSpec& spec, const std::string& path,
                                   const char* format_name);

inline uint16_t Le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t Le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
inline uint64_t Le64(const uint8_t* p) {
  return static_cast<uint64_t>(Le32(p)) | (static_cast<uint64_t>(Le32(p + 4)) << 32);
}
inline void PutLe16(std::string* s, uint16_t v) {
  s->push_back(static_cast<char>(v & 0xff));
  s->push_back(static_cast<char>(v >> 8));
}
inline void PutLe32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void PutLe64(std::string* s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// A JSON string literal (quotes included).
std::string JsonString(std::string_view s);
// "\"num_samples\":N,\"sample_size\":{\"min\":..,\"max\":..,\"mean\":..}" plus
// ",\"sample_sizes\":[...]" when there are at most 16 samples. No braces.
// Visits every sample: for formats whose sizes vary (and are already in memory).
std::string SampleSizesJson(uint64_t num_samples, const FormatReader& reader);
// The same for `num_samples` samples of `size` bytes each, in O(1) whatever the count.
std::string FixedSampleSizesJson(uint64_t num_samples, uint64_t size);
// ",\"problems\":[...]" when `problems` is not empty, else "": what DescribeJson reports as wrong
// with a file it could open (`dlio-run inspect` exits 1 when there are any).
std::string ProblemsJson(const std::vector<std::string>& problems);

// Removes `path` if it exists, ignoring errors: used when a writer fails after creating a file,
// so a half-written file of ours is not left behind (never called on files we did not create).
void RemoveQuietly(Storage* storage, const std::string& path);

// A new file at `path` (OpenMode::kCreateNew: one already there is AlreadyExists and left alone):
// `write` fills it, then it is closed; on an error after the create the half-written file is
// closed and removed (RemoveQuietly).
Status WriteNewFile(Storage* storage, const std::string& path,
                    const std::function<Status(File*)>& write);

// "none" -> false, "gzip"/"zlib"/"deflate" -> true (case-insensitive), else InvalidArgument
// naming dataset.compression.
Result<bool> ParseCompression(const std::string& compression);

// Shared files (Format::WriteShared). Samples [first, last) of `n` that `rank` writes: contiguous
// shares, the first n % world ranks one sample more.
struct SampleShare {
  uint64_t first = 0, last = 0;
};
SampleShare ShareOf(uint64_t n, int rank, int world);
// Collective: OK on every rank when `mine` is OK on every rank; else each failed rank gets its
// own error and the others Cancelled naming `what`.
Status AgreeAcrossRanks(Comm* comm, const Status& mine, const std::string& what);
// The WriteShared of formats whose every sample lies at a fixed offset: rank 0 runs `create`
// (makes the file and its companions, writing everything but the sample bytes); after all agree,
// every rank opens `path` read-write and writes its share of the samples, the first at
// `data_offsets[share.first]`; on any failure rank 0 removes `created`.
Status WriteSharedSamples(Storage* storage, const std::string& path, const FileSpec& spec,
                          const std::vector<uint64_t>& data_offsets, const SharedWrite& shared,
                          const std::function<Status(std::vector<std::string>* created)>& create);

}  // namespace dlio::format_internal
