// indexed_binary and mmap_indexed_binary: DLIO's formats for dlrm and Megatron-style datasets,
// one layout (indexed_binary.h). Entries may be in any order and need not tile the file; each
// must lie inside it. The two differ in their default reader: native preads for indexed_binary,
// the mmap model (np.memmap, indexed_binary_mmap.cc) for mmap_indexed_binary.
#include <algorithm>

#include "format/content.h"
#include "format/formats.h"
#include "format/indexed_binary.h"
#include "format/io_util.h"
#include "io_models/model_readers.h"

namespace dlio::format_internal {

Result<std::vector<uint64_t>> ParseIndex(const std::string& path, const uint8_t* raw,
                                         uint64_t size) {
  if (size % 8 != 0) {
    return Status::Corruption(path, ": index size ", size,
                              " is not a multiple of 8 (truncated entry at offset ", size / 8 * 8,
                              ")");
  }
  std::vector<uint64_t> entries(size / 8);
  for (size_t i = 0; i < entries.size(); ++i) entries[i] = Le64(&raw[i * 8]);
  return entries;
}

Status CheckIndexes(const std::string& path, uint64_t size, const std::vector<uint64_t>& offsets,
                    const std::vector<uint64_t>& sizes) {
  const std::string off_path = OffsetIndexPath(path), sz_path = SizeIndexPath(path);
  if (offsets.size() != sizes.size()) {
    return Status::Corruption(off_path, " has ", offsets.size(), " entries but ", sz_path, " has ",
                              sizes.size());
  }
  for (size_t i = 0; i < offsets.size(); ++i) {
    if (offsets[i] > size || sizes[i] > size - offsets[i]) {
      return Status::Corruption(off_path, " entry ", i, " (index offset ", i * 8,
                                "): sample at offset ", offsets[i], " of ", sizes[i],
                                " bytes ends past ", path, " (", size, " bytes)");
    }
  }
  return Status::OK();
}

std::string DescribeIndexedBinary(const std::string& format, const std::string& path,
                                  uint64_t file_size, const FormatReader& reader) {
  const uint64_t n = reader.num_samples();
  return "{\"format\":" + JsonString(format) + ",\"path\":" + JsonString(path) +
         ",\"file_size\":" + std::to_string(file_size) + "," + SampleSizesJson(n, reader) +
         ",\"offset_index\":" + JsonString(OffsetIndexPath(path)) +
         ",\"size_index\":" + JsonString(SizeIndexPath(path)) +
         ProblemsJson(n == 0 ? std::vector<std::string>{path + ": the index lists no samples"}
                             : std::vector<std::string>{}) +
         "}";
}

namespace {

Result<std::vector<uint64_t>> ReadIndex(Storage* storage, const std::string& path) {
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kRead));
  DLIO_ASSIGN_OR_RETURN(uint64_t size, file->Size());
  std::vector<uint8_t> raw(size);
  if (size > 0 && size % 8 == 0) DLIO_RETURN_NOT_OK(file->ReadExactAt(0, size, raw.data()));
  DLIO_ASSIGN_OR_RETURN(std::vector<uint64_t> entries, ParseIndex(path, raw.data(), size));
  DLIO_RETURN_NOT_OK(file->Close());
  return entries;
}

class IndexedBinaryReader final : public FormatReader {
 public:
  IndexedBinaryReader(std::string format, std::unique_ptr<File> file, uint64_t file_size,
                      std::vector<uint64_t> offsets, std::vector<uint64_t> sizes,
                      uint64_t transfer_size)
      : format_(std::move(format)),
        file_(std::move(file)),
        file_size_(file_size),
        offsets_(std::move(offsets)),
        sizes_(std::move(sizes)),
        transfer_size_(transfer_size) {}

