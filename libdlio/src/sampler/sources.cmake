# Sources of the sampler module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/sampler/sampler.cc
  src/sampler/register.cc
)
