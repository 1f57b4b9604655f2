// What the files of the hdf5 format share: the writer's filter and chunk policy, property lists,
// dataset creation and writing, the reader's dataset helpers, and the entry points the Format
// (hdf5_format.cc) calls. Every function here makes HDF5 calls: call it inside an Hdf5Call.
#pragma once

#include <hdf5.h>

#include <array>
#include <cctype>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/element_type.h"
#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"
#include "format/hdf5/hdf5_lib.h"
#include "format/hdf5/hdf5_options.h"

namespace dlio::format_internal::hdf5 {

inline constexpr const char* kMetaSuffix = ".meta.h5";
// Entries per chunk of the metadata file's datasets: 128-byte chunks, read one per lookup.
inline constexpr hsize_t kMetaChunkEntries = 16;
// HDF5's default raw-data chunk cache per open dataset. Ours is at least one whole chunk, so a
// chunk is always read from storage in one request (HDF5 reads only the selected bytes of an
// unfiltered chunk that does not fit the cache).
inline constexpr uint64_t kChunkCacheMin = 1u << 20;
// Deepest group nesting we walk when looking for datasets, and the most datasets we list.
inline constexpr int kMaxGroupDepth = 16;
inline constexpr size_t kMaxDatasets = 4096;
inline constexpr size_t kMaxLinks = 65536;
inline constexpr size_t kMaxDescribedDatasets = 32;

inline std::string MetaPath(const std::string& path) { return path + kMetaSuffix; }

inline std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "[d0,d1,...]" of the first `rank` dims.
std::string JsonDims(const hsize_t* dims, int rank);

// ---------------------------------------------------------------------------------------------
// Writer policy (hdf5_policy.cc)

enum class Codec { kNone, kDeflate, kSzip };

struct Filters {
  Codec codec = Codec::kNone;
  int level = 4;
  bool shuffle = false;
  bool any() const { return codec != Codec::kNone || shuffle; }
};

// The filters `o` asks for; InvalidArgument naming the key when libhdf5 cannot write them.
Result<Filters> ParseFilters(const FormatOptions& o);
// Chunk dims of /records [n, s] ({} = contiguous).
std::vector<hsize_t> RecordsChunk(uint64_t n, uint64_t s, const FormatOptions& o, const Filters& f);
// Chunk length of /data [total] ({} = contiguous).
std::vector<hsize_t> DataChunk(uint64_t n, uint64_t total, const FormatOptions& o,
                               const Filters& f);

// ---------------------------------------------------------------------------------------------
// Property lists (hdf5_plists.cc)

// Parallel HDF5: a file access property list for HDF5's own MPI-IO driver on the communicator
// `mpi_comm` points at (Storage::CollectiveMpiComm, Comm::mpi_comm_handle). Its I/O bypasses
// our Storage, so its callers trace what it does themselves.
Result<Hid> MakeMpioFapl(Hdf5Call& call, const void* mpi_comm, const std::string& path);
// Parallel HDF5: a transfer property list for collective H5Dread/H5Dwrite.
Result<Hid> MakeCollectiveDxpl(Hdf5Call& call, const std::string& path);
// A dataset access property list whose chunk cache holds at least one chunk of `chunk_bytes`
// (`exact`: exactly one chunk, for the metadata file's per-lookup reads).
Result<Hid> ChunkCacheDapl(Hdf5Call& call, uint64_t chunk_bytes, bool exact);

// ---------------------------------------------------------------------------------------------
// Writer (hdf5_writer.cc)

// Creates dataset `name` of `type` and `dims` in `file` (contiguous when `chunk` is empty).
Result<Hid> CreateDataset(Hdf5Call& call, hid_t file, const std::string& path, const char* name,
                          hid_t type, const std::vector<hsize_t>& dims,
                          const std::vector<hsize_t>& chunk, const Filters& filters);
// Writes [start, start + count) of a dataset (rank = start.size()) from `buf`.
Status WriteBlock(Hdf5Call& call, hid_t dset, hid_t mem_type, const std::vector<hsize_t>& start,
                  const std::vector<hsize_t>& count, const void* buf, const std::string& what);
// How the samples of a file are laid out: all of `first` bytes (rows), or concatenated at
// `offsets` into `total` bytes.
struct SamplePlan {
  bool uniform = true;
  uint64_t first = 0, total = 0;
  std::vector<uint64_t> offsets;
};
SamplePlan PlanSamples(const FileSpec& spec);
// Writes the data file `path` (and its metadata file with Hdf5Options::metadata_file); every file
// made is added to `created`, so a failure can remove exactly those.
Status WriteFiles(Hdf5Call& call, Storage* storage, const std::string& path, const FileSpec& spec,
                  const FormatOptions& o, const Filters& f, std::vector<std::string>* created);
// DLIO's shaped layout (FormatOptions::record_dims, Hdf5Options::num_dsets; hdf5_shaped_writer.cc):
// the row dims of each of the num_dsets datasets /records_<k>, their element type and a row's
// bytes.
struct RecordShape {
  std::vector<hsize_t> row_dims;
  const ElementType* type = nullptr;
  uint64_t row_bytes = 0, num_dsets = 1;
};
// False when `o` sets no record_dims or samples of `sample_bytes` are not of its shape.
bool ShapeFor(const FormatOptions& o, uint64_t sample_bytes, RecordShape* shape);
// /records_0..N-1 of `shape` for n samples (contiguous when `chunk` is empty) and the HDF5 type
// of their elements.
struct ShapedDatasets {
  Hid type;
  std::vector<Hid> dsets;  // [k] is /records_<k>
};
Result<ShapedDatasets> CreateShapedDatasets(Hdf5Call& call, hid_t file, const std::string& path,
                                            uint64_t n, const RecordShape& shape,
                                            const std::vector<hsize_t>& chunk, const Filters& f);
// Writes one block [start, start + count) of a /records_<k> (WriteBlock, or a traced one).
using ShapedBlockWriter = std::function<Status(hid_t dset, const std::vector<hsize_t>& start,
                                               const std::vector<hsize_t>& count, const void* buf,
                                               const std::string& what)>;
// Rows [first, last) of /records_<k> (row r: bytes [k x row_bytes, (k + 1) x row_bytes) of sample
// r), in blocks of whole `unit`s of rows of at most max(kWriteChunk, one unit), through `write`.
Status WriteShapedRows(const std::string& path, const FileSpec& spec, const RecordShape& shape,
                       const ShapedDatasets& sets, uint64_t k, uint64_t unit, uint64_t first,
                       uint64_t last, const ShapedBlockWriter& write);
// Writes /records_0..N-1 of `shape` holding the samples of `spec`.
Status WriteShapedRecords(Hdf5Call& call, hid_t file, const std::string& path, const FileSpec& spec,
                          const RecordShape& shape, const FormatOptions& o, const Filters& f);
// Writes "<path>.meta.h5" for the samples of `spec`.
Status WriteMetadataFile(Hdf5Call& call, Storage* storage, const std::string& path,
                         const FileSpec& spec, std::vector<std::string>* created);

// Parallel HDF5: rank `shared.rank`'s part of a shared file (hdf5_shared_writer.cc).
Status WriteSharedFile(Hdf5Call& call, Storage* storage, const std::string& path,
                       const FileSpec& spec, const FormatOptions& o, const SharedWrite& shared,
                       bool* created);

// ---------------------------------------------------------------------------------------------
// Datasets of files we read (hdf5_dataset.cc, hdf5_describe.cc)

struct Extent {
  int rank = -1;
  std::array<hsize_t, H5S_MAX_RANK> dims{};
};

// Opens `name` if it is a dataset: an invalid Hid when there is no such link or it is not a
// dataset, Corruption naming `path` and `name` when it cannot be opened.
Result<Hid> OpenDatasetIfAny(Hdf5Call& call, hid_t file, const std::string& path,
                             const std::string& name);
Extent DatasetExtent(hid_t dset);
// For errors: " (its chunk at file offset X, N bytes stored)" for the chunk holding element
// `coord` of a chunked dataset, "" otherwise.
std::string ChunkWhere(hid_t dset, const hsize_t* coord, int rank);
// Unimplemented naming the filter when a dataset with creation properties `dcpl` needs one this
// libhdf5 lacks.
Status CheckFiltersAvailable(hid_t dcpl, const std::string& what);
// Opens `name` for reading with a chunk cache fitted to its chunks, after CheckFiltersAvailable
// and CheckDataset (`file_size`: the size of the file holding it).
Result<Hid> OpenForReading(Hdf5Call& call, hid_t file, const std::string& path,
                           const std::string& name, bool one_chunk_cache, uint64_t file_size);
// Reads a whole 1-D integer dataset as uint64, after CheckDataset.
Result<std::vector<uint64_t>> ReadU64s(Hdf5Call& call, hid_t dset, const std::string& what,
                                       uint64_t file_size);
bool IsIntegerVector(hid_t dset);

// ---------------------------------------------------------------------------------------------
// What we check before libhdf5 reads a dataset (hdf5_checks.cc)

// The most bytes a dataset may declare (2^62: sizes and offsets then fit int64 with room).
inline constexpr uint64_t kMaxDeclaredBytes = uint64_t{1} << 62;
// The largest compression ratio the extent check allows a filtered chunked dataset: deflate's
// limit (about 1032:1). Only scale-offset or szip on constant data could pass it.
inline constexpr uint64_t kMaxFilterRatio = 1032;
// HDF5's largest chunk (its chunk sizes are 32-bit).
inline constexpr uint64_t kMaxChunkBytes = (uint64_t{1} << 32) - 1;

// `*bytes` = element_bytes x the product of e's dims; false when that passes kMaxDeclaredBytes.
bool DeclaredBytes(const Extent& e, uint64_t element_bytes, uint64_t* bytes);
// Corruption "<what>: ..." when the header of `dset` (creation properties `dcpl`, fetched when
// invalid: that copy costs more than all the checks) is inconsistent in a way libhdf5 1.10.8
// does not check and then reads past its buffers (SIGSEGV on one flipped byte):
//   - integer or float elements that are not 1, 2, 4, 8 or 16 bytes;
//   - chunks whose rank is not the dataset's, that are empty, larger than a fixed dimension, or
//     larger than kMaxChunkBytes;
// or when the extent of `dset` is not what a file of `file_size` bytes stores ("<what>
// declares shape [...] ..."): more than kMaxDeclaredBytes; contiguous or compact storage of
// another size, or past the end of the file; chunks that cannot fit in the file. O(1): reads
// only the dataset's header, which libhdf5 has already read.
Status CheckDataset(hid_t dset, const std::string& what, uint64_t file_size,
                    hid_t dcpl = H5I_INVALID_HID);

// numpy-style dtype ("<f4", "|u1", ">i2", "|S8") of an HDF5 type, or a descriptive name.
std::string DtypeString(hid_t type);
// {"name","shape","dtype","layout","chunk","filters","storage_size"} of one dataset.
std::string DescribeDataset(hid_t dset, const std::string& name);
struct DatasetList {
  std::vector<std::string> names;     // depth first, names in increasing order
  std::vector<std::string> problems;  // "<path>: <link>: cannot open: HDF5: ..." and the like
};
// The datasets of `file` (named `path` in problems), following hard links only, kMaxGroupDepth
// levels deep, each group once, at most kMaxDatasets datasets and kMaxLinks links.
DatasetList ListDatasets(Hdf5Call& call, hid_t file, const std::string& path);

// ---------------------------------------------------------------------------------------------
// Reader (hdf5_open.cc, hdf5_reader.cc, io_models/hdf5_h5py_reader.cc)

// What the format declares (hdf5_format.cc): collective reads, the metadata file, and the h5py
// model as its default.
FormatCapabilities Hdf5Capabilities();

// Opens `path` with the reader of request model `model`: kH5py the h5py model's (MakeH5pyReader),
// any other the native one. Collective reads (a parallel storage) stay the native reader's one
// collective H5Dread per sample whatever the model (h5py's driver='mpio' with dset.collective).
Result<std::unique_ptr<FormatReader>> OpenReader(IoModel model, Storage* storage,
                                                 const std::string& path, const FormatOptions& o);

}  // namespace dlio::format_internal::hdf5
