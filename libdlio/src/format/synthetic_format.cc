// synthetic: samples that live in memory (L2HMC, climate_seg's generated data). No file I/O.
// Content is NOT random: ReadSample only sizes the buffer and stamps the sample index in its first
// 8 bytes (little-endian), so a read costs next to nothing, as it does for the real workloads.
#include <algorithm>

#include "format/formats.h"
#include "format/io_util.h"

namespace dlio::format_internal {
namespace {

class SyntheticReader final : public FormatReader {
 public:
  SyntheticReader(std::string path, uint64_t samples, uint64_t record)
      : path_(std::move(path)), samples_(samples), record_(record) {}
  uint64_t num_samples() const override { return samples_; }
  uint64_t sample_size(uint64_t) const override { return record_; }
  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(path_, i, samples_));
    DLIO_RETURN_NOT_OK(out->Resize(record_));
    for (size_t b = 0; b < std::min<uint64_t>(record_, 8); ++b) {
      out->data()[b] = static_cast<uint8_t>(i >> (8 * b));
    }
    return Status::OK();
  }
  std::string DescribeJson() const override {
    return "{\"format\":\"synthetic\",\"path\":" + JsonString(path_) + "," +
           SampleSizesJson(samples_, *this) + "}";
  }

 private:
  std::string path_;
  uint64_t samples_, record_;
};

class SyntheticFormat final : public Format {
 public:
  std::string name() const override { return "synthetic"; }
  std::string extension() const override { return ""; }
  bool variable_sample_sizes() const override { return false; }
  bool uses_files() const override { return false; }
  // Nothing to write: the data is made in memory when read.
  Status Write(Storage*, const std::string&, const FileSpec&, const FormatOptions&) const override {
    return Status::OK();
  }
  Result<std::unique_ptr<FormatReader>> Open(Storage*, const std::string& path,
                                             const FormatOptions& options) const override {
    return std::unique_ptr<FormatReader>(new SyntheticReader(
        path, std::max<uint64_t>(1, options.samples_per_file), options.record_length_bytes));
  }
};

}  // namespace

std::unique_ptr<Format> NewSyntheticFormat() { return std::make_unique<SyntheticFormat>(); }

}  // namespace dlio::format_internal
