// npy: one NPY array per file; a sample is one slice along its first or last axis
// (npy_samples.h: num_samples_per_file, then dataset.sample_layout, choose).
#include <algorithm>

#include "format/content.h"
#include "format/formats.h"
#include "format/io_util.h"
#include "format/npy_header.h"
#include "format/npy_samples.h"
#include "io_models/model_readers.h"
#include "io_models/npy_mmap_reader.h"
#include "io_models/numpy_model_reader.h"
#include "io_models/pyio_reader.h"

namespace dlio::format_internal {
namespace {

class NpyReader final : public FormatReader {
 public:
  NpyReader(std::unique_ptr<File> file, uint64_t file_size, NpyHeader header, ArraySamples samples,
            std::vector<std::string> problems, const FormatOptions& options)
      : file_(std::move(file)),
        file_size_(file_size),
        h_(std::move(header)),
        s_(std::move(samples)),
        problems_(std::move(problems)),
        transfer_size_(options.transfer_size),
        last_axis_(s_, h_.data_bytes, options.transfer_size,
                   options.read_type == ReadType::kMemory) {}

  uint64_t num_samples() const override { return s_.num_samples; }
  uint64_t sample_size(uint64_t) const override { return s_.sample_size; }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(file_->path(), i, s_.num_samples));
    DLIO_RETURN_NOT_OK(out->Resize(s_.sample_size));
    if (s_.axis == SampleAxis::kLast) {
      return last_axis_.Read(
          i,
          [&](uint64_t pos, uint64_t n, uint8_t* dst) {
            return ReadRange(file_.get(), h_.data_offset + pos, n, 0, dst);
          },
          out->data());
    }
    return ReadRange(file_.get(), h_.data_offset + s_.offset(i), s_.sample_size, transfer_size_,
                     out->data());
  }

  std::string DescribeJson() const override {
    return "{\"format\":\"npy\",\"path\":" + JsonString(file_->path()) +
           ",\"file_size\":" + std::to_string(file_size_) + "," +
           FixedSampleSizesJson(s_.num_samples, s_.sample_size) +
           ",\"dtype\":" + JsonString(h_.descr) + ",\"itemsize\":" + std::to_string(h_.itemsize) +
           ",\"shape\":" + h_.ShapeJson() +
           ",\"fortran_order\":" + (h_.fortran_order ? "true" : "false") +
           ArraySamplesJson(s_, std::nullopt) + ",\"npy_version\":\"" + std::to_string(h_.major) +
           "." + std::to_string(h_.minor) + "\",\"data_offset\":" + std::to_string(h_.data_offset) +
           ProblemsJson(problems_) + "}";
  }

 private:
  std::unique_ptr<File> file_;
  uint64_t file_size_;
  NpyHeader h_;
  ArraySamples s_;
  std::vector<std::string> problems_;
  uint64_t transfer_size_;
  LastAxisSampleReader last_axis_;  // np.load's whole-array reads
};

class NpyFormat final : public Format {
 public:
  NpyFormat() {
    readers_.Add(IoModel::kNative, OpenNative)
        .Add(IoModel::kNumpy, OpenNumpyModel)
        .Add(IoModel::kPyio, OpenPyio)
        .Add(IoModel::kMmap, io_models::OpenNpyMmapReader);
  }

