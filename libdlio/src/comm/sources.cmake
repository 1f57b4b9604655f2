# Sources of the comm module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
)
