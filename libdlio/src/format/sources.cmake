# Sources of the format module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
)
