// hdf5: samples in an HDF5 file, written and read by libhdf5 through the "dlio" file driver
// (hdf5_vfd.h), so every request HDF5 makes is a traced File::ReadAt / WriteAt.
//
// Layouts our writer produces (docs/formats.md has the knobs):
//   rows          all samples of one size S: /records uint8 [n, S] (sample i = row i), /labels
//   concatenated  sizes differ: /data uint8 [sum of sizes], /offsets and /sizes uint64 [n], /labels
// plus, with metadata_file, "<path>.meta.h5" holding /offsets and /sizes in 128-byte chunks that
// the reader consults for every sample (DFFN's small metadata requests).
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>

#include "dlio/clock.h"
#include "dlio/comm.h"
#include "format/content.h"
#include "format/formats.h"
#include "format/hdf5/hdf5_lib.h"
#include "format/hdf5/hdf5_vfd.h"
#include "format/io_util.h"

namespace dlio::format_internal {
namespace {

constexpr const char* kMetaSuffix = ".meta.h5";
// Entries per chunk of the metadata file's datasets: 128-byte chunks, read one per lookup.
constexpr hsize_t kMetaChunkEntries = 16;
// HDF5's default raw-data chunk cache per open dataset. Ours is at least one whole chunk, so a
// chunk is always read from storage in one request (HDF5 reads only the selected bytes of an
// unfiltered chunk that does not fit the cache).
constexpr uint64_t kChunkCacheMin = 1u << 20;
// Deepest group nesting we walk when looking for datasets, and the most datasets we list.
constexpr int kMaxGroupDepth = 16;
constexpr size_t kMaxDatasets = 4096;
constexpr size_t kMaxDescribedDatasets = 32;

std::string MetaPath(const std::string& path) { return path + kMetaSuffix; }

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string JsonDims(const hsize_t* dims, int rank) {
  std::string out = "[";
  for (int k = 0; k < rank; ++k) {
    if (k) out += ',';
    out += std::to_string(dims[k]);
  }
  return out + "]";
}

// ---------------------------------------------------------------------------------------------
// Writer settings

enum class Codec { kNone, kDeflate, kSzip };

struct Filters {
  Codec codec = Codec::kNone;
  int level = 4;
  bool shuffle = false;
  bool any() const { return codec != Codec::kNone || shuffle; }
};

// Call inside an Hdf5Call (szip availability is a library query).
Result<Filters> ParseFilters(const FormatOptions& o) {
  Filters f;
  f.shuffle = o.shuffle_filter;
  f.level = o.compression_level;
  const std::string c = Lower(o.compression);
  if (c.empty() || c == "none") return f;
  if (c == "gzip" || c == "zlib" || c == "deflate") {
    if (f.level < 0 || f.level > 9) {
      return Status::InvalidArgument("dataset.compression_level: " + std::to_string(f.level) +
                                     " is not in 0-9 (gzip)");
    }
    f.codec = Codec::kDeflate;
    return f;
  }
  if (c == "szip") {
    unsigned config = 0;
    if (H5Zfilter_avail(H5Z_FILTER_SZIP) <= 0 || H5Zget_filter_info(H5Z_FILTER_SZIP, &config) < 0 ||
        (config & H5Z_FILTER_CONFIG_ENCODE_ENABLED) == 0) {
      return Status::InvalidArgument(
          "dataset.compression: szip cannot encode in this HDF5 build (use gzip)");
    }
    f.codec = Codec::kSzip;
    return f;
  }
  if (c == "lzf") {
    return Status::InvalidArgument(
        "dataset.compression: lzf is h5py's own filter, not part of libhdf5, so dlio cannot "
        "write it (use gzip or szip for hdf5)");
  }
  return Status::InvalidArgument("dataset.compression: '" + o.compression +
                                 "' is not supported by hdf5 (use none, gzip, zlib, deflate or "
                                 "szip)");
}

// h5py's guess_chunk (h5py/_hl/filters.py): halve dimensions in turn until a chunk is near a
// target that grows with the dataset (8 KiB..1 MiB). Used when chunking is on (or implied by a
// filter) and neither chunk_size nor chunk_samples says how big, so files match h5py's.
std::vector<hsize_t> GuessChunk(const std::vector<hsize_t>& shape, size_t typesize) {
  constexpr double kBase = 16 * 1024, kMin = 8 * 1024, kMax = 1024 * 1024;
  std::vector<double> chunks;
  for (hsize_t d : shape) chunks.push_back(d == 0 ? 1024.0 : static_cast<double>(d));
  auto product = [&] {
    double p = 1;
    for (double c : chunks) p *= c;
    return p;
  };
  const double dset_size = product() * static_cast<double>(typesize);
  double target = kBase * std::pow(2.0, std::log10(dset_size / (1024.0 * 1024)));
  target = std::clamp(target, kMin, kMax);
  for (size_t idx = 0;; ++idx) {
    const double bytes = product() * static_cast<double>(typesize);
    if ((bytes < target || std::fabs(bytes - target) / target < 0.5) && bytes < kMax) break;
    if (product() == 1) break;
    double& c = chunks[idx % chunks.size()];
    c = std::ceil(c / 2.0);
  }
  std::vector<hsize_t> out;
  for (size_t k = 0; k < chunks.size(); ++k) {
    out.push_back(
        std::clamp<hsize_t>(static_cast<hsize_t>(chunks[k]), 1, std::max<hsize_t>(shape[k], 1)));
  }
  return out;
}

bool WantChunks(const FormatOptions& o, const Filters& f) { return o.enable_chunking || f.any(); }

// Chunk dims of /records [n, s] ({} = contiguous). Filters need chunks, so they imply chunking;
// an empty dataset stays contiguous (and unfiltered: there is nothing to compress).
std::vector<hsize_t> RecordsChunk(uint64_t n, uint64_t s, const FormatOptions& o,
                                  const Filters& f) {
  if (!WantChunks(o, f) || n == 0 || s == 0) return {};
  if (o.chunk_samples > 0) return {std::min<hsize_t>(o.chunk_samples, n), s};
  if (o.chunk_size > 0) {
    if (o.chunk_size >= s) return {std::clamp<hsize_t>(o.chunk_size / s, 1, n), s};
    // A chunk smaller than one sample splits rows too, so a 2 KB chunk really is 2 KB.
    return {1, o.chunk_size};
  }
  return GuessChunk({n, s}, 1);
}

// Chunk length of /data [total] ({} = contiguous).
std::vector<hsize_t> DataChunk(uint64_t n, uint64_t total, const FormatOptions& o,
                               const Filters& f) {
  if (!WantChunks(o, f) || total == 0) return {};
  uint64_t c = 0;
  if (o.chunk_samples > 0) {
    c = o.chunk_samples * ((total + n - 1) / n);  // samples of the mean size
  } else if (o.chunk_size > 0) {
    c = o.chunk_size;
  } else {
    c = GuessChunk({total}, 1)[0];
  }
  return {std::clamp<hsize_t>(c, 1, total)};
}

uint64_t Product(const std::vector<hsize_t>& v) {
  uint64_t p = 1;
  for (hsize_t x : v) p *= x;
  return p;
}

// Parallel HDF5: a file access property list for HDF5's own MPI-IO driver on the communicator
// `mpi_comm` points at (Storage::CollectiveMpiComm, Comm::mpi_comm_handle). Its I/O bypasses
// our Storage, so its callers trace what it does themselves.
Result<Hid> MakeMpioFapl(Hdf5Call& call, const void* mpi_comm, const std::string& path) {
#ifdef H5_HAVE_PARALLEL
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (!fapl.valid() ||
      H5Pset_fapl_mpio(fapl.get(), *static_cast<const MPI_Comm*>(mpi_comm), MPI_INFO_NULL) < 0) {
    return call.Error(StatusCode::kInternal, path + ": H5Pset_fapl_mpio");
  }
  return fapl;
#else
  (void)call;
  (void)mpi_comm;
  return Status::Unimplemented(path +
                               ": parallel HDF5 needs an HDF5 built with MPI "
                               "(Debian: libhdf5-openmpi-dev)");
#endif
}

// Parallel HDF5: a transfer property list for collective H5Dread/H5Dwrite.
Result<Hid> MakeCollectiveDxpl(Hdf5Call& call, const std::string& path) {
#ifdef H5_HAVE_PARALLEL
  Hid dxpl(H5Pcreate(H5P_DATASET_XFER));
  if (!dxpl.valid() || H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE) < 0) {
    return call.Error(StatusCode::kInternal, path + ": H5Pset_dxpl_mpio(COLLECTIVE)");
  }
  return dxpl;
#else
  (void)call;
  return Status::Unimplemented(path + ": parallel HDF5 needs an HDF5 built with MPI");
#endif
}

// A dataset access property list whose chunk cache holds at least one chunk of `chunk_bytes`
// (`exact`: exactly one chunk, for the metadata file's per-lookup reads).
Result<Hid> ChunkCacheDapl(Hdf5Call& call, uint64_t chunk_bytes, bool exact) {
  Hid dapl(H5Pcreate(H5P_DATASET_ACCESS));
  if (!dapl.valid()) return call.Error(StatusCode::kInternal, "H5Pcreate(H5P_DATASET_ACCESS)");
  const size_t nbytes =
      static_cast<size_t>(exact ? chunk_bytes : std::max<uint64_t>(kChunkCacheMin, chunk_bytes));
  const size_t nslots = exact ? 1 : H5D_CHUNK_CACHE_NSLOTS_DEFAULT;
  if (H5Pset_chunk_cache(dapl.get(), nslots, nbytes, H5D_CHUNK_CACHE_W0_DEFAULT) < 0) {
    return call.Error(StatusCode::kInternal, "H5Pset_chunk_cache");
  }
  return dapl;
}

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

// /records [n, s]: written in blocks of whole chunks (whole rows when they fit kWriteChunk),
// so memory stays at max(kWriteChunk, one chunk) for any file size and no chunk is written twice
// (a partly written compressed chunk would be read back and recompressed).
Status WriteRecords(Hdf5Call& call, hid_t file, const std::string& path, const FileSpec& spec,
                    uint64_t s, const FormatOptions& o, const Filters& f) {
  const uint64_t n = spec.sample_sizes.size();
  const std::vector<hsize_t> chunk = RecordsChunk(n, s, o, f);
  DLIO_ASSIGN_OR_RETURN(Hid dset, CreateDataset(call, file, path, "records", H5T_STD_U8LE, {n, s},
                                                chunk, chunk.empty() ? Filters{} : f));
  if (n == 0 || s == 0) return Status::OK();
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
      DLIO_RETURN_NOT_OK(WriteBlock(call, dset.get(), H5T_NATIVE_UINT8, {r0, c0}, {rows, cols},
                                    buf.data(),
                                    path + ": writing /records rows " + std::to_string(r0) + ".." +
                                        std::to_string(r0 + rows - 1)));
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
                                    path + ": writing /data at element " + std::to_string(pos)));
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

