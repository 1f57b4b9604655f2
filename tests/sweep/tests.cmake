# The sweep's grid, its search rule (with a fake runner) and its tables and charts.
dlio_add_test(sweep_test LIBS dlio_sweep SOURCES sweep/sweep_test.cc)
target_link_libraries(sweep_test PRIVATE nlohmann_json::nlohmann_json)
