# Sources of the profile module (paths relative to libdlio/): the trace model, importers and
# Darshan counters.
list(APPEND DLIO_SOURCES
  src/profile/model/trace_model.cc
  src/profile/import/line_reader.cc
  src/profile/import/json_cursor.cc
  src/profile/import/import_check.cc
  src/profile/import/pfw_import.cc
  src/profile/import/strace_line.cc
  src/profile/import/strace_fd_table.cc
  src/profile/import/strace_import.cc
  src/profile/import/dxt_import.cc
  src/profile/analysis/darshan_counters.cc
  src/profile/compare/compare_features.cc
  src/profile/compare/compare_level.cc
  src/profile/compare/compare_stats.cc
  src/profile/compare/compare_render.cc
)
# Analysis (dlio/profile_analysis.h).
list(APPEND DLIO_SOURCES
  src/profile/import/import_trace.cc
  src/profile/analysis/interval_union.cc
  src/profile/analysis/analysis.cc
  src/profile/analysis/analysis_sizes.cc
  src/profile/analysis/analysis_timeline.cc
  src/profile/analysis/analysis_text.cc
  src/profile/analysis/analysis_json.cc
)
# Fit (dlio/profile_fit.h): a workload derived from a trace.
list(APPEND DLIO_SOURCES
  src/profile/fit/fit.cc
  src/profile/fit/fit_pyio.cc
  src/profile/fit/fit_files.cc
  src/profile/fit/fit_folder_name.cc
  src/profile/fit/fit_access.cc
  src/profile/fit/fit_steps.cc
  src/profile/fit/fit_fold.cc
  src/profile/fit/fit_client_costs.cc
  src/profile/fit/fit_dataset.cc
  src/profile/fit/fit_chunks.cc
  src/profile/fit/fit_generations.cc
  src/profile/fit/fit_mapped.cc
  src/profile/fit/fit_variants.cc
  src/profile/fit/fit_model.cc
  src/profile/fit/fit_h5py_reads.cc
  src/profile/fit/fit_noise.cc
  src/profile/fit/fit_order.cc
  src/profile/fit/fit_period.cc
  src/profile/fit/fit_ranks.cc
  src/profile/fit/fit_pass_reads.cc
  src/profile/fit/fit_reader.cc
  src/profile/fit/fit_batch.cc
  src/profile/fit/fit_run_delay.cc
  src/profile/fit/fit_side.cc
  src/profile/fit/fit_torch.cc
  src/profile/fit/fit_h5py.cc
  src/profile/fit/fit_train.cc
  src/profile/fit/fit_yaml.cc
)
