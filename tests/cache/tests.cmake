dlio_add_test(cache_test LIBS dlio_cache dlio_storage dlio_trace
  SOURCES cache/cache_policy_test.cc cache/tiered_cache_test.cc cache/cache_trace_test.cc
    cache/cache_handoff_test.cc)
# The config keys and the registered `tiered` storage (all of libdlio).
dlio_add_test(cache_config_test SOURCES cache/cache_config_test.cc)
dlio_add_test(cache_run_test SOURCES cache/cache_run_test.cc)
