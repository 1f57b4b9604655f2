// The mmap model of indexed_binary and mmap_indexed_binary (indexed_binary.h).
#include "format/indexed_binary.h"
#include "format/io_util.h"

namespace dlio::format_internal {
namespace {

// Maps an index file, copies its entries out and unmaps it (its pages touched once, whole).
Result<std::vector<uint64_t>> MapIndex(Storage* storage, const std::string& path) {
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kRead));
  DLIO_RETURN_NOT_OK(file->Size().status());  // np.memmap sizes the file before mapping it
  DLIO_ASSIGN_OR_RETURN(auto mapping, file->Map());
  DLIO_ASSIGN_OR_RETURN(std::vector<uint64_t> entries,
                        ParseIndex(path, mapping->data(), mapping->size()));
  DLIO_RETURN_NOT_OK(mapping->Unmap());
  DLIO_RETURN_NOT_OK(file->Close());
  return entries;
}

class MmapIndexedBinaryReader final : public FormatReader {
 public:
  MmapIndexedBinaryReader(std::string format, std::unique_ptr<File> file,
                          std::unique_ptr<FileMapping> mapping, std::vector<uint64_t> offsets,
                          std::vector<uint64_t> sizes)
      : format_(std::move(format)),
        file_(std::move(file)),
        mapping_(std::move(mapping)),
        offsets_(std::move(offsets)),
        sizes_(std::move(sizes)) {}

  uint64_t num_samples() const override { return offsets_.size(); }
  uint64_t sample_size(uint64_t i) const override { return i < sizes_.size() ? sizes_[i] : 0; }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(file_->path(), i, offsets_.size()));
    DLIO_RETURN_NOT_OK(out->Resize(sizes_[i]));
    return mapping_->CopyOut(offsets_[i], sizes_[i], out->data());
  }

  std::string DescribeJson() const override {
    return DescribeIndexedBinary(format_, file_->path(), mapping_->size(), *this);
  }

 private:
  std::string format_;
  std::unique_ptr<File> file_;
  std::unique_ptr<FileMapping> mapping_;  // unmapped (destroyed) before file_ closes
  std::vector<uint64_t> offsets_, sizes_;
};

}  // namespace

Result<std::unique_ptr<FormatReader>> OpenMmapIndexedBinary(Storage* storage,
                                                            const std::string& format,
                                                            const std::string& path,
                                                            const FormatOptions& options) {
  (void)options;
  // As DLIO's reader and Megatron's dataset: the indexes first, then the data file.
  const std::string off_path = OffsetIndexPath(path), sz_path = SizeIndexPath(path);
  DLIO_ASSIGN_OR_RETURN(std::vector<uint64_t> offsets, MapIndex(storage, off_path));
  DLIO_ASSIGN_OR_RETURN(std::vector<uint64_t> sizes, MapIndex(storage, sz_path));
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kRead));
  DLIO_ASSIGN_OR_RETURN(uint64_t size, file->Size());
  DLIO_ASSIGN_OR_RETURN(auto mapping, file->Map());
  if (mapping->size() != size) {
    return Status::Corruption(path, ": changed size while being mapped (", size, " then ",
                              mapping->size(), " bytes)");
  }
  DLIO_RETURN_NOT_OK(CheckIndexes(path, size, offsets, sizes));
  return std::unique_ptr<FormatReader>(new MmapIndexedBinaryReader(
      format, std::move(file), std::move(mapping), std::move(offsets), std::move(sizes)));
}

}  // namespace dlio::format_internal
