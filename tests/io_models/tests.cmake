# I/O models (reader.io_model) held against the real Python libraries request by request: the
# real program runs under libdlio_preload.so (request_log.h), dlio's reader under a MemoryTracer.
dlio_add_test(request_log_test SOURCES io_models/request_log_test.cc)
add_dependencies(request_log_test dlio_preload)
target_compile_definitions(request_log_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
dlio_add_test(h5py_test SOURCES io_models/h5py_test.cc)
add_dependencies(h5py_test dlio_preload)
target_compile_definitions(h5py_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
