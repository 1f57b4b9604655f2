dlio_add_test(storage_test LIBS dlio_storage dlio_trace
  SOURCES storage/storage_conformance_test.cc storage/posix_storage_test.cc
          storage/slow_storage_test.cc)
