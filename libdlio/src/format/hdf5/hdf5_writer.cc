// The serial writer: the layouts of hdf5_format.cc's header comment, written through the dlio
// driver in blocks of whole chunks, and the metadata file.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <string_view>

#include "format/content.h"
#include "format/hdf5/hdf5_attributes.h"
#include "format/hdf5/hdf5_internal.h"
#include "format/hdf5/hdf5_lookup.h"
#include "format/hdf5/hdf5_vfd.h"
#include "format/io_util.h"
#include "format/sized_deflate.h"

namespace dlio::format_internal::hdf5 {
namespace {

uint64_t Product(const std::vector<hsize_t>& v) {
  uint64_t p = 1;
  for (hsize_t x : v) p *= x;
  return p;
}

}  // namespace

Result<Hid> CreateDataset(Hdf5Call& call, hid_t file, const std::string& path, const char* name,
                          hid_t type, const std::vector<hsize_t>& dims,
                          const std::vector<hsize_t>& chunk, const Filters& filters) {
  const std::string what =
      path + ": creating dataset /" + name + " " +
      JsonDims(dims.data(), static_cast<int>(dims.size())) +
      (chunk.empty() ? std::string(" contiguous")
                     : " chunk " + JsonDims(chunk.data(), static_cast<int>(chunk.size())));
  Hid space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  Hid dcpl(H5Pcreate(H5P_DATASET_CREATE));
  if (!space.valid() || !dcpl.valid()) return call.Error(StatusCode::kInternal, what);
  // Every byte is written once by us; a fill pass would double the writes. No timestamps in
  // object headers (h5py's default too), so a file's bytes depend only on its contents; and
  // contiguous storage allocated at creation, as parallel HDF5 always does, so a file written by
  // many ranks through the MPI-IO driver is byte-identical to one written serially.
  bool ok = H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER) >= 0 &&
            H5Pset_obj_track_times(dcpl.get(), false) >= 0;
  if (chunk.empty()) ok = ok && H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY) >= 0;
  uint64_t chunk_bytes = 0;
  if (!chunk.empty()) {
    chunk_bytes = Product(chunk) * H5Tget_size(type);
    ok = ok && H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()) >= 0;
    if (filters.shuffle) ok = ok && H5Pset_shuffle(dcpl.get()) >= 0;
    if (filters.codec == Codec::kDeflate) {
      ok = ok && H5Pset_deflate(dcpl.get(), static_cast<unsigned>(filters.level)) >= 0;
    } else if (filters.codec == Codec::kSzip) {
      ok = ok && H5Pset_szip(dcpl.get(), H5_SZIP_NN_OPTION_MASK, 8) >= 0;
    }
  }
  if (!ok) return call.Error(StatusCode::kInvalidArgument, what);
  DLIO_ASSIGN_OR_RETURN(Hid dapl, ChunkCacheDapl(call, chunk_bytes, false));
  Hid dset(H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, dcpl.get(), dapl.get()));
  if (!dset.valid()) return call.Error(StatusCode::kInvalidArgument, what);
  // The Python DLIO reads /records_<i> (i < hdf5.num_dset_per_record): the samples also answer to
  // /records_0, a second link to the same dataset (no data).
  if (std::string_view(name) == "records" &&
      H5Lcreate_hard(file, name, file, "records_0", H5P_DEFAULT, H5P_DEFAULT) < 0) {
    return call.Error(StatusCode::kIOError, path + ": linking /records_0 to /records");
  }
  return dset;
}

// Writes [start, start + count) of a dataset (rank = start.size()) from `buf`.
Status WriteBlock(Hdf5Call& call, hid_t dset, hid_t mem_type, const std::vector<hsize_t>& start,
                  const std::vector<hsize_t>& count, const void* buf, const std::string& what) {
  Hid fspace(H5Dget_space(dset));
  Hid mspace(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr));
  if (!fspace.valid() || !mspace.valid() ||
      H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                          nullptr) < 0 ||
      H5Dwrite(dset, mem_type, mspace.get(), fspace.get(), H5P_DEFAULT, buf) < 0) {
    return call.Error(StatusCode::kIOError, what);
  }
  return Status::OK();
}

