dlio_add_test(format_test LIBS dlio_format dlio_storage dlio_trace ZLIB::ZLIB
  SOURCES format/conformance_test.cc format/npy_test.cc format/npz_test.cc
          format/indexed_binary_test.cc format/data_source_test.cc
          format/tfrecord_test.cc)
