# Sources of the storage module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/storage/storage.cc
  src/storage/fresh_read_pages.cc
  src/storage/atomic_write.cc
  src/storage/open_check.cc
  src/storage/posix_storage.cc
  src/storage/memory_storage.cc
  src/storage/slow_storage.cc
  src/storage/stdio_storage.cc
  src/storage/mpiio_storage.cc
  src/storage/register.cc
  src/storage/s3/sigv4.cc
  src/storage/s3/s3_xml.cc
  src/storage/s3/s3_list.cc
  src/storage/s3/s3_client.cc
  src/storage/s3/s3_transfer.cc
  src/storage/s3/s3_request_stats.cc
  src/storage/s3/s3_file.cc
  src/storage/s3/s3_storage.cc
  src/storage/s3/s3_stats_block.cc
)
