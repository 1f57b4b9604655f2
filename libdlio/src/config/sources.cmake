# Sources of the config module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/config/config.cc
  src/config/config_docs.cc
  src/config/config_table.cc
  src/config/value_parse.cc
)
