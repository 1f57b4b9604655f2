// png: one PNG image per file (DLIO's png datasets), encoded and decoded with libpng.
//
// Open checks the signature, parses and CRC-checks IHDR itself and checks the file ends with the
// IEND chunk. libpng reports errors by longjmp to the setjmp of the one function that drives it
// (its default handler prints and aborts if none is set); as for jpeg, no object with a
// destructor is alive in a frame such a jump crosses: all state lives in the plain Job structs.
#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

#include "format/formats.h"
#include "format/image/image_util.h"
#include "format/io_util.h"
#include "io_models/model_readers.h"
#include "io_models/pil_reader.h"
#include "io_models/pyio_reader.h"

namespace dlio::format_internal {
namespace {

constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
constexpr uint8_t kIend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
constexpr size_t kIhdrEnd = 8 + 8 + 13 + 4;  // signature, IHDR length+type, data, CRC
// libpng's default limit on either side (png_set_user_limits).
constexpr uint64_t kMaxSide = 1000000;

uint32_t Be32(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (static_cast<uint32_t>(p[1]) << 16) |
         (static_cast<uint32_t>(p[2]) << 8) | p[3];
}

struct PngErrorState {
  char message[256];
};

void OnPngError(png_structp png, png_const_charp msg) {
  auto* state = static_cast<PngErrorState*>(png_get_error_ptr(png));
  std::snprintf(state->message, sizeof state->message, "%s", msg);
  png_longjmp(png, 1);
}

void OnPngWarning(png_structp, png_const_charp) {}  // benign (ancillary chunks); not printed

struct PngDecodeJob {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;  // next input byte libpng asks for
  SampleBuffer* out = nullptr;
  PngErrorState err{};
  png_structp png = nullptr;
  png_infop info = nullptr;
  uint32_t width = 0, height = 0, channels = 0;
  uint64_t max_bytes = 0;  // refuse (kRunTooLarge) an image larger once decoded
};

void ReadFromMemory(png_structp png, png_bytep dst, size_t n) {
  auto* job = static_cast<PngDecodeJob*>(png_get_io_ptr(png));
  if (n > job->size - job->pos) {
    char msg[128];
    std::snprintf(msg, sizeof msg, "truncated: needs %zu bytes at offset %zu, the image has %zu", n,
                  job->pos, job->size);
    png_error(png, msg);
  }
  std::memcpy(dst, job->data + job->pos, n);
  job->pos += n;
}

RunResult RunDecode(PngDecodeJob* job) {
  job->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &job->err, OnPngError, OnPngWarning);
  if (job->png == nullptr) {
    std::snprintf(job->err.message, sizeof job->err.message, "png_create_read_struct failed");
    return kRunLibraryError;
  }
  if (setjmp(png_jmpbuf(job->png))) {
    png_destroy_read_struct(&job->png, &job->info, nullptr);
    return kRunLibraryError;
  }
  job->info = png_create_info_struct(job->png);
  if (job->info == nullptr) png_error(job->png, "png_create_info_struct failed");
  png_set_read_fn(job->png, job, ReadFromMemory);
  png_read_info(job->png, job->info);
  // 8 bits per channel: palettes become RGB(A), low-bit gray and tRNS expand, 16 bits strip.
  png_set_expand(job->png);
  png_set_strip_16(job->png);
  const int passes = png_set_interlace_handling(job->png);
  png_read_update_info(job->png, job->info);
  job->width = png_get_image_width(job->png, job->info);
  job->height = png_get_image_height(job->png, job->info);
  job->channels = png_get_channels(job->png, job->info);
  const size_t row = png_get_rowbytes(job->png, job->info);
  if (uint64_t{row} * job->height > job->max_bytes) {
    png_destroy_read_struct(&job->png, &job->info, nullptr);
    return kRunTooLarge;
  }
  if (!job->out->Resize(row * job->height).ok()) {
    png_destroy_read_struct(&job->png, &job->info, nullptr);
    return kRunNoMemory;
  }
  // Interlaced images: every pass writes its pixels into the final rows.
  for (int pass = 0; pass < passes; ++pass) {
    for (uint32_t y = 0; y < job->height; ++y) {
      png_read_row(job->png, job->out->data() + y * row, nullptr);
    }
  }
  png_read_end(job->png, nullptr);  // checks the CRCs of the chunks after the pixels, up to IEND
  png_destroy_read_struct(&job->png, &job->info, nullptr);
  return kRunOk;
}

struct PngEncodeJob {
  const uint8_t* pixels = nullptr;
  uint32_t side = 0;
  uint32_t channels = 1;  // 1 grayscale, 3 RGB
  std::vector<uint8_t>* out = nullptr;
  PngErrorState err{};
  png_structp png = nullptr;
  png_infop info = nullptr;
};

bool AppendNoThrow(std::vector<uint8_t>* v, const uint8_t* p, size_t n) {
  try {
    v->insert(v->end(), p, p + n);
    return true;
  } catch (...) {
    return false;
  }
}

void WriteToMemory(png_structp png, png_bytep data, size_t n) {
  auto* job = static_cast<PngEncodeJob*>(png_get_io_ptr(png));
  if (!AppendNoThrow(job->out, data, n)) png_error(png, "out of memory for the encoded image");
}

void FlushNothing(png_structp) {}

RunResult RunEncode(PngEncodeJob* job) {
  job->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &job->err, OnPngError, OnPngWarning);
  if (job->png == nullptr) {
    std::snprintf(job->err.message, sizeof job->err.message, "png_create_write_struct failed");
    return kRunLibraryError;
  }
  if (setjmp(png_jmpbuf(job->png))) {
    png_destroy_write_struct(&job->png, &job->info);
    return kRunLibraryError;
  }
  job->info = png_create_info_struct(job->png);
  if (job->info == nullptr) png_error(job->png, "png_create_info_struct failed");
  png_set_write_fn(job->png, job, WriteToMemory, FlushNothing);
  png_set_IHDR(job->png, job->info, job->side, job->side, 8,
               job->channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  // IDAT chunks as DLIO's generator writes them through Pillow (ImageFile._save: blocks of
  // max(MAXBLOCK = 65536, width * 4) bytes, one chunk each), not libpng's 8 KiB: PIL's reads of
  // a PNG follow its chunks (io_model pil).
  png_set_compression_buffer_size(job->png, std::max<size_t>(65536, size_t{job->side} * 4));
  // The stream as Pillow deflates it (ZipEncode.c): per row the filter of least sum of |byte|
  // among None, Sub, Up and Paeth (Average only with optimize=True), zlib level 6, Z_FILTERED,
  // 32 KiB window, memLevel 9. libpng's defaults (Average too, memLevel 8: deflate blocks of 16K
  // symbols, not 32K) give random pixels a stream ~0.07% shorter, which moved the last IDAT
  // chunk, and so the last read of PIL's model, away from the program's (docs/formats.md).
  png_set_filter(job->png, PNG_FILTER_TYPE_BASE,
                 PNG_FILTER_NONE | PNG_FILTER_SUB | PNG_FILTER_UP | PNG_FILTER_PAETH);
  png_set_compression_level(job->png, 6);
  png_set_compression_strategy(job->png, Z_FILTERED);
  png_set_compression_window_bits(job->png, 15);
  png_set_compression_mem_level(job->png, 9);
  png_write_info(job->png, job->info);
  for (uint32_t y = 0; y < job->side; ++y) {
    png_write_row(job->png, job->pixels + size_t{y} * job->side * job->channels);
  }
  png_write_end(job->png, nullptr);
  png_destroy_write_struct(&job->png, &job->info);
  return kRunOk;
}

const char* ColorTypeName(int color_type) {
  switch (color_type) {
    case 0:
      return "gray";
    case 2:
      return "rgb";
    case 3:
      return "palette";
    case 4:
      return "gray_alpha";
    case 6:
      return "rgba";
    default:
      return "invalid";
  }
}

// Channels of the decoded pixels (palettes decode to RGB; RGBA when a tRNS chunk exists, which
// only a full decode finds).
uint32_t DecodedChannels(int color_type) {
  switch (color_type) {
    case 0:
      return 1;
    case 4:
      return 2;
    case 2:
    case 3:
      return 3;
    default:
      return 4;
  }
}

bool ValidDepth(int color_type, int depth) {
  switch (color_type) {
    case 0:
      return depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16;
    case 3:
      return depth == 1 || depth == 2 || depth == 4 || depth == 8;
    case 2:
    case 4:
    case 6:
      return depth == 8 || depth == 16;
    default:
      return false;
  }
}

// What the pil and pyio models' reads loaded must be: a PNG from its signature to its IEND chunk.
Status CheckPngBytes(const std::string& path, const uint8_t* data, size_t size) {
  if (size < sizeof kSignature || std::memcmp(data, kSignature, sizeof kSignature) != 0) {
    return Status::Corruption(path + ": not a PNG: offset 0 does not hold the PNG signature");
  }
  if (size < sizeof kSignature + sizeof kIend ||
      std::memcmp(data + size - sizeof kIend, kIend, sizeof kIend) != 0) {
    return Status::Corruption(path, ": no IEND chunk at offset ",
                              size < sizeof kIend ? 0 : size - sizeof kIend, ": truncated?");
  }
  return Status::OK();
}

Result<std::unique_ptr<FormatReader>> OpenPngPil(Storage* storage, const std::string& path,
                                                 const FormatOptions& options) {
  return io_models::OpenPilReader(storage, path, options, {"png", CheckPngBytes},
                                  io_models::PilPlugin::kPng);
}

Result<std::unique_ptr<FormatReader>> OpenPngPyio(Storage* storage, const std::string& path,
                                                  const FormatOptions& options) {
  return io_models::OpenPyioReader(storage, path, options, {"png", CheckPngBytes});
}

class PngFormat final : public Format {
 public:
  PngFormat() {
    readers_.Add(IoModel::kNative, OpenNative)
        .Add(IoModel::kPil, OpenPngPil)
        .Add(IoModel::kPyio, OpenPngPyio);
  }

