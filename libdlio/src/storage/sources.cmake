# Sources of the storage module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
)
