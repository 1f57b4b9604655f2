dlio_add_test(format_test LIBS dlio_format dlio_storage dlio_trace ZLIB::ZLIB
  SOURCES format/conformance_test.cc format/npy_test.cc format/npy_layout_test.cc format/npz_test.cc
          format/indexed_binary_test.cc format/data_source_test.cc format/csv_test.cc
          format/image_test.cc format/image_bomb_test.cc format/tfrecord_test.cc
          format/tfrecord_read_test.cc format/tfrecord_crc_test.cc format/tfrecord_example_test.cc
          format/storage_wrapper_test.cc format/mmap_indexed_binary_test.cc
          format/python_bytes_test.cc format/parquet_thrift_test.cc format/parquet_test.cc
          format/parquet_pages_test.cc format/parquet_values_test.cc format/webdataset_test.cc
          format/parquet_pyarrow_test.cc format/parquet_layout_test.cc format/raw_test.cc
          format/parquet_shared_test.cc format/parquet_views_test.cc format/sized_deflate_test.cc)
target_link_libraries(format_test PRIVATE PkgConfig::LZ4)  # parquet_pages_test makes LZ4 blocks
if(DLIO_WITH_HDF5)
  dlio_add_test(hdf5_test LIBS dlio_format dlio_storage dlio_trace
    SOURCES format/hdf5_test.cc format/hdf5_errors_test.cc)
endif()
if(DLIO_WITH_MPI AND DLIO_WITH_HDF5)
  # Shared files written by all ranks, and parallel HDF5 reads (under mpiexec).
  dlio_add_mpi_test(shared_file_mpi_test RANKS 2 4
    LIBS dlio_generator dlio_format dlio_storage dlio_trace dlio_comm
    SOURCES format/shared_file_mpi_test.cc)
endif()
# parquet against hyparquet / hyparquet-writer (node, .tools/node_modules; skipped without them).
dlio_add_test(parquet_interop_test LIBS dlio_format dlio_storage dlio_trace
  SOURCES format/parquet_interop_test.cc PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
target_link_libraries(parquet_interop_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(parquet_interop_test dlio-run)
# webdataset against Python's tarfile and GNU tar (skipped without them).
dlio_add_test(webdataset_interop_test LIBS dlio_format dlio_storage dlio_trace
  SOURCES format/webdataset_interop_test.cc PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
target_link_libraries(webdataset_interop_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(webdataset_interop_test dlio-run)
# The tarfile request model against tarfile r| under strace (skipped without strace).
dlio_add_test(webdataset_strace_test LIBS dlio_format dlio_storage dlio_trace
  SOURCES format/webdataset_strace_test.cc PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
