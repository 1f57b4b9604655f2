// The reader: picks the sample dataset of a file (ours or not), checks it, and reads samples as
// hyperslabs through the dlio driver (or collectively through HDF5's MPI-IO driver).
#include <algorithm>
#include <array>

#include "dlio/clock.h"
#include "format/hdf5/hdf5_internal.h"
#include "format/hdf5/hdf5_vfd.h"
#include "format/io_util.h"

namespace dlio::format_internal::hdf5 {
namespace {

enum class SampleLayout { kRows, kConcatenated };

// Everything HDF5 of one open reader; released under the lock by the reader's destructor.
struct ReaderHandles {
  Hid file, dset, type, file_space, mem_space;
  Hid dxpl;  // parallel HDF5: collective transfers (else invalid: H5P_DEFAULT)
  Hid meta_file, meta_offsets, meta_sizes, meta_file_space, meta_mem_space;
  void Reset() {
    // Objects before their files (a file closes only when its last object does).
    meta_mem_space.Reset();
    meta_file_space.Reset();
    meta_sizes.Reset();
    meta_offsets.Reset();
    meta_file.Reset();
    dxpl.Reset();
    mem_space.Reset();
    file_space.Reset();
    type.Reset();
    dset.Reset();
    file.Reset();
  }
};

struct ReaderInfo {
  std::string path, meta_path;  // meta_path "" without a metadata file
  uint64_t file_size = 0;
  SampleLayout layout = SampleLayout::kRows;
  std::string dataset;  // e.g. "/records"
  int rank = 0;
  std::array<hsize_t, H5S_MAX_RANK> dims{};
  uint64_t num_samples = 0, row_bytes = 0;
  std::vector<uint64_t> offsets, sizes;  // kConcatenated
  uint64_t data_bytes = 0;               // kConcatenated: length of /data
  // Parallel HDF5 (the storage wants the file read collectively): HDF5's MPI-IO driver reads
  // the file, not our Storage, so the reader traces each H5Dread itself (docs/formats.md).
  Storage* parallel_storage = nullptr;
  int64_t data_offset = -1;  // file offset of the sample dataset's data (contiguous), or -1
};

// Thread safety: ReadSample may be called from many threads; each call holds the process-wide
// HDF5 lock (hdf5_lib.h), so reads of all hdf5 readers are serialized.
class Hdf5Reader final : public FormatReader {
 public:
  Hdf5Reader(ReaderHandles h, ReaderInfo info) : h_(std::move(h)), info_(std::move(info)) {}
  ~Hdf5Reader() override {
    Hdf5Call call;
    const bool parallel = info_.parallel_storage != nullptr;
    const int64_t start_us = parallel ? WallMicros() : 0;
    const int64_t t0 = parallel ? info_.parallel_storage->clock()->NowNanos() : 0;
    h_.Reset();  // with the MPI-IO driver, H5Fclose is collective
    if (parallel) {
      info_.parallel_storage->RecordExternalIo(Storage::IoKind::kOther, "HDF5", "H5Fclose",
                                               info_.path, -1, -1, start_us,
                                               info_.parallel_storage->clock()->NowNanos() - t0);
    }
  }

  uint64_t num_samples() const override { return info_.num_samples; }
  uint64_t sample_size(uint64_t i) const override {
    if (info_.layout == SampleLayout::kRows) return info_.row_bytes;
    return i < info_.sizes.size() ? info_.sizes[i] : 0;
  }

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
    if (ok && H5Dread(h_.dset.get(), h_.type.get(), mem_space, file_space, H5P_DEFAULT,
                      out->data()) >= 0) {
      return Status::OK();
    }
    Status st =
        call.Error(StatusCode::kCorruption,
                   info_.path + ": reading sample " + std::to_string(i) + " from " + info_.dataset);
    return Status(st.code(), st.message() + ChunkWhere(h_.dset.get(), first.data(), info_.rank));
  }