namespace {

// Whether /records' chunks are written as zlib streams of drawn lengths
// (dataset.compression_ratio or its stdev set), and if so that the file can take them.
Result<bool> RatioChunks(const std::vector<hsize_t>& chunk, uint64_t s, const FormatOptions& o,
                         const Filters& f, const std::string& path) {
  if (!CompressionRatioSet(o.compression_ratio, o.compression_ratio_stdev)) return false;
  if (chunk.size() != 2 || chunk[1] != s || f.codec != Codec::kDeflate || f.shuffle) {
    return Status::InvalidArgument(path,
                                   ": dataset.compression_ratio needs gzip without the "
                                   "shuffle filter and chunks of whole samples");
  }
  return true;
}

// /records' chunks, each written whole (H5Dwrite_chunk: stored as the deflate filter's output)
// as a zlib stream of its first bytes random and the rest zeros, of the length its compression
// ratio gives: a normal draw per chunk (at least 1) from the file's seed. An edge chunk holds
// whole chunk dims, as libhdf5 stores it.
Status WriteRatioChunks(Hdf5Call& call, hid_t dset, const std::string& path, const FileSpec& spec,
                        uint64_t s, uint64_t chunk_rows, const FormatOptions& o) {
  const uint64_t n = spec.sample_sizes.size();
  const uint64_t total = chunk_rows * s;
  uint64_t state = spec.seed ^ 0xc0a9e55ed0c0ffeeULL;
  std::vector<uint8_t> literals, stream;
  for (uint64_t r0 = 0; r0 < n; r0 += chunk_rows) {
    const double ratio =
        std::max(1.0, o.compression_ratio + o.compression_ratio_stdev * StandardNormal(&state));
    const auto target = static_cast<uint64_t>(std::llround(static_cast<double>(total) / ratio));
    const uint64_t random = LiteralsForZlibBytes(total, target);
    literals.resize(static_cast<size_t>(random));
    FillSampleBytes(spec.seed, r0, 0, literals.data(), literals.size());
    stream.clear();
    AppendSizedZlib(literals.data(), random, total - random, &stream);
    const std::array<hsize_t, 2> offset{r0, 0};
    if (H5Dwrite_chunk(dset, H5P_DEFAULT, 0, offset.data(), stream.size(), stream.data()) < 0) {
      return call.Error(StatusCode::kIOError,
                        StrCat(path, ": writing the chunk of /records rows ", r0, "..",
                               std::min(n, r0 + chunk_rows) - 1, " (", stream.size(), " bytes)"));
    }
  }
  return Status::OK();
}

// /records [n, s]: written in blocks of whole chunks (whole rows when they fit kWriteChunk),
// so memory stays at max(kWriteChunk, one chunk) for any file size and no chunk is written twice
// (a partly written compressed chunk would be read back and recompressed).
Status WriteRecords(Hdf5Call& call, hid_t file, const std::string& path, const FileSpec& spec,
                    uint64_t s, const FormatOptions& o, const Filters& f) {
  const uint64_t n = spec.sample_sizes.size();
  const std::vector<hsize_t> chunk = RecordsChunk(n, s, o, f);
  DLIO_ASSIGN_OR_RETURN(const bool ratio, RatioChunks(chunk, s, o, f, path));
  DLIO_ASSIGN_OR_RETURN(Hid dset, CreateDataset(call, file, path, "records", H5T_STD_U8LE, {n, s},
                                                chunk, chunk.empty() ? Filters{} : f));
  if (n == 0 || s == 0) return Status::OK();
  if (ratio) return WriteRatioChunks(call, dset.get(), path, spec, s, chunk[0], o);
  const uint64_t unit_rows = chunk.empty() ? 1 : chunk[0];
  const uint64_t unit_cols = chunk.empty() ? 1 : chunk[1];
  uint64_t band_rows = 0, piece_cols = 0;
  if (unit_rows * s <= kWriteChunk) {
    band_rows = unit_rows * std::max<uint64_t>(1, kWriteChunk / (unit_rows * s));
    piece_cols = s;
  } else {
    band_rows = unit_rows;
    piece_cols = std::min<uint64_t>(
        s, unit_cols * std::max<uint64_t>(1, kWriteChunk / (unit_rows * unit_cols)));
  }
  band_rows = std::min(band_rows, n);
  std::vector<uint8_t> buf(static_cast<size_t>(band_rows * piece_cols));
  for (uint64_t r0 = 0; r0 < n; r0 += band_rows) {
    const uint64_t rows = std::min(band_rows, n - r0);
    for (uint64_t c0 = 0; c0 < s; c0 += piece_cols) {
      const uint64_t cols = std::min(piece_cols, s - c0);
      for (uint64_t r = 0; r < rows; ++r) {
        FillSampleBytes(spec.seed, r0 + r, c0, buf.data() + r * cols, cols);
      }
      DLIO_RETURN_NOT_OK(
          WriteBlock(call, dset.get(), H5T_NATIVE_UINT8, {r0, c0}, {rows, cols}, buf.data(),
                     StrCat(path, ": writing /records rows ", r0, "..", r0 + rows - 1)));
    }
  }
  return Status::OK();
}

Status WriteU64(Hdf5Call& call, hid_t file, const std::string& path, const char* name,
                const std::vector<uint64_t>& values, const std::vector<hsize_t>& chunk) {
  DLIO_ASSIGN_OR_RETURN(Hid dset, CreateDataset(call, file, path, name, H5T_STD_U64LE,
                                                {values.size()}, chunk, Filters{}));
  if (values.empty()) return Status::OK();
  return WriteBlock(call, dset.get(), H5T_NATIVE_UINT64, {0}, {values.size()}, values.data(),
                    path + ": writing /" + std::string(name));
}

// /data [total] + /offsets + /sizes: the samples back to back, in blocks of whole chunks.
Status WriteConcatenated(Hdf5Call& call, hid_t file, const std::string& path, const FileSpec& spec,
                         const std::vector<uint64_t>& offsets, uint64_t total,
                         const FormatOptions& o, const Filters& f) {
  const uint64_t n = spec.sample_sizes.size();
  const std::vector<hsize_t> chunk = DataChunk(n, total, o, f);
  {
    DLIO_ASSIGN_OR_RETURN(Hid dset, CreateDataset(call, file, path, "data", H5T_STD_U8LE, {total},
                                                  chunk, chunk.empty() ? Filters{} : f));
    const uint64_t unit = chunk.empty() ? 1 : chunk[0];
    const uint64_t block = unit * std::max<uint64_t>(1, kWriteChunk / unit);
    uint64_t pos = 0;
    DLIO_RETURN_NOT_OK(ForEachDataChunk(spec, block, [&](const uint8_t* p, size_t len) {
      DLIO_RETURN_NOT_OK(WriteBlock(call, dset.get(), H5T_NATIVE_UINT8, {pos}, {len}, p,
                                    StrCat(path, ": writing /data at element ", pos)));
      pos += len;
      return Status::OK();
    }));
  }
  DLIO_RETURN_NOT_OK(WriteU64(call, file, path, "offsets", offsets, {}));
  return WriteU64(call, file, path, "sizes", spec.sample_sizes, {});
}

Status WriteLabels(Hdf5Call& call, hid_t file, const std::string& path, const FileSpec& spec) {
  const uint64_t n = spec.sample_sizes.size();
  DLIO_ASSIGN_OR_RETURN(
      Hid dset, CreateDataset(call, file, path, "labels", H5T_STD_I64LE, {n}, {}, Filters{}));
  if (n == 0) return Status::OK();
  std::vector<int64_t> labels(n);
  for (uint64_t i = 0; i < n; ++i) labels[i] = SampleLabel(spec.seed, i);
  return WriteBlock(call, dset.get(), H5T_NATIVE_INT64, {0}, {n}, labels.data(),
                    path + ": writing /labels");
}

// /lookup: rows x row_bytes of uint8 (the bytes of row r: r's label, little-endian, repeated).
Status WriteLookup(Hdf5Call& call, hid_t file, const std::string& path, const FileSpec& spec,
                   const Hdf5Options& o) {
  const uint64_t rows = o.lookup_rows, width = o.lookup_row_bytes;
  DLIO_ASSIGN_OR_RETURN(Hid dset, CreateDataset(call, file, path, "lookup", H5T_STD_U8LE,
                                                {rows, width}, {}, Filters{}));
  std::vector<uint8_t> table(static_cast<size_t>(rows * width));
  FillLookupBytes(spec.seed, width, table.data(), table.size());
  return WriteBlock(call, dset.get(), H5T_NATIVE_UINT8, {0, 0}, {rows, width}, table.data(),
                    path + ": writing /lookup");
}

// Creates `path` (never over an existing file) and runs `body` on it. The path is added to
// `created` once it exists, so a failure can remove exactly what this writer made.
Status WithNewFile(Hdf5Call& call, Storage* storage, const std::string& path,
                   std::vector<std::string>* created,
                   const std::function<Status(hid_t file)>& body) {
  DLIO_ASSIGN_OR_RETURN(Hid fapl, MakeDlioFapl(call, storage, FileOptions{}));
  Hid file(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()));
  if (!file.valid()) {
    Status st = call.Error(StatusCode::kIOError, path + ": creating HDF5 file");
    // AlreadyExists: someone else's file appeared since our check; anything else: ours, if any.
    if (st.code() != StatusCode::kAlreadyExists) created->push_back(path);
    return st;
  }
  created->push_back(path);
  DLIO_RETURN_NOT_OK(body(file.get()));
  if (file.Close() < 0) return call.Error(StatusCode::kIOError, path + ": closing HDF5 file");
  return Status::OK();
}

}  // namespace

