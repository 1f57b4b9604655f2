// The NPY header (format versions 1.0, 2.0 and 3.0): parsing and building.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/status.h"

namespace dlio::format_internal {

struct NpyHeader {
  int major = 1, minor = 0;
  std::string descr;  // "<f4", or the literal text of a structured descr
  bool structured = false;
  uint64_t itemsize = 0;
  bool fortran_order = false;
  std::vector<uint64_t> shape;
  uint64_t data_offset = 0;  // bytes from the start of the npy to its data
  uint64_t data_bytes = 0;   // product(shape) * itemsize
  // Bytes of one slice along the first axis (product(shape[1:]) * itemsize) and along the last
  // (product(shape[:-1]) * itemsize); data_bytes for a 0-d array. The parser checks that neither
  // overflows, even when a zero dimension makes data_bytes 0.
  uint64_t first_axis_slice_bytes = 0;
  uint64_t last_axis_slice_bytes = 0;

  // The first-axis view (npy_samples.h chooses between axes): one slice along the first axis of
  // a C-order array; a 0-d or Fortran-order array is a single sample (slices of it are not
  // contiguous on disk).
  uint64_t num_samples() const;
  uint64_t sample_size() const;
  std::string ShapeJson() const;  // "[3,4]"
};

inline constexpr size_t kNpyPreambleBytes = 12;  // enough for every version's fixed part
// Longest header accepted (numpy's np.load refuses more than 10000 bytes by default; structured
// dtypes with many fields need more, so we allow 1 MiB). Longer is Corruption, never a huge read.
inline constexpr uint64_t kMaxNpyHeaderBytes = 1u << 20;
// Deepest nesting of (), [] and {} in a header dict (numpy's own headers nest 3 levels; nested
// structured dtypes a few more). Deeper is Corruption, so a crafted header cannot exhaust the
// stack.
inline constexpr int kMaxNpyNesting = 64;

// From the first `n` (>= 10) bytes: validates the magic and version and returns the total header
// length (= data offset), at most kMaxNpyHeaderBytes. `where` names the file (and member) in
// errors, `base` is the absolute offset of the npy's first byte for error messages.
Result<uint64_t> ParseNpyPreamble(const uint8_t* p, size_t n, const std::string& where,
                                  uint64_t base);

// Parses the whole header (`n` == the value ParseNpyPreamble returned).
Result<NpyHeader> ParseNpyHeader(const uint8_t* p, size_t n, const std::string& where,
                                 uint64_t base);

// The header numpy writes for a C-order array (version 1.0 unless it needs 2.0), padded with
// spaces and a final newline so the data starts at a multiple of 64.
std::string BuildNpyHeader(const std::string& descr, const std::vector<uint64_t>& shape);

// Item size of a dtype string ("<f8" -> 8, "<U3" -> 12); Unimplemented for objects.
Result<uint64_t> DtypeItemSize(const std::string& descr);

}  // namespace dlio::format_internal