// ---------------------------------------------------------------------------------------------
// Reader helpers

// numpy-style dtype ("<f4", "|u1", ">i2", "|S8") of an HDF5 type, or a descriptive name.
std::string DtypeString(hid_t type) {
  const size_t size = H5Tget_size(type);
  const std::string bytes = std::to_string(size);
  const char order = size == 1 ? '|' : H5Tget_order(type) == H5T_ORDER_BE ? '>' : '<';
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      return std::string(1, order) + (H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "i") + bytes;
    case H5T_FLOAT:
      return std::string(1, order) + "f" + bytes;
    case H5T_STRING:
      return H5Tis_variable_str(type) > 0 ? "vlen-str" : "|S" + bytes;
    case H5T_OPAQUE:
      return "|V" + bytes;
    case H5T_BITFIELD:
      return "bitfield" + bytes;
    case H5T_COMPOUND:
      return "compound" + bytes;
    case H5T_ARRAY:
      return "array" + bytes;
    case H5T_ENUM: {
      Hid base(H5Tget_super(type));
      return "enum(" + (base.valid() ? DtypeString(base.get()) : bytes) + ")";
    }
    case H5T_VLEN:
      return "vlen";
    case H5T_REFERENCE:
      return "reference";
    default:
      return "unknown" + bytes;
  }
}

