// dlio_benchmark: dlio behind DLIO's own command line, so that tools that launch the Python
// DLIO (MLPerf Storage's mlpstorage) run dlio unchanged. docs/mlperf.md.
//
//   dlio_benchmark workload=unet3d_h100 ++workload.train.epochs=1 ++hydra.run.dir=out
//   mpirun -n 8 dlio_benchmark workload=unet3d_h100 ++hydra.run.dir=R
//   ++hydra.output_subdir=dlio_config
//       ++workload.dataset.data_folder=/data --config-dir=storage/configs/dlio
#include <cstdio>
#include <string>
#include <vector>

#include "dlio/config.h"
#include "dlio/registries.h"
#include "dlio/version.h"
#include "hydra_cli.h"
#include "run_common.h"
#include "run_workload.h"

namespace {

using dlio_run::Fail;
using dlio_run::kExitOk;
using dlio_run::kExitRunError;
using dlio_run::kExitUsage;

constexpr char kHelp[] =
    "dlio_benchmark: dlio with the Python DLIO's (Hydra) command line.\n"
    "\n"
    "  dlio_benchmark [--config-dir=DIR] [--config-name=NAME] [workload=WORKLOAD]\n"
    "                 [++workload.section.key=value ...] [++hydra.run.dir=DIR]\n"
    "                 [++hydra.output_subdir=SUBDIR] [hydra.*=value ...]\n"
    "\n"
    "The config is composed as Hydra composes DLIO's: DIR/NAME.yaml (NAME: config) names the\n"
    "default workload and run dir in its defaults list; the workload is "
    "DIR/workload/WORKLOAD.yaml,\n"
    "else dlio's built-in preset WORKLOAD (`dlio-run list workloads`); then the workload.*\n"
    "overrides (++, + or none) in order. Outputs (summary.json, per-rank stats, dlio.log) go to\n"
    "hydra.run.dir (default ./hydra_log/<model>/<date>-<time>), Hydra's config.yaml, hydra.yaml\n"
    "and overrides.yaml to its SUBDIR (default .hydra; null: none). Keys dlio does not know are\n"
    "ignored with a warning, as DLIO does (dlio-run refuses them). Other hydra.* overrides are\n"
    "accepted and recorded. Exit codes: 0 done, 1 run error, 2 bad command line or config.\n"
    "See docs/mlperf.md; dlio-run --help for dlio's own interface.\n";

int Main(int argc, char** argv) {
  dlio_run::SetProgramName("dlio_benchmark");
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto cl = dlio_run::ParseHydraCommandLine(args);
  if (!cl.ok()) return Fail(cl.status(), kExitUsage);
  if (cl->help) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  if (cl->version) {
    std::printf("dlio_benchmark (dlio %s)\n", dlio::kVersion);
    return kExitOk;
  }
  auto composed = dlio_run::ComposeHydraConfig(*cl);
  if (!composed.ok()) return Fail(composed.status(), kExitUsage);
  std::vector<std::string> warnings;
  auto config = dlio_run::ConfigFromComposition(*composed, &warnings);
  if (!config.ok()) return Fail(config.status(), kExitUsage);
  dlio::Registries registries;
  if (auto s = dlio::RegisterBuiltins(&registries); !s.ok()) return Fail(s, kExitRunError);
  if (auto s = config->Validate(); !s.ok()) return Fail(s, kExitUsage);
  if (auto s = dlio::ValidateCapabilities(*config, registries); !s.ok()) {
    return Fail(s, kExitUsage);
  }
  if (config->output.log_file.empty()) config->output.log_file = "dlio.log";
  dlio_run::RunFlags flags;  // --comm auto: MPI under mpirun, serial otherwise
  // DLIO generates into any folder (mlpstorage makes train/, valid/ and test/ first); --force
  // still never adopts, overwrites or deletes a file dlio did not write.
  flags.force = true;
  // DLIO writes no summary.json for a generate-only run (and mlpstorage's reportgen takes a folder
  // with one for a benchmark run).
  const auto& w = config->workflow;
  flags.write_outputs = w.train || w.checkpoint || w.evaluation || !w.generate_data;
  return dlio_run::RunConfig(flags, registries, *config, warnings, &argc, &argv, [&](int rank) {
    return rank == 0 ? dlio_run::WriteHydraFiles(*cl, *composed) : dlio::Status::OK();
  });
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
