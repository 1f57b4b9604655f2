// Choosing a Comm by name, and recognising a process started by an MPI launcher.
#include <cstdlib>
#include <memory>
#include <string>

#include "dlio/comm.h"

namespace dlio {
namespace {

// The variables launchers set in every rank's environment (the first one found is named in
// messages).
constexpr const char* kLauncherVariables[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                                              "MV2_COMM_WORLD_SIZE"};

const char* LauncherVariable() {
  for (const char* name : kLauncherVariables) {
    const char* value = std::getenv(name);
    if (value != nullptr && value[0] != '\0') return name;
  }
  return nullptr;
}

}  // namespace

bool LaunchedByMpi() { return LauncherVariable() != nullptr; }

Result<std::unique_ptr<Comm>> MakeComm(const std::string& name, int* argc, char*** argv) {
  if (name == "serial") return MakeSerialComm();
  if (name == "mpi") return MakeMpiComm(argc, argv);
  if (name != "auto") {
    return Status::InvalidArgument("comm '" + name + "' is not one of serial, mpi, auto");
  }
  const char* variable = LauncherVariable();
  if (variable == nullptr) return MakeSerialComm();
  if (!BuiltWithMpi()) {
    return Status::FailedPrecondition(
        std::string("started by an MPI launcher (") + variable + "=" + std::getenv(variable) +
        ") but this dlio is built without MPI (DLIO_WITH_MPI=OFF): every process would run the "
        "whole workload alone; rebuild with -DDLIO_WITH_MPI=ON, or choose the serial comm "
        "explicitly (dlio-run --comm serial)");
  }
  return MakeMpiComm(argc, argv);
}

}  // namespace dlio