std::string FiltersJson(hid_t dcpl) {
  std::string out = "[";
  const int nf = H5Pget_nfilters(dcpl);
  for (int k = 0; k < nf; ++k) {
    unsigned flags = 0, config = 0;
    size_t nelmts = 8;
    unsigned cd[8] = {};
    char name[64] = {};
    const H5Z_filter_t id = H5Pget_filter2(dcpl, static_cast<unsigned>(k), &flags, &nelmts, cd,
                                           sizeof name, name, &config);
    std::string f;
    if (id == H5Z_FILTER_DEFLATE) {
      f = "{\"name\":\"gzip\",\"level\":" + std::to_string(nelmts > 0 ? cd[0] : 0);
    } else if (id == H5Z_FILTER_SHUFFLE) {
      f = "{\"name\":\"shuffle\"";
    } else if (id == H5Z_FILTER_SZIP) {
      f = "{\"name\":\"szip\",\"options_mask\":" + std::to_string(nelmts > 0 ? cd[0] : 0) +
          ",\"pixels_per_block\":" + std::to_string(nelmts > 1 ? cd[1] : 0);
    } else if (id == H5Z_FILTER_FLETCHER32) {
      f = "{\"name\":\"fletcher32\"";
    } else {
      f = "{\"name\":" + JsonString(name);
    }
    f += ",\"id\":" + std::to_string(id) +
         ",\"available\":" + (H5Zfilter_avail(id) > 0 ? "true" : "false") + "}";
    if (k) out += ',';
    out += f;
  }
  return out + "]";
}

