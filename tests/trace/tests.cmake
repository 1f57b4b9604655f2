dlio_add_test(trace_test LIBS dlio_trace nlohmann_json::nlohmann_json ZLIB::ZLIB
  SOURCES trace/tracer_test.cc trace/trace_merge_test.cc)
# Trace files on a full disk (a forked child with RLIMIT_FSIZE 0).
dlio_add_test(trace_full_disk_test LIBS dlio_trace SOURCES trace/trace_full_disk_test.cc)
