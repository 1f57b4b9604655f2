// Parallel HDF5: shared files written by all ranks through HDF5's MPI-IO driver.
#include <algorithm>

#include "dlio/clock.h"
#include "dlio/comm.h"
#include "format/content.h"
#include "format/hdf5/hdf5_internal.h"
#include "format/io_util.h"

namespace dlio::format_internal::hdf5 {
namespace {

// Traces a write to the shared file `path` that started at (start_us, t0).
void TraceWrite(Storage* storage, const std::string& path, int64_t offset, int64_t count,
                int64_t start_us, int64_t t0) {
  storage->RecordExternalIo(Storage::IoKind::kWrite, "HDF5", "H5Dwrite", path, offset, count,
                            start_us, storage->clock()->NowNanos() - t0);
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
  const uint64_t n = spec.sample_sizes.size();
  const SamplePlan plan = PlanSamples(spec);
  const uint64_t first = plan.first, total = plan.total;
  const bool uniform = plan.uniform;
  const std::vector<uint64_t>& offsets = plan.offsets;
  const Clock* clock = storage->clock();
  auto trace = [&](Storage::IoKind kind, const char* name, int64_t offset, int64_t count,
                   int64_t start_us, int64_t t0) {
    storage->RecordExternalIo(kind, "HDF5", name, path, offset, count, start_us,
                              clock->NowNanos() - t0);
  };

  Hid file;
  {
    auto fapl = MakeMpioFapl(call, comm->mpi_comm_handle(), path);
    Status mine = fapl.status();
    const int64_t start_us = clock->WallMicros(), t0 = clock->NowNanos();
    if (fapl.ok()) {
      file = Hid(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl->get()));
      if (!file.valid())
        mine = call.Error(StatusCode::kIOError, path +
                                                    ": creating HDF5 file "
                                                    "(MPI-IO driver)");
    }
    *created = file.valid();
    DLIO_RETURN_NOT_OK(AgreeAcrossRanks(comm, mine, "creating shared file " + path));
    trace(Storage::IoKind::kOther, "H5Fcreate", -1, -1, start_us, t0);
  }

  const SampleShare share = ShareOf(n, shared.rank, shared.world);
  RecordShape shape;
  const bool shaped = uniform && ShapeFor(o.hdf5, first, &shape);
  ShapedDatasets shaped_sets;
  Hid samples, labels;
  Status mine = [&]() -> Status {
    // Creation in the serial writer's order; every rank reaches each create.
    if (shaped) {
      DLIO_ASSIGN_OR_RETURN(shaped_sets,
                            CreateShapedDatasets(call, file.get(), path, n, shape, {}, Filters{}));
    } else if (uniform) {
      DLIO_ASSIGN_OR_RETURN(samples, CreateDataset(call, file.get(), path, "records", H5T_STD_U8LE,
                                                   {n, first}, {}, Filters{}));
    } else {
      DLIO_ASSIGN_OR_RETURN(samples, CreateDataset(call, file.get(), path, "data", H5T_STD_U8LE,
                                                   {total}, {}, Filters{}));
      for (const auto& [name, values] :
           {std::pair<const char*, const std::vector<uint64_t>*>{"offsets", &offsets},
            std::pair<const char*, const std::vector<uint64_t>*>{"sizes", &spec.sample_sizes}}) {
        DLIO_ASSIGN_OR_RETURN(Hid d, CreateDataset(call, file.get(), path, name, H5T_STD_U64LE,
                                                   {values->size()}, {}, Filters{}));
        if (shared.rank == 0 && !values->empty()) {
          DLIO_RETURN_NOT_OK(WriteBlock(call, d.get(), H5T_NATIVE_UINT64, {0}, {values->size()},
                                        values->data(), path + ": writing /" + name));
        }
      }
    }
    DLIO_ASSIGN_OR_RETURN(
        labels, CreateDataset(call, file.get(), path, "labels", H5T_STD_I64LE, {n}, {}, Filters{}));
    return Status::OK();
  }();
  DLIO_RETURN_NOT_OK(AgreeAcrossRanks(comm, mine, "creating the datasets of " + path));

  mine = [&]() -> Status {
    if (share.first == share.last) return Status::OK();
    if (shaped) {
      DLIO_RETURN_NOT_OK(WriteShapedShare(call, storage, path, spec, shape, shaped_sets, share));
      return WriteLabelShare(call, labels.get(), path, spec, share);
    }
    const haddr_t addr = H5Dget_offset(samples.get());
    const int64_t base = addr == HADDR_UNDEF ? -1 : static_cast<int64_t>(addr);
    auto at = [&](uint64_t element) {
      return base < 0 ? int64_t{-1} : base + static_cast<int64_t>(element);
    };
    if (uniform && first > 0) {
      const uint64_t s = first;
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
              WriteBlock(call, samples.get(), H5T_NATIVE_UINT8, {r0, c0}, {rows, cols}, buf.data(),
                         StrCat(path, ": writing /records rows ", r0, "..", r0 + rows - 1)));
          // Whole rows, or part of one row: contiguous in the file either way.
          trace(Storage::IoKind::kWrite, "H5Dwrite", at(r0 * s + c0),
                static_cast<int64_t>(rows * cols), start_us, t0);
        }
      }
    } else if (!uniform) {
      uint64_t pos = offsets[share.first];
      DLIO_RETURN_NOT_OK(ForEachDataChunkOf(
          spec, share.first, share.last, kWriteChunk, [&](const uint8_t* p, size_t len) {
            const int64_t start_us = clock->WallMicros(), t0 = clock->NowNanos();
            DLIO_RETURN_NOT_OK(WriteBlock(call, samples.get(), H5T_NATIVE_UINT8, {pos}, {len}, p,
                                          StrCat(path, ": writing /data at element ", pos)));
            trace(Storage::IoKind::kWrite, "H5Dwrite", at(pos), static_cast<int64_t>(len), start_us,
                  t0);
            pos += len;
            return Status::OK();
          }));
    }
    return WriteLabelShare(call, labels.get(), path, spec, share);
  }();
  DLIO_RETURN_NOT_OK(AgreeAcrossRanks(comm, mine, "writing shared file " + path));

  samples.Reset();
  shaped_sets = ShapedDatasets{};
  labels.Reset();
  const int64_t start_us = clock->WallMicros(), t0 = clock->NowNanos();
  mine = file.Close() < 0 ? call.Error(StatusCode::kIOError, path + ": closing HDF5 file")
                          : Status::OK();
  DLIO_RETURN_NOT_OK(AgreeAcrossRanks(comm, mine, "closing shared file " + path));
  trace(Storage::IoKind::kOther, "H5Fclose", -1, -1, start_us, t0);
  return Status::OK();
}

}  // namespace dlio::format_internal::hdf5
