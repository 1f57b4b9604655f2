// The hdf5 format's config keys (chunking, the shuffle filter, the metadata file, the /lookup
// table, the root's attributes, DLIO's hdf5.num_dset_per_record, and the h5py model's
// reader.h5py_reopen, reader.hdf5_lookup_dataset, reader.hdf5_lookup_order and
// reader.h5py_read_attributes;
// docs/formats.md, docs/io_models.md): declared here, beside the
// format, and parsed straight into its Hdf5Options in the config's DatasetConfig::formats. The
// config module compiles this file into its key table (config/sources.cmake), as it parses a
// config before any registry exists; the format's registry entry names these keys' prefixes
// (format/register.cc). Each function adds the rows that go at one place of the table.
#include "config/key_builders.h"
#include "format/hdf5/hdf5_options.h"
#include "format/sized_deflate.h"

#define HDF5_FIELD(T, member) DLIO_FORMAT_FIELD(Hdf5Options, T, member)

namespace dlio::config_internal {

void AddHdf5ChunkKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  add(Bool("dataset.enable_chunking", HDF5_FIELD(bool, enable_chunking),
           "write chunked datasets (hdf5)"));
  add(Uint("dataset.chunk_size", HDF5_FIELD(uint64_t, chunk_size), {0, k4Gi},
           "chunk size in bytes when enable_chunking", kSizeUnits));
  add(Uint("dataset.chunk_samples", HDF5_FIELD(uint64_t, chunk_samples), {0, k4Gi},
           "samples per chunk when enable_chunking (0 = derive from chunk_size)"));
}

void AddHdf5Keys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  add(Bool("dataset.hdf5_shuffle", HDF5_FIELD(bool, shuffle_filter),
           "hdf5: apply the byte-shuffle filter before compression"));
  add(Bool(
      "dataset.metadata_file", HDF5_FIELD(bool, metadata_file),
      "hdf5: write a separate metadata file of per-sample offsets/sizes that readers consult"));
  add(Uint("dataset.hdf5_lookup_rows", HDF5_FIELD(uint64_t, lookup_rows), {0, uint64_t{1} << 24},
           "hdf5: rows of a small table /lookup written in every file, a coordinates table for "
           "reader.hdf5_lookup_dataset: /lookup (0 = none; other formats refuse it)"));
  add(Uint("dataset.hdf5_lookup_row_bytes", HDF5_FIELD(uint64_t, lookup_row_bytes),
           {1, uint64_t{1} << 20},
           "hdf5: bytes per row of /lookup, a contiguous uint8 table of rows x bytes"));
  add(String("dataset.hdf5_root_attributes", HDF5_FIELD(std::string, root_attributes),
             "hdf5: attributes written on every file's root after its datasets, as h5py's "
             "f.attrs[name] = value, as '@name:shape:dtype' items separated by commas (shape "
             "'scalar' or AxB; dtype fp16, fp32, fp64, int8 to int64, uint8, S<n>, bytes<n> or "
             "str<n>: fixed, variable-length ASCII or UTF-8 strings of n characters, these in the "
             "file's global heap; e.g. '@acquisition:scalar:str9, @max:scalar:fp64'); empty = "
             "none"));
  add(String("dataset.hdf5_sample_groups", HDF5_FIELD(std::string, sample_groups),
             "hdf5: a group per sample, named by this pattern with '{}' or '{:0Nd}' (zero-padded "
             "to N digits) for the sample's index (\"sample_{}\": /sample_0, /sample_1, ...; "
             "\"{:06d}\": /000000, ...), or a prefix the index follows (\"sample_\"), holding "
             "one dataset per dataset.hdf5_sample_members, as h5py writes them; empty = DLIO's "
             "/records (a file without it whose root holds only such groups is read so anyway)"));
  add(String("dataset.hdf5_sample_members", HDF5_FIELD(std::string, sample_members),
             "hdf5 with hdf5_sample_groups: each group's datasets, comma-separated, read in "
             "this order: the first holds the sample (record_dims of record_element_type, else "
             "flat uint8), each other a scalar int64 label, or name:shape:dtype (bbox:4:float32; "
             "shape AxB or scalar, dtype uint8 to float64); empty = no group: each sample the "
             "dataset of that name itself (f[str(i)] = x)"));
}

void AddHdf5RecordKeys(std::vector<KeySpec>* t) {
  t->push_back(Uint("dataset.hdf5.num_dset_per_record", HDF5_FIELD(uint64_t, num_dsets), {1, 1024},
                    "hdf5: DLIO's datasets per record /records_0..N-1, written and read as DLIO "
                    "does (it must divide record_dims[0]; N > 1 needs record_dims)"));
}

