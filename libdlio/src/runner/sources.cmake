# Sources of the runner module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
)
