// main() of the MPI test binaries: initializes MPI through dlio's MpiComm, runs the Catch2 session
// on every rank, and exits every rank with the worst result of all, so a failure on any rank fails
// the test however mpiexec combines exit codes.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <memory>
#include <vector>

#include "mpi_test_util.h"

namespace dlio::testing {
namespace {
Comm* g_comm = nullptr;  // the test process's Comm: set once in main, before any test runs
}  // namespace

Comm* MpiTestComm() { return g_comm; }

}  // namespace dlio::testing

int main(int argc, char** argv) {
  auto comm = dlio::MakeMpiComm(&argc, &argv);
  if (!comm.ok()) {
    std::fprintf(stderr, "MakeMpiComm: %s\n", comm.status().ToString().c_str());
    return 1;
  }
  dlio::testing::g_comm = comm->get();
  const int result = Catch::Session().run(argc, argv);
  std::vector<double> worst{static_cast<double>(result)};
  if (!(*comm)->AllReduceMax(&worst).ok()) return 1;
  dlio::testing::g_comm = nullptr;
  comm->reset();  // finalizes MPI
  return static_cast<int>(worst[0]);
}
