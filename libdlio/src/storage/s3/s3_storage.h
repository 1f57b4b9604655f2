// The s3 storage: paths are "<bucket>/<key>" (a leading '/' or "s3://" is ignored), so
// storage.storage_root names the bucket and a prefix, as DLIO lays out keys. Folders are key
// prefixes: CreateDirs checks the bucket and remembers the folder, List is a ListObjectsV2 with
// delimiter '/', Rename is a server-side copy and a delete (per object for a folder). No locks,
// no mapping, no host files (StorageCapabilities all false).
#pragma once

#include <memory>

#include "dlio/storage.h"

namespace dlio {

// InvalidArgument for a bad endpoint or part size; credentials and endpoint from the options'
// S3Options (options.backends; storage/s3/s3_options.h), else from the AWS_* environment
// variables.
Result<std::unique_ptr<Storage>> NewS3Storage(const StorageOptions& options);

namespace s3 {
class S3Client;
}
// The same over a client the caller keeps (tests count its requests).
std::unique_ptr<Storage> NewS3StorageOn(std::shared_ptr<s3::S3Client> client, uint64_t part_size);

}  // namespace dlio
