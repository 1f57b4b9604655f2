// Which bytes of an npy array (an .npy file or an .npz member) are its samples: slices along the
// first axis (dlio's own layout) or along the last (the Python DLIO's x[..., i]); how the axis is
// chosen; how a last-axis sample, strided through the array, is read and gathered; and the
// arrays our writers produce in either layout.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "dlio/format.h"
#include "dlio/status.h"
#include "format/npy_header.h"
#include "format/npy_options.h"

namespace dlio::format_internal {

enum class SampleAxis { kFirst, kLast, kWhole };

// The samples of one array.
struct ArraySamples {
  SampleAxis axis = SampleAxis::kFirst;
  std::string basis;  // what chose the axis: "shape", "labels", "expected_samples", "sample_layout"
  uint64_t num_samples = 0;
  uint64_t sample_size = 0;  // bytes
  uint64_t itemsize = 0;
  // Whether a sample is not one contiguous range: item j of sample i lies at data byte
  // (j * num_samples + i) * itemsize.
  bool strided() const { return axis == SampleAxis::kLast && num_samples > 1 && sample_size > 0; }
  // Data offset of first-axis (or whole-array) sample i.
  uint64_t offset(uint64_t i) const { return i * sample_size; }
  const char* layout_name() const;  // "first_axis", "last_axis", "whole_array"
};

// Chooses the sample axis of `h`: a 0-d or Fortran-order array is one sample; a 1-d array's axes
// are the same; otherwise the first of these that names exactly one of shape[0] and shape[-1]
// wins: `labels` (the length of the file's labels, npz's y), options.samples_per_file, and
// finally NpyOptions::sample_layout (also when both axes have that length).
ArraySamples ResolveArraySamples(const NpyHeader& h, std::optional<uint64_t> labels,
                                 const FormatOptions& options);

// Corruption naming `where` when `s` has more samples of 0 bytes than `file_size` (a file holds
// at most one 0-byte sample per byte it stores: anything beyond cannot be read, listed or
// planned in bounded time and memory).
Status CheckZeroByteSamples(const ArraySamples& s, uint64_t file_size, const std::string& where);

// Reads bytes [pos, pos + n) of an array's data into dst.
using ArrayDataReader = std::function<Status(uint64_t pos, uint64_t n, uint8_t* dst)>;

// numpy's read_array reads an array that is not a plain file (an npz member, through zipfile) in
// pieces of this many bytes; np.load of an .npy reads the data in one request (np.fromfile).
inline constexpr uint64_t kNumpyReadPieceBytes = uint64_t{1} << 18;

// Reads last-axis samples the way np.load does: each sample costs reading the whole array's data,
// in pieces of `piece` bytes (0 = one piece); a single sample is read in place, several are
// gathered from the pieces. With `keep`, the first read keeps the whole array in memory and
// later samples are copies. Thread-safe; `read` is called with the instance's lock held when
// `keep`.
class LastAxisSampleReader {
 public:
  LastAxisSampleReader(ArraySamples samples, uint64_t data_bytes, uint64_t piece, bool keep)
      : s_(std::move(samples)), data_bytes_(data_bytes), piece_(piece), keep_(keep) {}
  // Requires s_.axis == kLast and i < num_samples; `out` holds sample_size bytes.
  Status Read(uint64_t i, const ArrayDataReader& read, uint8_t* out);

 private:
  ArraySamples s_;
  uint64_t data_bytes_, piece_;
  bool keep_;
  std::mutex mu_;  // guards the kept array
  std::vector<uint8_t> array_;
  bool have_array_ = false;
};

// Copies the bytes of last-axis sample i that lie in [pos, pos + n) of the array's data (held at
// `piece`) to their place in `out`: its items when strided, else (one sample) the piece itself.
void GatherSamplePiece(const ArraySamples& s, uint64_t i, uint64_t pos, const uint8_t* piece,
                       uint64_t n, uint8_t* out);

// DescribeJson fields (leading comma): "sample_layout", "layout_basis" and, with labels,
// "labels".
std::string ArraySamplesJson(const ArraySamples& s, std::optional<uint64_t> labels);

// Writers: the array of `n` samples of `record` bytes, in items of `itemsize` bytes (record must
// be a multiple of it). With `dims` whose items make up the record: kFirstAxis (n, *dims),
// kLastAxis (*dims, n), DLIO's shape. Without: kFirstAxis (n, items); kLastAxis (a, b, n) with
// a * b == items and a the largest divisor of items not above its square root, so a square
// uint8 record is DLIO's (dim, dim, n).
std::vector<uint64_t> ArrayShape(SampleLayout layout, uint64_t n, uint64_t record,
                                 const std::vector<uint64_t>& dims = {}, uint64_t itemsize = 1);

// What a writer puts in an npy header for samples of `record` bytes under `o`: the element
// descr and size (uint8 when the record is not a whole number of elements) and the shape.
struct WrittenArray {
  std::string descr;
  uint64_t itemsize = 1;
  std::vector<uint64_t> shape;
};
WrittenArray ArrayToWrite(const FormatOptions& o, uint64_t n, uint64_t record);

// Hands the array data of `spec` (one sample size) in `layout` order to `sink`, in pieces of
// about `chunk` bytes; last-axis samples interleave by items of `itemsize` bytes.
Status ForEachArrayChunk(const FileSpec& spec, SampleLayout layout, uint64_t itemsize, size_t chunk,
                         const std::function<Status(const uint8_t*, size_t)>& sink);

}  // namespace dlio::format_internal
