// The dataset section of the key table: what is generated and read (docs/configuration.md).
#include "config/config_table.h"
#include "config/key_builders.h"
#include "core/element_type.h"

namespace dlio::config_internal {

namespace {

// What each format, its compression and DLIO's layout keys add (chunking, hdf5, csv, images,
// tfrecord, parquet, webdataset), after the dataset's files and sizes.
void AddDatasetFormatKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  AddHdf5ChunkKeys(t);  // format/hdf5/hdf5_keys.cc
  add(Choice("dataset.compression", DLIO_FIELD(std::string, dataset.compression),
             {"none", "gzip", "zlib", "deflate", "lzf", "szip", "bz2", "zip", "xz", "snappy",
              "zstd", "lz4"},
             "compression of generated files; each format rejects the ones it cannot write "
             "(npz: none, gzip/zlib/deflate; hdf5: also szip when the library has it; tfrecord: "
             "none, gzip, zlib/deflate around the whole file, as TFRecordWriter; parquet: none, "
             "snappy, gzip, zstd per page)"));
  AddHdf5Keys(t);        // format/hdf5/hdf5_keys.cc
  AddCsvKeys(t);         // format/csv/csv_keys.cc
  AddPtKeys(t);          // format/torch/pt_keys.cc
  AddImageKeys(t);       // format/image/image_keys.cc
  AddTfrecordKeys(t);    // format/tfrecord/tfrecord_keys.cc
  AddParquetKeys(t);     // format/parquet/parquet_keys.cc
  AddWebdatasetKeys(t);  // format/webdataset/webdataset_keys.cc
  AddNpyKeys(t);         // format/npy_keys.cc
  add(Int32("dataset.compression_level", DLIO_FIELD(int, dataset.compression_level), {0, 9},
            "compression level 0-9"));
  add(Double("dataset.compression_ratio", DLIO_FIELD(double, dataset.compression_ratio), {1, 1e6},
             "with compression gzip, hdf5 (chunks of whole samples) and npz: each chunk or member "
             "is stored compressed this much (its bytes / its stored bytes): its first bytes "
             "random, the rest zeros, as one deflate stream of that length (1 = random bytes "
             "throughout, which do not compress)"));
  add(Double("dataset.compression_ratio_stdev", DLIO_FIELD(double, dataset.compression_ratio_stdev),
             {0, 1e6},
             "standard deviation of dataset.compression_ratio, drawn per chunk or member "
             "(normal, at least 1)"));
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
  AddHdf5RecordKeys(t);  // format/hdf5/hdf5_keys.cc
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
