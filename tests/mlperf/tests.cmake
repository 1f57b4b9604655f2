# MLPerf Storage and the Python DLIO's command line (dlio_benchmark; docs/mlperf.md).
dlio_add_test(hydra_cli_test SOURCES mlperf/hydra_cli_test.cc
  ${PROJECT_SOURCE_DIR}/apps/dlio-run/hydra_cli.cc ${PROJECT_SOURCE_DIR}/apps/dlio-run/hydra_files.cc)
target_include_directories(hydra_cli_test PRIVATE ${PROJECT_SOURCE_DIR}/apps/dlio-run)
target_link_libraries(hydra_cli_test PRIVATE yaml-cpp)
# The dlio_benchmark binary itself: outputs, summary.json keys and units, exit codes.
dlio_add_test(dlio_benchmark_test LIBS dlio_core SOURCES mlperf/dlio_benchmark_test.cc)
target_link_libraries(dlio_benchmark_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(dlio_benchmark_test dlio_benchmark dlio-run)

# Acceptance: the real mlpstorage (mlcommons/storage caa90c9, unmodified) drives dlio_benchmark
# under mpirun with 2 ranks (~10 s). Heavy (python, mpirun, many processes): not under sanitizers.
# The tree is the peers folder's (DLIO_PEERS_DIR, tests/CMakeLists.txt); the script exits 77 (skipped)
# when it is missing.
if(NOT DLIO_SANITIZE)
  set(dlio_mlperf_dir "${DLIO_PEERS_DIR}/mlcommons-storage-caa90c9")
  add_test(NAME mlperf:mlpstorage
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mlperf/mlpstorage_test.sh
                   $<TARGET_FILE_DIR:dlio_benchmark> "${dlio_mlperf_dir}" "${DLIO_SYSTEM_PYTHON}")
  set_tests_properties(mlperf:mlpstorage PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77
                       PROCESSORS 2 LABELS mpi)
endif()
