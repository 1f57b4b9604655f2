# Sources of the profile module (paths relative to libdlio/): the trace model, importers and
# Darshan counters.
list(APPEND DLIO_SOURCES
  src/profile/trace_model.cc
  src/profile/line_reader.cc
  src/profile/json_cursor.cc
  src/profile/pfw_import.cc
  src/profile/strace_line.cc
  src/profile/strace_import.cc
  src/profile/dxt_import.cc
  src/profile/darshan_counters.cc
)
# Analysis (dlio/profile_analysis.h).
list(APPEND DLIO_SOURCES
  src/profile/import_trace.cc
  src/profile/interval_union.cc
  src/profile/analysis.cc
  src/profile/analysis_sizes.cc
  src/profile/analysis_timeline.cc
  src/profile/analysis_text.cc
  src/profile/analysis_json.cc
)
