// The storage section of the key table: the backends, the tiered cache, s3 (docs/configuration.md).
#include "config/config_table.h"
#include "config/key_builders.h"

namespace dlio::config_internal {
namespace {

// AIStore's S3 endpoint when storage.storage_options.endpoint_url does not name one.
constexpr const char* kAistoreEndpoint = "http://localhost:8080/s3";

std::string StorageTypeSetter(WorkloadConfig& c, const std::string& value, std::string* note) {
  if (value == "local_fs") {
    *note = "storage.storage_type 'local_fs' (DLIO) maps to dlio's 'posix'";
    return "posix";
  }
  if (value == "aistore") {
    // AIStore serves the S3 API under /s3 of its proxy; DLIO's AIStore default is localhost:8080.
    if (c.storage.s3_endpoint_url.empty()) c.storage.s3_endpoint_url = kAistoreEndpoint;
    *note = "storage.storage_type 'aistore' (DLIO) maps to dlio's 's3' through AIStore's S3 API";
    return "s3";
  }
  return value;
}

}  // namespace

void AddStorageKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  add(String(
      "storage.storage_type", DLIO_FIELD(std::string, storage.storage_type),
      "storage registry name: posix (DLIO's local_fs maps here), memory, slow, mpiio, tiered, s3 "
      "(DLIO's aistore maps here, its endpoint_url defaulting to http://localhost:8080/s3); "
      "others are checked at run time",
      kNonEmpty, StorageTypeSetter));
  add(String("storage.storage_root", DLIO_FIELD(std::string, storage.storage_root),
             "prefix of relative data and checkpoint folders (DLIO's namespace)"));
  add(String("storage.slow_inner", DLIO_FIELD(std::string, storage.slow_inner),
             "slow: the storage it wraps"));
  add(Double("storage.slow_latency_us", DLIO_FIELD(double, storage.slow_latency_us), {0, 60e6},
             "slow: mean latency added to every read/write, microseconds"));
  add(Double("storage.slow_latency_stdev_us", DLIO_FIELD(double, storage.slow_latency_stdev_us),
             {0, 60e6}, "slow: normal jitter of that latency, microseconds (clipped at 0)"));
  add(Double("storage.slow_bandwidth_mib_s", DLIO_FIELD(double, storage.slow_bandwidth_mib_s),
             {0, HUGE_VAL}, "slow: bandwidth cap in MiB/s (2^20 bytes/s); 0 = unlimited"));
  add(Bool("storage.mpiio_collective", DLIO_FIELD(bool, storage.mpiio_collective),
           "mpiio: collective reads (MPI_File_read_at_all) of the data files, opened on all "
           "ranks; needs one shared file, reader.pipeline sync with read_threads <= 1, drop_last "
           "(docs/scaling.md)"));
  add(String("storage.tiered_source", DLIO_FIELD(std::string, storage.tiered_source),
             "tiered: the storage whose files it caches (posix, slow, mpiio, ...)"));
  add(CacheTiers("storage.tiers", DLIO_FIELD(std::vector<CacheTierConfig>, storage.tiers),
                 "tiered: the cache levels, fastest first, each {type: memory or directory, path "
                 "(directory: made 0700 when missing; dlio writes only in its folder `.dlio-cache` "
                 "there), capacity_bytes (e.g. 4GiB), threads (copy threads, default 1)} "
                 "(docs/caching.md)"));
  add(Choice("storage.cache_policy", DLIO_FIELD(std::string, storage.cache_policy),
             {"monarch", "lru", "clairvoyant", "clairvoyant_static"},
             "tiered: monarch (copy on first read, no eviction), lru (evict least recently "
             "used), clairvoyant (prefetch the sampler's coming files, evict the farthest next "
             "use), clairvoyant_static (NoPFS: place the most used coming files, no eviction)"));
  add(Choice("storage.cache_scope", DLIO_FIELD(std::string, storage.cache_scope),
             {"node", "process"},
             "tiered: node (the ranks of a node share one cache, served to them by the node's "
             "first rank: no file copied twice a node) or process (each rank its own cache) "
             "(docs/caching.md)"));
  // s3 (docs/storage.md): DLIO's storage_options names, and dlio's s3_* tuning beside them;
  // the map's other keys are accepted (with a warning) as DLIO's.
  add(Unused("storage.storage_options",
             "DLIO: object-store options map; the s3 storage uses the keys below, any other "
             "key in it is accepted"));
  add(String("storage.storage_options.endpoint_url",
             DLIO_FIELD(std::string, storage.s3_endpoint_url),
             "s3: http(s)://host[:port] of the S3 service; empty = $AWS_ENDPOINT_URL, else AWS"));
  add(String("storage.storage_options.region", DLIO_FIELD(std::string, storage.s3_region),
             "s3: region signed into requests; empty = $AWS_REGION, else us-east-1"));
  add(String("storage.storage_options.access_key_id",
             DLIO_FIELD(std::string, storage.s3_access_key_id),
             "s3: access key id; empty = $AWS_ACCESS_KEY_ID"));
  add(String("storage.storage_options.secret_access_key",
             DLIO_FIELD(std::string, storage.s3_secret_access_key),
             "s3: secret access key; empty = $AWS_SECRET_ACCESS_KEY (config.json shows "
             "<redacted>)",
             kSecret));
  add(String("storage.storage_options.session_token",
             DLIO_FIELD(std::string, storage.s3_session_token),
             "s3: session token of temporary credentials; empty = $AWS_SESSION_TOKEN "
             "(config.json shows <redacted>)",
             kSecret));
  add(Bool("storage.storage_options.s3_force_path_style",
           DLIO_FIELD(bool, storage.s3_force_path_style),
           "s3: path-style URLs (host/bucket/key); false = virtual-host (bucket.host/key)"));
  add(Bool("storage.storage_options.s3_verify_tls", DLIO_FIELD(bool, storage.s3_verify_tls),
           "s3: verify the server's TLS certificate and host name"));
  add(String("storage.storage_options.s3_ca_bundle", DLIO_FIELD(std::string, storage.s3_ca_bundle),
             "s3: PEM file of the CAs to trust for https (a private CA); empty = $AWS_CA_BUNDLE, "
             "else the system's"));
  add(Uint("storage.storage_options.s3_max_attempts", DLIO_FIELD(uint64_t, storage.s3_max_attempts),
           {1, 100},
           "s3: attempts per request (backoff from 50 ms, doubling) on 5xx, 429, "
           "503 SlowDown and dropped connections"));
  add(Double("storage.storage_options.s3_connect_timeout_s",
             DLIO_FIELD(double, storage.s3_connect_timeout_s), {0, 3600, true},
             "s3: connect timeout per attempt, seconds"));
  add(Double("storage.storage_options.s3_request_timeout_s",
             DLIO_FIELD(double, storage.s3_request_timeout_s), {0, 86400},
             "s3: whole-request timeout per attempt, seconds; 0 = none"));
  add(Uint("storage.storage_options.s3_low_speed_bytes_s",
           DLIO_FIELD(uint64_t, storage.s3_low_speed_bytes_s), {1, kGiB},
           "s3: an attempt moving fewer bytes per second than this for s3_low_speed_time_s is "
           "aborted and retried (a server gone silent)"));
  add(Uint("storage.storage_options.s3_low_speed_time_s",
           DLIO_FIELD(uint64_t, storage.s3_low_speed_time_s), {0, 3600},
           "s3: seconds below s3_low_speed_bytes_s that abort an attempt; 0 = no low-speed limit"));
  add(Uint("storage.storage_options.s3_part_size_mib",
           DLIO_FIELD(uint64_t, storage.s3_part_size_mib), {5, 5120},
           "s3: multipart upload part size, MiB (objects larger than one part are uploaded in "
           "parts)"));
  add(Unused("storage.fsspec_plugin", "DLIO: fsspec backend name"));
  add(Unused("storage.fsspec_extra_params", "DLIO: fsspec parameters map"));
}

}  // namespace dlio::config_internal
