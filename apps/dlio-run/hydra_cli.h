// DLIO's Hydra command line for `dlio_benchmark`: `workload=NAME ++workload.k=v ++hydra.run.dir=D
// --config-dir=C`, composed as Hydra composes it (the primary config's defaults list picks the
// workload, then <config-dir>/workload/NAME.yaml, then the overrides), and the files Hydra writes
// into the run directory (<output_subdir>/{config,hydra,overrides}.yaml). docs/mlperf.md.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dlio/config.h"
#include "dlio/status.h"

namespace dlio_run {

struct HydraCommandLine {
  std::string config_dir;                    // --config-dir / -cd; empty: dlio's built-ins only
  std::string config_name;                   // --config-name / -cn; empty: "config"
  std::string workload;                      // workload=NAME; empty: the primary config's default
  std::vector<std::string> task_overrides;   // every override but hydra.*, as given
  std::vector<std::string> hydra_overrides;  // the hydra.* overrides, as given
  // The workload.* overrides in order: (key below workload, value text).
  std::vector<std::pair<std::string, std::string>> workload_sets;
  std::optional<std::string> run_dir;        // hydra.run.dir
  std::optional<std::string> output_subdir;  // hydra.output_subdir ("null": write none)
  bool help = false;
  bool version = false;
};

// Parses the arguments after the program name. InvalidArgument naming the argument for what
// Hydra would refuse too (a flag without its value, `~key` deletions, keys outside workload.* and
// hydra.*) and for Hydra modes dlio does not emulate (--multirun, --cfg, ...).
dlio::Result<HydraCommandLine> ParseHydraCommandLine(const std::vector<std::string>& args);

struct HydraComposition {
  std::string workload_name;  // "unet3d_h100"
  std::string source;         // the workload file, or "built-in preset 'NAME'"
  YAML::Node workload;        // the composed `workload:` section, every key as given
  std::string run_dir;        // hydra.run.dir, interpolated
  std::string output_subdir;  // empty: Hydra's files are not written
};

// Composes the config as Hydra does: the primary config <config-dir>/<config-name>.yaml (dlio's
// copy of DLIO's configs/config.yaml when absent) chooses the default workload and run dir; the
// workload is <config-dir>/workload/NAME.yaml, else dlio's built-in preset NAME; then the
// workload.* overrides in order. The run dir's ${now:FORMAT} and ${workload.a.b} are resolved.
// NotFound / InvalidArgument naming the file, workload or override.
dlio::Result<HydraComposition> ComposeHydraConfig(const HydraCommandLine& cl);

// dlio's config from the composition: keys dlio does not know are dropped with one warning each
// (DLIO warns and goes on; `dlio-run` refuses them), then parsed and validated as dlio-run's;
// output.folder is the run dir unless the workload sets it, the name is the workload's.
dlio::Result<dlio::WorkloadConfig> ConfigFromComposition(const HydraComposition& composed,
                                                         std::vector<std::string>* warnings);

// Hydra's three files in <run_dir>/<output_subdir>/ (nothing when output_subdir is empty):
// config.yaml (`workload:` the composed section), overrides.yaml (the task overrides as given),
// hydra.yaml (the `hydra:` section: run.dir, output_subdir, overrides, job, runtime choices).
// Each is written to a temporary name and renamed.
dlio::Status WriteHydraFiles(const HydraCommandLine& cl, const HydraComposition& composed);

}  // namespace dlio_run