  // Built on demand: the storage size of a chunked dataset walks its whole chunk index, reads an
  // Open should not make.
  std::string DescribeJson() const override {
    std::string out = "{\"format\":\"hdf5\",\"path\":" + JsonString(info_.path) +
                      ",\"file_size\":" + std::to_string(info_.file_size) + "," +
                      SampleSizesJson(info_.num_samples, *this) + ",\"sample_layout\":\"" +
                      (info_.layout == SampleLayout::kRows ? "rows" : "concatenated") +
                      "\",\"sample_dataset\":" + JsonString(info_.dataset);
    Hdf5Call call;
    out += ",\"sample_dataset_info\":" + DescribeDataset(h_.dset.get(), info_.dataset);
    const std::vector<std::string> all = ListDatasets(h_.file.get());
    std::string list;
    for (size_t k = 0; k < all.size() && k < kMaxDescribedDatasets; ++k) {
      Hid d = OpenDatasetIfAny(h_.file.get(), all[k]);
      if (!d.valid()) continue;
      if (!list.empty()) list += ',';
      list += DescribeDataset(d.get(), all[k]);
    }
    out += ",\"datasets\":[" + list + "]";
    if (all.size() > kMaxDescribedDatasets) {
      out += ",\"datasets_total\":" + std::to_string(all.size());
    }
    if (!info_.meta_path.empty()) out += ",\"metadata_file\":" + JsonString(info_.meta_path);
    return out + "}";
  }

 private:
  // One collective H5Dread through HDF5's MPI-IO driver, traced as "H5Dread" (category HDF5) at
  // the sample's file offset when the dataset is contiguous.
  Status ReadCollective(Hdf5Call& call, uint64_t i, uint64_t start, uint64_t size, hid_t mem_space,
                        hid_t file_space, SampleBuffer* out) {
    Storage* storage = info_.parallel_storage;
    const int64_t start_us = WallMicros();
    const int64_t t0 = storage->clock()->NowNanos();
    if (H5Dread(h_.dset.get(), h_.type.get(), mem_space, file_space, h_.dxpl.get(), out->data()) <
        0) {
      return call.Error(StatusCode::kIOError, info_.path + ": collective read of sample " +
                                                  std::to_string(i) + " from " + info_.dataset);
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
      return call.Error(StatusCode::kCorruption,
                        info_.meta_path + ": reading entry " + std::to_string(i));
    }
    const bool rows = info_.layout == SampleLayout::kRows;
    const bool fits =
        rows ? (info_.row_bytes == 0
                    ? meta_offset == 0
                    : meta_offset % info_.row_bytes == 0 && meta_offset / info_.row_bytes == i)
             : meta_offset <= info_.data_bytes && meta_size <= info_.data_bytes - meta_offset;
    if (meta_size != size || !fits) {
      return Status::Corruption(info_.meta_path + ": entry " + std::to_string(i) + " (offset " +
                                std::to_string(meta_offset) + ", size " +
                                std::to_string(meta_size) + ") does not match sample " +
                                std::to_string(i) + " of " + info_.path + " (" +
                                std::to_string(size) + " bytes in " + info_.dataset + ")");
    }
    *start = rows ? i : meta_offset;
    return Status::OK();
  }

