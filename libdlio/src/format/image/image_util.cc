#include "format/image/image_util.h"

#include <algorithm>
#include <cmath>

#include "format/content.h"
#include "format/io_util.h"

namespace dlio::format_internal {
namespace {

class ImageReader final : public FormatReader {
 public:
  ImageReader(std::string format_name, std::unique_ptr<File> file, uint64_t file_size,
              ImageInfo info, uint64_t transfer_size)
      : format_name_(std::move(format_name)),
        file_(std::move(file)),
        file_size_(file_size),
        info_(std::move(info)),
        transfer_size_(transfer_size) {}

  uint64_t num_samples() const override { return 1; }
  uint64_t sample_size(uint64_t) const override { return file_size_; }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(file_->path(), i, 1));
    DLIO_RETURN_NOT_OK(out->Resize(file_size_));
    return ReadRange(file_.get(), 0, file_size_, transfer_size_, out->data());
  }

  std::string DescribeJson() const override {
    return "{\"format\":\"" + format_name_ + "\",\"path\":" + JsonString(file_->path()) +
           ",\"file_size\":" + std::to_string(file_size_) + "," + SampleSizesJson(1, *this) +
           ",\"width\":" + std::to_string(info_.width) +
           ",\"height\":" + std::to_string(info_.height) +
           ",\"channels\":" + std::to_string(info_.channels) +
           ",\"encoded_bytes\":" + std::to_string(file_size_) + ",\"decoded_bytes\":" +
           std::to_string(uint64_t{info_.width} * info_.height * info_.channels) +
           info_.extra_json + "}";
  }

 private:
  std::string format_name_;
  std::unique_ptr<File> file_;
  uint64_t file_size_;
  ImageInfo info_;
  uint64_t transfer_size_;
};

}  // namespace

Result<uint32_t> ImageSideForSpec(const FileSpec& spec, const std::string& path,
                                  const char* format_name, uint64_t max_side, uint32_t channels) {
  if (spec.sample_sizes.size() != 1) {
    return Status::InvalidArgument(path, ": ", format_name,
                                   " stores one image per file, so dataset.num_samples_per_file "
                                   "must be 1 (got ",
                                   spec.sample_sizes.size(), ")");
  }
  const uint64_t record = spec.sample_sizes[0] / std::max<uint32_t>(channels, 1);
  auto side = static_cast<uint64_t>(std::sqrt(static_cast<long double>(record)));
  while (side * side > record) --side;  // guard the float root against rounding up
  while ((side + 1) * (side + 1) <= record) ++side;
  side = std::max<uint64_t>(side, 1);
  if (side > max_side) {
    return Status::InvalidArgument(path, ": dataset.record_length_bytes ", spec.sample_sizes[0],
                                   " makes a ", side, "x", side, " image; ", format_name,
                                   " allows at most ", max_side, " per side");
  }
  return static_cast<uint32_t>(side);
}

std::vector<uint8_t> ImagePixels(const FileSpec& spec, uint32_t side, uint32_t channels) {
  std::vector<uint8_t> pixels(uint64_t{side} * side * channels);
  FillSampleBytes(spec.seed, 0, 0, pixels.data(), pixels.size());
  return pixels;
}

Status WriteEncodedFile(Storage* storage, const std::string& path,
                        const std::vector<uint8_t>& bytes) {
  return WriteNewFile(storage, path, [&](File* file) {
    for (size_t done = 0; done < bytes.size(); done += kWriteChunk) {
      DLIO_RETURN_NOT_OK(
          file->WriteAt(done, bytes.data() + done, std::min(kWriteChunk, bytes.size() - done)));
    }
    return Status::OK();
  });
}

Result<ImageEnds> ReadImageEnds(File* file, uint64_t size, size_t head_bytes, size_t tail_bytes) {
  ImageEnds ends;
  ends.head.resize(static_cast<size_t>(std::min<uint64_t>(size, head_bytes)));
  if (!ends.head.empty()) {
    DLIO_RETURN_NOT_OK(file->ReadExactAt(0, ends.head.size(), ends.head.data()));
  }
  const size_t tail = static_cast<size_t>(std::min<uint64_t>(size, tail_bytes));
  if (ends.head.size() == size) {
    ends.tail.assign(ends.head.end() - tail, ends.head.end());
  } else {
    ends.tail.resize(tail);
    DLIO_RETURN_NOT_OK(file->ReadExactAt(size - tail, tail, ends.tail.data()));
  }
  return ends;
}

Status CheckDecodedSize(const std::string& what, uint64_t width, uint64_t height, uint64_t channels,
                        uint64_t max_bytes) {
  const uint64_t bytes = width * height * channels;  // each factor < 2^32, channels <= 4
  if (bytes <= max_bytes) return Status::OK();
  return Status::ResourceExhausted(
      what, ": a ", width, "x", height, " image with ", channels, " channel(s) decodes to ", bytes,
      " bytes, more than reader.max_decoded_bytes (", max_bytes,
      "); refused before decoding (a decompression bomb?): raise reader.max_decoded_bytes to "
      "decode it");
}

Result<std::unique_ptr<FormatReader>> NewImageReader(std::string format_name,
                                                     std::unique_ptr<File> file, uint64_t file_size,
                                                     ImageInfo info, const FormatOptions& options) {
  if (options.decode) {
    DLIO_RETURN_NOT_OK(CheckDecodedSize(file->path(), info.width, info.height, info.channels,
                                        options.max_decoded_bytes));
  }
  return std::unique_ptr<FormatReader>(std::make_unique<ImageReader>(
      std::move(format_name), std::move(file), file_size, std::move(info), options.transfer_size));
}

}  // namespace dlio::format_internal
