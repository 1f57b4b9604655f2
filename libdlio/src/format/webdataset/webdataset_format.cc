// webdataset: tar shards of samples (webdataset.h). Under reader.io_model auto it reads as
// tarfile.open(mode="r|") does (requests of 10240 bytes); native streams in transfer_size requests;
// tarfile_index reads members by offset after tarfile.open(path)'s index
// (io_models/tarfile_index_reader.h).
#include "dlio/config.h"
#include "format/formats.h"
#include "format/io_util.h"
#include "format/webdataset/webdataset.h"
#include "format/webdataset/webdataset_options.h"
#include "io_models/model_readers.h"
#include "io_models/pyio/buffered_reader.h"
#include "io_models/tarfile_index_reader.h"

namespace dlio::format_internal {
namespace {

class WebdatasetFormat final : public Format {
 public:
  WebdatasetFormat() {
    readers_.Add(IoModel::kNative, OpenNative)
        .Add(IoModel::kTarfile, OpenTarfile)
        .Add(IoModel::kTarfileIndex, io_models::OpenTarfileIndexReader);
  }

  std::string name() const override { return "webdataset"; }
  std::string extension() const override { return "tar"; }
  bool variable_sample_sizes() const override { return true; }
  // A sample is its first member (the record) and its label members (the label's digits).
  bool exact_sample_sizes() const override { return false; }

  FormatCapabilities capabilities() const override {
    FormatCapabilities c;
    c.io_models = {IoModel::kTarfile, IoModel::kTarfileIndex};
    c.shard_streams = true;
    return c;
  }
  std::vector<IoModel> reader_models() const override { return readers_.models(); }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    DLIO_ASSIGN_OR_RETURN(
        const std::vector<std::string> extensions,
        webdataset::MemberExtensions(options.formats.Value<WebdatasetOptions>().members));
    return WriteNewFile(storage, path,
                        [&](File* file) { return webdataset::WriteShard(file, spec, extensions); });
  }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    return readers_.Open(capabilities(), storage, path, options);
  }

 private:
  // `python_file`: read through Python's buffered file, sized by the shard's block size.
  static Result<std::unique_ptr<FormatReader>> OpenWith(Storage* storage, const std::string& path,
                                                        const FormatOptions& options,
                                                        uint64_t read_size, bool direct,
                                                        bool python_file = false) {
    DLIO_ASSIGN_OR_RETURN(auto file,
                          storage->Open(path, OpenMode::kRead, ReadFileOptions(options)));
    const size_t python_buffer = python_file ? pyio::PythonBufferSize(storage, *file) : 0;
    return webdataset::OpenShard(std::move(file), read_size, options.samples_per_file, direct,
                                 python_buffer);
  }
  // tarfile's _Stream: bufsize-byte requests, whatever transfer_size says; through Python's
  // buffered file when the shard is opened as WebDataset opens it (reader.tarfile_open).
  static Result<std::unique_ptr<FormatReader>> OpenTarfile(Storage* storage,
                                                           const std::string& path,
                                                           const FormatOptions& options) {
    const bool python_file =
        options.formats.Value<WebdatasetOptions>().tarfile_open == TarfileOpen::kFileObject;
    return OpenWith(storage, path, options, webdataset::kTarfileBufsize, false, python_file);
  }
  static Result<std::unique_ptr<FormatReader>> OpenNative(Storage* storage, const std::string& path,
                                                          const FormatOptions& options) {
    const uint64_t transfer = options.transfer_size == 0 ? kWriteChunk : options.transfer_size;
    return OpenWith(storage, path, options, transfer, true);
  }

  io_models::ModelReaders readers_;
};

}  // namespace

std::unique_ptr<Format> NewWebdatasetFormat() { return std::make_unique<WebdatasetFormat>(); }

Status ValidateWebdatasetConfig(const WorkloadConfig& c) {
  return webdataset::MemberExtensions(c.dataset.formats.Value<WebdatasetOptions>().members)
      .status();
}

}  // namespace dlio::format_internal
