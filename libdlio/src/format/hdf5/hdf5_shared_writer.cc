// Parallel HDF5: shared files written by all ranks through HDF5's MPI-IO driver.
#include <algorithm>
#include <functional>

#include "dlio/clock.h"
#include "dlio/comm.h"
#include "format/content.h"
#include "format/hdf5/hdf5_internal.h"
#include "format/io_util.h"

namespace dlio::format_internal::hdf5 {
namespace {

// Traces HDF5 call `name` on the shared file `path` that started at (start_us, t0).
void TraceCall(Storage* storage, Storage::IoKind kind, const char* name, const std::string& path,
               int64_t offset, int64_t count, int64_t start_us, int64_t t0) {
  storage->RecordExternalIo(kind, "HDF5", name, path, offset, count, start_us,
                            storage->clock()->NowNanos() - t0);
}

// Traces a write to the shared file `path` that started at (start_us, t0).
void TraceWrite(Storage* storage, const std::string& path, int64_t offset, int64_t count,
                int64_t start_us, int64_t t0) {
  TraceCall(storage, Storage::IoKind::kWrite, "H5Dwrite", path, offset, count, start_us, t0);
}

// The rank's rows of every /records_<k> of DLIO's shaped layout, each block traced as an
// H5Dwrite at its file offset (rows of a contiguous dataset are contiguous in the file).
Status WriteShapedShare(Hdf5Call& call, Storage* storage, const std::string& path,
                        const FileSpec& spec, const RecordShape& shape, const ShapedDatasets& sets,
                        const SampleShare& share) {
  const Clock* clock = storage->clock();
  const ShapedBlockWriter write = [&](hid_t dset, const std::vector<hsize_t>& start,
                                      const std::vector<hsize_t>& count, const void* buf,
                                      const std::string& what) {
    const haddr_t addr = H5Dget_offset(dset);
    const int64_t start_us = clock->WallMicros(), t0 = clock->NowNanos();
    DLIO_RETURN_NOT_OK(WriteBlock(call, dset, sets.type.get(), start, count, buf, what));
    const int64_t bytes = static_cast<int64_t>(count[0] * shape.row_bytes);
    TraceWrite(storage, path,
               addr == HADDR_UNDEF ? -1 : static_cast<int64_t>(addr + start[0] * shape.row_bytes),
               bytes, start_us, t0);
    return Status::OK();
  };
  for (uint64_t k = 0; k < shape.num_dsets; ++k) {
    DLIO_RETURN_NOT_OK(
        WriteShapedRows(path, spec, shape, sets, k, 1, share.first, share.last, write));
  }
  return Status::OK();
}

// The rank's rows of /labels.
Status WriteLabelShare(Hdf5Call& call, hid_t labels, const std::string& path, const FileSpec& spec,
                       const SampleShare& share) {
  std::vector<int64_t> values;
  for (uint64_t i = share.first; i < share.last; ++i) values.push_back(SampleLabel(spec.seed, i));
  return WriteBlock(call, labels, H5T_NATIVE_INT64, {share.first}, {share.last - share.first},
                    values.data(), path + ": writing /labels");
}

// The datasets of a shared file, in the serial writer's layout.
struct SharedDatasets {
  bool uniform = false;  // every sample the same size: /records (or DLIO's shaped layout)
  bool shaped = false;   // DLIO's shaped /records_0..N-1
  RecordShape shape;
  ShapedDatasets shaped_sets;
  Hid samples, labels;  // /records or /data; /labels
};

// Creates the file through the MPI-IO driver, collectively; *created tells whether it was made.
Status CreateSharedFile(Hdf5Call& call, Storage* storage, const std::string& path, Comm* comm,
                        Hid* file, bool* created) {
  const Clock* clock = storage->clock();
  auto fapl = MakeMpioFapl(call, comm->mpi_comm_handle(), path);
  Status mine = fapl.status();
  const int64_t start_us = clock->WallMicros(), t0 = clock->NowNanos();
  if (fapl.ok()) {
    *file = Hid(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl->get()));
    if (!file->valid()) {
      mine = call.Error(StatusCode::kIOError, path + ": creating HDF5 file (MPI-IO driver)");
    }
  }
  *created = file->valid();
  DLIO_RETURN_NOT_OK(AgreeAcrossRanks(comm, mine, "creating shared file " + path));
  TraceCall(storage, Storage::IoKind::kOther, "H5Fcreate", path, -1, -1, start_us, t0);
  return Status::OK();
}

// /data, /offsets and /sizes of a file of samples of different sizes; rank 0 writes the last two.
Status CreateVariableDatasets(Hdf5Call& call, hid_t file, const std::string& path,
                              const FileSpec& spec, const SamplePlan& plan, int rank,
                              SharedDatasets* d) {
  DLIO_ASSIGN_OR_RETURN(d->samples, CreateDataset(call, file, path, "data", H5T_STD_U8LE,
                                                  {plan.total}, {}, Filters{}));
  for (const auto& [name, values] :
       {std::pair<const char*, const std::vector<uint64_t>*>{"offsets", &plan.offsets},
        std::pair<const char*, const std::vector<uint64_t>*>{"sizes", &spec.sample_sizes}}) {
    DLIO_ASSIGN_OR_RETURN(Hid set, CreateDataset(call, file, path, name, H5T_STD_U64LE,
                                                 {values->size()}, {}, Filters{}));
    if (rank == 0 && !values->empty()) {
      DLIO_RETURN_NOT_OK(WriteBlock(call, set.get(), H5T_NATIVE_UINT64, {0}, {values->size()},
                                    values->data(), path + ": writing /" + name));
    }
  }
  return Status::OK();
}

// Creation in the serial writer's order; every rank reaches each create.
Status CreateSharedDatasets(Hdf5Call& call, hid_t file, const std::string& path,
                            const FileSpec& spec, const SamplePlan& plan, int rank,
                            SharedDatasets* d) {
  const uint64_t n = spec.sample_sizes.size();
  if (d->shaped) {
    DLIO_ASSIGN_OR_RETURN(d->shaped_sets,
                          CreateShapedDatasets(call, file, path, n, d->shape, {}, Filters{}));
  } else if (d->uniform) {
    DLIO_ASSIGN_OR_RETURN(d->samples, CreateDataset(call, file, path, "records", H5T_STD_U8LE,
                                                    {n, plan.first}, {}, Filters{}));
  } else {
    DLIO_RETURN_NOT_OK(CreateVariableDatasets(call, file, path, spec, plan, rank, d));
  }
  DLIO_ASSIGN_OR_RETURN(
      d->labels, CreateDataset(call, file, path, "labels", H5T_STD_I64LE, {n}, {}, Filters{}));
  return Status::OK();
}

// The file offset of byte `element` of `dataset`, or -1 when HDF5 does not tell.
std::function<int64_t(uint64_t)> FileOffsetOf(hid_t dataset) {
  const haddr_t addr = H5Dget_offset(dataset);
  const int64_t base = addr == HADDR_UNDEF ? -1 : static_cast<int64_t>(addr);
  return [base](uint64_t element) {
    return base < 0 ? int64_t{-1} : base + static_cast<int64_t>(element);
  };
}

// The rank's rows of /records (`s` bytes each), in bands of whole rows or pieces of one row of at
// most kWriteChunk bytes.
Status WriteUniformShare(Hdf5Call& call, Storage* storage, const std::string& path,
                         const FileSpec& spec, hid_t samples, uint64_t s,
                         const SampleShare& share) {
  const Clock* clock = storage->clock();
  const auto at = FileOffsetOf(samples);
  const uint64_t band_rows = std::max<uint64_t>(1, kWriteChunk / s);
  const uint64_t piece_cols = std::min<uint64_t>(s, kWriteChunk);
  std::vector<uint8_t> buf(
      static_cast<size_t>(std::min(band_rows, share.last - share.first) * piece_cols));
  for (uint64_t r0 = share.first; r0 < share.last; r0 += band_rows) {
    const uint64_t rows = std::min(band_rows, share.last - r0);
    for (uint64_t c0 = 0; c0 < s; c0 += piece_cols) {
      const uint64_t cols = std::min(piece_cols, s - c0);
      for (uint64_t r = 0; r < rows; ++r) {
        FillSampleBytes(spec.seed, r0 + r, c0, buf.data() + r * cols, cols);
      }
      const int64_t start_us = clock->WallMicros(), t0 = clock->NowNanos();
      DLIO_RETURN_NOT_OK(
          WriteBlock(call, samples, H5T_NATIVE_UINT8, {r0, c0}, {rows, cols}, buf.data(),
                     StrCat(path, ": writing /records rows ", r0, "..", r0 + rows - 1)));
      // Whole rows, or part of one row: contiguous in the file either way.
      TraceWrite(storage, path, at(r0 * s + c0), static_cast<int64_t>(rows * cols), start_us, t0);
    }
  }
  return Status::OK();
}

// The rank's range of /data (samples of different sizes), in pieces of at most kWriteChunk.
Status WriteVariableShare(Hdf5Call& call, Storage* storage, const std::string& path,
                          const FileSpec& spec, const SamplePlan& plan, hid_t samples,
                          const SampleShare& share) {
  const Clock* clock = storage->clock();
  const auto at = FileOffsetOf(samples);
  uint64_t pos = plan.offsets[share.first];
  return ForEachDataChunkOf(
      spec, share.first, share.last, kWriteChunk, [&](const uint8_t* p, size_t len) {
        const int64_t start_us = clock->WallMicros(), t0 = clock->NowNanos();
        DLIO_RETURN_NOT_OK(WriteBlock(call, samples, H5T_NATIVE_UINT8, {pos}, {len}, p,
                                      StrCat(path, ": writing /data at element ", pos)));
        TraceWrite(storage, path, at(pos), static_cast<int64_t>(len), start_us, t0);
        pos += len;
        return Status::OK();
      });
}

// The rank's share of the samples and of /labels (independent writes).
Status WriteShare(Hdf5Call& call, Storage* storage, const std::string& path, const FileSpec& spec,
                  const SamplePlan& plan, const SharedDatasets& d, const SampleShare& share) {
  if (share.first == share.last) return Status::OK();
  if (d.shaped) {
    DLIO_RETURN_NOT_OK(WriteShapedShare(call, storage, path, spec, d.shape, d.shaped_sets, share));
  } else if (d.uniform && plan.first > 0) {
    DLIO_RETURN_NOT_OK(
        WriteUniformShare(call, storage, path, spec, d.samples.get(), plan.first, share));
  } else if (!d.uniform) {
    DLIO_RETURN_NOT_OK(WriteVariableShare(call, storage, path, spec, plan, d.samples.get(), share));
  }
  return WriteLabelShare(call, d.labels.get(), path, spec, share);
}

// Closes the datasets, then the file, collectively.
Status CloseSharedFile(Hdf5Call& call, Storage* storage, const std::string& path, Comm* comm,
                       SharedDatasets* d, Hid* file) {
  const Clock* clock = storage->clock();
  d->samples.Reset();
  d->shaped_sets = ShapedDatasets{};
  d->labels.Reset();
  const int64_t start_us = clock->WallMicros(), t0 = clock->NowNanos();
  const Status mine = file->Close() < 0
                          ? call.Error(StatusCode::kIOError, path + ": closing HDF5 file")
                          : Status::OK();
  DLIO_RETURN_NOT_OK(AgreeAcrossRanks(comm, mine, "closing shared file " + path));
  TraceCall(storage, Storage::IoKind::kOther, "H5Fclose", path, -1, -1, start_us, t0);
  return Status::OK();
}

}  // namespace

