# Sources of the config module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
)
