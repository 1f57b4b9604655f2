// The reader: samples as hyperslabs of the sample dataset, read through the dlio driver (or
// collectively through HDF5's MPI-IO driver), optionally looked up in the metadata file first.
#include "format/hdf5/hdf5_reader.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include "dlio/clock.h"
#include "format/hdf5/hdf5_chunk_guard.h"
#include "format/io_util.h"

namespace dlio::format_internal::hdf5 {
namespace {

// Thread safety: ReadSample may be called from many threads; each call holds the process-wide
// HDF5 lock (hdf5_lib.h), so reads of all hdf5 readers are serialized.
class Hdf5Reader final : public FormatReader {
 public:
  Hdf5Reader(ReaderHandles h, ReaderInfo info) : h_(std::move(h)), info_(std::move(info)) {}
  ~Hdf5Reader() override {
    Hdf5Call call;
    const bool parallel = info_.parallel_storage != nullptr;
    const int64_t start_us = parallel ? info_.parallel_storage->clock()->WallMicros() : 0;
    const int64_t t0 = parallel ? info_.parallel_storage->clock()->NowNanos() : 0;
    h_.Reset();  // with the MPI-IO driver, H5Fclose is collective
    if (parallel) {
      info_.parallel_storage->RecordExternalIo(Storage::IoKind::kOther, "HDF5", "H5Fclose",
                                               info_.path, -1, -1, start_us,
                                               info_.parallel_storage->clock()->NowNanos() - t0);
    }
  }

  uint64_t num_samples() const override { return info_.num_samples; }
  uint64_t sample_size(uint64_t i) const override { return info_.SampleSize(i); }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(info_.path, i, info_.num_samples));
    const uint64_t size = sample_size(i);
    DLIO_RETURN_NOT_OK(out->Resize(size));
    Hdf5Call call;
    // Element (rows: row) where the sample starts in the sample dataset.
    uint64_t start = info_.layout == SampleLayout::kRows ? i : info_.offsets[i];
    if (h_.meta_file.valid()) DLIO_RETURN_NOT_OK(Consult(call, i, size, &start));
    if (size == 0) return Status::OK();
    std::array<hsize_t, H5S_MAX_RANK> first{}, count = info_.dims;
    first[0] = start;
    count[0] = info_.layout == SampleLayout::kRows ? 1 : size;
    hid_t file_space = h_.file_space.get(), mem_space = h_.mem_space.get();
    bool ok = true;
    if (info_.rank == 0) {  // a scalar dataset is one sample
      file_space = mem_space = H5S_ALL;
    } else {
      ok = H5Sselect_hyperslab(file_space, H5S_SELECT_SET, first.data(), nullptr, count.data(),
                               nullptr) >= 0;
      if (info_.layout == SampleLayout::kConcatenated) {
        const hsize_t zero = 0;
        ok = ok && H5Sselect_hyperslab(mem_space, H5S_SELECT_SET, &zero, nullptr, count.data(),
                                       nullptr) >= 0;
      }
    }
    if (ok && info_.parallel_storage != nullptr)
      return ReadCollective(call, i, start, size, mem_space, file_space, out);
    if (ok && info_.rank > 0) {
      // Built at the first read, so readers opened only to count or describe never pay for it.
      if (!guard_) guard_.emplace(h_.dset.get(), info_.rank, info_.dims, info_.file_size);
      DLIO_RETURN_NOT_OK(
          guard_->Check(h_.dset.get(), first.data(), count.data(), info_.path, info_.dataset));
    }
    if (ok && H5Dread(h_.dset.get(), h_.type.get(), mem_space, file_space, H5P_DEFAULT,
                      out->data()) >= 0) {
      return Status::OK();
    }
    Status st = call.Error(StatusCode::kCorruption,
                           StrCat(info_.path, ": reading sample ", i, " from ", info_.dataset));
    return Status(st.code(), st.message() + ChunkWhere(h_.dset.get(), first.data(), info_.rank));
  }

  std::string DescribeJson() const override {
    Hdf5Call call;
    return DescribeFile(call, h_, info_);
  }

 private:
  // One collective H5Dread through HDF5's MPI-IO driver, traced as "H5Dread" (category HDF5) at
  // the sample's file offset when the dataset is contiguous.
  Status ReadCollective(Hdf5Call& call, uint64_t i, uint64_t start, uint64_t size, hid_t mem_space,
                        hid_t file_space, SampleBuffer* out) {
    Storage* storage = info_.parallel_storage;
    const int64_t start_us = storage->clock()->WallMicros();
    const int64_t t0 = storage->clock()->NowNanos();
    if (H5Dread(h_.dset.get(), h_.type.get(), mem_space, file_space, h_.dxpl.get(), out->data()) <
        0) {
      return call.Error(StatusCode::kIOError, StrCat(info_.path, ": collective read of sample ", i,
                                                     " from ", info_.dataset));
    }
    const uint64_t element_bytes = info_.layout == SampleLayout::kRows ? info_.row_bytes : 1;
    const int64_t offset = info_.data_offset < 0
                               ? -1
                               : info_.data_offset + static_cast<int64_t>(start * element_bytes);
    storage->RecordExternalIo(Storage::IoKind::kRead, "HDF5", "H5Dread", info_.path, offset,
                              static_cast<int64_t>(size), start_us,
                              storage->clock()->NowNanos() - t0);
    return Status::OK();
  }