  uint64_t num_samples() const override { return offsets_.size(); }
  uint64_t sample_size(uint64_t i) const override { return i < sizes_.size() ? sizes_[i] : 0; }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(file_->path(), i, offsets_.size()));
    DLIO_RETURN_NOT_OK(out->Resize(sizes_[i]));
    return ReadRange(file_.get(), offsets_[i], sizes_[i], transfer_size_, out->data());
  }

  std::string DescribeJson() const override {
    return DescribeIndexedBinary(format_, file_->path(), file_size_, *this);
  }

 private:
  std::string format_;
  std::unique_ptr<File> file_;
  uint64_t file_size_;
  std::vector<uint64_t> offsets_, sizes_;
  uint64_t transfer_size_;
};

class IndexedBinaryFormat final : public Format {
 public:
  // `name` is also the extension; `io_models` the models it declares (the first is its default).
  IndexedBinaryFormat(std::string name, std::vector<IoModel> io_models)
      : name_(std::move(name)), io_models_(std::move(io_models)) {
    const std::string n = name_;
    readers_
        .Add(IoModel::kNative, [n](Storage* s, const std::string& path,
                                   const FormatOptions& o) { return OpenNative(n, s, path, o); })
        .Add(IoModel::kMmap, [n](Storage* s, const std::string& path, const FormatOptions& o) {
          return OpenMmapModel(n, s, path, o);
        });
  }

