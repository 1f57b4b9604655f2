// The Files of the s3 storage: a read file answers each read with one range GET; a write file
// buffers and uploads at Sync/Close (one PUT, or a multipart upload above the part size whose
// middle parts go out while the file is written, so a large checkpoint never sits in memory
// whole).
#pragma once

#include <memory>
#include <string>

#include "dlio/storage.h"
#include "storage/s3/s3_client.h"

namespace dlio::s3 {

// Where one object lives.
struct ObjectName {
  std::string bucket;
  std::string key;
};

// A file opened for reading: `size` from the HEAD made at open.
std::unique_ptr<File> NewS3ReadFile(std::string path, std::shared_ptr<S3Client> client,
                                    ObjectName name, uint64_t size);
// A file opened for writing, starting with `initial` bytes (kReadWrite of an existing object),
// uploaded in parts of `part_size` bytes (>= 5 MiB, S3's minimum) when it grows past one.
std::unique_ptr<File> NewS3WriteFile(std::string path, std::shared_ptr<S3Client> client,
                                     ObjectName name, uint64_t part_size, std::string initial);

}  // namespace dlio::s3
