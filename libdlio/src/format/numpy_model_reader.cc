#include "format/numpy_model_reader.h"

#include <cstring>
#include <mutex>
#include <optional>

#include "format/io_util.h"
#include "format/pyio/buffered_reader.h"
#include "format/pyio/c_stdio.h"

namespace dlio::format_internal {
namespace {

class NumpyModelReader final : public FormatReader {
 public:
  NumpyModelReader(std::unique_ptr<FormatReader> native, NumpyModelSpec spec)
      : native_(std::move(native)), spec_(std::move(spec)) {}

  uint64_t num_samples() const override { return native_->num_samples(); }
  uint64_t sample_size(uint64_t i) const override { return native_->sample_size(i); }
  std::string DescribeJson() const override { return native_->DescribeJson(); }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(spec_.path, i, spec_.samples.num_samples));
    DLIO_RETURN_NOT_OK(out->Resize(spec_.samples.sample_size));
    if (spec_.keep) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!kept_) {
        DLIO_ASSIGN_OR_RETURN(pyio::LoadedArray a, Load());
        kept_ = std::move(a.data);
      }
      Gather(i, *kept_, out->data());
      return Status::OK();
    }
    DLIO_ASSIGN_OR_RETURN(pyio::LoadedArray a, Load());
    Gather(i, a.data, out->data());
    return Status::OK();
  }

 private:
  // One np.load: open, load, close (the file is closed on every path).
  Result<pyio::LoadedArray> Load() const {
    DLIO_ASSIGN_OR_RETURN(auto file,
                          spec_.storage->Open(spec_.path, OpenMode::kRead, spec_.file_options));
    Result<pyio::LoadedArray> a = pyio::NumpyLoad(file.get(), spec_.key, spec_.buffers);
    const Status closed = file->Close();
    DLIO_RETURN_NOT_OK(a.status());
    DLIO_RETURN_NOT_OK(closed);
    if (a->header.data_bytes != spec_.data_bytes) {
      return Status::Corruption(spec_.path, ": the array changed since the file was opened (",
                                spec_.data_bytes, " data bytes then, ", a->header.data_bytes,
                                " now)");
    }
    return a;
  }

  void Gather(uint64_t i, const std::vector<uint8_t>& data, uint8_t* out) const {
    const ArraySamples& s = spec_.samples;
    if (s.axis == SampleAxis::kFirst) {
      if (s.sample_size > 0) std::memcpy(out, data.data() + s.offset(i), s.sample_size);
      return;
    }
    GatherSamplePiece(s, i, 0, data.data(), data.size(), out);
  }

  std::unique_ptr<FormatReader> native_;
  NumpyModelSpec spec_;
  std::mutex mu_;  // guards kept_
  std::optional<std::vector<uint8_t>> kept_;
};

}  // namespace

std::unique_ptr<FormatReader> NewNumpyModelReader(std::unique_ptr<FormatReader> native,
                                                  NumpyModelSpec spec) {
  return std::make_unique<NumpyModelReader>(std::move(native), std::move(spec));
}

pyio::NumpyBuffers NumpyBuffersFor(Storage* storage, const std::string& path) {
  const uint64_t blksize = pyio::HostBlockSize(storage, path);
  return {pyio::PythonBufferSize(blksize), pyio::GlibcBufferSize(blksize)};
}

}  // namespace dlio::format_internal
