dlio_add_test(cache_test LIBS dlio_cache dlio_storage dlio_trace
  SOURCES cache/cache_policy_test.cc cache/tiered_cache_test.cc cache/cache_trace_test.cc
    cache/cache_handoff_test.cc cache/cache_server_test.cc)
# The config keys and the registered `tiered` storage (all of libdlio).
dlio_add_test(cache_config_test SOURCES cache/cache_config_test.cc)
dlio_add_test(cache_run_test SOURCES cache/cache_run_test.cc)
# `dlio-run cache-serve`: a server process and its clients.
dlio_add_test(cache_serve_cli_test LIBS dlio_cache dlio_storage
  SOURCES cache/cache_serve_cli_test.cc)
target_link_libraries(cache_serve_cli_test PRIVATE nlohmann_json::nlohmann_json)
add_dependencies(cache_serve_cli_test dlio-run)
if(DLIO_WITH_MPI)
  # storage.cache_scope node: 4 ranks of one node share one cache (under mpiexec).
  dlio_add_mpi_test(node_cache_mpi_test RANKS 4 SOURCES cache/node_cache_mpi_test.cc)
endif()
# The server against hostile clients of its wire protocol, and what directory tiers write
# (modes, dlio's own folder, a full file system). Cases needing root or a tmpfs exit 77.
dlio_add_test(cache_security_test LIBS dlio_cache dlio_storage
  SOURCES cache/cache_security_test.cc cache/tier_folder_test.cc
  PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
target_link_libraries(cache_security_test PRIVATE nlohmann_json::nlohmann_json)
