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
# The run-queue delay the tracer records with events (preload/trace/run_delay.h).
dlio_add_test(preload_run_delay_test LIBS dlio_core nlohmann_json::nlohmann_json
  SOURCES preload/preload_run_delay_test.cc)
add_dependencies(preload_run_delay_test dlio_preload preload_io_program)
target_compile_definitions(preload_run_delay_test PRIVATE
  DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>"
  DLIO_PRELOAD_IO_PROGRAM="$<TARGET_FILE:preload_io_program>")
# preload/common/'s runtime (HookScope, DLIO_REAL, the environment reader), tested in-process.
dlio_add_test(preload_common_test LIBS dlio_core
  SOURCES preload/preload_common_test.cc ${PROJECT_SOURCE_DIR}/preload/common/runtime_common.cc)
target_include_directories(preload_common_test PRIVATE ${PROJECT_SOURCE_DIR}/preload)
target_link_libraries(preload_common_test PRIVATE ${CMAKE_DL_LIBS})
# Real training programs under `dlio-run profile`: a PyTorch DataLoader (skipped, exit 77, when
# python3-torch is missing) and dlio-run itself.
dlio_add_test(preload_programs_test LIBS dlio_core nlohmann_json::nlohmann_json
  SOURCES preload/preload_programs_test.cc PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
add_dependencies(preload_programs_test dlio_preload dlio-run)
if(DLIO_WITH_MPI)
  # dlio-run profile under mpiexec (the test itself is serial and starts the launcher).
  dlio_add_test(preload_mpi_test LIBS dlio_core nlohmann_json::nlohmann_json
    SOURCES preload/preload_mpi_test.cc PROPERTIES TIMEOUT 120 PROCESSORS 2 LABELS mpi)
  add_dependencies(preload_mpi_test dlio_preload preload_io_program dlio-run)
  target_compile_definitions(preload_mpi_test PRIVATE
    DLIO_MPIEXEC="${DLIO_MPIEXEC_LINE}"
    DLIO_PRELOAD_IO_PROGRAM="$<TARGET_FILE:preload_io_program>")
endif()

# libdlio_cache_preload.so: a C program reading files every way, against a test server
# (cache_test_server.h) and under `dlio-run profile`.
add_executable(cache_read_program preload/cache_read_program.c)
dlio_target_defaults(cache_read_program)
target_link_libraries(cache_read_program PRIVATE Threads::Threads)
dlio_add_test(cache_preload_test LIBS dlio_core nlohmann_json::nlohmann_json
  SOURCES preload/cache_preload_test.cc PROPERTIES TIMEOUT 120)
add_dependencies(cache_preload_test dlio_cache_preload dlio_preload cache_read_program dlio-run)
target_compile_definitions(cache_preload_test PRIVATE
  DLIO_CACHE_PRELOAD_LIB="$<TARGET_FILE:dlio_cache_preload>"
  DLIO_CACHE_READ_PROGRAM="$<TARGET_FILE:cache_read_program>")
# The same against the real server, `dlio-run cache-serve`.
dlio_add_test(cache_preload_server_test LIBS dlio_core nlohmann_json::nlohmann_json
  SOURCES preload/cache_preload_server_test.cc PROPERTIES TIMEOUT 120)
add_dependencies(cache_preload_server_test dlio_cache_preload cache_read_program dlio-run)
target_compile_definitions(cache_preload_server_test PRIVATE
  DLIO_CACHE_PRELOAD_LIB="$<TARGET_FILE:dlio_cache_preload>"
  DLIO_CACHE_READ_PROGRAM="$<TARGET_FILE:cache_read_program>")

# Both interposers keep their descriptors out of the program's way (fd_program.c prints every
# descriptor number, close() result and errno it meets): plain, traced, cached, both.
add_executable(preload_fd_program preload/fd_program.c)
dlio_target_defaults(preload_fd_program)
dlio_add_test(preload_fd_test LIBS dlio_core nlohmann_json::nlohmann_json
  SOURCES preload/preload_fd_test.cc PROPERTIES TIMEOUT 300)
add_dependencies(preload_fd_test dlio_preload dlio_cache_preload preload_fd_program dlio-run)
target_compile_definitions(preload_fd_test PRIVATE
  DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>"
  DLIO_CACHE_PRELOAD_LIB="$<TARGET_FILE:dlio_cache_preload>"
  DLIO_FD_PROGRAM="$<TARGET_FILE:preload_fd_program>")

# The system calls the tracer derives beneath stdio calls, held against strace on the same runs:
# a C program (every buffer kind, seeks, reads past the end) and numpy's np.load (skipped, exit
# 77, without strace or ptrace).
add_executable(preload_stdio_program preload/stdio_program.c)
dlio_target_defaults(preload_stdio_program)
dlio_add_test(preload_stdio_kernel_test LIBS dlio_profile nlohmann_json::nlohmann_json
  SOURCES preload/stdio_kernel_test.cc PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
add_dependencies(preload_stdio_kernel_test dlio_preload preload_stdio_program dlio-run)
target_compile_definitions(preload_stdio_kernel_test PRIVATE
  DLIO_STDIO_PROGRAM="$<TARGET_FILE:preload_stdio_program>")
