# Sources of the compute module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/compute/compute.cc
)
