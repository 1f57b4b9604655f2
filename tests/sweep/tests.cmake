# The sweep's grid, its search rule (with a fake runner) and its tables and charts.
dlio_add_test(sweep_test LIBS dlio_sweep SOURCES sweep/sweep_test.cc)
target_link_libraries(sweep_test PRIVATE nlohmann_json::nlohmann_json)
# `dlio-run sweep --resume` on malformed sweep.json files: exit 2 naming the field (the binary).
dlio_add_test(sweep_resume_test LIBS dlio_core SOURCES sweep/sweep_resume_test.cc)
target_link_libraries(sweep_resume_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(sweep_resume_test dlio-run)
