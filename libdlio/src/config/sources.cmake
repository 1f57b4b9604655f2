# Sources of the config module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/config/config_check.cc
  src/config/config_docs.cc
  src/config/config_export.cc
  src/config/config_file.cc
  src/config/config_keys.cc
  src/config/config_parse.cc
  src/config/config_parse_lists.cc
  src/config/config_scale.cc
  src/config/config_shapes.cc
  src/config/config_table.cc
  src/config/config_table_dataset.cc
  src/config/config_table_reader.cc
  src/config/config_table_storage.cc
  src/config/config_validate.cc
  src/config/value_parse.cc
  # Key sections implementations declare in their own folders (config_table.h: one line each).
  src/format/hdf5/hdf5_keys.cc
  src/format/npy_keys.cc
  src/format/parquet/parquet_keys.cc
  src/format/tfrecord/tfrecord_keys.cc
  src/format/webdataset/webdataset_keys.cc
  src/format/csv/csv_keys.cc
  src/format/torch/pt_keys.cc
  src/format/image/image_keys.cc
  src/io_models/pyio_keys.cc
  src/io_models/mmap_keys.cc
  src/storage/s3/s3_keys.cc
  src/storage/slow_keys.cc
  src/storage/mpiio_keys.cc
  src/cache/tiered_keys.cc
  src/pipeline/pytorch_keys.cc
  src/checkpoint/torch_save_keys.cc
  src/checkpoint/h5py_save_keys.cc
  src/checkpoint/model_checkpoint_keys.cc
)
