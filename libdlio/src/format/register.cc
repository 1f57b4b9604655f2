#include "config/config_table.h"
#include "dlio/format.h"
#include "format/formats.h"
#include "format/hdf5/hdf5_sample_groups.h"

namespace dlio {
namespace {

// `key_sections`: the prefixes of the keys the format declares itself (its own *_keys.cc) and
// parses into its own options type in FormatOptions::formats.
Status Add(FormatRegistry* r, std::string name, std::string description, std::string options,
           std::unique_ptr<Format> (*make)(), FormatHints hints,
           Status (*validate)(const WorkloadConfig&) = nullptr,
           std::vector<std::string> key_sections = {}) {
  FormatRegistry::Entry entry{std::move(name), std::move(description), std::move(options),
                              [make]() -> Result<std::unique_ptr<Format>> { return make(); },
                              std::move(hints)};
  if (validate != nullptr) entry.validate = validate;
  entry.key_sections = std::move(key_sections);
  return r->Register(std::move(entry));
}

FormatHints Hints(std::vector<std::string> suffixes, std::vector<std::string> magics = {},
                  std::string index_suffix = "") {
  return {std::move(suffixes), std::move(magics), std::move(index_suffix)};
}

// raw's suffixes are any flat file's: magic bytes or an index companion of another format win.
FormatHints RawHints() {
  FormatHints h = Hints({"raw", "bin", "dat"});
  h.generic_suffixes = true;
  return h;
}

}  // namespace

Status RegisterBuiltinFormats(FormatRegistry* formats) {
  using namespace format_internal;  // NOLINT(build/namespaces)
  DLIO_RETURN_NOT_OK(Add(formats, "npy", "NumPy .npy array; a sample is a first-axis slice",
                         "transfer_size, odirect", &NewNpyFormat, Hints({"npy"}, {"\x93NUMPY"}),
                         nullptr, {"dataset.sample_layout"}));  // npy_keys.cc
  DLIO_RETURN_NOT_OK(
      Add(formats, "npz", "NumPy .npz (zip of x.npy samples + y.npy labels), stored or deflated",
          "compression, compression_level, transfer_size, odirect", &NewNpzFormat,
          Hints({"npz"}, {"PK\x03\x04", "PK\x05\x06"}), &config_internal::ValidateNpzConfig,
          {"dataset.sample_layout", "reader.npz_members"}));  // npy_keys.cc
  DLIO_RETURN_NOT_OK(Add(formats, "indexed_binary",
                         "raw samples + <file>.off.idx/.sz.idx uint64 indexes (dlrm)",
                         "transfer_size, odirect", &NewIndexedBinaryFormat,
                         Hints({"indexed_binary"}, {}, ".off.idx")));
  DLIO_RETURN_NOT_OK(Add(formats, "mmap_indexed_binary",
                         "indexed_binary's layout read memory-mapped (np.memmap, Megatron) by "
                         "default: page faults instead of read calls",
                         "transfer_size (native), odirect", &NewMmapIndexedBinaryFormat,
                         Hints({"mmap_indexed_binary"})));
  DLIO_RETURN_NOT_OK(
      Add(formats, "csv", "text rows of float32 values (CANDLE); a sample is one row",
          "csv_header, record_length_bytes, transfer_size, decode, odirect", &NewCsvFormat,
          Hints({"csv"}), nullptr, {"dataset.csv_header"}));  // csv/csv_keys.cc
  DLIO_RETURN_NOT_OK(Add(formats, "jpeg",
                         "one grayscale JPEG per file (libjpeg-turbo); decode gives pixels",
                         "image_quality, record_length_bytes, transfer_size, decode, odirect",
                         &NewJpegFormat, Hints({"jpg", "jpeg"}, {"\xFF\xD8\xFF"}), nullptr,
                         {"dataset.image_quality", "dataset.image_channels"}));  // image/
  DLIO_RETURN_NOT_OK(Add(formats, "png", "one grayscale PNG per file (libpng); decode gives pixels",
                         "record_length_bytes, transfer_size, decode, odirect", &NewPngFormat,
                         Hints({"png"}, {"\x89PNG\r\n\x1a\n"}), nullptr,
                         {"dataset.image_channels"}));  // image/image_keys.cc
  FormatRegistry::Entry hdf5{
      "hdf5",
      "HDF5 through libhdf5 + dlio's file driver; /records rows, /data+/offsets+/sizes, or a "
      "group per sample",
      "enable_chunking, chunk_size, chunk_samples, compression, compression_level, "
      "hdf5_shuffle, metadata_file, hdf5_sample_groups, odirect",
      &MakeHdf5Format, Hints({"h5", "hdf5"}, {"\x89HDF\r\n\x1a\n"})};
  hdf5.validate = &hdf5::ValidateHdf5Config;  // hdf5/hdf5_sample_groups.cc
  hdf5.key_sections = {"dataset.enable_chunking",    "dataset.chunk_",     "dataset.hdf5",
                       "dataset.metadata_file",      "reader.h5py_reopen", "reader.hdf5_lookup_",
                       "reader.h5py_read_attributes"};
  DLIO_RETURN_NOT_OK(formats->Register(std::move(hdf5)));  // hdf5/hdf5_keys.cc
  DLIO_RETURN_NOT_OK(Add(formats, "tfrecord",
                         "TFRecord of tf.train.Example (image bytes + int64 label), CRC-32C "
                         "framed, with a DALI-style <file>.idx",
                         "transfer_size, verify_checksums, use_index, write_index, odirect",
                         &NewTfRecordFormat, Hints({"tfrecord", "tfrecords"}), nullptr,
                         {"dataset.write_index", "reader.use_index"}));  // tfrecord_keys.cc
  DLIO_RETURN_NOT_OK(Add(formats, "parquet",
                         "Apache Parquet, a sample is one row; typed columns, row groups, "
                         "pyarrow's page layout (dictionary, PLAIN fallback), "
                         "none/snappy/gzip/zstd",
                         "compression, parquet.row_group_size, parquet.columns, "
                         "parquet.use_dictionary, odirect",
                         &NewParquetFormat, Hints({"parquet"}, {"PAR1"}), &ValidateParquetConfig,
                         {"dataset.parquet.", "reader.pyarrow_read"}));  // parquet_keys.cc
  DLIO_RETURN_NOT_OK(
      Add(formats, "webdataset",
          "WebDataset tar shards (<key>.jpg + <key>.cls per sample), streamed; "
          "shards split over ranks, shuffle buffer; or members read by offset "
          "(io_model tarfile_index)",
          "webdataset_members, transfer_size, shuffle_size, odirect", &NewWebdatasetFormat,
          Hints({"tar"}), &ValidateWebdatasetConfig,
          {"dataset.webdataset_members", "reader.tarfile_open"}));  // webdataset/webdataset_keys.cc
  DLIO_RETURN_NOT_OK(Add(formats, "zip",
                         "ZIP archive, a sample is one member (stored or deflated); read as "
                         "zipfile.ZipFile(path) and read(name) per member (io_model zipfile)",
                         "num_samples_per_file, record_length_bytes, compression, odirect",
                         &NewZipFormat, Hints({"zip"}, {"PK\x03\x04", "PK\x05\x06"})));
  DLIO_RETURN_NOT_OK(Add(formats, "pt",
                         "a torch.save file per sample (a uint8 tensor 'x' of the sample's "
                         "bytes); read as torch.load(path) per sample (io_model torch_load)",
                         "record_length_bytes, pt_pickle_bytes, odirect", &NewPtFormat,
                         Hints({"pt", "pth"}, {"PK\x03\x04"}), &ValidatePtConfig,
                         {"dataset.pt_pickle_bytes"}));  // torch/pt_keys.cc
  DLIO_RETURN_NOT_OK(
      Add(formats, "sqlite",
          "SQLite database of BLOB rows (table samples: id, label, data), one row "
          "per sample, read through libsqlite3 over dlio's storage",
          "num_samples_per_file, record_length_bytes", &NewSqliteFormat,
          Hints({"db", "sqlite", "sqlite3"}, {std::string("SQLite format 3\0", 16)})));
  DLIO_RETURN_NOT_OK(Add(formats, "raw",
                         "flat files of sample bytes back to back, no header or index (what C "
                         "loaders and record readers read); equal samples per file",
                         "num_samples_per_file, transfer_size, odirect", &NewRawFormat,
                         RawHints()));
  DLIO_RETURN_NOT_OK(Add(formats, "synthetic", "in-memory samples, no file I/O",
                         "num_samples_per_file, record_length_bytes", &NewSyntheticFormat,
                         Hints({})));
  return Status::OK();
}

}  // namespace dlio
