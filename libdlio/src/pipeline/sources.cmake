# Sources of the pipeline module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
)
