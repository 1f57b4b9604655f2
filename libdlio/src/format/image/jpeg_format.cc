// jpeg: one JPEG image per file (DLIO's resnet50 / retinanet datasets), encoded and decoded with
// libjpeg-turbo.
//
// libjpeg's default error handler calls exit(); ours formats the library's message and longjmps
// back to the one function that set the jump. A longjmp that skips a C++ destructor is undefined,
// so everything those functions touch after setjmp lives in plain structs (the Job types) and no
// object with a destructor is alive in any frame a jump crosses. libjpeg treats damaged data
// (including a truncated stream, which it pads with gray) as a warning; we make those warnings
// errors, so a damaged image never decodes "successfully".
#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <vector>

// jpeglib.h needs FILE and size_t declared before it.
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include "format/formats.h"
#include "format/image/image_util.h"
#include "format/io_util.h"
#include "io_models/model_readers.h"
#include "io_models/pil_reader.h"
#include "io_models/pyio_reader.h"

namespace dlio::format_internal {
namespace {

struct JpegErrorMgr {
  jpeg_error_mgr pub;  // first: libjpeg hands callbacks a pointer to it
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void OnJpegError(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegErrorMgr*>(cinfo->err);
  (*err->pub.format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void OnJpegMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace output
  switch (cinfo->err->msg_code) {
    case JWRN_JFIF_MAJOR:   // unknown JFIF revision: the data is fine
    case JWRN_ADOBE_XFORM:  // unknown Adobe transform code: decoded as without
    case JWRN_BOGUS_ICC:    // only when the ICC profile is read, which we never do
      return;
    default:
      OnJpegError(cinfo);
  }
}

void InstallErrorMgr(JpegErrorMgr* err, jpeg_error_mgr** slot) {
  *slot = jpeg_std_error(&err->pub);
  err->pub.error_exit = OnJpegError;
  err->pub.emit_message = OnJpegMessage;
  err->message[0] = '\0';
}

struct JpegDecodeJob {
  const uint8_t* data = nullptr;
  size_t size = 0;
  SampleBuffer* out = nullptr;  // null: parse the header only
  jpeg_decompress_struct cinfo;
  JpegErrorMgr err;
  size_t consumed = 0;  // input bytes libjpeg had taken when it failed
  uint32_t width = 0, height = 0, channels = 0, components = 0;
  J_COLOR_SPACE color_space = JCS_UNKNOWN;
  bool progressive = false;
  uint64_t max_bytes = 0;  // refuse (kRunTooLarge) an image larger once decoded
};

RunResult RunDecode(JpegDecodeJob* job) {
  jpeg_decompress_struct* const cinfo = &job->cinfo;
  InstallErrorMgr(&job->err, &cinfo->err);
  cinfo->src = nullptr;
  if (setjmp(job->err.jump)) {
    job->consumed = cinfo->src != nullptr ? job->size - cinfo->src->bytes_in_buffer : 0;
    jpeg_destroy_decompress(cinfo);
    return kRunLibraryError;
  }
  jpeg_create_decompress(cinfo);
  jpeg_mem_src(cinfo, job->data, static_cast<unsigned long>(job->size));
  jpeg_read_header(cinfo, TRUE);
  job->width = cinfo->image_width;
  job->height = cinfo->image_height;
  job->components = static_cast<uint32_t>(cinfo->num_components);
  job->color_space = cinfo->jpeg_color_space;
  job->progressive = cinfo->progressive_mode != 0;
  jpeg_calc_output_dimensions(cinfo);
  job->channels = static_cast<uint32_t>(cinfo->output_components);
  if (job->out == nullptr) {
    jpeg_destroy_decompress(cinfo);
    return kRunOk;
  }
  // Before jpeg_start_decompress, which allocates the library's buffers for the whole image.
  if (uint64_t{cinfo->output_width} * cinfo->output_height * job->channels > job->max_bytes) {
    job->width = cinfo->output_width;
    job->height = cinfo->output_height;
    jpeg_destroy_decompress(cinfo);
    return kRunTooLarge;
  }
  jpeg_start_decompress(cinfo);
  const size_t row = size_t{cinfo->output_width} * static_cast<size_t>(cinfo->output_components);
  if (!job->out->Resize(row * cinfo->output_height).ok()) {
    jpeg_destroy_decompress(cinfo);
    return kRunNoMemory;
  }
  JSAMPROW rows[16];
  while (cinfo->output_scanline < cinfo->output_height) {
    const JDIMENSION first = cinfo->output_scanline;
    const JDIMENSION n = std::min<JDIMENSION>(16, cinfo->output_height - first);
    for (JDIMENSION k = 0; k < n; ++k) rows[k] = job->out->data() + (first + k) * row;
    jpeg_read_scanlines(cinfo, rows, n);
  }
  jpeg_finish_decompress(cinfo);  // reads up to EOI, so a stream cut after the pixels fails too
  jpeg_destroy_decompress(cinfo);
  return kRunOk;
}

struct JpegEncodeJob {
  const uint8_t* pixels = nullptr;
  uint32_t side = 0;
  uint32_t channels = 1;  // 1 grayscale, 3 RGB
  int quality = 90;
  std::vector<uint8_t>* out = nullptr;  // sized by the caller; grows by doubling
  jpeg_compress_struct cinfo;
  JpegErrorMgr err;
  jpeg_destination_mgr dest;
};

bool GrowNoThrow(std::vector<uint8_t>* v, size_t n) {
  try {
    v->resize(n);
    return true;
  } catch (...) {
    return false;
  }
}

JpegEncodeJob* JobOf(j_compress_ptr cinfo) {
  return static_cast<JpegEncodeJob*>(cinfo->client_data);
}

void InitDestination(j_compress_ptr cinfo) {
  JpegEncodeJob* job = JobOf(cinfo);
  job->dest.next_output_byte = job->out->data();
  job->dest.free_in_buffer = job->out->size();
}

boolean EmptyOutputBuffer(j_compress_ptr cinfo) {
  JpegEncodeJob* job = JobOf(cinfo);
  const size_t used = job->out->size();  // libjpeg calls this only when the buffer is full
  if (!GrowNoThrow(job->out, std::max<size_t>(2 * used, 4096))) ERREXIT(cinfo, JERR_OUT_OF_MEMORY);
  job->dest.next_output_byte = job->out->data() + used;
  job->dest.free_in_buffer = job->out->size() - used;
  return TRUE;
}

void TermDestination(j_compress_ptr cinfo) {
  JpegEncodeJob* job = JobOf(cinfo);
  job->out->resize(job->out->size() - job->dest.free_in_buffer);
}

RunResult RunEncode(JpegEncodeJob* job) {
  jpeg_compress_struct* const cinfo = &job->cinfo;
  InstallErrorMgr(&job->err, &cinfo->err);
  if (setjmp(job->err.jump)) {
    jpeg_destroy_compress(cinfo);
    return kRunLibraryError;
  }
  jpeg_create_compress(cinfo);
  cinfo->client_data = job;
  job->dest.init_destination = InitDestination;
  job->dest.empty_output_buffer = EmptyOutputBuffer;
  job->dest.term_destination = TermDestination;
  cinfo->dest = &job->dest;
  cinfo->image_width = job->side;
  cinfo->image_height = job->side;
  cinfo->input_components = static_cast<int>(job->channels);
  cinfo->in_color_space = job->channels == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(cinfo);
  jpeg_set_quality(cinfo, job->quality, TRUE);
  jpeg_start_compress(cinfo, TRUE);
  JSAMPROW rows[16];
  while (cinfo->next_scanline < cinfo->image_height) {
    const JDIMENSION first = cinfo->next_scanline;
    const JDIMENSION n = std::min<JDIMENSION>(16, cinfo->image_height - first);
    for (JDIMENSION k = 0; k < n; ++k) {
      rows[k] = const_cast<JSAMPLE*>(job->pixels) + size_t{first + k} * job->side * job->channels;
    }
    jpeg_write_scanlines(cinfo, rows, n);
  }
  jpeg_finish_compress(cinfo);
  jpeg_destroy_compress(cinfo);
  return kRunOk;
}

const char* ColorSpaceName(J_COLOR_SPACE cs) {
  switch (cs) {
    case JCS_GRAYSCALE:
      return "grayscale";
    case JCS_RGB:
      return "rgb";
    case JCS_YCbCr:
      return "ycbcr";
    case JCS_CMYK:
      return "cmyk";
    case JCS_YCCK:
      return "ycck";
    default:
      return "unknown";
  }
}

// The first three bytes of a JPEG: the SOI marker and the next marker's FF.
Status CheckJpegMagic(const std::string& path, const uint8_t* head) {
  if (head[0] != 0xFF || head[1] != 0xD8 || head[2] != 0xFF) {
    return Status::Corruption(path + ": not a JPEG: offset 0 does not hold the FF D8 FF magic");
  }
  return Status::OK();
}

// The last two bytes of a `size`-byte JPEG: the EOI marker.
Status CheckJpegEnd(const std::string& path, const uint8_t* tail, uint64_t size) {
  if (tail[0] != 0xFF || tail[1] != 0xD9) {
    return Status::Corruption(path, ": no JPEG end-of-image marker (FF D9) at offset ", size - 2,
                              ": truncated?");
  }
  return Status::OK();
}

// What PIL's reads loaded must be: a JPEG from its SOI marker to its EOI marker.
Status CheckJpegBytes(const std::string& path, const uint8_t* data, size_t size) {
  if (size < 4) {
    return Status::Corruption(path + ": not a JPEG: offset 0 does not hold the FF D8 FF magic");
  }
  DLIO_RETURN_NOT_OK(CheckJpegMagic(path, data));
  return CheckJpegEnd(path, data + size - 2, size);
}

Result<std::unique_ptr<FormatReader>> OpenPil(Storage* storage, const std::string& path,
                                              const FormatOptions& options) {
  return io_models::OpenPilReader(storage, path, options, {"jpeg", CheckJpegBytes},
                                  io_models::PilPlugin::kJpeg);
}

Result<std::unique_ptr<FormatReader>> OpenPyio(Storage* storage, const std::string& path,
                                               const FormatOptions& options) {
  return io_models::OpenPyioReader(storage, path, options, {"jpeg", CheckJpegBytes});
}

class JpegFormat final : public Format {
 public:
  JpegFormat() {
    readers_.Add(IoModel::kNative, OpenNative)
        .Add(IoModel::kPil, OpenPil)
        .Add(IoModel::kPyio, OpenPyio);
  }

  std::string name() const override { return "jpeg"; }
  std::string extension() const override { return "jpeg"; }
  FormatCapabilities capabilities() const override {
    FormatCapabilities c;
    c.one_sample_per_file = true;
    c.uint8_records = true;
    c.io_models = {IoModel::kPil, IoModel::kPyio};
    c.native_under_auto = true;  // DLIO's jpeg reader is PIL's; kept opt-in (docs/io_models.md)
    return c;
  }
  bool variable_sample_sizes() const override { return false; }
  bool exact_sample_sizes() const override { return false; }
  bool has_decoder() const override { return true; }
  // The writer's random grayscale pixels at dataset.image_quality 90 (the default) encode to
  // 0.786 bytes per record byte from 1 MB records up, 0.80 at 100 kB, 0.86 at 4 kB (headers);
  // RGB ones (libjpeg's default 4:2:0 chroma subsampling, as Pillow's) to 0.300 from 786 kB up,
  // 0.308 at 300 kB, 0.350 at 30 kB.
  double stored_bytes_per_record_byte(uint32_t image_channels) const override {
    return image_channels == 3 ? 0.30 : 0.79;
  }

  Status Decode(const uint8_t* data, size_t size, SampleBuffer* out) const override {
    return DecodeWithLimit(data, size, kDefaultMaxDecodedBytes, out);
  }

  Status DecodeWithLimit(const uint8_t* data, size_t size, uint64_t max_decoded_bytes,
                         SampleBuffer* out) const override {
    JpegDecodeJob job;
    job.data = data;
    job.size = size;
    job.out = out;
    job.max_bytes = max_decoded_bytes;
    switch (RunDecode(&job)) {
      case kRunOk:
        return Status::OK();
      case kRunTooLarge:
        return CheckDecodedSize("jpeg", job.width, job.height, job.channels, max_decoded_bytes);
      case kRunNoMemory:
        return Status::ResourceExhausted("jpeg: no memory for ", job.width, "x", job.height, "x",
                                         job.channels, " pixels");
      default:
        return Status::Corruption("jpeg: ", job.err.message, " (near byte ", job.consumed, " of ",
                                  size, ")");
    }
  }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    const int quality = options.formats.Value<ImageOptions>().quality;
    if (quality < 1 || quality > 100) {
      return Status::InvalidArgument("dataset.image_quality must be in 1-100, got ", quality);
    }
    const uint32_t channels = WrittenChannels(options);
    DLIO_ASSIGN_OR_RETURN(const uint32_t side,
                          ImageSideForSpec(spec, path, "jpeg", JPEG_MAX_DIMENSION, channels));
    const std::vector<uint8_t> pixels = ImagePixels(spec, side, channels);
    // Random pixels compress poorly: start at the pixel count plus room for the headers.
    std::vector<uint8_t> encoded(pixels.size() + 4096);
    JpegEncodeJob job;
    job.pixels = pixels.data();
    job.side = side;
    job.channels = channels;
    job.quality = quality;
    job.out = &encoded;
    if (RunEncode(&job) != kRunOk) {
      return Status::Internal(path, ": libjpeg could not encode a ", side, "x", side,
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
  // native: the header (4 KiB) and the EOI marker read at open, the whole file per sample.
  static Result<std::unique_ptr<FormatReader>> OpenNative(Storage* storage, const std::string& path,
                                                          const FormatOptions& options) {
    DLIO_ASSIGN_OR_RETURN(SizedFile opened, OpenSized(storage, path, options));
    std::unique_ptr<File> file = std::move(opened.file);
    const uint64_t size = opened.size;
    if (size < 4) {
      return Status::Corruption(path, ": ", size,
                                " bytes is too short for a JPEG (SOI marker and EOI marker)");
    }
    DLIO_ASSIGN_OR_RETURN(ImageEnds ends, ReadImageEnds(file.get(), size, kImageHeadBytes, 2));
    DLIO_RETURN_NOT_OK(CheckJpegMagic(path, ends.head.data()));
    DLIO_RETURN_NOT_OK(CheckJpegEnd(path, ends.tail.data(), size));
    JpegDecodeJob job;
    job.data = ends.head.data();
    job.size = ends.head.size();
    RunResult rc = RunDecode(&job);
    std::vector<uint8_t> whole;
    if (rc != kRunOk && ends.head.size() < size) {
      // The header did not fit in the first request (large EXIF or ICC segments).
      whole.resize(size);
      DLIO_RETURN_NOT_OK(ReadRange(file.get(), 0, size, options.transfer_size, whole.data()));
      job = JpegDecodeJob();
      job.data = whole.data();
      job.size = whole.size();
      rc = RunDecode(&job);
    }
    if (rc != kRunOk) {
      return Status::Corruption(path, ": bad JPEG header near offset ", job.consumed, ": ",
                                job.err.message);
    }
    ImageInfo info;
    info.width = job.width;
    info.height = job.height;
    info.channels = job.channels;
    info.extra_json = ",\"components\":" + std::to_string(job.components) + ",\"color_space\":\"" +
                      ColorSpaceName(job.color_space) +
                      "\",\"progressive\":" + (job.progressive ? "true" : "false");
    return NewImageReader("jpeg", std::move(file), size, std::move(info), options);
  }

  io_models::ModelReaders readers_;
};

}  // namespace

std::unique_ptr<Format> NewJpegFormat() { return std::make_unique<JpegFormat>(); }

}  // namespace dlio::format_internal
