#include "io_models/zipfile_reader.h"

#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "dlio/str_cat.h"
#include "format/io_util.h"
#include "io_models/pyio/buffered_reader.h"
#include "io_models/pyio/zipfile.h"

namespace dlio::io_models {
namespace {

bool IsDirectory(const pyio::ZipInfo& m) { return !m.filename.empty() && m.filename.back() == '/'; }

class ZipfileReader final : public FormatReader {
 public:
  ZipfileReader(std::unique_ptr<File> file, size_t buffer_size, bool framework)
      : file_(std::move(file)), fp_(file_.get(), buffer_size), framework_(framework) {}

  // ZipFile.__init__'s _RealGetContents: the end record, then the central directory.
  Status Load(uint64_t expected) {
    DLIO_ASSIGN_OR_RETURN(pyio::ZipFile zf, pyio::ZipFile::Read(&fp_));
    zf_ = std::make_unique<pyio::ZipFile>(std::move(zf));
    for (const pyio::ZipInfo& m : zf_->infolist()) {
      if (!IsDirectory(m)) members_.push_back(&m);
    }
    if (expected > members_.size()) {
      return Status::Corruption(file_->path(), ": the archive holds ", members_.size(),
                                " members, but ", expected,
                                " samples were expected (dataset.num_samples_per_file)");
    }
    if (expected > 0) members_.resize(static_cast<size_t>(expected));
    return Status::OK();
  }

  uint64_t num_samples() const override { return members_.size(); }
  uint64_t sample_size(uint64_t i) const override {
    return i < members_.size() ? members_[static_cast<size_t>(i)]->file_size : 0;
  }

  // ZipFile.read(name): open(name) (the local header through the shared file), read(), close.
  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(format_internal::CheckSampleIndex(file_->path(), i, members_.size()));
    const pyio::ZipInfo& m = *members_[static_cast<size_t>(i)];
    const auto n = static_cast<size_t>(m.file_size);
    DLIO_RETURN_NOT_OK(out->Resize(n));
    std::lock_guard<std::mutex> lock(mu_);
    DLIO_ASSIGN_OR_RETURN(auto member, zf_->Open(m, true, framework_));
    size_t got = 0;
    if (framework_) {
      DLIO_ASSIGN_OR_RETURN(pyio::PythonBytes bytes, member->ReadObject(n));
      got = bytes.size();
      if (got > 0) std::memcpy(out->data(), bytes.data(), got);
    } else {
      DLIO_ASSIGN_OR_RETURN(got, member->ReadInto(n, out->data()));
    }
    if (got != n) {
      return Status::Corruption(file_->path(), " member '", m.filename, "' at offset ",
                                m.header_offset, ": ", got, " of ", n, " bytes");
    }
    return Status::OK();
  }

  std::string DescribeJson() const override {
    return StrCat("{\"format\":\"zip\",\"io_model\":\"zipfile\",\"path\":",
                  format_internal::JsonString(file_->path()),
                  ",\"members\":", zf_->infolist().size(), ",",
                  format_internal::SampleSizesJson(members_.size(), *this), "}");
  }

 private:
  std::unique_ptr<File> file_;
  std::mutex mu_;  // the ZipFile and its buffered file are one Python object each
  pyio::BufferedReader fp_;
  bool framework_;
  std::unique_ptr<pyio::ZipFile> zf_;
  std::vector<const pyio::ZipInfo*> members_;
};

}  // namespace

Result<std::unique_ptr<FormatReader>> OpenZipfileReader(Storage* storage, const std::string& path,
                                                        const FormatOptions& options) {
  DLIO_ASSIGN_OR_RETURN(format_internal::SizedFile sized,
                        format_internal::OpenSized(storage, path, options));
  const size_t buffer = pyio::PythonBufferSize(storage, *sized.file);
  auto reader = std::make_unique<ZipfileReader>(std::move(sized.file), buffer,
                                                options.framework_client_costs);
  DLIO_RETURN_NOT_OK(reader->Load(options.samples_per_file));
  return std::unique_ptr<FormatReader>(std::move(reader));
}

}  // namespace dlio::io_models
