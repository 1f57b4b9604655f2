# I/O models (reader.io_model) held against the real Python libraries request by request: the
# real program runs under libdlio_preload.so (request_log.h), dlio's reader under a MemoryTracer.
dlio_add_test(request_log_test SOURCES io_models/request_log_test.cc)
add_dependencies(request_log_test dlio_preload)
target_compile_definitions(request_log_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# reader.io_model pandas (csv) against pandas.read_csv; skipped (exit 77) without pandas.
dlio_add_test(pandas_test SOURCES io_models/pandas_test.cc PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
add_dependencies(pandas_test dlio_preload)
target_compile_definitions(pandas_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
# checkpoint.type torch_save against torch.save; skipped (exit 77) without torch.
dlio_add_test(torch_save_test SOURCES io_models/torch_save_test.cc PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
add_dependencies(torch_save_test dlio_preload)
target_compile_definitions(torch_save_test PRIVATE DLIO_PRELOAD_LIB="$<TARGET_FILE:dlio_preload>")