// {"name","shape","dtype","layout","chunk","filters","storage_size"} of one dataset.
std::string DescribeDataset(hid_t dset, const std::string& name) {
  std::string out = "{\"name\":" + JsonString(name);
  Hid space(H5Dget_space(dset));
  Hid type(H5Dget_type(dset));
  Hid dcpl(H5Dget_create_plist(dset));
  if (space.valid()) {
    std::array<hsize_t, H5S_MAX_RANK> dims{};
    const int rank = H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    out += ",\"shape\":" + JsonDims(dims.data(), std::max(rank, 0));
  }
  if (type.valid()) out += ",\"dtype\":" + JsonString(DtypeString(type.get()));
  if (dcpl.valid()) {
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    out += ",\"layout\":\"";
    out += layout == H5D_CHUNKED      ? "chunked"
           : layout == H5D_COMPACT    ? "compact"
           : layout == H5D_VIRTUAL    ? "virtual"
           : layout == H5D_CONTIGUOUS ? "contiguous"
                                      : "unknown";
    out += "\"";
    if (layout == H5D_CHUNKED) {
      std::array<hsize_t, H5S_MAX_RANK> chunk{};
      const int rank = H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk.data());
      out += ",\"chunk\":" + JsonDims(chunk.data(), std::max(rank, 0));
    }
    out += ",\"filters\":" + FiltersJson(dcpl.get());
  }
  out += ",\"storage_size\":" + std::to_string(H5Dget_storage_size(dset));
  return out + "}";
}

// Paths of all datasets under `group`, depth first, names in increasing order.
struct WalkState {
  std::string prefix;
  int depth = 0;
  std::vector<std::string>* out = nullptr;
};

herr_t WalkLink(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  auto* st = static_cast<WalkState*>(data);
  if (st->out->size() >= kMaxDatasets) return 1;  // stop
  if (info->type != H5L_TYPE_HARD) return 0;      // soft/external links may dangle or loop
  Hid obj(H5Oopen(group, name, H5P_DEFAULT));
  if (!obj.valid()) {
    H5Eclear2(H5E_DEFAULT);
    return 0;
  }
  const std::string path = st->prefix + "/" + name;
  const H5I_type_t type = H5Iget_type(obj.get());
  if (type == H5I_DATASET) {
    st->out->push_back(path);
  } else if (type == H5I_GROUP && st->depth < kMaxGroupDepth) {
    WalkState inner{path, st->depth + 1, st->out};
    if (H5Literate(obj.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, &WalkLink, &inner) < 0) {
      H5Eclear2(H5E_DEFAULT);
    }
  }
  return 0;
}

