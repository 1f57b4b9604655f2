dlio_add_test(cache_test LIBS dlio_cache dlio_storage dlio_trace
  SOURCES cache/cache_policy_test.cc cache/tiered_cache_test.cc)
