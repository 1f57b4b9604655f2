dlio_add_test(core_test LIBS dlio_core SOURCES core/status_test.cc core/distribution_test.cc
  core/owner_stamp_test.cc)
