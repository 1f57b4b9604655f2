// The s3 storage's own options (storage.storage_options.*; docs/storage.md), declared as config
// keys by storage/s3/s3_keys.cc and parsed straight into this type, which the config holds in
// StorageConfig::backends and the factory reads from StorageOptions::backends. Empty strings fall
// back to the AWS_* environment variables (AWS_ENDPOINT_URL, AWS_REGION or AWS_DEFAULT_REGION,
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN).
#pragma once

#include <cstdint>
#include <string>

namespace dlio {

struct S3Options {
  std::string
      endpoint_url;    // http(s)://host[:port]; empty: AWS (https://s3.<region>.amazonaws.com)
  std::string region;  // empty: the environment's, else us-east-1
  std::string access_key_id, secret_access_key, session_token;
  bool force_path_style = true;  // http://host/bucket/key; false: http://bucket.host/key
  bool verify_tls = true;
  std::string ca_bundle;      // PEM file of the CAs trusted for https; empty: $AWS_CA_BUNDLE, else
                              // the system's
  uint64_t max_attempts = 5;  // per request, with exponential backoff on 5xx, 429, transport errors
  double connect_timeout_s = 10;   // per attempt, > 0
  double request_timeout_s = 300;  // whole attempt; 0 = none
  // An attempt moving fewer than low_speed_bytes_s bytes per second for low_speed_time_s seconds
  // is aborted and retried (a server that went silent); low_speed_time_s 0: no such limit.
  uint64_t low_speed_bytes_s = 1;
  uint64_t low_speed_time_s = 60;
  uint64_t part_size_mib = 8;  // multipart part size, MiB (S3's parts: 5 MiB to 5 GiB)
};

}  // namespace dlio
