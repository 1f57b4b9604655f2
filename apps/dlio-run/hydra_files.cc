// The dlio config from a Hydra composition, and Hydra's files in the run directory.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "dlio/str_cat.h"
#include "dlio/version.h"
#include "hydra_cli.h"

namespace dlio_run {
namespace {

namespace fs = std::filesystem;

// dlio's keys, with the sections that hold them ("reader" for "reader.batch_size").
class KnownKeys {
 public:
  KnownKeys() {
    for (const auto& k : dlio::ConfigKeyDocs()) keys_.insert(k.key);
  }
  bool Known(const std::string& path) const { return keys_.count(path) > 0; }
  bool HasChildren(const std::string& path) const {
    auto it = keys_.lower_bound(path + ".");
    return it != keys_.end() && it->rfind(path + ".", 0) == 0;
  }

 private:
  std::set<std::string> keys_;
};

// The older section name DLIO still reads.
std::string Canonical(const std::string& path) {
  return path.rfind("data_reader", 0) == 0 ? "reader" + path.substr(11) : path;
}

// `node` without the keys dlio does not know, one warning each. A map under a known key with
// known sub-keys (storage.storage_options) is filtered too; other known keys keep their value
// whole (a distribution's {type, mean, ...} is the parser's to check).
YAML::Node DropUnknown(const YAML::Node& node, const std::string& path, const KnownKeys& known,
                       const std::string& source, std::vector<std::string>* warnings) {
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& item : node) {
    const std::string key = item.first.Scalar();
    const std::string full = path.empty() ? key : path + "." + key;
    const std::string canonical = Canonical(full);
    if (item.second.IsMap() && known.HasChildren(canonical)) {
      out[key] = DropUnknown(item.second, full, known, source, warnings);
    } else if (known.Known(canonical)) {
      out[key] = item.second;
    } else if (warnings != nullptr) {
      warnings->push_back(dlio::StrCat("unknown key 'workload.", full, "' (in ", source,
                                       "): ignored, as DLIO ignores it (dlio-run refuses it)"));
    }
  }
  return out;
}

std::string Emit(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return std::string(out.c_str()) + "\n";
}

dlio::Status WriteAtomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp." + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) return dlio::Status::IOError("cannot write ", tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return dlio::Status::IOError("cannot rename to ", path.string());
  }
  return dlio::Status::OK();
}

YAML::Node Sequence(const std::vector<std::string>& items) {
  YAML::Node seq(YAML::NodeType::Sequence);
  for (const auto& s : items) seq.push_back(s);
  return seq;
}

// The `hydra:` section Hydra saves: what was run where, and how it was composed.
YAML::Node HydraSection(const HydraCommandLine& cl, const HydraComposition& c) {
  YAML::Node h;
  h["run"]["dir"] = c.run_dir;
  h["mode"] = "RUN";
  h["output_subdir"] = c.output_subdir;
  std::vector<std::string> hydra_overrides = cl.hydra_overrides;
  hydra_overrides.push_back("hydra.mode=RUN");
  h["overrides"]["hydra"] = Sequence(hydra_overrides);
  h["overrides"]["task"] = Sequence(cl.task_overrides);
  h["job"]["name"] = "dlio_benchmark";
  h["job"]["config_name"] = cl.config_name.empty() ? "config" : cl.config_name;
  std::error_code ec;
  h["runtime"]["version"] = std::string("dlio ") + dlio::kVersion;
  h["runtime"]["cwd"] = fs::current_path(ec).string();
  h["runtime"]["output_dir"] = fs::absolute(c.run_dir, ec).string();
  h["runtime"]["choices"]["workload"] = c.workload_name;
  h["runtime"]["config_sources"] =
      Sequence({cl.config_dir.empty() ? "dlio built-in presets" : cl.config_dir, c.source});
  return h;
}

}  // namespace

dlio::Result<dlio::WorkloadConfig> ConfigFromComposition(const HydraComposition& composed,
                                                         std::vector<std::string>* warnings) {
  const KnownKeys known;
  YAML::Node wrapped;
  wrapped["workload"] = DropUnknown(composed.workload, "", known, composed.source, warnings);
  const bool sets_folder = composed.workload["output"] && composed.workload["output"]["folder"];
  const bool sets_name = static_cast<bool>(composed.workload["name"]);
  DLIO_ASSIGN_OR_RETURN(
      dlio::WorkloadConfig config,
      dlio::ParseConfig(Emit(wrapped),
                        "workload '" + composed.workload_name + "' (" + composed.source +
                            " with the overrides; lines of the composed config)",
                        dlio::WorkloadConfig(), warnings));
  if (!sets_name) config.name = composed.workload_name;
  if (!sets_folder) config.output.folder = composed.run_dir;
  return config;
}

dlio::Status WriteHydraFiles(const HydraCommandLine& cl, const HydraComposition& composed) {
  if (composed.output_subdir.empty()) return dlio::Status::OK();
  const fs::path dir = fs::path(composed.run_dir) / composed.output_subdir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return dlio::Status::IOError("cannot create ", dir.string(), ": ", ec.message());
  YAML::Node config;
  config["workload"] = composed.workload;
  YAML::Node hydra;
  hydra["hydra"] = HydraSection(cl, composed);
  DLIO_RETURN_NOT_OK(WriteAtomically(dir / "config.yaml", Emit(config)));
  DLIO_RETURN_NOT_OK(WriteAtomically(dir / "hydra.yaml", Emit(hydra)));
  return WriteAtomically(dir / "overrides.yaml", Emit(Sequence(cl.task_overrides)));
}

}  // namespace dlio_run
