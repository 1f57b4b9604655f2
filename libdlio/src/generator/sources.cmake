# Sources of the generator module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/generator/generator.cc
)
