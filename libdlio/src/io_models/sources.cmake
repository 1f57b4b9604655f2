# Sources of the I/O models (reader.io_model: the requests of numpy, h5py, tf.data, pandas, ...;
# docs/io_models.md), paths relative to libdlio/. They are built into the format module's library
# (dlio_format; format/sources.cmake includes this file): each format registers one reader per
# model, and the readers parse with the format's code, so the two cannot be separate libraries.
list(APPEND DLIO_SOURCES
  src/io_models/io_model_table.cc
  src/io_models/model_readers.cc
  src/io_models/numpy_model_reader.cc
  src/io_models/npy_mmap_reader.cc
  src/io_models/pyio/buffered_reader.cc
  src/io_models/pyio/c_stdio.cc
  src/io_models/pyio/zipfile.cc
  src/io_models/pyio/numpy_load.cc
  src/io_models/pyio/python_heap.cc
  src/io_models/pyio/request_storage.cc
  src/io_models/pyio/torch_stream_reader.cc
  src/io_models/pandas_read.cc
  src/io_models/pyarrow_read.cc
  src/io_models/whole_file_reader.cc
  src/io_models/pil_reader.cc
  src/io_models/pil_png_load.cc
  src/io_models/pyio_reader.cc
  src/io_models/pyio_records_reader.cc
  src/io_models/tarfile_index_reader.cc
  src/io_models/zipfile_reader.cc
  src/io_models/torch_load_reader.cc
  src/io_models/tfrecord_stream_reader.cc
)
if(DLIO_WITH_HDF5)
  list(APPEND DLIO_SOURCES src/io_models/hdf5_h5py_reader.cc)
endif()