std::vector<std::string> ListDatasets(hid_t file) {
  std::vector<std::string> out;
  WalkState st{"", 0, &out};
  if (H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, nullptr, &WalkLink, &st) < 0) {
    H5Eclear2(H5E_DEFAULT);
  }
  return out;
}

// Opens `name` if it is a dataset (invalid Hid otherwise, error stack cleared).
Hid OpenDatasetIfAny(hid_t file, const std::string& name, hid_t dapl = H5P_DEFAULT) {
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return Hid();
  }
  Hid obj(H5Oopen(file, name.c_str(), H5P_DEFAULT));
  if (!obj.valid() || H5Iget_type(obj.get()) != H5I_DATASET) {
    H5Eclear2(H5E_DEFAULT);
    return Hid();
  }
  if (dapl == H5P_DEFAULT) return obj;
  obj.Reset();
  Hid dset(H5Dopen2(file, name.c_str(), dapl));
  if (!dset.valid()) H5Eclear2(H5E_DEFAULT);
  return dset;
}

struct Extent {
  int rank = -1;
  std::array<hsize_t, H5S_MAX_RANK> dims{};
};

Extent DatasetExtent(hid_t dset) {
  Extent e;
  Hid space(H5Dget_space(dset));
  if (space.valid()) e.rank = H5Sget_simple_extent_dims(space.get(), e.dims.data(), nullptr);
  return e;
}

// Bytes of one chunk of `dset` (0 when not chunked).
uint64_t ChunkBytes(hid_t dset) {
  Hid dcpl(H5Dget_create_plist(dset));
  Hid type(H5Dget_type(dset));
  if (!dcpl.valid() || !type.valid() || H5Pget_layout(dcpl.get()) != H5D_CHUNKED) return 0;
  std::array<hsize_t, H5S_MAX_RANK> chunk{};
  const int rank = H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk.data());
  uint64_t bytes = H5Tget_size(type.get());
  for (int k = 0; k < rank; ++k) bytes *= chunk[k];
  return bytes;
}

// For errors: " (its chunk at file offset X, N bytes stored)" for the chunk holding element
// `coord` of a chunked dataset, "" otherwise. HDF5's own message does not say where the bad
// bytes are.
std::string ChunkWhere(hid_t dset, const hsize_t* coord, int rank) {
  Hid dcpl(H5Dget_create_plist(dset));
  std::array<hsize_t, H5S_MAX_RANK> chunk{}, start{};
  if (!dcpl.valid() || H5Pget_layout(dcpl.get()) != H5D_CHUNKED ||
      H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk.data()) != rank) {
    return "";
  }
  for (int k = 0; k < rank; ++k) start[k] = chunk[k] ? coord[k] / chunk[k] * chunk[k] : 0;
  unsigned mask = 0;
  haddr_t addr = HADDR_UNDEF;
  hsize_t size = 0;
  if (H5Dget_chunk_info_by_coord(dset, start.data(), &mask, &addr, &size) < 0 ||
      addr == HADDR_UNDEF) {
    H5Eclear2(H5E_DEFAULT);
    return "";
  }
  return " (its chunk at file offset " + std::to_string(addr) + ", " + std::to_string(size) +
         " bytes stored)";
}