  // Looks sample i up in the metadata file (one element of /offsets and of /sizes, each a
  // 128-byte chunk read unless it is the chunk just read) and checks it against the data file.
  // `start` becomes the sample's first element (rows: its row) as the metadata file gives it.
  Status Consult(Hdf5Call& call, uint64_t i, uint64_t size, uint64_t* start) {
    const hsize_t entry = i, one = 1;
    uint64_t meta_offset = 0, meta_size = 0;
    if (H5Sselect_hyperslab(h_.meta_file_space.get(), H5S_SELECT_SET, &entry, nullptr, &one,
                            nullptr) < 0 ||
        H5Dread(h_.meta_offsets.get(), H5T_NATIVE_UINT64, h_.meta_mem_space.get(),
                h_.meta_file_space.get(), H5P_DEFAULT, &meta_offset) < 0 ||
        H5Dread(h_.meta_sizes.get(), H5T_NATIVE_UINT64, h_.meta_mem_space.get(),
                h_.meta_file_space.get(), H5P_DEFAULT, &meta_size) < 0) {
      return call.Error(StatusCode::kCorruption, StrCat(info_.meta_path, ": reading entry ", i));
    }
    return CheckMetadataEntry(info_, i, size, meta_offset, meta_size, start);
  }

  ReaderHandles h_;
  const ReaderInfo info_;
  std::optional<ChunkGuard> guard_;  // built and used under the HDF5 lock
};

// DLIO's reader with hdf5.num_dset_per_record > 1: each part's sample read straight into its
// place in `out` (a borrowed SampleBuffer; copied only if the part wanted more room).
class MultiDatasetReader final : public FormatReader {
 public:
  MultiDatasetReader(std::string path, std::vector<std::unique_ptr<FormatReader>> parts)
      : path_(std::move(path)), parts_(std::move(parts)) {}

  uint64_t num_samples() const override { return parts_[0]->num_samples(); }
  uint64_t sample_size(uint64_t i) const override {
    uint64_t size = 0;
    for (const auto& p : parts_) size += p->sample_size(i);
    return size;
  }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(path_, i, num_samples()));
    DLIO_RETURN_NOT_OK(out->Resize(sample_size(i)));
    uint64_t offset = 0;
    for (const auto& p : parts_) {
      const uint64_t size = p->sample_size(i);
      SampleBuffer part;
      part.Borrow(out->data() + offset, size);
      DLIO_RETURN_NOT_OK(p->ReadSample(i, &part));
      if (part.size() != size) {
        return Status::Corruption(path_, ": sample ", i, " of a /records_<k> read ", part.size(),
                                  " bytes, expected ", size);
      }
      if (part.data() != out->data() + offset) std::memcpy(out->data() + offset, part.data(), size);
      offset += size;
    }
    return Status::OK();
  }

  std::string DescribeJson() const override {
    std::string json = "{\"datasets\":[";
    for (size_t k = 0; k < parts_.size(); ++k) {
      if (k > 0) json += ',';
      json += parts_[k]->DescribeJson();
    }
    return json + "]}";
  }

 private:
  const std::string path_;
  std::vector<std::unique_ptr<FormatReader>> parts_;
};

}  // namespace

std::unique_ptr<FormatReader> MakeMultiDatasetReader(
    std::string path, std::vector<std::unique_ptr<FormatReader>> parts) {
  return std::make_unique<MultiDatasetReader>(std::move(path), std::move(parts));
}

Status CheckMetadataEntry(const ReaderInfo& info, uint64_t i, uint64_t size, uint64_t meta_offset,
                          uint64_t meta_size, uint64_t* start) {
  const bool rows = info.layout == SampleLayout::kRows;
  const bool fits =
      rows ? (info.row_bytes == 0
                  ? meta_offset == 0
                  : meta_offset % info.row_bytes == 0 && meta_offset / info.row_bytes == i)
           : meta_offset <= info.data_bytes && meta_size <= info.data_bytes - meta_offset;
  if (meta_size != size || !fits) {
    return Status::Corruption(info.meta_path, ": entry ", i, " (offset ", meta_offset, ", size ",
                              meta_size, ") does not match sample ", i, " of ", info.path, " (",
                              size, " bytes in ", info.dataset, ")");
  }
  *start = rows ? i : meta_offset;
  return Status::OK();
}

std::unique_ptr<FormatReader> MakeReader(ReaderHandles h, ReaderInfo info) {
  return std::make_unique<Hdf5Reader>(std::move(h), std::move(info));
}

}  // namespace dlio::format_internal::hdf5
