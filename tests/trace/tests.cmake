dlio_add_test(trace_test LIBS dlio_trace nlohmann_json::nlohmann_json ZLIB::ZLIB
  SOURCES trace/tracer_test.cc trace/trace_merge_test.cc)
