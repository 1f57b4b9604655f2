# End-to-end tests of the dlio-run binary (built by the same tree).
dlio_add_test(dlio_run_test LIBS dlio_core SOURCES e2e/dlio_run_test.cc)
target_link_libraries(dlio_run_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(dlio_run_test dlio-run)
# Files dlio did not write: Python-DLIO datasets and `inspect`'s exit status (needs numpy).
dlio_add_test(dlio_run_foreign_data_test LIBS dlio_core SOURCES e2e/dlio_run_foreign_data_test.cc)
target_link_libraries(dlio_run_foreign_data_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(dlio_run_foreign_data_test dlio-run)
# What `dlio-run inspect` runs in a child process (apps/dlio-run/isolate.cc).
dlio_add_test(dlio_run_isolate_test LIBS dlio_core
  SOURCES e2e/isolate_test.cc ${PROJECT_SOURCE_DIR}/apps/dlio-run/isolate.cc)
target_include_directories(dlio_run_isolate_test PRIVATE ${PROJECT_SOURCE_DIR}/apps/dlio-run)
target_compile_definitions(dlio_run_isolate_test PRIVATE DLIO_TEST_HDF5=$<BOOL:${DLIO_WITH_HDF5}>)
add_dependencies(dlio_run_isolate_test dlio-run)

# The DLIO paper's eight scientific workloads, scaled down, checked from their traces.
dlio_add_test(scientific_workloads_test SOURCES e2e/scientific_workloads_test.cc)
target_link_libraries(scientific_workloads_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(scientific_workloads_test dlio-run)
dlio_add_test(workloads_e2e_test SOURCES e2e/workloads_e2e_test.cc)
target_link_libraries(workloads_e2e_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(workloads_e2e_test dlio-run)
# Upstream configs (the peers folder, presets_test's DLIO_PEERS_DIR) run shrunk: a few dlio-run
# processes, so not under the sanitizers.
if(NOT DLIO_SANITIZE)
  dlio_add_test(upstream_configs_e2e_test LIBS dlio_core SOURCES e2e/upstream_configs_e2e_test.cc
    PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
  target_compile_definitions(upstream_configs_e2e_test PRIVATE DLIO_PEERS_DIR="${DLIO_PEERS_DIR}")
  add_dependencies(upstream_configs_e2e_test dlio-run)
endif()
# DLIO's test matrix (tests/dlio_benchmark_test.py) as ~80 tiny dlio-run runs: not under the
# sanitizers.
if(NOT DLIO_SANITIZE)
  dlio_add_test(dlio_matrix_test LIBS dlio_core SOURCES e2e/dlio_matrix_test.cc
    PROPERTIES TIMEOUT 120 PROCESSORS 2)
  if(DLIO_WITH_MPI)  # the 3-rank case
    target_compile_definitions(dlio_matrix_test PRIVATE DLIO_MPIEXEC="${DLIO_MPIEXEC_LINE}")
  endif()
  add_dependencies(dlio_matrix_test dlio-run)
endif()
if(DLIO_WITH_MPI)
  # dlio-run under mpiexec (the test itself is serial and starts the launcher). PROCESSORS 2 keeps
  # ctest -j2 from running two 4-rank jobs at once on a 2-core machine.
  dlio_add_test(dlio_run_mpi_test LIBS dlio_core SOURCES e2e/dlio_run_mpi_test.cc
    e2e/dlio_run_mpi_storage_test.cc
    PROPERTIES TIMEOUT 120 PROCESSORS 2 LABELS mpi)
  target_link_libraries(dlio_run_mpi_test PRIVATE nlohmann_json::nlohmann_json)
  target_compile_definitions(dlio_run_mpi_test PRIVATE
    DLIO_MPIEXEC="${DLIO_MPIEXEC_LINE}"
    DLIO_MPI_COMM_TEST="$<TARGET_FILE:mpi_comm_test>")
  add_dependencies(dlio_run_mpi_test dlio-run mpi_comm_test)
  if(DLIO_SANITIZE)  # leaves out the cases too slow under the sanitizers
    target_compile_definitions(dlio_run_mpi_test PRIVATE DLIO_TEST_SANITIZED)
  endif()
endif()
# DFTracer's AI-logging events in dlio-run's traces, counted as the Python DLIO's test counts them;
# the 2-rank case only outside the sanitizer stages (mpiexec is slow there).
if(DLIO_WITH_MPI AND NOT DLIO_SANITIZE)
  dlio_add_test(ai_logging_test LIBS dlio_core SOURCES e2e/ai_logging_test.cc
    PROPERTIES PROCESSORS 2)
  target_compile_definitions(ai_logging_test PRIVATE DLIO_MPIEXEC="${DLIO_MPIEXEC_LINE}")
else()
  dlio_add_test(ai_logging_test LIBS dlio_core SOURCES e2e/ai_logging_test.cc)
endif()
add_dependencies(ai_logging_test dlio-run)
# profiling.profiler iostat (a stand-in iostat; sysstat's own when installed, else skipped).
dlio_add_test(iostat_test LIBS dlio_core SOURCES e2e/iostat_test.cc
  PROPERTIES SKIP_RETURN_CODE 77)
target_link_libraries(iostat_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(iostat_test dlio-run)
# `dlio-run sweep`: real tiny sweeps (serial; the MPI one is dlio_run_sweep_mpi_test).
dlio_add_test(dlio_run_sweep_test LIBS dlio_core SOURCES e2e/dlio_run_sweep_test.cc)
target_link_libraries(dlio_run_sweep_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(dlio_run_sweep_test dlio-run)
if(DLIO_WITH_MPI)
  dlio_add_test(dlio_run_sweep_mpi_test LIBS dlio_core SOURCES e2e/dlio_run_sweep_mpi_test.cc
    PROPERTIES TIMEOUT 120 PROCESSORS 2 LABELS mpi)
  target_link_libraries(dlio_run_sweep_mpi_test PRIVATE nlohmann_json::nlohmann_json)
  target_compile_definitions(dlio_run_sweep_mpi_test PRIVATE DLIO_MPIEXEC="${DLIO_MPIEXEC_LINE}")
  add_dependencies(dlio_run_sweep_mpi_test dlio-run)
endif()
