dlio_add_test(interop_numpy_test LIBS dlio_format dlio_storage dlio_trace ZLIB::ZLIB
  SOURCES interop/numpy_interop_test.cc)
dlio_add_test(interop_pandas_test LIBS dlio_format dlio_storage dlio_trace
  SOURCES interop/pandas_interop_test.cc)
dlio_add_test(interop_image_test LIBS dlio_format dlio_storage dlio_trace ZLIB::ZLIB
  SOURCES interop/image_interop_test.cc)
if(DLIO_WITH_HDF5)
  dlio_add_test(interop_hdf5_test LIBS dlio_format dlio_storage dlio_trace ZLIB::ZLIB
    SOURCES interop/hdf5_interop_test.cc)
endif()
