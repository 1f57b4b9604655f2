# Sources of the generator module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/generator/generator.cc
  src/generator/dataset_folder.cc
  src/generator/dataset_listing.cc
  src/generator/shared_file.cc
  src/generator/staging.cc
)
