# Sources of the pipeline module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/pipeline/batch_pipeline.cc
  src/pipeline/register.cc
)