SamplePlan PlanSamples(const FileSpec& spec) {
  SamplePlan plan;
  const uint64_t n = spec.sample_sizes.size();
  plan.first = n == 0 ? 0 : spec.sample_sizes[0];
  plan.uniform = std::all_of(spec.sample_sizes.begin(), spec.sample_sizes.end(),
                             [&](uint64_t s) { return s == plan.first; });
  plan.offsets.resize(n);
  for (uint64_t i = 0; i < n; ++i) {
    plan.offsets[i] = plan.total;
    plan.total += spec.sample_sizes[i];
  }
  return plan;
}

Status WriteFiles(Hdf5Call& call, Storage* storage, const std::string& path, const FileSpec& spec,
                  const FormatOptions& o, const Filters& f, std::vector<std::string>* created) {
  const SamplePlan plan = PlanSamples(spec);
  DLIO_RETURN_NOT_OK(WithNewFile(call, storage, path, created, [&](hid_t file) {
    RecordShape shape;
    const bool shaped = plan.uniform && ShapeFor(o, plan.first, &shape);
    if ((shaped || !plan.uniform) &&
        CompressionRatioSet(o.compression_ratio, o.compression_ratio_stdev)) {
      return Status::InvalidArgument(path,
                                     ": dataset.compression_ratio needs samples of one size "
                                     "in /records (not record_dims' /records_N or /data of "
                                     "samples of several sizes)");
    }
    if (shaped) {
      DLIO_RETURN_NOT_OK(WriteShapedRecords(call, file, path, spec, shape, o, f));
    } else if (plan.uniform) {
      DLIO_RETURN_NOT_OK(WriteRecords(call, file, path, spec, plan.first, o, f));
    } else {
      DLIO_RETURN_NOT_OK(WriteConcatenated(call, file, path, spec, plan.offsets, plan.total, o, f));
    }
    // The table after the samples, as a conversion writes its second dataset; then the root's
    // attributes, before dlio's own /labels: the root's header then grows into a continuation
    // block where a file of the samples, a table and their attributes has it (fastMRI's), a read
    // of the same size, and the strings' global heap follows the table's data, as there.
    const Hdf5Options& hdf5 = Hdf5Of(o.formats);
    if (hdf5.lookup_rows > 0) DLIO_RETURN_NOT_OK(WriteLookup(call, file, path, spec, hdf5));
    DLIO_RETURN_NOT_OK(WriteRootAttributes(call, file, hdf5.root_attributes, spec.seed, path));
    return WriteLabels(call, file, path, spec);
  }));
  if (!Hdf5Of(o.formats).metadata_file) return Status::OK();
  return WriteMetadataFile(call, storage, path, spec, created);
}

Status WriteMetadataFile(Hdf5Call& call, Storage* storage, const std::string& path,
                         const FileSpec& spec, std::vector<std::string>* created) {
  const uint64_t n = spec.sample_sizes.size();
  const std::vector<uint64_t> offsets = PlanSamples(spec).offsets;
  const std::string meta = MetaPath(path);
  const std::vector<hsize_t> chunk =
      n == 0 ? std::vector<hsize_t>{}
             : std::vector<hsize_t>{std::min<hsize_t>(kMetaChunkEntries, n)};
  return WithNewFile(call, storage, meta, created, [&](hid_t file) {
    DLIO_RETURN_NOT_OK(WriteU64(call, file, meta, "offsets", offsets, chunk));
    return WriteU64(call, file, meta, "sizes", spec.sample_sizes, chunk);
  });
}

}  // namespace dlio::format_internal::hdf5
