// The dataset section of the key table: what is generated and read (docs/configuration.md).
#include "config/config_table.h"
#include "config/key_builders.h"
#include "core/element_type.h"

namespace dlio::config_internal {

namespace {

// What each format, its compression and DLIO's layout keys add (chunking, hdf5, csv, images,
// tfrecord, parquet), after the dataset's files and sizes.
void AddDatasetFormatKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  add(Bool("dataset.enable_chunking", DLIO_FIELD(bool, dataset.enable_chunking),
           "write chunked datasets (hdf5)"));
  add(Uint("dataset.chunk_size", DLIO_FIELD(uint64_t, dataset.chunk_size), {0, k4Gi},
           "chunk size in bytes when enable_chunking", kSizeUnits));
  add(Uint("dataset.chunk_samples", DLIO_FIELD(uint64_t, dataset.chunk_samples), {0, k4Gi},
           "samples per chunk when enable_chunking (0 = derive from chunk_size)"));
  add(Choice("dataset.compression", DLIO_FIELD(std::string, dataset.compression),
             {"none", "gzip", "zlib", "deflate", "lzf", "szip", "bz2", "zip", "xz", "snappy",
              "zstd", "lz4"},
             "compression of generated files; each format rejects the ones it cannot write "
             "(npz: none, gzip/zlib/deflate; hdf5: also szip when the library has it; tfrecord: "
             "none, gzip, zlib/deflate around the whole file, as TFRecordWriter; parquet: none, "
             "snappy, gzip, zstd per page)"));
  add(Bool("dataset.hdf5_shuffle", DLIO_FIELD(bool, dataset.hdf5_shuffle),
           "hdf5: apply the byte-shuffle filter before compression"));
  add(Bool(
      "dataset.metadata_file", DLIO_FIELD(bool, dataset.metadata_file),
      "hdf5: write a separate metadata file of per-sample offsets/sizes that readers consult"));
  add(Uint("dataset.hdf5_lookup_rows", DLIO_FIELD(uint64_t, dataset.hdf5_lookup_rows),
           {0, uint64_t{1} << 24},
           "hdf5: rows of a small table /lookup written in every file, a coordinates table for "
           "reader.hdf5_lookup_dataset: /lookup (0 = none; other formats refuse it)"));
  add(Uint("dataset.hdf5_lookup_row_bytes", DLIO_FIELD(uint64_t, dataset.hdf5_lookup_row_bytes),
           {1, uint64_t{1} << 20},
           "hdf5: bytes per row of /lookup, a contiguous uint8 table of rows x bytes"));
  AddCsvKeys(t);    // format/csv/csv_keys.cc
  AddImageKeys(t);  // format/image/image_keys.cc
  add(Bool("dataset.write_index", DLIO_FIELD(bool, dataset.write_index),
           "tfrecord: write <file>.idx (DALI-style record offsets) beside each file"));
  AddParquetKeys(t);  // format/parquet/parquet_keys.cc
  add(Enum("dataset.sample_layout", DLIO_ENUM_FIELD(SampleLayout, dataset.sample_layout),
           "npy/npz: the axis of x that indexes samples in generated files, and for reading "
           "when neither the labels' length nor num_samples_per_file tells: first_axis (x[i], "
           "dlio's layout) or last_axis (x[..., i], the Python DLIO's (dim, dim, num_samples))"));
  add(Int32("dataset.compression_level", DLIO_FIELD(int, dataset.compression_level), {0, 9},
            "compression level 0-9"));
  add(Bool("dataset.keep_files", DLIO_FIELD(bool, dataset.keep_files),
           "false: a run that generates and trains removes, at its end, the dataset files (and "
           "companions) it generated itself; files present before it, the marker and folders "
           "stay (dlio never deletes data it did not create)"));
  add(Unused("dataset.generation_buffer_size", "DLIO: generator buffer bytes"));
  add(Unused("dataset.record_element_bytes", "DLIO: bytes per element of a record"));
  add(UintList("dataset.record_dims", DLIO_FIELD(std::vector<uint64_t>, dataset.record_dims),
               "DLIO's record shape ([] = none): when given, a sample is an array of these "
               "dimensions of record_element_type and record_length_bytes is their product x the "
               "item size (npy/npz/hdf5 write that shape and dtype; a csv row holds their "
               "product of values)"));
  add(Choice("dataset.record_element_type", DLIO_FIELD(std::string, dataset.record_element_type),
             ElementTypeNames(),
             "numpy element type of a record (the npy/npz/hdf5 dtype; jpeg/png: always uint8)"));
  add(Unused("dataset.hdf5", "DLIO: hdf5 layout map (chunk_dims, max_shape)"));
  add(Uint("dataset.hdf5.num_dset_per_record",
           DLIO_FIELD(uint64_t, dataset.hdf5_num_dset_per_record), {1, 1024},
           "hdf5: DLIO's datasets per record /records_0..N-1, written and read as DLIO does "
           "(it must divide record_dims[0]; N > 1 needs record_dims)"));
  add(Unused("dataset.daos_pool", "DLIO: DAOS pool of the dataset"));
  add(Unused("dataset.daos_cont", "DLIO: DAOS container of the dataset"));
  add(Unused("dataset.eval_num_samples_per_file", "in DLIO's dlrm.yaml; DLIO ignores it"));
}

}  // namespace

void AddDatasetKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };

  // dataset
  add(String("dataset.data_folder", DLIO_FIELD(std::string, dataset.data_folder),
             "dataset root; train files go to `data_folder/train`, eval files to "
             "`data_folder/valid` (trailing '/' removed); DLIO's `s3://bucket/prefix` names the "
             "bucket (not prefixed with storage.storage_root)",
             kStripSlash | kNonEmpty));
  add(String("dataset.format", DLIO_FIELD(std::string, dataset.format),
             "file format, a Format registry name (npz, npy, hdf5, tfrecord, csv, "
             "indexed_binary, raw, ...); checked at run time against the registered formats",
             kNonEmpty));
  add(String("dataset.file_prefix", DLIO_FIELD(std::string, dataset.file_prefix),
             "file name prefix: `prefix_i_of_n.ext`", kNonEmpty));
  add(Uint("dataset.num_files_train", DLIO_FIELD(uint64_t, dataset.num_files_train), {0, k4Gi},
           "number of training files: a run reads the first ones of `data_folder/train` sorted "
           "by name (more may be there; docs/formats.md)"));
  add(Uint("dataset.num_files_eval", DLIO_FIELD(uint64_t, dataset.num_files_eval), {0, k4Gi},
           "number of evaluation files: a run reads the first ones of `data_folder/valid` "
           "sorted by name"));
  add(Uint("dataset.num_samples_per_file", DLIO_FIELD(uint64_t, dataset.num_samples_per_file),
           {1, kTiB}, "samples (records) per file"));
  add(Uint("dataset.record_length_bytes", DLIO_FIELD(uint64_t, dataset.record_length_bytes),
           {1, kTiB}, "mean bytes per sample (fractions are rounded)",
           kSizeUnits | kRoundFraction));
  add(Alias("dataset.record_length", "dataset.record_length_bytes"));
  add(Uint("dataset.record_length_bytes_stdev",
           DLIO_FIELD(uint64_t, dataset.record_length_bytes_stdev), {0, kTiB},
           "standard deviation of the sample size in bytes (normal, clipped at 1)",
           kSizeUnits | kRoundFraction));
  add(Alias("dataset.record_length_stdev", "dataset.record_length_bytes_stdev"));
  add(UintList("dataset.record_length_bytes_sizes",
               DLIO_FIELD(std::vector<uint64_t>, dataset.record_length_bytes_sizes),
               "file i's samples are sizes[i mod n] bytes (a dataset of a few distinct file "
               "sizes, such as images and their masks); record_length_bytes becomes their mean; "
               "[] = one size drawn per file from record_length_bytes and its stdev"));
  add(Uint("dataset.record_length_bytes_resize",
           DLIO_FIELD(uint64_t, dataset.record_length_bytes_resize), {0, kTiB},
           "bytes of a sample after DLIO's resize transform (0 = none); DLIO hands the loader "
           "a pre-made array of this size, with no I/O effect, so dlio only records it",
           kSizeUnits | kRoundFraction));
  add(Alias("dataset.record_length_resize", "dataset.record_length_bytes_resize"));
  add(Uint("dataset.num_subfolders_train", DLIO_FIELD(uint64_t, dataset.num_subfolders_train),
           {0, k4Gi}, "spread training files over this many subfolders (0 = none)"));
  add(Uint("dataset.num_subfolders_eval", DLIO_FIELD(uint64_t, dataset.num_subfolders_eval),
           {0, k4Gi}, "spread evaluation files over this many subfolders (0 = none)"));
  AddDatasetFormatKeys(t);
}

}  // namespace dlio::config_internal
