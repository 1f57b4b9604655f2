dlio_add_test(profile_test LIBS dlio_profile dlio_trace ZLIB::ZLIB
  SOURCES profile/trace_model_test.cc profile/pfw_import_test.cc profile/strace_import_test.cc profile/dxt_import_test.cc
          profile/darshan_counters_test.cc)
dlio_add_test(profile_analysis_test LIBS dlio_profile ZLIB::ZLIB nlohmann_json::nlohmann_json
  SOURCES profile/interval_union_test.cc profile/analysis_test.cc profile/analysis_json_test.cc
          profile/import_trace_test.cc)