// Unimplemented naming the filter when `dset` needs one this libhdf5 lacks (h5py's lzf, or a
// plugin filter), rather than an opaque failure at the first sample.
Status CheckFiltersAvailable(hid_t dset, const std::string& what) {
  Hid dcpl(H5Dget_create_plist(dset));
  const int nf = dcpl.valid() ? H5Pget_nfilters(dcpl.get()) : 0;
  for (int k = 0; k < nf; ++k) {
    unsigned flags = 0, config = 0, cd[8] = {};
    size_t nelmts = 8;
    char name[64] = {};
    const H5Z_filter_t id = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(k), &flags, &nelmts,
                                           cd, sizeof name, name, &config);
    if (id >= 0 && H5Zfilter_avail(id) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return Status::Unimplemented(
          what + " is stored with HDF5 filter " + std::to_string(id) + " ('" + name +
          "'), which this libhdf5 cannot decode" +
          (id == 32000 ? " (h5py's lzf: re-save the data with gzip)" : ""));
    }
  }
  return Status::OK();
}

// Opens `name` for reading with a chunk cache fitted to its chunks.
Result<Hid> OpenForReading(Hdf5Call& call, hid_t file, const std::string& path,
                           const std::string& name, bool one_chunk_cache) {
  Hid probe = OpenDatasetIfAny(file, name);
  if (!probe.valid()) return Status::NotFound(path + ": no dataset " + name);
  const uint64_t chunk = ChunkBytes(probe.get());
  probe.Reset();
  DLIO_ASSIGN_OR_RETURN(Hid dapl, ChunkCacheDapl(call, chunk, one_chunk_cache && chunk > 0));
  Hid dset(H5Dopen2(file, name.c_str(), dapl.get()));
  if (!dset.valid()) return call.Error(StatusCode::kCorruption, path + ": opening " + name);
  return dset;
}

// Reads a whole 1-D integer dataset as uint64.
Result<std::vector<uint64_t>> ReadU64s(Hdf5Call& call, hid_t dset, const std::string& what) {
  const Extent e = DatasetExtent(dset);
  if (e.rank != 1) {
    return Status::Corruption(what + ": expected a 1-D dataset, found rank " +
                              std::to_string(e.rank));
  }
  std::vector<uint64_t> v(e.dims[0]);
  if (!v.empty() && H5Dread(dset, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) {
    return call.Error(StatusCode::kCorruption, what + ": reading");
  }
  return v;
}

bool IsIntegerVector(hid_t dset) {
  Hid type(H5Dget_type(dset));
  return type.valid() && H5Tget_class(type.get()) == H5T_INTEGER && DatasetExtent(dset).rank == 1;
}

// ---------------------------------------------------------------------------------------------
// Reader

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

// ---------------------------------------------------------------------------------------------

// Parallel HDF5: rank `shared.rank`'s part of a shared file written through HDF5's MPI-IO
// driver. Creating and closing the file and its datasets are collective (every rank, same
// order, same arguments: the layout is the serial writer's, contiguous and unfiltered); the
// rank's share of the samples (rows of /records, or its range of /data) and of /labels are
// independent H5Dwrite calls, traced as "H5Dwrite" (category HDF5) at their file offsets; rank 0
// also writes /offsets and /sizes. Returns the same status on every rank; *created tells whether
// the file was made (to be removed on failure).
Status WriteSharedFile(Hdf5Call& call, Storage* storage, const std::string& path,
                       const FileSpec& spec, const FormatOptions& o, const SharedWrite& shared,
                       bool* created) {
  (void)o;
  *created = false;
  Comm* comm = shared.comm;
  const uint64_t n = spec.sample_sizes.size();
  const uint64_t first = n == 0 ? 0 : spec.sample_sizes[0];
  const bool uniform = std::all_of(spec.sample_sizes.begin(), spec.sample_sizes.end(),
                                   [&](uint64_t s) { return s == first; });
  std::vector<uint64_t> offsets(n);
  uint64_t total = 0;
  for (uint64_t i = 0; i < n; ++i) {
    offsets[i] = total;
    total += spec.sample_sizes[i];
  }
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
    const int64_t start_us = WallMicros(), t0 = clock->NowNanos();
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
  Hid samples, labels;
  Status mine = [&]() -> Status {
    // Creation in the serial writer's order; every rank reaches each create.
    if (uniform) {
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
          const int64_t start_us = WallMicros(), t0 = clock->NowNanos();
          DLIO_RETURN_NOT_OK(WriteBlock(call, samples.get(), H5T_NATIVE_UINT8, {r0, c0},
                                        {rows, cols}, buf.data(),
                                        path + ": writing /records rows " + std::to_string(r0) +
                                            ".." + std::to_string(r0 + rows - 1)));
          // Whole rows, or part of one row: contiguous in the file either way.
          trace(Storage::IoKind::kWrite, "H5Dwrite", at(r0 * s + c0),
                static_cast<int64_t>(rows * cols), start_us, t0);
        }
      }
    } else if (!uniform) {
      uint64_t pos = offsets[share.first];
      DLIO_RETURN_NOT_OK(ForEachDataChunkOf(
          spec, share.first, share.last, kWriteChunk, [&](const uint8_t* p, size_t len) {
            const int64_t start_us = WallMicros(), t0 = clock->NowNanos();
            DLIO_RETURN_NOT_OK(
                WriteBlock(call, samples.get(), H5T_NATIVE_UINT8, {pos}, {len}, p,
                           path + ": writing /data at element " + std::to_string(pos)));
            trace(Storage::IoKind::kWrite, "H5Dwrite", at(pos), static_cast<int64_t>(len), start_us,
                  t0);
            pos += len;
            return Status::OK();
          }));
    }
    std::vector<int64_t> values;
    for (uint64_t i = share.first; i < share.last; ++i) values.push_back(SampleLabel(spec.seed, i));
    return WriteBlock(call, labels.get(), H5T_NATIVE_INT64, {share.first},
                      {share.last - share.first}, values.data(), path + ": writing /labels");
  }();
  DLIO_RETURN_NOT_OK(AgreeAcrossRanks(comm, mine, "writing shared file " + path));

  samples.Reset();
  labels.Reset();
  const int64_t start_us = WallMicros(), t0 = clock->NowNanos();
  mine = file.Close() < 0 ? call.Error(StatusCode::kIOError, path + ": closing HDF5 file")
                          : Status::OK();
  DLIO_RETURN_NOT_OK(AgreeAcrossRanks(comm, mine, "closing shared file " + path));
  trace(Storage::IoKind::kOther, "H5Fclose", -1, -1, start_us, t0);
  return Status::OK();
}

