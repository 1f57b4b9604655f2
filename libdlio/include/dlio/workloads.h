// Built-in workload presets, runnable by name (`dlio-run --workload NAME`) and loadable by
// training codes and examples, so both share one set of parameters.
#pragma once

#include <string>
#include <vector>

#include "dlio/config.h"
#include "dlio/status.h"

namespace dlio {

struct WorkloadPresetInfo {
  std::string name;
  std::string description;
  std::string yaml;  // the preset in DLIO's YAML schema
};

// Every preset, sorted by name.
const std::vector<WorkloadPresetInfo>& WorkloadPresets();

// The preset's config (its YAML parsed over the defaults). NotFound lists the known names.
Result<WorkloadConfig> LoadWorkloadPreset(const std::string& name,
                                          std::vector<std::string>* warnings = nullptr);

// The config a run starts from, as dlio-run picks it: the file `config_file` when given, else the
// preset `workload` ("default" when empty). InvalidArgument when both are given.
Result<WorkloadConfig> LoadWorkload(const std::string& config_file, const std::string& workload,
                                    std::vector<std::string>* warnings = nullptr);

}  // namespace dlio
