# Sources of the profile module (paths relative to libdlio/): the trace model, importers and
# Darshan counters.
list(APPEND DLIO_SOURCES
  src/profile/trace_model.cc
  src/profile/line_reader.cc
  src/profile/json_cursor.cc
  src/profile/import_check.cc
  src/profile/pfw_import.cc
  src/profile/strace_line.cc
  src/profile/strace_fd_table.cc
  src/profile/strace_import.cc
  src/profile/dxt_import.cc
  src/profile/darshan_counters.cc
  src/profile/compare_features.cc
  src/profile/compare_stats.cc
  src/profile/compare_render.cc
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
# Fit (dlio/profile_fit.h): a workload derived from a trace.
list(APPEND DLIO_SOURCES
  src/profile/fit.cc
  src/profile/fit_pyio.cc
  src/profile/fit_files.cc
  src/profile/fit_access.cc
  src/profile/fit_client_costs.cc
  src/profile/fit_dataset.cc
  src/profile/fit_model.cc
  src/profile/fit_noise.cc
  src/profile/fit_order.cc
  src/profile/fit_period.cc
  src/profile/fit_ranks.cc
  src/profile/fit_reader.cc
  src/profile/fit_side.cc
  src/profile/fit_torch.cc
  src/profile/fit_yaml.cc
)