  ReaderHandles h_;
  const ReaderInfo info_;
};

// Picks the sample dataset (see docs/formats.md, "Reading files we did not write"):
//   1. /data (1-D, 1-byte elements) with /offsets and /sizes (1-D integers): concatenated;
//   2. else /records, /x or /data, in that order: rows along the first axis;
//   3. else the first dataset of rank >= 2, depth first by name: rows.
Status FindSampleDataset(Hdf5Call& call, ReaderHandles* h, ReaderInfo* info) {
  const std::string& path = info->path;
  {
    Hid data = OpenDatasetIfAny(h->file.get(), "/data");
    Hid offs = OpenDatasetIfAny(h->file.get(), "/offsets");
    Hid sizes = OpenDatasetIfAny(h->file.get(), "/sizes");
    if (data.valid() && offs.valid() && sizes.valid() && DatasetExtent(data.get()).rank == 1 &&
        IsIntegerVector(offs.get()) && IsIntegerVector(sizes.get())) {
      Hid type(H5Dget_type(data.get()));
      if (type.valid() && H5Tget_size(type.get()) == 1) {
        info->layout = SampleLayout::kConcatenated;
        info->dataset = "/data";
        DLIO_ASSIGN_OR_RETURN(info->offsets, ReadU64s(call, offs.get(), path + " /offsets"));
        DLIO_ASSIGN_OR_RETURN(info->sizes, ReadU64s(call, sizes.get(), path + " /sizes"));
        return Status::OK();
      }
    }
  }
  for (const char* name : {"/records", "/x", "/data"}) {
    Hid d = OpenDatasetIfAny(h->file.get(), name);
    if (d.valid()) {
      info->dataset = name;
      return Status::OK();
    }
  }
  std::string seen;
  for (const std::string& name : ListDatasets(h->file.get())) {
    Hid d = OpenDatasetIfAny(h->file.get(), name);
    const Extent e = d.valid() ? DatasetExtent(d.get()) : Extent{};
    if (e.rank >= 2) {
      info->dataset = name;
      return Status::OK();
    }
    if (seen.size() < 200) {
      if (!seen.empty()) seen += ", ";
      seen += name + " (rank " + std::to_string(e.rank) + ")";
    }
  }
  return Status::NotFound(path +
                          ": no sample dataset (looked for /records, /x, /data or any "
                          "dataset of rank >= 2; found " +
                          (seen.empty() ? std::string("no datasets") : seen) + ")");
}

Status OpenMetadataFile(Hdf5Call& call, Storage* storage, const FormatOptions& o, ReaderHandles* h,
                        ReaderInfo* info) {
  info->meta_path = MetaPath(info->path);
  const std::string& meta = info->meta_path;
  DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(meta));
  if (!exists) {
    return Status::NotFound(meta + ": metadata file of " + info->path +
                            " is missing (dataset.metadata_file is set: generate the data with "
                            "it, or unset it)");
  }
  FileOptions fo;
  fo.direct = o.direct;
  DLIO_ASSIGN_OR_RETURN(Hid fapl, MakeDlioFapl(call, storage, fo));
  h->meta_file = Hid(H5Fopen(meta.c_str(), H5F_ACC_RDONLY, fapl.get()));
  if (!h->meta_file.valid()) {
    return call.Error(StatusCode::kCorruption, meta + ": not a readable HDF5 metadata file");
  }
  DLIO_ASSIGN_OR_RETURN(h->meta_offsets,
                        OpenForReading(call, h->meta_file.get(), meta, "/offsets", true));
  DLIO_ASSIGN_OR_RETURN(h->meta_sizes,
                        OpenForReading(call, h->meta_file.get(), meta, "/sizes", true));
  for (hid_t d : {h->meta_offsets.get(), h->meta_sizes.get()}) {
    const Extent e = DatasetExtent(d);
    if (!IsIntegerVector(d) || e.dims[0] != info->num_samples) {
      return Status::Corruption(meta + ": /offsets and /sizes must be 1-D integer datasets of " +
                                std::to_string(info->num_samples) + " entries (the samples of " +
                                info->path + "), found rank " + std::to_string(e.rank) +
                                " length " + std::to_string(e.rank >= 1 ? e.dims[0] : 0));
    }
  }
  h->meta_file_space = Hid(H5Dget_space(h->meta_offsets.get()));
  h->meta_mem_space = Hid(H5Screate(H5S_SCALAR));
  if (!h->meta_file_space.valid() || !h->meta_mem_space.valid()) {
    return call.Error(StatusCode::kInternal, meta + ": dataspaces");
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<FormatReader>> OpenReader(Storage* storage, const std::string& path,
                                                 const FormatOptions& o) {
  Hdf5Call call;
  DLIO_RETURN_NOT_OK(call.init_status());
  ReaderHandles h;
  ReaderInfo info;
  info.path = path;
  FileOptions fo;
  fo.direct = o.direct;
  const void* mpi_comm = storage->CollectiveMpiComm(path);
  const int64_t open_us = WallMicros();
  const int64_t open_t0 = storage->clock()->NowNanos();
  Hid fapl;
  if (mpi_comm != nullptr) {
    if (o.metadata_file) {
      return Status::FailedPrecondition(
          path +
          ": collective reads of hdf5 (storage.mpiio_collective) cannot consult a "
          "metadata file (dataset.metadata_file): its lookups are independent reads");
    }
    DLIO_ASSIGN_OR_RETURN(fapl, MakeMpioFapl(call, mpi_comm, path));
    info.parallel_storage = storage;
  } else {
    DLIO_ASSIGN_OR_RETURN(fapl, MakeDlioFapl(call, storage, fo));
  }
  h.file = Hid(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
  if (!h.file.valid())
    return call.Error(StatusCode::kCorruption, path + ": not a readable HDF5 file");
  if (mpi_comm != nullptr) {
    storage->RecordExternalIo(Storage::IoKind::kOther, "HDF5", "H5Fopen", path, -1, -1, open_us,
                              storage->clock()->NowNanos() - open_t0);
  }
  hsize_t file_size = 0;
  if (H5Fget_filesize(h.file.get(), &file_size) >= 0) info.file_size = file_size;

  DLIO_RETURN_NOT_OK(FindSampleDataset(call, &h, &info));
  DLIO_ASSIGN_OR_RETURN(h.dset, OpenForReading(call, h.file.get(), path, info.dataset, false));
  h.type = Hid(H5Dget_type(h.dset.get()));
  h.file_space = Hid(H5Dget_space(h.dset.get()));
  if (!h.type.valid() || !h.file_space.valid()) {
    return call.Error(StatusCode::kCorruption, path + ": " + info.dataset + ": type or dataspace");
  }
  if (H5Tdetect_class(h.type.get(), H5T_VLEN) > 0 || H5Tis_variable_str(h.type.get()) > 0) {
    return Status::Unimplemented(path + ": " + info.dataset + " has a variable-length type (" +
                                 DtypeString(h.type.get()) +
                                 "); samples must be fixed-size elements");
  }
  DLIO_RETURN_NOT_OK(CheckFiltersAvailable(h.dset.get(), path + ": " + info.dataset));
  const uint64_t elem = H5Tget_size(h.type.get());
  info.rank = H5Sget_simple_extent_dims(h.file_space.get(), info.dims.data(), nullptr);
  if (info.rank < 0) return call.Error(StatusCode::kCorruption, path + ": " + info.dataset);

  if (info.layout == SampleLayout::kConcatenated) {
    info.data_bytes = info.dims[0];
    info.num_samples = info.offsets.size();
    if (info.sizes.size() != info.offsets.size()) {
      return Status::Corruption(path + ": /offsets has " + std::to_string(info.offsets.size()) +
                                " entries but /sizes has " + std::to_string(info.sizes.size()));
    }
    uint64_t largest = 0;
    for (uint64_t i = 0; i < info.num_samples; ++i) {
      if (info.offsets[i] > info.data_bytes || info.sizes[i] > info.data_bytes - info.offsets[i]) {
        return Status::Corruption(path + ": /offsets and /sizes entry " + std::to_string(i) +
                                  ": sample at element " + std::to_string(info.offsets[i]) +
                                  " of " + std::to_string(info.sizes[i]) + " bytes ends past " +
                                  "/data (" + std::to_string(info.data_bytes) + " bytes)");
      }
      largest = std::max(largest, info.sizes[i]);
    }
    const hsize_t mem_dims = std::max<uint64_t>(largest, 1);
    h.mem_space = Hid(H5Screate_simple(1, &mem_dims, nullptr));
  } else {
    uint64_t per_row = 1;
    for (int k = 1; k < info.rank; ++k) per_row *= info.dims[k];
    info.num_samples = info.rank == 0 ? 1 : info.dims[0];
    info.row_bytes = per_row * elem;
    const hsize_t mem_dims = std::max<uint64_t>(per_row, 1);
    h.mem_space = Hid(H5Screate_simple(1, &mem_dims, nullptr));
  }
  if (!h.mem_space.valid()) return call.Error(StatusCode::kInternal, path + ": memory dataspace");

  if (o.metadata_file) DLIO_RETURN_NOT_OK(OpenMetadataFile(call, storage, o, &h, &info));
  if (info.parallel_storage != nullptr) {
    DLIO_ASSIGN_OR_RETURN(h.dxpl, MakeCollectiveDxpl(call, path));
    const haddr_t addr = H5Dget_offset(h.dset.get());
    if (addr != HADDR_UNDEF) info.data_offset = static_cast<int64_t>(addr);
  }
  H5Eclear2(H5E_DEFAULT);
  return std::unique_ptr<FormatReader>(new Hdf5Reader(std::move(h), std::move(info)));
}

}  // namespace dlio::format_internal::hdf5