  std::string name() const override { return "png"; }
  std::string extension() const override { return "png"; }
  FormatCapabilities capabilities() const override {
    FormatCapabilities c;
    c.one_sample_per_file = true;
    c.uint8_records = true;
    c.io_models = {IoModel::kPil, IoModel::kPyio};
    c.native_under_auto = true;  // as jpeg: DLIO's png reader is PIL's; kept opt-in
    return c;
  }
  bool variable_sample_sizes() const override { return false; }
  bool exact_sample_sizes() const override { return false; }
  bool has_decoder() const override { return true; }

  Status Decode(const uint8_t* data, size_t size, SampleBuffer* out) const override {
    return DecodeWithLimit(data, size, kDefaultMaxDecodedBytes, out);
  }

  Status DecodeWithLimit(const uint8_t* data, size_t size, uint64_t max_decoded_bytes,
                         SampleBuffer* out) const override {
    if (size < sizeof kSignature || std::memcmp(data, kSignature, sizeof kSignature) != 0) {
      return Status::Corruption("png: no PNG signature at byte 0 (", size, " bytes)");
    }
    PngDecodeJob job;
    job.data = data;
    job.size = size;
    job.out = out;
    job.max_bytes = max_decoded_bytes;
    switch (RunDecode(&job)) {
      case kRunOk:
        return Status::OK();
      case kRunTooLarge:
        return CheckDecodedSize("png", job.width, job.height, job.channels, max_decoded_bytes);
      case kRunNoMemory:
        return Status::ResourceExhausted("png: no memory for ", job.width, "x", job.height, "x",
                                         job.channels, " pixels");
      default:
        return Status::Corruption("png: ", job.err.message, " (near byte ", job.pos, " of ", size,
                                  ")");
    }
  }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    const uint32_t channels = WrittenChannels(options);
    DLIO_ASSIGN_OR_RETURN(const uint32_t side,
                          ImageSideForSpec(spec, path, "png", kMaxSide, channels));
    const std::vector<uint8_t> pixels = ImagePixels(spec, side, channels);
    std::vector<uint8_t> encoded;
    encoded.reserve(pixels.size() + pixels.size() / 64 + 4096);  // ~incompressible pixels
    PngEncodeJob job;
    job.pixels = pixels.data();
    job.side = side;
    job.channels = channels;
    job.out = &encoded;
    if (RunEncode(&job) != kRunOk) {
      return Status::Internal(path, ": libpng could not encode a ", side, "x", side,
                              " image: ", job.err.message);
    }
    return WriteEncodedFile(storage, path, encoded);
  }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    return readers_.Open(capabilities(), storage, path, options);
  }

  std::vector<IoModel> reader_models() const override { return readers_.models(); }

 private:
  // native: signature + IHDR and the IEND chunk read at open, the whole file per sample.
  static Result<std::unique_ptr<FormatReader>> OpenNative(Storage* storage, const std::string& path,
                                                          const FormatOptions& options) {
    DLIO_ASSIGN_OR_RETURN(SizedFile opened, OpenSized(storage, path, options));
    std::unique_ptr<File> file = std::move(opened.file);
    const uint64_t size = opened.size;
    DLIO_ASSIGN_OR_RETURN(ImageEnds ends, ReadImageEnds(file.get(), size, kIhdrEnd, sizeof kIend));
    const uint8_t* h = ends.head.data();
    if (size < sizeof kSignature || std::memcmp(h, kSignature, sizeof kSignature) != 0) {
      return Status::Corruption(path + ": not a PNG: offset 0 does not hold the PNG signature");
    }
    if (size < kIhdrEnd + sizeof kIend) {
      return Status::Corruption(path, ": truncated PNG: ", size,
                                " bytes cannot hold IHDR (ends at offset ", kIhdrEnd, ") and IEND");
    }
    if (Be32(h + 8) != 13 || std::memcmp(h + 12, "IHDR", 4) != 0) {
      return Status::Corruption(path + ": the first PNG chunk at offset 8 is not a 13-byte IHDR");
    }
    const uint32_t crc = static_cast<uint32_t>(crc32(0, h + 12, 4 + 13));
    if (crc != Be32(h + 29)) {
      return Status::Corruption(path, ": IHDR CRC mismatch at offset 29 (computed ", crc,
                                ", stored ", Be32(h + 29), ")");
    }
    const uint32_t width = Be32(h + 16), height = Be32(h + 20);
    const int depth = h[24], color_type = h[25], interlace = h[28];
    if (width == 0 || height == 0 || width > kMaxSide || height > kMaxSide ||
        !ValidDepth(color_type, depth) || h[26] != 0 || h[27] != 0 || interlace > 1) {
      return Status::Corruption(path, ": invalid IHDR at offset 16: ", width, "x", height,
                                ", bit depth ", depth, ", color type ", color_type, ", interlace ",
                                interlace);
    }
    if (std::memcmp(ends.tail.data(), kIend, sizeof kIend) != 0) {
      return Status::Corruption(path, ": no IEND chunk at offset ", size - sizeof kIend,
                                ": truncated?");
    }
    ImageInfo info;
    info.width = width;
    info.height = height;
    info.channels = DecodedChannels(color_type);
    info.extra_json = ",\"bit_depth\":" + std::to_string(depth) + ",\"color_type\":\"" +
                      ColorTypeName(color_type) +
                      "\",\"interlaced\":" + (interlace ? "true" : "false");
    return NewImageReader("png", std::move(file), size, std::move(info), options);
  }

  io_models::ModelReaders readers_;
};

}  // namespace

std::unique_ptr<Format> NewPngFormat() { return std::make_unique<PngFormat>(); }

}  // namespace dlio::format_internal
