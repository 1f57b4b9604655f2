# libdlio_preload.so traced programs: a C helper with known I/O runs under LD_PRELOAD.
add_executable(preload_io_program preload/io_program.c)
dlio_target_defaults(preload_io_program)
target_link_libraries(preload_io_program PRIVATE Threads::Threads)
dlio_add_test(preload_test LIBS dlio_core nlohmann_json::nlohmann_json
  SOURCES preload/preload_test.cc)
add_dependencies(preload_test dlio_preload preload_io_program dlio-run)
target_compile_definitions(preload_test PRIVATE
  DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>"
  DLIO_PRELOAD_IO_PROGRAM="$<TARGET_FILE:preload_io_program>")
