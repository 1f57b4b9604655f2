dlio_add_test(metrics_test LIBS dlio_runner SOURCES runner/metrics_test.cc)
dlio_add_test(loop_test LIBS dlio_runner SOURCES runner/loop_test.cc)
dlio_add_test(workloads_test LIBS dlio_runner SOURCES runner/workloads_test.cc)
dlio_add_test(side_io_test SOURCES runner/side_io_test.cc)
target_link_libraries(side_io_test PRIVATE nlohmann_json::nlohmann_json)
dlio_add_test(preflight_test LIBS dlio_runner SOURCES runner/preflight_test.cc)
dlio_add_test(run_workload_test LIBS dlio_runner SOURCES runner/run_workload_test.cc)
target_link_libraries(run_workload_test PRIVATE nlohmann_json::nlohmann_json)
# What a run leaves behind (keep_files, output files on a full disk, summary, warnings).
dlio_add_test(run_outputs_test LIBS dlio_runner SOURCES runner/run_outputs_test.cc)
# train.accelerators_per_process: accelerator threads, their coverage, errors and summary.
dlio_add_test(accelerators_test LIBS dlio_runner SOURCES runner/accelerators_test.cc)
target_link_libraries(accelerators_test PRIVATE nlohmann_json::nlohmann_json)
# Every preset and every upstream workload config (the peers folder; skipped with 77 without it).
dlio_add_test(presets_test LIBS dlio_runner SOURCES runner/presets_test.cc
  PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
target_compile_definitions(presets_test PRIVATE DLIO_PEERS_DIR="${DLIO_PEERS_DIR}")
