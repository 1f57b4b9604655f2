# Sources of the trace module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/trace/thread_buffers.cc
  src/trace/null_tracer.cc
  src/trace/memory_tracer.cc
  src/trace/trace_file_tracer.cc
  src/trace/trace_merge.cc
)
