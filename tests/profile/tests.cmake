dlio_add_test(profile_test LIBS dlio_profile dlio_trace ZLIB::ZLIB
  SOURCES profile/trace_model_test.cc profile/pfw_import_test.cc profile/strace_import_test.cc profile/dxt_import_test.cc
          profile/darshan_counters_test.cc profile/import_limits_test.cc profile/import_values_test.cc)
dlio_add_test(profile_analysis_test LIBS dlio_profile ZLIB::ZLIB nlohmann_json::nlohmann_json
  SOURCES profile/interval_union_test.cc profile/analysis_test.cc profile/analysis_json_test.cc
          profile/import_trace_test.cc)
dlio_add_test(profile_compare_test LIBS dlio_profile nlohmann_json::nlohmann_json
  SOURCES profile/compare_test.cc profile/compare_level_test.cc)
# dlio-run compare on programs traced by dlio-run profile (Debian's python3 with numpy).
dlio_add_test(profile_compare_program_test LIBS dlio_core nlohmann_json::nlohmann_json
  SOURCES profile/compare_program_test.cc)
add_dependencies(profile_compare_program_test dlio-run dlio_preload)
# `dlio-run analyze` and the analysis `dlio-run profile` writes (runs the built binaries).
dlio_add_test(analyze_e2e_test LIBS dlio_core nlohmann_json::nlohmann_json
  SOURCES profile/analyze_e2e_test.cc)
add_dependencies(analyze_e2e_test dlio-run dlio_preload)
# dlio-run fit's library: workloads fitted to hand-built traces (also as a loaded host stretches
# and stalls them), and their YAML parsed back.
dlio_add_test(profile_fit_test LIBS dlio_profile dlio_config dlio_checkpoint dlio_storage dlio_format
  SOURCES profile/fit_test.cc profile/fit_archive_test.cc profile/fit_framework_test.cc profile/fit_ranks_test.cc
          profile/fit_torch_test.cc profile/fit_load_test.cc profile/fit_names_test.cc
          profile/fit_client_costs_test.cc profile/fit_whole_file_test.cc
          profile/fit_run_delay_test.cc profile/fit_stream_client_costs_test.cc
          profile/fit_folder_name_test.cc profile/fit_load_order_test.cc
          profile/fit_hdf5_test.cc profile/fit_hdf5_tables_test.cc profile/fit_npz_compressed_test.cc
          profile/fit_tarfile_index_test.cc profile/fit_paged_test.cc profile/fit_mapped_test.cc
          profile/fit_generations_test.cc profile/fit_collate_test.cc
          profile/fit_pyio_end_test.cc profile/fit_pyio_records_test.cc
          profile/fit_hdf5_groups_test.cc)
# `dlio-run fit` closed loops: dlio-run traced, fitted, the fitted YAML run; a Python np.load loop
# profiled under libdlio_preload.so and fitted.
dlio_add_test(fit_e2e_test LIBS dlio_config nlohmann_json::nlohmann_json SOURCES profile/fit_e2e_test.cc
  PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
add_dependencies(fit_e2e_test dlio-run dlio_preload)
# reader.client_costs fitted to real Python programs (tests/fidelity/programs): DataLoaders, one
# client-bound and one I/O-bound (profiled without --data-dir: fit leaves the runtime's I/O out),
# and pandas.read_csv, quiet and beside a CPU hog. RUN_SERIAL: the hog is its own.
dlio_add_test(fit_client_costs_e2e_test LIBS dlio_config SOURCES profile/fit_client_costs_e2e_test.cc
  PROPERTIES TIMEOUT 600 RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
add_dependencies(fit_client_costs_e2e_test dlio-run dlio_preload)
if(DLIO_SANITIZE)  # the case beside a CPU hog is left to the release build
  target_compile_definitions(fit_client_costs_e2e_test PRIVATE DLIO_TEST_SANITIZED)
endif()
# train.computation_time of Python loops (a busy loop, a sleep) profiled quiet and beside 4 CPU
# hogs: the run-queue delay within pauses left out. RUN_SERIAL: the hogs are its own.
dlio_add_test(fit_run_delay_e2e_test LIBS dlio_config SOURCES profile/fit_run_delay_e2e_test.cc
  PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
add_dependencies(fit_run_delay_e2e_test dlio-run dlio_preload)
if(DLIO_WITH_MPI)
  # `dlio-run fit` on a 2-rank run's traces, refitted and rerun under mpiexec -n 2 (the test is
  # serial and starts the launcher; PROCESSORS 2 as dlio_run_mpi_test).
  dlio_add_test(fit_mpi_test LIBS dlio_config nlohmann_json::nlohmann_json
    SOURCES profile/fit_mpi_test.cc
    PROPERTIES TIMEOUT 300 PROCESSORS 2 LABELS mpi SKIP_RETURN_CODE 77)
  target_compile_definitions(fit_mpi_test PRIVATE DLIO_MPIEXEC="${DLIO_MPIEXEC_LINE}")
  if(DLIO_SANITIZE)  # the case beside a CPU hog is left to the release build
    target_compile_definitions(fit_mpi_test PRIVATE DLIO_TEST_SANITIZED)
  endif()
  add_dependencies(fit_mpi_test dlio-run dlio_preload)
endif()
