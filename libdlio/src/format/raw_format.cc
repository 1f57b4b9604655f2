// raw: a file is its samples' bytes back to back, nothing else (no header, no index, no footer):
// the flat files a C loader preads, or an IterableDataset reads in fixed records. A file of S
// bytes holding n samples (dataset.num_samples_per_file) holds n samples of S / n bytes each, so
// a sample's place follows from the file's size alone and reading it issues only its own bytes.
#include "format/content.h"
#include "format/formats.h"
#include "format/io_util.h"
#include "io_models/mmap_options.h"
#include "io_models/model_readers.h"
#include "io_models/pyio/buffered_reader.h"
#include "io_models/pyio_reader.h"
#include "io_models/pyio_records_reader.h"

namespace dlio::format_internal {
namespace {

// The size of each of `samples` equal samples in a raw file of `file_size` bytes, or Corruption
// naming the file and the offset of the bytes left over when they do not tile it.
Result<uint64_t> RawSampleSize(const std::string& path, uint64_t file_size, uint64_t samples) {
  if (file_size % samples != 0) {
    return Status::Corruption(
        path, ": ", file_size, " bytes do not split into ", samples,
        " equal samples (dataset.num_samples_per_file): ", file_size % samples,
        " bytes left over at offset ", file_size - file_size % samples);
  }
  return file_size / samples;
}

// reader.mmap_head_bytes' first open: the file opened as Python opens it (FileIO's fstat), then
// f.read(head_bytes) through Python's buffer (one 4 KiB fill for a head up to st_blksize); the
// file stays open while the reader lives. Null when head_bytes is 0.
Result<std::unique_ptr<File>> ReadPythonHead(Storage* storage, const std::string& path,
                                             const MmapOptions& mmap) {
  if (mmap.head_bytes == 0) return std::unique_ptr<File>();
  DLIO_ASSIGN_OR_RETURN(auto file, pyio::OpenAsPython(storage, path));
  pyio::BufferedReader fp(file.get(), pyio::PythonBufferSize(storage, *file));
  std::vector<uint8_t> head(static_cast<size_t>(mmap.head_bytes));
  DLIO_RETURN_NOT_OK(fp.ReadInto(head.size(), head.data()).status());
  return file;
}

// Equal samples back to back. native reads sample i in transfer_size requests; the mmap model
// (`mapping` set) maps the file for the reader's lifetime and copies a sample out of the mapping
// (np.array(np.memmap(path)[offset:offset + size]), as nanoGPT-style loaders slice a .bin), so its
// pages fault in instead of being read.
class RawReader final : public FormatReader {
 public:
  RawReader(std::unique_ptr<File> file, std::unique_ptr<FileMapping> mapping, uint64_t file_size,
            uint64_t samples, uint64_t sample_size, uint64_t transfer_size,
            std::unique_ptr<File> head = nullptr)
      : file_(std::move(file)),
        mapping_(std::move(mapping)),
        file_size_(file_size),
        samples_(samples),
        sample_size_(sample_size),
        transfer_size_(transfer_size),
        head_(std::move(head)) {}

  uint64_t num_samples() const override { return samples_; }
  uint64_t sample_size(uint64_t i) const override { return i < samples_ ? sample_size_ : 0; }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(file_->path(), i, samples_));
    DLIO_RETURN_NOT_OK(out->Resize(sample_size_));
    if (mapping_ != nullptr) return mapping_->CopyOut(i * sample_size_, sample_size_, out->data());
    return ReadRange(file_.get(), i * sample_size_, sample_size_, transfer_size_, out->data());
  }

  std::string DescribeJson() const override {
    return "{\"format\":\"raw\",\"path\":" + JsonString(file_->path()) +
           ",\"file_size\":" + std::to_string(file_size_) + "," +
           FixedSampleSizesJson(samples_, sample_size_) + "}";
  }

 private:
  std::unique_ptr<File> file_;
  std::unique_ptr<FileMapping> mapping_;  // null for native; unmapped before file_ closes
  uint64_t file_size_;
  uint64_t samples_;
  uint64_t sample_size_;
  uint64_t transfer_size_;
  // reader.mmap_head_bytes' first open; declared last, so closed before the mapping is dropped
  // (PIL's Image.close closes its file, then drops the mapping)
  std::unique_ptr<File> head_;
};

uint64_t SamplesOf(const FormatOptions& options) {
  return options.samples_per_file == 0 ? 1 : options.samples_per_file;
}

class RawFormat final : public Format {
 public:
  RawFormat() {
    readers_.Add(IoModel::kNative, OpenNative)
        .Add(IoModel::kPyio, OpenPyio)
        .Add(IoModel::kMmap, OpenMmap);
  }

