# Sources of the trace module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
)
