# Sources of the format module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/format/content.cc
  src/format/io_util.cc
  src/format/npy_header.cc
  src/format/npy_samples.cc
  src/format/zip.cc
  src/format/zip_inflater.cc
  src/format/npy_format.cc
  src/format/npz_format.cc
  src/format/indexed_binary_format.cc
  src/format/indexed_binary_mmap.cc
  src/format/synthetic_format.cc
  src/format/csv_format.cc
  src/format/image_util.cc
  src/format/jpeg_format.cc
  src/format/png_format.cc
  src/format/detect.cc
  src/format/register.cc
  src/format/data_source.cc
  src/format/tfrecord/crc32c.cc
  src/format/tfrecord/example_wire.cc
  src/format/tfrecord/tfrecord_index.cc
  src/format/tfrecord/tfrecord_reader.cc
  src/format/tfrecord/tfrecord_writer.cc
  src/format/tfrecord/tfrecord_format.cc
  src/format/parquet/thrift_compact.cc
  src/format/parquet/parquet_meta.cc
  src/format/parquet/parquet_codec.cc
  src/format/parquet/parquet_schema.cc
  src/format/parquet/parquet_pages.cc
  src/format/parquet/parquet_values.cc
  src/format/parquet/parquet_delta.cc
  src/format/parquet/parquet_dict.cc
  src/format/parquet/parquet_chunk.cc
  src/format/parquet/parquet_writer.cc
  src/format/parquet/parquet_reader.cc
  src/format/parquet/parquet_format.cc
  src/format/webdataset/tar_header.cc
  src/format/webdataset/tar_stream.cc
  src/format/webdataset/webdataset_writer.cc
  src/format/webdataset/webdataset_reader.cc
  src/format/webdataset/webdataset_format.cc
)
# hdf5: the real format when built with HDF5, else a stub that keeps the name registered.
if(DLIO_WITH_HDF5)
  list(APPEND DLIO_SOURCES
    src/format/hdf5/hdf5_lib.cc
    src/format/hdf5/hdf5_vfd.cc
    src/format/hdf5/hdf5_policy.cc
    src/format/hdf5/hdf5_plists.cc
    src/format/hdf5/hdf5_writer.cc
    src/format/hdf5/hdf5_shaped_writer.cc
    src/format/hdf5/hdf5_shared_writer.cc
    src/format/hdf5/hdf5_checks.cc
    src/format/hdf5/hdf5_dataset.cc
    src/format/hdf5/hdf5_describe.cc
    src/format/hdf5/hdf5_open.cc
    src/format/hdf5/hdf5_chunk_guard.cc
    src/format/hdf5/hdf5_metadata_guard.cc
    src/format/hdf5/hdf5_reader.cc
    src/format/hdf5/hdf5_format.cc
  )
else()
  list(APPEND DLIO_SOURCES src/format/hdf5/hdf5_unavailable.cc)
endif()
# The I/O models' readers (src/io_models/) are part of this library.
include(${CMAKE_CURRENT_LIST_DIR}/../io_models/sources.cmake)
