# I/O models (reader.io_model) held against the real Python libraries request by request: the
# real program runs under libdlio_preload.so (request_log.h), dlio's reader under a MemoryTracer.
dlio_add_test(request_log_test SOURCES io_models/request_log_test.cc)
add_dependencies(request_log_test dlio_preload)
target_compile_definitions(request_log_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# reader.io_model pytorch against a real DataLoader (skips with 77 without torch).
dlio_add_test(pytorch_io_model_test SOURCES io_models/pytorch_test.cc
  PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
add_dependencies(pytorch_io_model_test dlio_preload dlio-run)
target_compile_definitions(pytorch_io_model_test PRIVATE
  DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
