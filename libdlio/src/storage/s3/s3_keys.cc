// The s3 storage's config keys (storage.storage_options.*, DLIO's names and dlio's s3_* tuning
// beside them; docs/storage.md): declared here, beside the storage, and parsed straight into its
// S3Options in the config's StorageConfig::backends. The config module compiles this file into
// its key table (config/sources.cmake), as it parses a config before any registry exists; the
// storage.storage_options map's other keys are accepted (with a warning) as DLIO's.
#include "config/key_builders.h"
#include "storage/s3/s3_options.h"

#define S3_FIELD(T, member) DLIO_BACKEND_FIELD(S3Options, T, member)

namespace dlio::config_internal {

void AddS3Keys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  add(String("storage.storage_options.endpoint_url", S3_FIELD(std::string, endpoint_url),
             "s3: http(s)://host[:port] of the S3 service; empty = $AWS_ENDPOINT_URL, else AWS"));
  add(String("storage.storage_options.region", S3_FIELD(std::string, region),
             "s3: region signed into requests; empty = $AWS_REGION, else us-east-1"));
  add(String("storage.storage_options.access_key_id", S3_FIELD(std::string, access_key_id),
             "s3: access key id; empty = $AWS_ACCESS_KEY_ID"));
  add(String("storage.storage_options.secret_access_key", S3_FIELD(std::string, secret_access_key),
             "s3: secret access key; empty = $AWS_SECRET_ACCESS_KEY (config.json shows "
             "<redacted>)",
             kSecret));
  add(String("storage.storage_options.session_token", S3_FIELD(std::string, session_token),
             "s3: session token of temporary credentials; empty = $AWS_SESSION_TOKEN "
             "(config.json shows <redacted>)",
             kSecret));
  add(Bool("storage.storage_options.s3_force_path_style", S3_FIELD(bool, force_path_style),
           "s3: path-style URLs (host/bucket/key); false = virtual-host (bucket.host/key)"));
  add(Bool("storage.storage_options.s3_verify_tls", S3_FIELD(bool, verify_tls),
           "s3: verify the server's TLS certificate and host name"));
  add(String("storage.storage_options.s3_ca_bundle", S3_FIELD(std::string, ca_bundle),
             "s3: PEM file of the CAs to trust for https (a private CA); empty = $AWS_CA_BUNDLE, "
             "else the system's"));
  add(Uint("storage.storage_options.s3_max_attempts", S3_FIELD(uint64_t, max_attempts), {1, 100},
           "s3: attempts per request (backoff from 50 ms, doubling) on 5xx, 429, "
           "503 SlowDown and dropped connections"));
  add(Double("storage.storage_options.s3_connect_timeout_s", S3_FIELD(double, connect_timeout_s),
             {0, 3600, true}, "s3: connect timeout per attempt, seconds"));
  add(Double("storage.storage_options.s3_request_timeout_s", S3_FIELD(double, request_timeout_s),
             {0, 86400}, "s3: whole-request timeout per attempt, seconds; 0 = none"));
  add(Uint("storage.storage_options.s3_low_speed_bytes_s", S3_FIELD(uint64_t, low_speed_bytes_s),
           {1, kGiB},
           "s3: an attempt moving fewer bytes per second than this for s3_low_speed_time_s is "
           "aborted and retried (a server gone silent)"));
  add(Uint("storage.storage_options.s3_low_speed_time_s", S3_FIELD(uint64_t, low_speed_time_s),
           {0, 3600},
           "s3: seconds below s3_low_speed_bytes_s that abort an attempt; 0 = no low-speed limit"));
  add(Uint("storage.storage_options.s3_part_size_mib", S3_FIELD(uint64_t, part_size_mib), {5, 5120},
           "s3: multipart upload part size, MiB (objects larger than one part are uploaded in "
           "parts)"));
}

#undef S3_FIELD

}  // namespace dlio::config_internal
