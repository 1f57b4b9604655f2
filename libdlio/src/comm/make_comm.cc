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

namespace {

// auto: MPI when an MPI launcher started the process, else serial.
Result<std::unique_ptr<Comm>> MakeAutoComm(int* argc, char*** argv) {
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

struct CommKind {
  const char* name;
  Result<std::unique_ptr<Comm>> (*make)(int* argc, char*** argv);
};
constexpr CommKind kCommKinds[] = {
    {"serial", [](int*, char***) -> Result<std::unique_ptr<Comm>> { return MakeSerialComm(); }},
    {"mpi", &MakeMpiComm},
    {"auto", &MakeAutoComm},
};

}  // namespace

Result<std::unique_ptr<Comm>> MakeComm(const std::string& name, int* argc, char*** argv) {
  std::string known;
  for (const CommKind& kind : kCommKinds) {
    if (name == kind.name) return kind.make(argc, argv);
    known += std::string(known.empty() ? "" : ", ") + kind.name;
  }
  return Status::InvalidArgument("comm '" + name + "' is not one of " + known);
}

}  // namespace dlio
