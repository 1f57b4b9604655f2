# Sources of the builtins module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/builtins/registries.cc
  src/builtins/validate_capabilities.cc
)
