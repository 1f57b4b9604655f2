#include "io_models/pil_reader.h"

#include <utility>

#include "dlio/str_cat.h"
#include "format/io_util.h"
#include "io_models/pyio/buffered_reader.h"

namespace dlio::io_models {
namespace {

// The bytes Image.open's header parse takes through the buffer (its prefix read, `fp.read(16)`);
// any count up to the buffer size makes the same one fill.
constexpr size_t kPilPrefixBytes = 16;

class PilReader final : public FormatReader {
 public:
  PilReader(std::unique_ptr<File> file, uint64_t size, size_t buffer_size, bool python_bytes,
            WholeFileCheck check)
      : file_(std::move(file)),
        size_(size),
        buffer_size_(buffer_size),
        python_bytes_(python_bytes),
        check_(std::move(check)) {}

  uint64_t num_samples() const override { return 1; }
  uint64_t sample_size(uint64_t) const override { return size_; }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    if (i != 0) {
      return Status::OutOfRange(file_->path(), ": sample ", i, " of a file holding 1 (",
                                check_.format_name, ": one image per file)");
    }
    // Room for the last read's full request past the end, which finds nothing there.
    DLIO_RETURN_NOT_OK(out->Resize(static_cast<size_t>(size_) + kPilReadBytes));
    pyio::BufferedReader fp(file_.get(), buffer_size_);
    uint8_t prefix[kPilPrefixBytes];
    DLIO_RETURN_NOT_OK(fp.ReadInto(sizeof prefix, prefix).status());
    DLIO_RETURN_NOT_OK(fp.Seek(0, 0).status());
    uint64_t have = 0;
    while (have < size_) {
      uint8_t* dst = out->data() + have;
      DLIO_ASSIGN_OR_RETURN(const size_t got, python_bytes_ ? fp.Read(kPilReadBytes, dst)
                                                            : fp.ReadInto(kPilReadBytes, dst));
      if (got == 0) break;
      have += got;
    }
    if (have != size_) {
      return Status::Corruption(file_->path(), ": ", check_.format_name, " file of ", size_,
                                " bytes ended at offset ", have, " while PIL's reads loaded it");
    }
    DLIO_RETURN_NOT_OK(out->Resize(static_cast<size_t>(size_)));
    return check_.check(file_->path(), out->data(), static_cast<size_t>(size_));
  }

  std::string DescribeJson() const override {
    return StrCat("{\"format\":\"", check_.format_name,
                  "\",\"path\":", format_internal::JsonString(file_->path()),
                  ",\"io_model\":\"pil\",\"file_size\":", size_, ",\"buffer_size\":", buffer_size_,
                  ",\"read_bytes\":", kPilReadBytes, "}");
  }

 private:
  std::unique_ptr<File> file_;
  uint64_t size_;
  size_t buffer_size_;
  bool python_bytes_;
  WholeFileCheck check_;
};

}  // namespace

Result<std::unique_ptr<FormatReader>> OpenPilReader(Storage* storage, const std::string& path,
                                                    const FormatOptions& options,
                                                    WholeFileCheck check) {
  FileOptions fo;
  fo.direct = options.direct;
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kRead, fo));
  DLIO_ASSIGN_OR_RETURN(const uint64_t size, file->Size());
  const size_t buffer = pyio::PythonBufferSize(pyio::HostBlockSize(storage, path));
  return std::unique_ptr<FormatReader>(new PilReader(
      std::move(file), size, buffer, options.framework_client_costs, std::move(check)));
}

}  // namespace dlio::io_models