void AddHdf5ReaderKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  add(Enum("reader.h5py_reopen", DLIO_FORMAT_ENUM_FIELD(Hdf5Options, H5pyReopen, h5py_reopen),
           "hdf5 under io_model h5py: what is opened again for every sample: file = "
           "h5py.File and f['records'] per sample, closed after it (DLIO's on_demand reader); "
           "dataset = the file stays open, f['records'] per sample; none = the file and its "
           "datasets stay open (libhdf5's sieve buffer and chunk cache then serve repeats)"));
  add(String("reader.hdf5_lookup_dataset", HDF5_FIELD(std::string, lookup_dataset),
             "hdf5 under io_model h5py: a small dataset of each file (e.g. /labels, a "
             "coordinates table) whose row (i mod its length) is read with sample i "
             "(reader.hdf5_lookup_order), as h5py reads it; empty = none"));
  add(Enum("reader.hdf5_lookup_order",
           DLIO_FORMAT_ENUM_FIELD(Hdf5Options, LookupOrder, lookup_order),
           "hdf5: when a lookup table's row is read beside its sample: before = ahead of the "
           "sample's data (coordinates that place a crop: c = f['coords'][i], then the crop), "
           "after = once the sample's data is read (x = f['images'][i], then y = "
           "f['labels'][i]); auto = before with DLIO's rows, after with hdf5_sample_groups"));
  add(Bool("reader.h5py_read_attributes", HDF5_FIELD(bool, h5py_read_attributes),
           "hdf5 under io_model h5py: read every attribute of the file's root after each "
           "sample, as dict(f.attrs) in a Dataset's __getitem__ (a string's characters come from "
           "the file's global heap, read once per open file)"));
}

// dataset.compression_ratio (or its stdev) away from 1 (0) under hdf5: chunks written as zlib
// streams of a chosen length need gzip without the shuffle filter, chunks of whole samples, and
// samples of one size in DLIO's plain /records (not its shaped /records_N or a variable-size
// /data).
Status ValidateHdf5CompressionRatio(const WorkloadConfig& c) {
  const Hdf5Options& o = Hdf5Of(c.dataset.formats);
  if (!format_internal::CompressionRatioSet(c.dataset.compression_ratio,
                                            c.dataset.compression_ratio_stdev)) {
    return Status::OK();
  }
  const char* key = "dataset.compression_ratio";
  const std::string& codec = c.dataset.compression;
  if (!format_internal::IsDeflateCodec(codec)) {
    return Status::InvalidArgument(key, " needs dataset.compression gzip (is ", codec,
                                   "): its chunks are zlib streams");
  }
  if (o.shuffle_filter) {
    return Status::InvalidArgument(key,
                                   " with dataset.hdf5_shuffle: the shuffle filter would "
                                   "reorder the bytes whose compressed length is chosen");
  }
  if (!o.enable_chunking || (o.chunk_samples < 1 && o.chunk_size < c.dataset.record_length_bytes)) {
    return Status::InvalidArgument(key,
                                   " needs dataset.enable_chunking with chunks of whole "
                                   "samples (dataset.chunk_samples, or a chunk_size of at "
                                   "least dataset.record_length_bytes)");
  }
  if (c.dataset.record_length_bytes_stdev > 0 || c.dataset.record_length_bytes_sizes.size() > 1 ||
      !c.dataset.record_dims.empty()) {
    return Status::InvalidArgument(key,
                                   " needs samples of one size in /records: not with "
                                   "dataset.record_length_bytes_stdev, several "
                                   "record_length_bytes_sizes or record_dims");
  }
  return Status::OK();
}

namespace {

// reader.h5py_read_attributes: read by the h5py model's hdf5 readers (h5py, and auto and pytorch,
// which pick it for hdf5).
Status ValidateH5pyReadAttributes(const WorkloadConfig& c) {
  if (!Hdf5Of(c.dataset.formats).h5py_read_attributes) return Status::OK();
  const IoModel m = c.reader.io_model;
  if (m != IoModel::kAuto && m != IoModel::kH5py && m != IoModel::kPytorch) {
    return Status::InvalidArgument(
        "reader.h5py_read_attributes applies to reader.io_model h5py (hdf5's default under "
        "auto); reader.io_model is ",
        EnumName(m));
  }
  return Status::OK();
}

}  // namespace

Status ValidateHdf5Keys(const WorkloadConfig& c) {
  const Hdf5Options& o = Hdf5Of(c.dataset.formats);
  DLIO_RETURN_NOT_OK(ValidateH5pyReadAttributes(c));
  if (o.enable_chunking && o.chunk_size < 1 && o.chunk_samples < 1) {
    return Status::InvalidArgument(
        "dataset.chunk_size or dataset.chunk_samples must be >= 1 when "
        "dataset.enable_chunking is true");
  }
  return Status::OK();
}

uint64_t Hdf5DatasetsPerRecord(const WorkloadConfig& c) {
  return Hdf5Of(c.dataset.formats).num_dsets;
}

}  // namespace dlio::config_internal

#undef HDF5_FIELD
