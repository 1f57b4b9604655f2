// Opening a file for reading: picks the sample dataset (ours or not), checks that the file
// stores what its extent declares, and sizes the samples.
#include <algorithm>
#include <array>

#include "dlio/clock.h"
#include "format/hdf5/hdf5_reader.h"
#include "format/hdf5/hdf5_vfd.h"

namespace dlio::format_internal::hdf5 {

Status CheckMetadataExtent(hid_t d, const ReaderInfo& info) {
  const Extent e = DatasetExtent(d);
  if (!IsIntegerVector(d) || e.dims[0] != info.num_samples) {
    return Status::Corruption(info.meta_path,
                              ": /offsets and /sizes must be 1-D integer datasets of ",
                              info.num_samples, " entries (the samples of ", info.path,
                              "), found rank ", e.rank, " length ", e.rank >= 1 ? e.dims[0] : 0);
  }
  return Status::OK();
}

namespace {

// The concatenated layout: /data (1-D, 1-byte elements) with /offsets and /sizes (1-D
// integers), read whole. False when the file does not have it.
Result<bool> FindConcatenated(Hdf5Call& call, hid_t file, ReaderInfo* info) {
  const std::string& path = info->path;
  DLIO_ASSIGN_OR_RETURN(Hid data, OpenDatasetIfAny(call, file, path, "/data"));
  DLIO_ASSIGN_OR_RETURN(Hid offs, OpenDatasetIfAny(call, file, path, "/offsets"));
  DLIO_ASSIGN_OR_RETURN(Hid sizes, OpenDatasetIfAny(call, file, path, "/sizes"));
  if (!data.valid() || !offs.valid() || !sizes.valid() || DatasetExtent(data.get()).rank != 1 ||
      !IsIntegerVector(offs.get()) || !IsIntegerVector(sizes.get())) {
    return false;
  }
  Hid type(H5Dget_type(data.get()));
  if (!type.valid() || H5Tget_size(type.get()) != 1) return false;
  info->layout = SampleLayout::kConcatenated;
  info->dataset = "/data";
  DLIO_ASSIGN_OR_RETURN(info->offsets,
                        ReadU64s(call, offs.get(), path + ": /offsets", info->file_size));
  DLIO_ASSIGN_OR_RETURN(info->sizes,
                        ReadU64s(call, sizes.get(), path + ": /sizes", info->file_size));
  return true;
}

// Picks the sample dataset (see docs/formats.md, "Reading files we did not write"):
//   1. the concatenated layout (FindConcatenated);
//   2. else /records, /records_0 (DLIO's), /x or /data, in that order: rows along the first axis;
//   3. else a group per sample (FindSampleGroups: the root holds only /<prefix><i> groups);
//   4. else the first dataset of rank >= 2, depth first by name: rows.
// One of them that exists but cannot be opened is Corruption, not a reason to look further.
Status FindSampleDataset(Hdf5Call& call, hid_t file, ReaderInfo* info) {
  const std::string& path = info->path;
  DLIO_ASSIGN_OR_RETURN(const bool concatenated, FindConcatenated(call, file, info));
  if (concatenated) return Status::OK();
  for (const char* name : {"/records", "/records_0", "/x", "/data"}) {
    DLIO_ASSIGN_OR_RETURN(Hid d, OpenDatasetIfAny(call, file, path, name));
    if (d.valid()) {
      info->dataset = name;
      return Status::OK();
    }
  }
  DLIO_ASSIGN_OR_RETURN(const bool groups, FindSampleGroups(call, file, info));
  if (groups) return Status::OK();
  std::string seen;
  const DatasetList all = ListDatasets(call, file, path);
  for (const std::string& name : all.names) {
    DLIO_ASSIGN_OR_RETURN(Hid d, OpenDatasetIfAny(call, file, path, name));
    const Extent e = d.valid() ? DatasetExtent(d.get()) : Extent{};
    if (e.rank >= 2) {
      info->dataset = name;
      return Status::OK();
    }
    if (seen.size() < 200) {
      if (!seen.empty()) seen += ", ";
      seen += StrCat(name, " (rank ", e.rank, ")");
    }
  }
  // A group that could not be listed is why nothing was found, not an absence.
  if (seen.empty() && !all.problems.empty()) return Status::Corruption(all.problems.front());
  return Status::NotFound(path +
                          ": no sample dataset (looked for /records, /x, /data or any "
                          "dataset of rank >= 2; found " +
                          (seen.empty() ? std::string("no datasets") : seen) + ")");
}

// Opens the metadata file "<path>.meta.h5" (NotFound when it is missing).
Status OpenMetadataFileOnly(Hdf5Call& call, Storage* storage, const FormatOptions& o,
                            ReaderHandles* h, ReaderInfo* info) {
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
  hsize_t meta_size = 0;
  if (H5Fget_filesize(h->meta_file.get(), &meta_size) < 0) {
    return call.Error(StatusCode::kCorruption, meta + ": file size");
  }
  info->meta_file_size = meta_size;
  return Status::OK();
}

// The metadata file with its /offsets and /sizes open (the native reader's).
Status OpenMetadataFile(Hdf5Call& call, Storage* storage, const FormatOptions& o, ReaderHandles* h,
                        ReaderInfo* info) {
  DLIO_RETURN_NOT_OK(OpenMetadataFileOnly(call, storage, o, h, info));
  const std::string& meta = info->meta_path;
  const uint64_t meta_size = info->meta_file_size;
  DLIO_ASSIGN_OR_RETURN(
      h->meta_offsets, OpenForReading(call, h->meta_file.get(), meta, "/offsets", true, meta_size));
  DLIO_ASSIGN_OR_RETURN(h->meta_sizes,
                        OpenForReading(call, h->meta_file.get(), meta, "/sizes", true, meta_size));
  for (hid_t d : {h->meta_offsets.get(), h->meta_sizes.get()}) {
    DLIO_RETURN_NOT_OK(CheckMetadataExtent(d, *info));
  }
  h->meta_file_space = Hid(H5Dget_space(h->meta_offsets.get()));
  h->meta_mem_space = Hid(H5Screate(H5S_SCALAR));
  if (!h->meta_file_space.valid() || !h->meta_mem_space.valid()) {
    return call.Error(StatusCode::kInternal, meta + ": dataspaces");
  }
  return Status::OK();
}

// Opens `info->path` through the dlio driver, or HDF5's MPI-IO one when the storage wants the
// file read collectively.
Status OpenFile(Hdf5Call& call, Storage* storage, const FormatOptions& o, ReaderHandles* h,
                ReaderInfo* info) {
  const std::string& path = info->path;
  FileOptions fo;
  fo.direct = o.direct;
  const void* mpi_comm = storage->CollectiveMpiComm(path);
  const int64_t open_us = storage->clock()->WallMicros();
  const int64_t open_t0 = storage->clock()->NowNanos();
  Hid fapl;
  if (mpi_comm != nullptr) {
    if (Hdf5Of(o.formats).metadata_file) {
      return Status::FailedPrecondition(
          path +
          ": collective reads of hdf5 (storage.mpiio_collective) cannot consult a "
          "metadata file (dataset.metadata_file): its lookups are independent reads");
    }
    DLIO_ASSIGN_OR_RETURN(fapl, MakeMpioFapl(call, mpi_comm, path));
    info->parallel_storage = storage;
  } else {
    DLIO_ASSIGN_OR_RETURN(fapl, MakeDlioFapl(call, storage, fo));
  }
  h->file = Hid(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
  if (!h->file.valid()) {
    return call.Error(StatusCode::kCorruption, path + ": not a readable HDF5 file");
  }
  if (mpi_comm != nullptr) {
    storage->RecordExternalIo(Storage::IoKind::kOther, "HDF5", "H5Fopen", path, -1, -1, open_us,
                              storage->clock()->NowNanos() - open_t0);
  }
  hsize_t file_size = 0;
  if (H5Fget_filesize(h->file.get(), &file_size) < 0) {
    return call.Error(StatusCode::kCorruption, path + ": file size");
  }
  info->file_size = file_size;
  return Status::OK();
}

// Opens the sample dataset and checks what HDF5 does not: filters this libhdf5 has, a
// consistent header and an extent the file stores (OpenForReading), a fixed-size type. Sets
// `*element_bytes`.
Status OpenSampleDataset(Hdf5Call& call, ReaderHandles* h, ReaderInfo* info,
                         uint64_t* element_bytes) {
  const std::string what = info->path + ": " + info->dataset;
  DLIO_ASSIGN_OR_RETURN(h->dset, OpenForReading(call, h->file.get(), info->path, info->dataset,
                                                false, info->file_size));
  h->type = Hid(H5Dget_type(h->dset.get()));
  h->file_space = Hid(H5Dget_space(h->dset.get()));
  if (!h->type.valid() || !h->file_space.valid()) {
    return call.Error(StatusCode::kCorruption, what + ": type or dataspace");
  }
  if (H5Tdetect_class(h->type.get(), H5T_VLEN) > 0 || H5Tis_variable_str(h->type.get()) > 0) {
    return Status::Unimplemented(what + " has a variable-length type (" +
                                 DtypeString(h->type.get()) +
                                 "); samples must be fixed-size elements");
  }
  *element_bytes = H5Tget_size(h->type.get());
  info->rank = H5Sget_simple_extent_dims(h->file_space.get(), info->dims.data(), nullptr);
  if (info->rank < 0 || *element_bytes == 0) {
    return call.Error(StatusCode::kCorruption, what + ": dataspace or datatype");
  }
  return Status::OK();
}

// Concatenated: every sample inside /data; sizes summed up for DescribeJson.
Status SizeConcatenated(Hdf5Call& call, ReaderHandles* h, ReaderInfo* info) {
  const std::string& path = info->path;
  info->data_bytes = info->dims[0];
  info->num_samples = info->offsets.size();
  if (info->sizes.size() != info->offsets.size()) {
    return Status::Corruption(path, ": /offsets has ", info->offsets.size(),
                              " entries but /sizes has ", info->sizes.size());
  }
  for (uint64_t i = 0; i < info->num_samples; ++i) {
    const uint64_t offset = info->offsets[i], size = info->sizes[i];
    if (offset > info->data_bytes || size > info->data_bytes - offset) {
      return Status::Corruption(path, ": /offsets and /sizes entry ", i, ": sample at element ",
                                offset, " of ", size, " bytes ends past /data (", info->data_bytes,
                                " bytes)");
    }
    info->min_size = i == 0 ? size : std::min(info->min_size, size);
    info->max_size = std::max(info->max_size, size);
    info->total_size += size;
  }
  const hsize_t mem_dims = std::max<uint64_t>(info->max_size, 1);
  h->mem_space = Hid(H5Screate_simple(1, &mem_dims, nullptr));
  if (!h->mem_space.valid()) return call.Error(StatusCode::kInternal, path + ": memory dataspace");
  return Status::OK();
}

// Rows: sample i is slice i along axis 0 (a scalar dataset is one sample).
Status SizeRows(Hdf5Call& call, uint64_t element_bytes, ReaderHandles* h, ReaderInfo* info) {
  Extent row;
  row.rank = std::max(info->rank - 1, 0);
  std::copy(info->dims.begin() + 1, info->dims.end(), row.dims.begin());
  if (!DeclaredBytes(row, element_bytes, &info->row_bytes)) {
    return Status::Corruption(info->path + ": " + info->dataset + " declares rows of shape " +
                              JsonDims(row.dims.data(), row.rank) + ", more than 2^62 bytes");
  }
  uint64_t per_row = 1;
  for (int k = 0; k < row.rank; ++k) per_row *= row.dims[k];  // <= row_bytes: no overflow
  info->num_samples = info->rank == 0 ? 1 : info->dims[0];
  info->min_size = info->max_size = info->row_bytes;
  info->total_size = static_cast<long double>(info->row_bytes) * info->num_samples;
  const hsize_t mem_dims = std::max<uint64_t>(per_row, 1);
  h->mem_space = Hid(H5Screate_simple(1, &mem_dims, nullptr));
  if (!h->mem_space.valid()) {
    return call.Error(StatusCode::kInternal, info->path + ": memory dataspace");
  }
  return Status::OK();
}

// The reader of one sample dataset: `dataset`, or the one FindSampleDataset picks when "".
Result<std::unique_ptr<FormatReader>> OpenOne(IoModel model, Storage* storage,
                                              const std::string& path, const FormatOptions& o,
                                              const std::string& dataset) {
  Hdf5Call call;
  DLIO_RETURN_NOT_OK(call.init_status());
  ReaderHandles h;
  ReaderInfo info;
  info.path = path;
  DLIO_RETURN_NOT_OK(OpenFile(call, storage, o, &h, &info));
  if (dataset.empty()) {
    if (Hdf5Of(o.formats).sample_groups.empty()) {
      DLIO_RETURN_NOT_OK(FindSampleDataset(call, h.file.get(), &info));
    }
    if (!Hdf5Of(o.formats).sample_groups.empty() || info.groups.on) {
      if (info.parallel_storage != nullptr) {
        return Status::FailedPrecondition(path,
                                          ": collective reads of hdf5 (storage.mpiio_collective) "
                                          "read one dataset, not a group per sample");
      }
      return MakeGroupReader(call, storage, model, o, std::move(h), std::move(info));
    }
  } else {
    DLIO_ASSIGN_OR_RETURN(Hid d, OpenDatasetIfAny(call, h.file.get(), path, dataset));
    if (!d.valid()) {
      const uint64_t num_dsets = Hdf5Of(o.formats).num_dsets;
      return Status::NotFound(path, ": no dataset ", dataset, " (dataset.hdf5.num_dset_per_record ",
                              num_dsets, ": DLIO's reader reads /records_0../records_",
                              num_dsets - 1, ")");
    }
    info.dataset = dataset;
  }
  uint64_t element_bytes = 0;
  DLIO_RETURN_NOT_OK(OpenSampleDataset(call, &h, &info, &element_bytes));
  if (info.layout == SampleLayout::kConcatenated) {
    DLIO_RETURN_NOT_OK(SizeConcatenated(call, &h, &info));
  } else {
    DLIO_RETURN_NOT_OK(SizeRows(call, element_bytes, &h, &info));
  }
  // Collective reads stay one collective H5Dread per sample (h5py's driver='mpio' with
  // dset.collective), whatever the model.
  const bool h5py = info.parallel_storage == nullptr && model == IoModel::kH5py;
  if (Hdf5Of(o.formats).metadata_file) {
    // h5py opens the metadata file's datasets when it first reads them (MakeH5pyReader).
    DLIO_RETURN_NOT_OK(h5py ? OpenMetadataFileOnly(call, storage, o, &h, &info)
                            : OpenMetadataFile(call, storage, o, &h, &info));
  }
  if (info.parallel_storage != nullptr) {
    DLIO_ASSIGN_OR_RETURN(h.dxpl, MakeCollectiveDxpl(call, path));
    const haddr_t addr = H5Dget_offset(h.dset.get());
    if (addr != HADDR_UNDEF) info.data_offset = static_cast<int64_t>(addr);
  }
  H5Eclear2(H5E_DEFAULT);
  if (h5py) return MakeH5pyReader(call, storage, o, std::move(h), std::move(info));
  return MakeReader(std::move(h), std::move(info));
}

}  // namespace

// With hdf5.num_dset_per_record N > 1, DLIO's reader reads row i of /records_0..N-1 for sample
// i: one reader per dataset, read in turn into consecutive parts of the sample.
Result<std::unique_ptr<FormatReader>> OpenReader(IoModel model, Storage* storage,
                                                 const std::string& path, const FormatOptions& o) {
  const uint64_t num_dsets = Hdf5Of(o.formats).num_dsets;
  if (num_dsets <= 1) return OpenOne(model, storage, path, o, "");
  std::vector<std::unique_ptr<FormatReader>> parts;
  for (uint64_t k = 0; k < num_dsets; ++k) {
    DLIO_ASSIGN_OR_RETURN(auto part, OpenOne(model, storage, path, o, StrCat("/records_", k)));
    if (!parts.empty() && part->num_samples() != parts[0]->num_samples()) {
      return Status::Corruption(path, ": /records_", k, " holds ", part->num_samples(),
                                " samples but /records_0 holds ", parts[0]->num_samples());
    }
    parts.push_back(std::move(part));
  }
  return MakeMultiDatasetReader(path, std::move(parts));
}

}  // namespace dlio::format_internal::hdf5
