dlio_add_test(interop_numpy_test LIBS dlio_format dlio_storage dlio_trace ZLIB::ZLIB
  SOURCES interop/numpy_interop_test.cc)