  std::string name() const override { return name_; }
  std::string extension() const override { return name_; }
  bool variable_sample_sizes() const override { return true; }
  // A sample's reads depend only on its size (docs/scaling.md).
  FormatCapabilities capabilities() const override {
    FormatCapabilities c;
    c.collective_reads = true;
    c.io_models = io_models_;
    return c;
  }
  std::vector<IoModel> reader_models() const override { return readers_.models(); }
  // The two indexes (removed with their data file, listed by inspect).
  std::vector<std::string> CompanionFiles(const std::string& path,
                                          const FormatOptions& options) const override {
    (void)options;
    return {OffsetIndexPath(path), SizeIndexPath(path)};
  }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    // The index files first: refusing to clobber any of the three must happen before we create
    // anything, and a failure removes only what this call created.
    std::vector<std::string> created;
    auto fail = [&](Status st) {
      for (const std::string& p : created) RemoveQuietly(storage, p);
      return st;
    };
    std::string offs, sizes;
    uint64_t pos = 0;
    for (uint64_t s : spec.sample_sizes) {
      PutLe64(&offs, pos);
      PutLe64(&sizes, s);
      pos += s;
    }
    for (const std::string& p : {path, OffsetIndexPath(path), SizeIndexPath(path)}) {
      DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(p));
      if (exists) return Status::AlreadyExists(p + ": exists; refusing to overwrite it");
    }
    {
      auto data = storage->Open(path, OpenMode::kCreateNew);
      if (!data.ok()) return data.status();
      created.push_back(path);
      uint64_t at = 0;
      Status st = ForEachDataChunk(spec, kWriteChunk, [&](const uint8_t* p, size_t n) {
        DLIO_RETURN_NOT_OK((*data)->WriteAt(at, p, n));
        at += n;
        return Status::OK();
      });
      if (st.ok()) st = (*data)->Close();
      if (!st.ok()) return fail(st);
    }
    for (const auto& [p, bytes] :
         {std::pair{OffsetIndexPath(path), &offs}, std::pair{SizeIndexPath(path), &sizes}}) {
      auto idx = storage->Open(p, OpenMode::kCreateNew);
      if (!idx.ok()) return fail(idx.status());
      created.push_back(p);
      Status st = (*idx)->WriteAt(0, bytes->data(), bytes->size());
      if (st.ok()) st = (*idx)->Close();
      if (!st.ok()) return fail(st);
    }
    return Status::OK();
  }

  // Sample i lies at the sum of the sizes before it: rank 0 writes both index files and creates
  // the (empty) data file, every rank its samples.
  bool CanWriteShared(const Storage&, const FormatOptions&,
                      const SharedWrite& shared) const override {
    return shared.comm != nullptr && shared.world > 1;
  }
  Status WriteShared(Storage* storage, const std::string& path, const FileSpec& spec,
                     const FormatOptions&, const SharedWrite& shared) const override {
    std::string offs, sizes;
    std::vector<uint64_t> offsets;
    uint64_t pos = 0;
    for (uint64_t s : spec.sample_sizes) {
      offsets.push_back(pos);
      PutLe64(&offs, pos);
      PutLe64(&sizes, s);
      pos += s;
    }
    return WriteSharedSamples(
        storage, path, spec, offsets, shared, [&](std::vector<std::string>* created) -> Status {
          for (const std::string& p : {path, OffsetIndexPath(path), SizeIndexPath(path)}) {
            DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(p));
            if (exists) return Status::AlreadyExists(p + ": exists; refusing to overwrite it");
          }
          {
            DLIO_ASSIGN_OR_RETURN(auto data, storage->Open(path, OpenMode::kCreateNew));
            created->push_back(path);
            DLIO_RETURN_NOT_OK(data->Close());
          }
          for (const auto& [p, bytes] :
               {std::pair{OffsetIndexPath(path), &offs}, std::pair{SizeIndexPath(path), &sizes}}) {
            DLIO_ASSIGN_OR_RETURN(auto idx, storage->Open(p, OpenMode::kCreateNew));
            created->push_back(p);
            DLIO_RETURN_NOT_OK(idx->WriteAt(0, bytes->data(), bytes->size()));
            DLIO_RETURN_NOT_OK(idx->Close());
          }
          return Status::OK();
        });
  }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    return readers_.Open(capabilities(), storage, path, options);
  }

 private:
  // The mmap model where the storage maps files; asked for by auto (or pytorch) on one that
  // cannot (memory, mpiio, slow), the native reader instead, as documented in docs/io_models.md.
  // reader.io_model mmap itself on such a storage fails, naming it.
  static Result<std::unique_ptr<FormatReader>> OpenMmapModel(const std::string& name,
                                                             Storage* storage,
                                                             const std::string& path,
                                                             const FormatOptions& options) {
    if (options.io_model == IoModel::kMmap || storage->capabilities().map_files) {
      return OpenMmapIndexedBinary(storage, name, path, options);
    }
    return OpenNative(name, storage, path, options);
  }

  // native: both indexes read whole, each sample read at its offset.
  static Result<std::unique_ptr<FormatReader>> OpenNative(const std::string& name, Storage* storage,
                                                          const std::string& path,
                                                          const FormatOptions& options) {
    DLIO_ASSIGN_OR_RETURN(SizedFile opened, OpenSized(storage, path, options));
    std::unique_ptr<File> file = std::move(opened.file);
    const uint64_t size = opened.size;
    DLIO_ASSIGN_OR_RETURN(std::vector<uint64_t> offsets, ReadIndex(storage, OffsetIndexPath(path)));
    DLIO_ASSIGN_OR_RETURN(std::vector<uint64_t> sizes, ReadIndex(storage, SizeIndexPath(path)));
    DLIO_RETURN_NOT_OK(CheckIndexes(path, size, offsets, sizes));
    return std::unique_ptr<FormatReader>(new IndexedBinaryReader(
        name, std::move(file), size, std::move(offsets), std::move(sizes), options.transfer_size));
  }

  std::string name_;
  std::vector<IoModel> io_models_;
  io_models::ModelReaders readers_;
};

}  // namespace

// native by default; the mmap model on request (reader.io_model mmap).
std::unique_ptr<Format> NewIndexedBinaryFormat() {
  return std::make_unique<IndexedBinaryFormat>(
      "indexed_binary", std::vector<IoModel>{IoModel::kNative, IoModel::kMmap});
}

// The mmap model by default (DLIO's IndexedBinaryMMapReader, Megatron's MMapIndexedDataset).
std::unique_ptr<Format> NewMmapIndexedBinaryFormat() {
  return std::make_unique<IndexedBinaryFormat>("mmap_indexed_binary",
                                               std::vector<IoModel>{IoModel::kMmap});
}

}  // namespace dlio::format_internal
