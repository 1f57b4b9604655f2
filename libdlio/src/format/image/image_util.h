// Shared parts of the jpeg and png formats: one encoded image per file, the sample is the whole
// file's bytes, Decode turns them into pixels.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"
#include "format/image/image_options.h"

namespace dlio::format_internal {

// How a libjpeg / libpng call run behind its error handler (setjmp) ended.
enum RunResult { kRunOk = 0, kRunLibraryError = 1, kRunNoMemory = 2, kRunTooLarge = 3 };

// Bytes an image reader reads at Open to parse the header (one request).
inline constexpr size_t kImageHeadBytes = 4096;

// The side of the square 8-bit image of `channels` channels our writers make for `spec`:
// floor(sqrt(record_length / channels)), at least 1 (DLIO's jpeg/png generators, which write
// grayscale: dim = int(sqrt(record_length))). InvalidArgument naming
// dataset.num_samples_per_file unless `spec` holds exactly one sample, and naming
// dataset.record_length_bytes when the side exceeds `max_side`.
Result<uint32_t> ImageSideForSpec(const FileSpec& spec, const std::string& path,
                                  const char* format_name, uint64_t max_side,
                                  uint32_t channels = 1);

// The channels our writers give an image: 3 (RGB) when dataset.image_channels says so, else 1
// (grayscale, DLIO's).
inline uint32_t WrittenChannels(const FormatOptions& options) {
  return options.formats.Value<ImageOptions>().channels == 3 ? 3 : 1;
}

// The pixels of the image our writers encode for `spec` (side x side x channels bytes,
// row-major, channels interleaved).
std::vector<uint8_t> ImagePixels(const FileSpec& spec, uint32_t side, uint32_t channels = 1);

// Creates `path` (kCreateNew) holding `bytes`, written in kWriteChunk pieces; removes the file
// when a write fails.
Status WriteEncodedFile(Storage* storage, const std::string& path,
                        const std::vector<uint8_t>& bytes);

// The first min(size, head_bytes) bytes of `file` (one request) and its last `tail_bytes` (a
// second request only when the head does not cover them).
struct ImageEnds {
  std::vector<uint8_t> head, tail;
};
Result<ImageEnds> ReadImageEnds(File* file, uint64_t size, size_t head_bytes, size_t tail_bytes);

// What an image reader learned from the header at Open.
struct ImageInfo {
  uint32_t width = 0, height = 0;
  uint32_t channels = 0;   // of the decoded pixels
  std::string extra_json;  // format-specific ",\"key\":value" pairs for DescribeJson
};

// ResourceExhausted when an image of width x height x channels bytes exceeds `max_bytes`
// (reader.max_decoded_bytes): "<what>: a WxH image with C channels decodes to N bytes, ...".
Status CheckDecodedSize(const std::string& what, uint64_t width, uint64_t height, uint64_t channels,
                        uint64_t max_bytes);

// A reader of one image file: one sample, the file's bytes, read in options.transfer_size
// requests. With options.decode, an image larger than options.max_decoded_bytes once decoded is
// refused here, before any sample is read (CheckDecodedSize naming the file).
Result<std::unique_ptr<FormatReader>> NewImageReader(std::string format_name,
                                                     std::unique_ptr<File> file, uint64_t file_size,
                                                     ImageInfo info, const FormatOptions& options);

}  // namespace dlio::format_internal
