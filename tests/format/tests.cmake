dlio_add_test(format_test LIBS dlio_format dlio_storage dlio_trace ZLIB::ZLIB
  SOURCES format/conformance_test.cc format/npy_test.cc format/npz_test.cc
          format/indexed_binary_test.cc format/data_source_test.cc format/csv_test.cc
          format/image_test.cc format/tfrecord_test.cc)
if(DLIO_WITH_HDF5)
  dlio_add_test(hdf5_test LIBS dlio_format dlio_storage dlio_trace SOURCES format/hdf5_test.cc)
endif()
