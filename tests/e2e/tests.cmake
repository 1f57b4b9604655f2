# End-to-end tests of the dlio-run binary (built by the same tree).
dlio_add_test(dlio_run_test LIBS dlio_core SOURCES e2e/dlio_run_test.cc)
target_link_libraries(dlio_run_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(dlio_run_test dlio-run)

# The DLIO paper's eight scientific workloads, scaled down, checked from their traces.
dlio_add_test(scientific_workloads_test SOURCES e2e/scientific_workloads_test.cc)
target_link_libraries(scientific_workloads_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(scientific_workloads_test dlio-run)
dlio_add_test(workloads_e2e_test SOURCES e2e/workloads_e2e_test.cc)
target_link_libraries(workloads_e2e_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(workloads_e2e_test dlio-run)
