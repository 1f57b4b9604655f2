// The storage section of the key table: the backends, the tiered cache, and where the s3
// storage's own section (storage/s3/s3_keys.cc) goes (docs/configuration.md).
#include "config/config_table.h"
#include "config/key_builders.h"

namespace dlio::config_internal {
namespace {

// AIStore's S3 endpoint when storage.storage_options.endpoint_url does not name one.
constexpr const char* kAistoreEndpoint = "http://localhost:8080/s3";
constexpr const char* kEndpointKey = "storage.storage_options.endpoint_url";

std::string StorageTypeSetter(WorkloadConfig& c, const std::string& value, std::string* note) {
  if (value == "local_fs") {
    *note = "storage.storage_type 'local_fs' (DLIO) maps to dlio's 'posix'";
    return "posix";
  }
  if (value == "aistore") {
    // AIStore serves the S3 API under /s3 of its proxy; DLIO's AIStore default is localhost:8080.
    // The endpoint is the s3 storage's key (storage/s3/s3_keys.cc), reached through the table.
    std::string& endpoint = FindKey(kEndpointKey)->string_ref(c);
    if (endpoint.empty()) endpoint = kAistoreEndpoint;
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
  AddSlowKeys(t);    // the slow storage's own section (storage/slow_keys.cc)
  AddMpiioKeys(t);   // the mpiio storage's own key (storage/mpiio_keys.cc)
  AddTieredKeys(t);  // the tiered storage's own section (cache/tiered_keys.cc)
  // s3 (docs/storage.md): DLIO's storage_options names, and dlio's s3_* tuning beside them;
  // the map's other keys are accepted (with a warning) as DLIO's.
  add(Unused("storage.storage_options",
             "DLIO: object-store options map; the s3 storage uses the keys below, any other "
             "key in it is accepted"));
  AddS3Keys(t);  // the s3 storage's own section (storage/s3/s3_keys.cc)
  add(Unused("storage.fsspec_plugin", "DLIO: fsspec backend name"));
  add(Unused("storage.fsspec_extra_params", "DLIO: fsspec parameters map"));
}

}  // namespace dlio::config_internal
