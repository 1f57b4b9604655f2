#include "dlio/config.h"
#include "dlio/storage.h"
#include "storage/capabilities.h"
#include "storage/mpiio_storage.h"
#include "storage/s3/s3_storage.h"
#include "storage/slow_options.h"
#include "storage/slow_storage.h"

namespace dlio {
namespace {

using storage_internal::kMemoryCapabilities;
using storage_internal::kMpiioCapabilities;
using storage_internal::kPosixCapabilities;
using storage_internal::kStdioCapabilities;

// The s3 storage's own keys (storage/s3/s3_keys.cc), parsed into its S3Options.
constexpr const char* kS3KeySection = "storage.storage_options.";
// The slow storage's own keys (storage/slow_keys.cc), parsed into its SlowOptions.
constexpr const char* kSlowKeySection = "storage.slow_";
// The mpiio storage's own key (storage/mpiio_keys.cc), parsed into its MpiioOptions.
constexpr const char* kMpiioKeySection = "storage.mpiio_";

// A capability declaration that does not depend on the options.
StorageCapabilitiesFn Declares(StorageCapabilities capabilities) {
  return [capabilities](const StorageOptions&, const StorageRegistry&) { return capabilities; };
}

// slow declares what the storage it wraps declares (minus shared writes); nothing when that
// storage is unknown or itself slow (the factory refuses both).
StorageCapabilities SlowDeclares(const StorageOptions& options, const StorageRegistry& storages) {
  const SlowOptions defaults;  // a section never set holds its defaults (inner: posix)
  const SlowOptions* set = options.backends.Find<SlowOptions>();
  const std::string& wrapped = (set != nullptr ? set : &defaults)->inner;
  if (wrapped == "slow" || wrapped.empty()) return {};
  StorageOptions inner = options;
  inner.name = wrapped;
  auto capabilities = StorageCapabilitiesFor(inner, storages);
  return capabilities.ok() ? storage_internal::SlowCapabilities(*capabilities)
                           : StorageCapabilities{};
}

Status ValidateSlow(const WorkloadConfig& c) {
  const SlowOptions* set = c.storage.backends.Find<SlowOptions>();
  if (set != nullptr && set->inner.empty()) {  // never set: the default, posix
    return Status::InvalidArgument(
        "storage.slow_inner must not be empty when storage.storage_type is 'slow'");
  }
  return Status::OK();
}

}  // namespace

Status RegisterBuiltinStorages(StorageRegistry* storages) {
  DLIO_RETURN_NOT_OK(storages->Register(
      {"posix", "POSIX files (pread/pwrite), optionally O_DIRECT",
       "reader.odirect (O_DIRECT reads, 4096-byte alignment)",
       [](const StorageOptions& options, const StorageBuildEnv&)
           -> Result<std::unique_ptr<Storage>> { return NewPosixStorage(options); },
       Declares(kPosixCapabilities)}));
  DLIO_RETURN_NOT_OK(storages->Register(
      {"stdio", "C stdio streams (fopen, fread/fwrite, fclose), traced as STDIO", "",
       [](const StorageOptions&, const StorageBuildEnv&) -> Result<std::unique_ptr<Storage>> {
         return NewStdioStorage();
       },
       Declares(kStdioCapabilities)}));
  DLIO_RETURN_NOT_OK(storages->Register(
      {"memory", "in-memory files (tests, no disk)", "",
       [](const StorageOptions&, const StorageBuildEnv&) -> Result<std::unique_ptr<Storage>> {
         return NewMemoryStorage();
       },
       Declares(kMemoryCapabilities)}));
  DLIO_RETURN_NOT_OK(storages->Register(
      {"slow",
       "adds seeded latency per read/write to another storage",
       "storage.slow_inner, storage.slow_latency_us, storage.slow_latency_stdev_us, "
       "storage.slow_bandwidth_mib_s (seeded by train.seed)",
       [](const StorageOptions& options,
          const StorageBuildEnv& env) -> Result<std::unique_ptr<Storage>> {
         const SlowOptions slow = options.backends.Value<SlowOptions>();
         if (slow.inner == "slow" || slow.inner.empty()) {
           return Status::InvalidArgument("storage.slow_inner must name another storage, got '" +
                                          slow.inner + "'");
         }
         if (slow.latency_us < 0 || slow.latency_stdev_us < 0 || slow.bandwidth_mib_s < 0) {
           return Status::InvalidArgument(
               "storage slow_latency_us, slow_latency_stdev_us and slow_bandwidth_mib_s must be "
               ">= 0");
         }
         StorageOptions inner_options = options;
         inner_options.name = slow.inner;
         // A null tracer inside: only the outer layer records events.
         DLIO_ASSIGN_OR_RETURN(std::unique_ptr<Storage> inner,
                               MakeStorage(inner_options, env.storages, env.clock, nullptr));
         return NewSlowStorage(std::move(inner), options);
       },
       &SlowDeclares,
       &ValidateSlow,
       {kSlowKeySection}}));
  // Registered even without MPI, so the name is known and says how to enable it.
  DLIO_RETURN_NOT_OK(storages->Register(
      {"mpiio",
       "MPI-IO files (MPI_File_read_at, or MPI_File_read_at_all when collective); needs MPI",
       "storage.mpiio_collective (collective reads of the shared data file)",
       [](const StorageOptions& options, const StorageBuildEnv&)
           -> Result<std::unique_ptr<Storage>> { return NewMpiioStorage(options); },
       Declares(kMpiioCapabilities),
       {},
       {kMpiioKeySection}}));
  DLIO_RETURN_NOT_OK(storages->Register(
      {"s3",
       "S3 objects over HTTP(S) (range GET, PUT, multipart upload), traced as S3",
       "storage.storage_options.* (endpoint_url, region, access_key_id, secret_access_key, ...; "
       "docs/storage.md)",
       [](const StorageOptions& options, const StorageBuildEnv&)
           -> Result<std::unique_ptr<Storage>> { return NewS3Storage(options); },
       Declares(StorageCapabilities{}),
       {},
       {kS3KeySection}}));
  return Status::OK();
}

}  // namespace dlio