class Hdf5Format final : public Format {
 public:
  std::string name() const override { return "hdf5"; }
  std::string extension() const override { return "h5"; }
  bool variable_sample_sizes() const override { return true; }

  std::vector<std::string> CompanionFiles(const std::string& path,
                                          const FormatOptions& options) const override {
    if (!options.metadata_file) return {};
    return {MetaPath(path)};
  }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    std::vector<std::string> targets = {path};
    if (options.metadata_file) targets.push_back(MetaPath(path));
    for (const std::string& p : targets) {
      DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(p));
      if (exists) return Status::AlreadyExists(p + ": exists; refusing to overwrite it");
    }
    Hdf5Call call;
    DLIO_RETURN_NOT_OK(call.init_status());
    DLIO_ASSIGN_OR_RETURN(const Filters filters, ParseFilters(options));
    std::vector<std::string> created;
    Status st = WriteFiles(call, storage, path, spec, options, filters, &created);
    if (!st.ok()) {
      for (const std::string& p : created) RemoveQuietly(storage, p);
    }
    return st;
  }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    return OpenReader(storage, path, options);
  }

  // Parallel HDF5 (HDF5's MPI-IO driver) on storages whose paths are real files, for contiguous
  // unfiltered datasets only: filtered or chunked writes from many ranks need collective chunk
  // I/O, which is left to rank 0 writing alone.
  bool CanWriteShared(const Storage& storage, const FormatOptions& o,
                      const SharedWrite& shared) const override {
#ifdef H5_HAVE_PARALLEL
    const std::string c = Lower(o.compression);
    return shared.comm != nullptr && shared.comm->mpi_comm_handle() != nullptr &&
           shared.world > 1 && (storage.name() == "posix" || storage.name() == "mpiio") &&
           (c.empty() || c == "none") && !o.shuffle_filter && !o.enable_chunking;
#else
    (void)storage;
    (void)o;
    (void)shared;
    return false;
#endif
  }

  Status WriteShared(Storage* storage, const std::string& path, const FileSpec& spec,
                     const FormatOptions& options, const SharedWrite& shared) const override {
    Hdf5Call call;
    DLIO_RETURN_NOT_OK(call.init_status());
    std::vector<std::string> targets = {path};
    if (options.metadata_file) targets.push_back(MetaPath(path));
    Status mine;
    if (shared.rank == 0) {
      for (const std::string& p : targets) {
        auto exists = storage->Exists(p);
        if (!exists.ok()) {
          mine = exists.status();
        } else if (*exists) {
          mine = Status::AlreadyExists(p + ": exists; refusing to overwrite it");
        }
        if (!mine.ok()) break;
      }
    }
    DLIO_RETURN_NOT_OK(AgreeAcrossRanks(shared.comm, mine, "creating shared file " + path));
    bool created = false;
    Status st = WriteSharedFile(call, storage, path, spec, options, shared, &created);
    if (st.ok() && options.metadata_file) {
      mine = Status::OK();
      if (shared.rank == 0) {
        std::vector<std::string> made;
        mine = WriteMetadataFile(call, storage, path, spec, &made);
        if (!mine.ok()) {
          for (const std::string& p : made) RemoveQuietly(storage, p);
        }
      }
      st = AgreeAcrossRanks(shared.comm, mine, "writing metadata file " + MetaPath(path));
    }
    if (!st.ok() && shared.rank == 0 && created) RemoveQuietly(storage, path);
    return st;
  }

 private:
  static Status WriteFiles(Hdf5Call& call, Storage* storage, const std::string& path,
                           const FileSpec& spec, const FormatOptions& o, const Filters& f,
                           std::vector<std::string>* created) {
    const uint64_t n = spec.sample_sizes.size();
    const uint64_t first = n == 0 ? 0 : spec.sample_sizes[0];
    const bool uniform = std::all_of(spec.sample_sizes.begin(), spec.sample_sizes.end(),
                                     [&](uint64_t s) { return s == first; });
    std::vector<uint64_t> offsets(n);
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; ++i) {
      offsets[i] = total;
      total += spec.sample_sizes[i];
    }
    DLIO_RETURN_NOT_OK(WithNewFile(call, storage, path, created, [&](hid_t file) {
      if (uniform) {
        DLIO_RETURN_NOT_OK(WriteRecords(call, file, path, spec, first, o, f));
      } else {
        DLIO_RETURN_NOT_OK(WriteConcatenated(call, file, path, spec, offsets, total, o, f));
      }
      return WriteLabels(call, file, path, spec);
    }));
    if (!o.metadata_file) return Status::OK();
    return WriteMetadataFile(call, storage, path, spec, created);
  }

  static Status WriteMetadataFile(Hdf5Call& call, Storage* storage, const std::string& path,
                                  const FileSpec& spec, std::vector<std::string>* created) {
    const uint64_t n = spec.sample_sizes.size();
    std::vector<uint64_t> offsets(n);
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; ++i) {
      offsets[i] = total;
      total += spec.sample_sizes[i];
    }
    const std::string meta = MetaPath(path);
    const std::vector<hsize_t> chunk =
        n == 0 ? std::vector<hsize_t>{}
               : std::vector<hsize_t>{std::min<hsize_t>(kMetaChunkEntries, n)};
    return WithNewFile(call, storage, meta, created, [&](hid_t file) {
      DLIO_RETURN_NOT_OK(WriteU64(call, file, meta, "offsets", offsets, chunk));
      return WriteU64(call, file, meta, "sizes", spec.sample_sizes, chunk);
    });
  }
};

}  // namespace

Result<std::unique_ptr<Format>> MakeHdf5Format() {
  Hdf5Call call;
  DLIO_RETURN_NOT_OK(call.init_status());
  return std::unique_ptr<Format>(std::make_unique<Hdf5Format>());
}

}  // namespace dlio::format_internal