// Parallel HDF5: rank `shared.rank`'s part of a shared file written through HDF5's MPI-IO
// driver. Creating and closing the file and its datasets are collective (every rank, same
// order, same arguments: the layout is the serial writer's, contiguous and unfiltered, DLIO's
// shaped /records_0..N-1 included); the rank's share of the samples (rows of /records or of each
// /records_<k>, or its range of /data) and of /labels are
// independent H5Dwrite calls, traced as "H5Dwrite" (category HDF5) at their file offsets; rank 0
// also writes /offsets and /sizes. Returns the same status on every rank; *created tells whether
// the file was made (to be removed on failure).
Status WriteSharedFile(Hdf5Call& call, Storage* storage, const std::string& path,
                       const FileSpec& spec, const FormatOptions& o, const SharedWrite& shared,
                       bool* created) {
  *created = false;
  Comm* comm = shared.comm;
  const SamplePlan plan = PlanSamples(spec);
  Hid file;
  DLIO_RETURN_NOT_OK(CreateSharedFile(call, storage, path, comm, &file, created));

  SharedDatasets d;
  d.uniform = plan.uniform;
  d.shaped = plan.uniform && ShapeFor(o, plan.first, &d.shape);
  Status mine = CreateSharedDatasets(call, file.get(), path, spec, plan, shared.rank, &d);
  DLIO_RETURN_NOT_OK(AgreeAcrossRanks(comm, mine, "creating the datasets of " + path));

  const SampleShare share = ShareOf(spec.sample_sizes.size(), shared.rank, shared.world);
  mine = WriteShare(call, storage, path, spec, plan, d, share);
  DLIO_RETURN_NOT_OK(AgreeAcrossRanks(comm, mine, "writing shared file " + path));
  return CloseSharedFile(call, storage, path, comm, &d, &file);
}

}  // namespace dlio::format_internal::hdf5
