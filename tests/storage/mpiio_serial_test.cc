// The mpiio storage in a process without MPI: a clear error, never a crash.
#include <catch2/catch.hpp>

#include "dlio/comm.h"
#include "dlio/registries.h"
#include "dlio/storage.h"

namespace dlio {
namespace {

TEST_CASE("mpiio: known by name, and says what it needs when MPI is not there") {
  Registries registries;
  REQUIRE(RegisterBuiltinStorages(&registries.storages).ok());
  REQUIRE(registries.storages.Contains("mpiio"));
  REQUIRE_FALSE(MpiInitialized());
  StorageOptions options;
  options.name = "mpiio";
  auto storage = MakeStorage(options, registries.storages, SystemClock(), nullptr);
  REQUIRE_FALSE(storage.ok());
  if (BuiltWithMpi()) {
    CHECK(storage.status().code() == StatusCode::kFailedPrecondition);
    CHECK_THAT(storage.status().message(), Catch::Contains("MPI initialized"));
    CHECK_THAT(storage.status().message(), Catch::Contains("mpiexec"));
  } else {
    CHECK(storage.status().code() == StatusCode::kUnimplemented);
    CHECK_THAT(storage.status().message(), Catch::Contains("DLIO_WITH_MPI"));
  }
}

}  // namespace
}  // namespace dlio