  std::string name() const override { return "raw"; }
  std::string extension() const override { return "raw"; }
  // The suffixes flat binary files carry where programs write them.
  std::vector<std::string> read_extensions() const override { return {"raw", "bin", "dat"}; }
  // One size per file: a file's samples must be equal to be found without an index.
  bool variable_sample_sizes() const override { return false; }
  FormatCapabilities capabilities() const override {
    FormatCapabilities c;
    c.collective_reads = true;  // a sample's reads depend only on its size
    c.streams_samples = true;   // every reader fills the buffer front to back, reading none back
    // By name: pyio (a Python program's f.read of the whole file, or of each record after a
    // seek) and mmap (np.memmap); auto
    // reads as a C loader does.
    c.io_models = {IoModel::kPyio, IoModel::kMmap};
    c.native_under_auto = true;
    c.samples_from_config = true;  // nothing in a file tells where its samples begin
    c.mmap_head = true;            // reader.mmap_head_bytes: PIL's header parse before the map
    c.pyio_records = true;         // pyio over num_samples_per_file > 1: f.seek, one call a record
    return c;
  }
  std::vector<IoModel> reader_models() const override { return readers_.models(); }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    (void)options;
    DLIO_RETURN_NOT_OK(UniformSampleSize(spec, path, "raw").status());
    return WriteNewFile(storage, path, [&](File* file) {
      uint64_t at = 0;
      return ForEachDataChunk(spec, kWriteChunk, [&](const uint8_t* p, size_t n) {
        DLIO_RETURN_NOT_OK(file->WriteAt(at, p, n));
        at += n;
        return Status::OK();
      });
    });
  }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    return readers_.Open(capabilities(), storage, path, options);
  }

 private:
  // native: sample i is bytes [i x size, (i + 1) x size), read in transfer_size requests.
  static Result<std::unique_ptr<FormatReader>> OpenNative(Storage* storage, const std::string& path,
                                                          const FormatOptions& options) {
    DLIO_ASSIGN_OR_RETURN(SizedFile opened, OpenSized(storage, path, options));
    std::unique_ptr<File> file = std::move(opened.file);
    const uint64_t size = opened.size;
    DLIO_ASSIGN_OR_RETURN(uint64_t sample_size, RawSampleSize(path, size, SamplesOf(options)));
    return std::unique_ptr<FormatReader>(new RawReader(
        std::move(file), nullptr, size, SamplesOf(options), sample_size, options.transfer_size));
  }

  // mmap: the file mapped whole (np.memmap sizes it first); with reader.mmap_head_bytes, after a
  // head read on a first open that stays open (PIL: Image.open's header parse, then
  // ImageFile.load's map). Unimplemented naming the storage when it cannot map files.
  static Result<std::unique_ptr<FormatReader>> OpenMmap(Storage* storage, const std::string& path,
                                                        const FormatOptions& options) {
    DLIO_ASSIGN_OR_RETURN(std::unique_ptr<File> head,
                          ReadPythonHead(storage, path, options.formats.Value<MmapOptions>()));
    DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kRead));
    DLIO_ASSIGN_OR_RETURN(uint64_t size, file->Size());
    if (head != nullptr) {
      // the second open's Python file: FileIO's lseek(0, SEEK_CUR) before mmap.mmap's fstat
      pyio::BufferedReader fp(file.get(), pyio::PythonBufferSize(storage, *file));
      DLIO_RETURN_NOT_OK(fp.Tell().status());
    }
    DLIO_ASSIGN_OR_RETURN(uint64_t sample_size, RawSampleSize(path, size, SamplesOf(options)));
    DLIO_ASSIGN_OR_RETURN(auto mapping, file->Map());
    if (mapping->size() != size) {
      return Status::Corruption(path, ": changed size while being mapped (", size, " then ",
                                mapping->size(), " bytes)");
    }
    if (head != nullptr) {
      // PIL closes the file it mapped at once (mmap.mmap keeps a dup of its descriptor), then
      // ImageFile.load checks the mapping's size (map.size(): an fstat of that dup)
      DLIO_RETURN_NOT_OK(file->Close());
      DLIO_RETURN_NOT_OK(head->Size().status());
    }
    return std::unique_ptr<FormatReader>(new RawReader(std::move(file), std::move(mapping), size,
                                                       SamplesOf(options), sample_size, 0,
                                                       std::move(head)));
  }

  // pyio: the whole file as the one sample (any bytes are a raw file's), or, with
  // dataset.num_samples_per_file > 1, its records, each read with f.seek and one call on a Python
  // file kept open (a fixed-record loader: CIFAR-10's binary batches).
  static Result<std::unique_ptr<FormatReader>> OpenPyio(Storage* storage, const std::string& path,
                                                        const FormatOptions& options) {
    if (options.samples_per_file > 1) {
      return io_models::OpenPyioRecordsReader(storage, path, options, "raw",
                                              options.samples_per_file);
    }
    return io_models::OpenPyioReader(storage, path, options, {"raw", nullptr});
  }

  io_models::ModelReaders readers_;
};

}  // namespace

std::unique_ptr<Format> NewRawFormat() { return std::make_unique<RawFormat>(); }

}  // namespace dlio::format_internal
