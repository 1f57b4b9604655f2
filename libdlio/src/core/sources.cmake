# Sources of the core module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/core/status.cc
  src/core/clock.cc
  src/core/distribution.cc
  src/core/element_type.cc
  src/core/file_kind.cc
  src/core/host_memory.cc
  src/core/owner_stamp.cc
  src/core/thread_name.cc
  src/core/thread_priority.cc
  src/core/utf8.cc
  src/core/xml_escape.cc
)
