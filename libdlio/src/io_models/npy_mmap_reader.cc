#include "io_models/npy_mmap_reader.h"

#include <cstdio>
#include <utility>

#include "dlio/str_cat.h"
#include "format/io_util.h"
#include "format/npy_header.h"
#include "format/npy_samples.h"
#include "io_models/pyio/buffered_reader.h"
#include "io_models/pyio/numpy_load.h"

namespace dlio::io_models {
namespace {

using format_internal::ArraySamples;
using format_internal::NpyHeader;

class NpyMmapReader final : public FormatReader {
 public:
  NpyMmapReader(std::unique_ptr<FileMapping> mapping, NpyHeader h, ArraySamples s)
      : mapping_(std::move(mapping)), h_(std::move(h)), s_(s) {}

  uint64_t num_samples() const override { return s_.num_samples; }
  uint64_t sample_size(uint64_t) const override { return s_.sample_size; }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(format_internal::CheckSampleIndex(mapping_->path(), i, s_.num_samples));
    DLIO_RETURN_NOT_OK(out->Resize(s_.sample_size));
    return mapping_->CopyOut(h_.data_offset + s_.offset(i), s_.sample_size, out->data());
  }

  std::string DescribeJson() const override {
    return StrCat("{\"format\":\"npy\",\"model\":\"mmap\",\"path\":",
                  format_internal::JsonString(mapping_->path()),
                  ",\"file_size\":", mapping_->size(), ",",
                  format_internal::FixedSampleSizesJson(s_.num_samples, s_.sample_size),
                  ",\"shape\":", h_.ShapeJson(), ",\"data_offset\":", h_.data_offset, "}");
  }

 private:
  std::unique_ptr<FileMapping> mapping_;  // its descriptor closed once mapped, as Python's
  NpyHeader h_;
  ArraySamples s_;
};

}  // namespace

Result<std::unique_ptr<FormatReader>> OpenNpyMmapReader(Storage* storage, const std::string& path,
                                                        const FormatOptions& options) {
  // np.load: open (FileIO's fstat), read(6) of the magic (one fill of the buffer), a seek back;
  // kept open until the load returns.
  DLIO_ASSIGN_OR_RETURN(auto outer, pyio::OpenAsPython(storage, path));
  pyio::BufferedReader load(outer.get(), pyio::PythonBufferSize(storage, *outer));
  uint8_t magic[6];
  DLIO_ASSIGN_OR_RETURN(const size_t got, load.ReadInto(sizeof magic, magic));
  if (got != sizeof magic) {
    return Status::Corruption(path, ": ", got, " bytes, too short for an .npy's magic at offset 0");
  }
  // open_memmap: the header through a second open file, then fp.tell() for the data offset;
  // closed before the mapping.
  NpyHeader h;
  {
    DLIO_ASSIGN_OR_RETURN(auto second, pyio::OpenAsPython(storage, path));
    pyio::BufferedReader fp(second.get(), pyio::PythonBufferSize(storage, *second));
    DLIO_ASSIGN_OR_RETURN(h, pyio::ReadNpyArrayHeader(&fp));
    DLIO_RETURN_NOT_OK(fp.Tell().status());
    DLIO_RETURN_NOT_OK(second->Close());
  }
  // numpy.memmap: a third open (FileIO's fstat, the buffer's lseek), fid.seek(0, 2) and
  // fid.tell() (two lseeks), mmap.mmap (its fstat, the whole file mapped at offset 0: the data
  // offset is below the allocation granularity), the file closed (the mapping keeps a dup of its
  // descriptor in Python, closed with the mapping: no counterpart here), then np.load's.
  DLIO_ASSIGN_OR_RETURN(auto file, pyio::OpenAsPython(storage, path));
  {
    pyio::BufferedReader fid(file.get(), pyio::PythonBufferSize(storage, *file));
    DLIO_RETURN_NOT_OK(fid.Seek(0, SEEK_END).status());
    DLIO_RETURN_NOT_OK(fid.Tell().status());
  }
  DLIO_ASSIGN_OR_RETURN(auto mapping, file->Map());
  DLIO_RETURN_NOT_OK(file->Close());
  DLIO_RETURN_NOT_OK(outer->Close());
  if (mapping->size() < h.data_offset || mapping->size() - h.data_offset < h.data_bytes) {
    return Status::Corruption(path, ": the .npy header promises ", h.data_bytes,
                              " bytes of data at offset ", h.data_offset, " but the file holds ",
                              mapping->size());
  }
  const ArraySamples s = format_internal::ResolveArraySamples(h, std::nullopt, options);
  if (s.strided()) {
    return Status::InvalidArgument(path,
                                   ": reader.io_model mmap reads samples along the first "
                                   "axis (rows of the mapping), but the array's samples lie on "
                                   "its last axis (",
                                   s.basis, ")");
  }
  return std::unique_ptr<FormatReader>(new NpyMmapReader(std::move(mapping), std::move(h), s));
}

}  // namespace dlio::io_models
