// pt: a torch.save file per sample, as preprocessed datasets are often kept (a sample saved with
// torch.save, loaded with torch.load in a Dataset's __getitem__). dlio writes torch.save's own
// file (format/torch/torch_save_file.h: PyTorch 1.13's zip, its records 64-byte aligned, zip64
// end records) of an OrderedDict holding one uint8 tensor "x" of the sample's bytes, data.pkl
// padded to dataset.pt_pickle_bytes; torch.load reads it back as such. Any torch.save file is read:
// a sample is its storages ("data/0", "data/1", ...) in key order.
//
// native: the zip's end records and central directory at open (format/zip.h), then per storage one
// request for its local header and data together. torch_load (the default under auto): what
// torch.load(path) sends (io_models/torch_load_reader.h).
#include <utility>

#include "dlio/config.h"
#include "dlio/str_cat.h"
#include "format/content.h"
#include "format/formats.h"
#include "format/io_util.h"
#include "format/torch/pt_describe.h"
#include "format/torch/pt_options.h"
#include "format/torch/torch_records.h"
#include "format/torch/torch_save_file.h"
#include "format/zip.h"
#include "io_models/model_readers.h"
#include "io_models/torch_load_reader.h"

namespace dlio::format_internal {
namespace {

// The object each file holds: OrderedDict([("x", tensor of `size` uint8)]), its pickle padded to
// `pickle_bytes` (0: none). InvalidArgument naming the key when that is less than the pickle.
Result<torch_save::TorchStateDict> PtSample(uint64_t size, uint64_t pickle_bytes,
                                            const std::string& path) {
  torch_save::TorchStateDict sd = PtSampleDict(size);
  const uint64_t own = torch_save::TorchOwnPickleSize(sd);
  if (pickle_bytes > 0 && pickle_bytes < own) {
    return Status::InvalidArgument(
        "dataset.pt_pickle_bytes: ", pickle_bytes, " is less than the sample's own pickle (", own,
        " bytes for ", size, " bytes", path.empty() ? "" : " in " + path, "): 0 or at least that");
  }
  sd.pickle_bytes = pickle_bytes;
  return sd;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

class PtNativeReader final : public FormatReader {
 public:
  PtNativeReader(std::unique_ptr<File> file, uint64_t file_size, ZipDirectory dir)
      : file_(std::move(file)), file_size_(file_size), dir_(std::move(dir)) {}

  Status Init() {
    DLIO_ASSIGN_OR_RETURN(records_, FindTorchRecords(file_->path(), dir_));
    for (const ZipMember* m : records_.storages) bytes_ += m->uncompressed_size;
    return Status::OK();
  }

  uint64_t num_samples() const override { return 1; }
  uint64_t sample_size(uint64_t) const override { return bytes_; }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(file_->path(), i, 1));
    DLIO_RETURN_NOT_OK(out->Resize(static_cast<size_t>(bytes_)));
    uint64_t at = 0;
    for (const ZipMember* m : records_.storages) {
      const std::string where = file_->path() + " record '" + m->name + "'";
      DLIO_RETURN_NOT_OK(ReadZipMemberBytes(file_.get(), dir_, *m, where, out->data() + at));
      at += m->compressed_size;
    }
    return Status::OK();
  }

  std::string DescribeJson() const override {
    std::vector<uint64_t> sizes;
    for (const ZipMember* m : records_.storages) sizes.push_back(m->uncompressed_size);
    return DescribePt(file_->path(), "", file_size_, records_.pickle->uncompressed_size, sizes);
  }

 private:
  std::unique_ptr<File> file_;
  uint64_t file_size_;
  ZipDirectory dir_;
  TorchRecords records_;  // pointers into dir_
  uint64_t bytes_ = 0;
};

Result<std::unique_ptr<FormatReader>> OpenPtNative(Storage* storage, const std::string& path,
                                                   const FormatOptions& options) {
  DLIO_ASSIGN_OR_RETURN(SizedFile f, OpenSized(storage, path, options));
  DLIO_ASSIGN_OR_RETURN(ZipDirectory dir, ReadZipDirectory(f.file.get(), f.size));
  auto reader = std::make_unique<PtNativeReader>(std::move(f.file), f.size, std::move(dir));
  DLIO_RETURN_NOT_OK(reader->Init());
  return std::unique_ptr<FormatReader>(std::move(reader));
}

class PtFormat final : public Format {
 public:
  PtFormat() {
    readers_.Add(IoModel::kNative, OpenPtNative)
        .Add(IoModel::kTorchLoad, io_models::OpenTorchLoadReader);
  }

  std::string name() const override { return "pt"; }
  std::string extension() const override { return "pt"; }
  bool variable_sample_sizes() const override { return true; }

  FormatCapabilities capabilities() const override {
    FormatCapabilities c;
    c.io_models = {IoModel::kTorchLoad};
    return c;
  }
  std::vector<IoModel> reader_models() const override { return readers_.models(); }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    if (spec.sample_sizes.size() != 1) {
      return Status::InvalidArgument(path, ": format pt holds one sample per file, not ",
                                     spec.sample_sizes.size(), " (dataset.num_samples_per_file)");
    }
    DLIO_ASSIGN_OR_RETURN(
        const torch_save::TorchStateDict sd,
        PtSample(spec.sample_sizes[0], options.formats.Value<PtOptions>().pickle_bytes, path));
    const std::string archive = torch_save::TorchArchiveName(BaseName(path));
    const uint64_t data_at = torch_save::TorchSaveLayout(archive, sd).storages.at(0).data_offset;
    return WriteNewFile(storage, path, [&](File* file) {
      return torch_save::WriteTorchSave(file, archive, sd,
                                        [&](uint64_t file_offset, size_t n, char* dst) {
                                          FillSampleBytes(spec.seed, 0, file_offset - data_at,
                                                          reinterpret_cast<uint8_t*>(dst), n);
                                        });
    });
  }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    return readers_.Open(capabilities(), storage, path, options);
  }

 private:
  io_models::ModelReaders readers_;
};

}  // namespace

std::unique_ptr<Format> NewPtFormat() { return std::make_unique<PtFormat>(); }

Status ValidatePtConfig(const WorkloadConfig& c) {
  if (c.dataset.num_samples_per_file != 1) {
    return Status::InvalidArgument(
        "dataset.num_samples_per_file: format pt holds one sample per file (a torch.save file "
        "per sample), not ",
        c.dataset.num_samples_per_file);
  }
  return PtSample(c.dataset.record_length_bytes, c.dataset.formats.Value<PtOptions>().pickle_bytes,
                  "")
      .status();
}

}  // namespace dlio::format_internal