  std::string name() const override { return "npy"; }
  std::string extension() const override { return "npy"; }
  bool variable_sample_sizes() const override { return false; }
  // A sample's reads depend only on its size (docs/scaling.md).
  FormatCapabilities capabilities() const override {
    FormatCapabilities c;
    c.collective_reads = true;
    // By name besides numpy: pyio (f.read of the whole file) and mmap (np.load(mmap_mode='r')).
    c.io_models = {IoModel::kNumpy, IoModel::kPyio, IoModel::kMmap};
    c.streams_samples = true;
    return c;
  }
  std::vector<IoModel> reader_models() const override { return readers_.models(); }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    const uint64_t n = spec.sample_sizes.size();
    DLIO_ASSIGN_OR_RETURN(const uint64_t record, UniformSampleSize(spec, path, "npy"));
    const WrittenArray array = ArrayToWrite(options, n, record);
    const std::string header = BuildNpyHeader(array.descr, array.shape);
    return WriteNewFile(storage, path, [&](File* file) {
      // np.save: the header in one write, the data in one more (tofile); here the header and the
      // data in chunks that end on kWriteChunk multiples of the file (the header with the first),
      // so its pages are cached in large folios (docs/formats.md, "npy").
      ChunkAlignedWriter data(file, 0, kWriteChunk);
      DLIO_RETURN_NOT_OK(
          data.Write(reinterpret_cast<const uint8_t*>(header.data()), header.size()));
      DLIO_RETURN_NOT_OK(
          ForEachArrayChunk(spec, NpyOf(options.formats).sample_layout, array.itemsize, kWriteChunk,
                            [&](const uint8_t* p, size_t len) { return data.Write(p, len); }));
      return data.Flush();
    });
  }

  // Sample i lies at header + i * record: rank 0 writes the header, every rank its rows. Samples
  // on the last axis interleave, so rank 0 writes those files alone.
  bool CanWriteShared(const Storage&, const FormatOptions& options,
                      const SharedWrite& shared) const override {
    return shared.comm != nullptr && shared.world > 1 &&
           NpyOf(options.formats).sample_layout == SampleLayout::kFirstAxis;
  }
  Status WriteShared(Storage* storage, const std::string& path, const FileSpec& spec,
                     const FormatOptions& options, const SharedWrite& shared) const override {
    const uint64_t n = spec.sample_sizes.size();
    DLIO_ASSIGN_OR_RETURN(const uint64_t record, UniformSampleSize(spec, path, "npy"));
    const WrittenArray array = ArrayToWrite(options, n, record);  // first axis: rows
    const std::string header = BuildNpyHeader(array.descr, array.shape);
    std::vector<uint64_t> offsets(n);
    for (uint64_t i = 0; i < n; ++i) offsets[i] = header.size() + i * record;
    return WriteSharedSamples(
        storage, path, spec, offsets, shared, [&](std::vector<std::string>* created) -> Status {
          DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kCreateNew));
          created->push_back(path);
          DLIO_RETURN_NOT_OK(file->WriteAt(0, header.data(), header.size()));
          return file->Close();
        });
  }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    return readers_.Open(capabilities(), storage, path, options);
  }

 private:
  // reader.io_model numpy: the first np.load of the file gives the sample count and layout; the
  // native reader is opened only for inspect.
  // pyio: the whole file as the one sample, which must then parse as an .npy.
  static Result<std::unique_ptr<FormatReader>> OpenPyio(Storage* storage, const std::string& path,
                                                        const FormatOptions& options) {
    return io_models::OpenPyioReader(storage, path, options, {"npy", CheckNpyBytes});
  }

  static Status CheckNpyBytes(const std::string& path, const uint8_t* data, size_t size) {
    DLIO_ASSIGN_OR_RETURN(const uint64_t header, ParseNpyPreamble(data, size, path, 0));
    DLIO_ASSIGN_OR_RETURN(const NpyHeader h, ParseNpyHeader(data, header, path, 0));
    if (h.data_bytes > size - header) {
      return Status::Corruption(path, ": the .npy header promises ", h.data_bytes,
                                " bytes of data at offset ", header, " but the file holds ",
                                size - header);
    }
    return Status::OK();
  }

  static Result<std::unique_ptr<FormatReader>> OpenNumpyModel(Storage* storage,
                                                              const std::string& path,
                                                              const FormatOptions& options) {
    NumpyModelSpec spec = NumpyModelSpecFor(storage, path, options);
    return OpenNumpyModelReader(std::move(spec), options, [storage, path, options] {
      return OpenNative(storage, path, options);
    });
  }

  static Result<std::unique_ptr<FormatReader>> OpenNative(Storage* storage, const std::string& path,
                                                          const FormatOptions& options) {
    DLIO_ASSIGN_OR_RETURN(SizedFile opened, OpenSized(storage, path, options));
    std::unique_ptr<File> file = std::move(opened.file);
    const uint64_t size = opened.size;
    // One request usually covers the whole header (numpy's are 128 bytes).
    std::vector<uint8_t> head(static_cast<size_t>(std::min<uint64_t>(size, 4096)));
    DLIO_RETURN_NOT_OK(ReadRange(file.get(), 0, head.size(), 0, head.data()));
    DLIO_ASSIGN_OR_RETURN(uint64_t total, ParseNpyPreamble(head.data(), head.size(), path, 0));
    if (total > size) {
      return Status::Corruption(path, ": truncated npy header: needs ", total, " bytes, file has ",
                                size);
    }
    if (total > head.size()) {
      const size_t have = head.size();
      head.resize(total);
      DLIO_RETURN_NOT_OK(ReadRange(file.get(), have, total - have, 0, head.data() + have));
    }
    DLIO_ASSIGN_OR_RETURN(NpyHeader h, ParseNpyHeader(head.data(), total, path, 0));
    if (size - h.data_offset != h.data_bytes) {
      return Status::Corruption(path, ": npy shape ", h.ShapeJson(), " x itemsize ", h.itemsize,
                                " = ", h.data_bytes, " bytes of data from offset ", h.data_offset,
                                ", but the file holds ", size - h.data_offset, " (file size ", size,
                                ")");
    }
    ArraySamples samples = ResolveArraySamples(h, std::nullopt, options);
    DLIO_RETURN_NOT_OK(CheckZeroByteSamples(samples, size, path + ": npy shape " + h.ShapeJson()));
    std::vector<std::string> problems;
    if (samples.num_samples == 0) problems.push_back(path + ": the array holds no samples");
    return std::unique_ptr<FormatReader>(new NpyReader(
        std::move(file), size, std::move(h), std::move(samples), std::move(problems), options));
  }

  io_models::ModelReaders readers_;
};

}  // namespace

std::unique_ptr<Format> NewNpyFormat() { return std::make_unique<NpyFormat>(); }

}  // namespace dlio::format_internal
