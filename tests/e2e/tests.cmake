# End-to-end tests of the dlio-run binary (built by the same tree).
dlio_add_test(dlio_run_test LIBS dlio_core SOURCES e2e/dlio_run_test.cc)
target_link_libraries(dlio_run_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(dlio_run_test dlio-run)
