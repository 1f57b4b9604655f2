// The statistics of the s3 storage (docs/storage.md): its HTTP requests by kind, bytes, retries,
// errors and GET latencies. The runner takes them per epoch as the storage's "s3" statistics block
// (Storage::TakeEpochStats); S3StatsOf gives them to library users and tests.
#pragma once

#include <cstdint>

namespace dlio {

class Storage;

// Requests, bytes and latencies over an interval (an epoch). Request counts are HTTP requests
// sent, retries included (so requests() - retries is the number of logical requests).
struct S3Stats {
  uint64_t get = 0;         // GetObject (range GETs of object bytes)
  uint64_t put = 0;         // PutObject
  uint64_t head = 0;        // HeadObject and HeadBucket
  uint64_t list = 0;        // ListObjectsV2 pages
  uint64_t del = 0;         // DeleteObject
  uint64_t multipart = 0;   // CreateMultipartUpload, UploadPart, CompleteMultipartUpload, Abort
  uint64_t copy = 0;        // CopyObject (renames)
  uint64_t bytes_down = 0;  // object bytes received by GETs that succeeded
  uint64_t bytes_up = 0;    // object bytes sent by PUTs and parts that succeeded
  uint64_t retries = 0;     // attempts repeated after a transport error, 5xx or 429
  uint64_t errors = 0;      // requests that failed (after their retries); a HEAD's 404 is none
  // GetObject latency, milliseconds, of the requests that succeeded, retries and backoff
  // included (what a reader waits); 0 without GETs.
  double get_p50_ms = 0, get_p90_ms = 0, get_p99_ms = 0;

  uint64_t requests() const { return get + put + head + list + del + multipart + copy; }
};

// A storage that counts S3 requests. TakeS3Stats: the statistics since the last call, then reset;
// safe for concurrent use with the storage's other calls.
class S3StatsSource {
 public:
  virtual ~S3StatsSource() = default;
  virtual S3Stats TakeS3Stats() = 0;
};

// The S3 statistics of `storage`, looking through StorageWrappers around it; nullptr when no
// layer counts S3 requests.
S3StatsSource* S3StatsOf(Storage* storage);

}  // namespace dlio
