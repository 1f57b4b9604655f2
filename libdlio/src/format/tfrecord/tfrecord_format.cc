// tfrecord: TensorFlow's record framing around serialized tf.train.Example protos, one sample per
// record: feature "image" (bytes_list, the sample bytes) and "label" (int64_list), like DLIO's
// generator. Beside each file, "<file>.idx" in DALI's text index format. How records are read:
// tfrecord_reader.cc.
#include <memory>

#include "format/formats.h"
#include "format/io_util.h"
#include "format/tfrecord/tfrecord.h"
#include "format/tfrecord/tfrecord_options.h"
#include "format/tfrecord/tfrecord_records.h"
#include "io_models/model_readers.h"

namespace dlio::format_internal {
namespace {

class TfRecordFormat final : public Format {
 public:
  TfRecordFormat() { readers_.Add(IoModel::kNative, OpenNative).Add(IoModel::kTfData, OpenTfData); }

  std::string name() const override { return "tfrecord"; }
  std::string extension() const override { return "tfrecord"; }
  bool variable_sample_sizes() const override { return true; }

  // tf.data first: `auto` reads as TFRecordDataset does (docs/io_models.md).
  FormatCapabilities capabilities() const override {
    FormatCapabilities c;
    c.io_models = {IoModel::kTfData};
    return c;
  }
  std::vector<IoModel> reader_models() const override { return readers_.models(); }

  std::vector<std::string> CompanionFiles(const std::string& path,
                                          const FormatOptions& options) const override {
    if (!WritesIndex(options)) return {};
    return {TfRecordIndexPath(path)};
  }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    DLIO_RETURN_NOT_OK(ParseTfRecordCompression(options.compression).status());
    const std::string idx_path = TfRecordIndexPath(path);
    if (WritesIndex(options)) {  // refuse before creating anything
      DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(idx_path));
      if (exists) return Status::AlreadyExists(idx_path + ": exists; refusing to overwrite it");
    }
    std::vector<std::string> created;
    auto fail = [&](Status st) {
      for (const std::string& p : created) RemoveQuietly(storage, p);
      return st;
    };
    std::string index;
    {
      DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kCreateNew));
      created.push_back(path);
      Status st = WriteTfRecords(file.get(), spec, options, &index);
      if (st.ok()) st = file->Close();
      if (!st.ok()) return fail(st);
    }
    if (WritesIndex(options)) {
      auto idx = storage->Open(idx_path, OpenMode::kCreateNew);
      if (!idx.ok()) return fail(idx.status());
      created.push_back(idx_path);
      Status st = (*idx)->WriteAt(0, index.data(), index.size());
      if (st.ok()) st = (*idx)->Close();
      if (!st.ok()) return fail(st);
    }
    return Status::OK();
  }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    return readers_.Open(capabilities(), storage, path, options);
  }

 private:
  // A file opened for reading, its size and its compression (dataset.compression).
  struct OpenedFile {
    std::unique_ptr<File> file;
    uint64_t size = 0;
    TfRecordCompression compression = TfRecordCompression::kNone;
  };
  static Result<OpenedFile> OpenFile(Storage* storage, const std::string& path,
                                     const FormatOptions& options) {
    DLIO_ASSIGN_OR_RETURN(SizedFile opened, OpenSized(storage, path, options));
    OpenedFile f;
    f.file = std::move(opened.file);
    f.size = opened.size;
    DLIO_ASSIGN_OR_RETURN(f.compression, ParseTfRecordCompression(options.compression));
    return f;
  }

  // tf.data: TFRecordDataset's buffered stream over each file.
  static Result<std::unique_ptr<FormatReader>> OpenTfData(Storage* storage, const std::string& path,
                                                          const FormatOptions& options) {
    DLIO_ASSIGN_OR_RETURN(OpenedFile f, OpenFile(storage, path, options));
    return OpenStream(std::move(f.file), f.size, f.compression, options);
  }

  // native: records located through <file>.idx when it exists (reader.use_index), else by a scan
  // of their headers, and read at their offsets.
  static Result<std::unique_ptr<FormatReader>> OpenNative(Storage* storage, const std::string& path,
                                                          const FormatOptions& options) {
    DLIO_ASSIGN_OR_RETURN(OpenedFile f, OpenFile(storage, path, options));
    // A compressed file has no index and no record offsets to read at: both models stream it.
    if (f.compression != TfRecordCompression::kNone) {
      return OpenStream(std::move(f.file), f.size, f.compression, options);
    }
    const uint64_t size = f.size;
    const std::string idx_path = TfRecordIndexPath(path);
    DLIO_ASSIGN_OR_RETURN(bool index_found, storage->Exists(idx_path));
    RecordTable table;
    const bool use_index = index_found && TfrecordOf(options.formats).use_index;
    if (use_index) {
      DLIO_ASSIGN_OR_RETURN(auto idx, storage->Open(idx_path, OpenMode::kRead));
      DLIO_ASSIGN_OR_RETURN(uint64_t idx_size, idx->Size());
      std::string text(idx_size, '\0');
      if (idx_size > 0) DLIO_RETURN_NOT_OK(idx->ReadExactAt(0, idx_size, text.data()));
      DLIO_RETURN_NOT_OK(idx->Close());
      DLIO_ASSIGN_OR_RETURN(table, ParseIndex(text, idx_path, path, size));
    } else {
      DLIO_ASSIGN_OR_RETURN(table, ScanRecords(f.file.get(), size, options.verify));
    }
    return NewTfRecordReader(std::move(f.file), size, std::move(table), idx_path, index_found,
                             use_index, options);
  }

  // tf.data: no index; the count is trusted when the config gives it, else the headers are
  // scanned (12-byte reads TF would not issue; runs always have the count).
  static Result<std::unique_ptr<FormatReader>> OpenStream(std::unique_ptr<File> file, uint64_t size,
                                                          TfRecordCompression compression,
                                                          const FormatOptions& options) {
    RecordTable table;
    uint64_t count = options.samples_per_file;
    if (count == 0 && compression == TfRecordCompression::kNone) {
      DLIO_ASSIGN_OR_RETURN(table, ScanRecords(file.get(), size, options.verify));
      count = table.offsets.size();
    }
    return NewTfRecordStreamReader(std::move(file), size, std::move(table), count, compression,
                                   options);
  }

  // Indexes locate records in an uncompressed file only.
  static bool WritesIndex(const FormatOptions& options) {
    auto compression = ParseTfRecordCompression(options.compression);
    return TfrecordOf(options.formats).write_index && compression.ok() &&
           *compression == TfRecordCompression::kNone;
  }

  io_models::ModelReaders readers_;
};

}  // namespace

std::unique_ptr<Format> NewTfRecordFormat() { return std::make_unique<TfRecordFormat>(); }

}  // namespace dlio::format_internal
