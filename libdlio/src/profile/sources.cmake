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
  src/profile/compare_features.cc
  src/profile/compare_stats.cc
  src/profile/compare_render.cc
)
