#include "hydra_cli.h"

#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "dlio/str_cat.h"
#include "dlio/workloads.h"

namespace dlio_run {
namespace {

namespace fs = std::filesystem;

// DLIO's configs/config.yaml, used when --config-dir has no primary config of that name.
constexpr char kBuiltinRunDir[] =
    "./hydra_log/${workload.model.name}/${now:%Y-%m-%d}-${now:%H-%M-%S}";
constexpr char kHydraOutputSubdir[] = ".hydra";  // Hydra's default hydra.output_subdir

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Hydra's value grammar quotes strings with spaces: 'a b' or "a b".
std::string Unquote(const std::string& v) {
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) {
    return v.substr(1, v.size() - 2);
  }
  return v;
}

// `--flag=value` or `--flag value` for any of `names`; true when args[*i] is one (then *i points
// at its last argument).
dlio::Result<bool> TakeFlag(const std::vector<std::string>& args, size_t* i,
                            const std::vector<std::string>& names, std::string* value) {
  const std::string& a = args[*i];
  for (const auto& n : names) {
    if (StartsWith(a, n + "=")) {
      *value = a.substr(n.size() + 1);
      return true;
    }
    if (a == n) {
      if (*i + 1 >= args.size()) return dlio::Status::InvalidArgument(n, " needs a value");
      *value = args[++*i];
      return true;
    }
  }
  return false;
}

dlio::Status AddOverride(const std::string& a, HydraCommandLine* cl) {
  const size_t eq = a.find('=');
  if (StartsWith(a, "~") || eq == std::string::npos) {
    return dlio::Status::InvalidArgument(
        "unexpected argument '", a,
        "' (dlio_benchmark takes workload=NAME, ++workload.section.key=value and hydra.* "
        "overrides; `~key` deletions are not supported)");
  }
  std::string key = a.substr(0, eq);
  const std::string value = Unquote(a.substr(eq + 1));
  key.erase(0, StartsWith(key, "++") ? 2 : StartsWith(key, "+") ? 1 : 0);
  if (StartsWith(key, "hydra.") || StartsWith(key, "hydra/")) {
    cl->hydra_overrides.push_back(a);
    if (key == "hydra.run.dir") cl->run_dir = value;
    if (key == "hydra.output_subdir") cl->output_subdir = value;
    return dlio::Status::OK();
  }
  if (key == "workload") {
    cl->workload = value;
  } else if (StartsWith(key, "workload.") && key.size() > 9) {
    cl->workload_sets.emplace_back(key.substr(9), value);
  } else {
    return dlio::Status::InvalidArgument(
        "override '", a, "': dlio_benchmark's config has only workload and hydra (use ++workload.",
        key, "=...)");
  }
  cl->task_overrides.push_back(a);
  return dlio::Status::OK();
}

dlio::Result<YAML::Node> LoadYamlFile(const std::string& path) {
  try {
    return YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return dlio::Status::InvalidArgument(path, ": ", e.what());
  }
}

// The workload the primary config's defaults list names (`- workload: NAME`), empty when none.
std::string DefaultWorkload(const YAML::Node& primary) {
  const YAML::Node defaults = primary["defaults"];
  if (!defaults || !defaults.IsSequence()) return "";
  for (const auto& item : defaults) {
    if (item.IsMap() && item["workload"] && item["workload"].IsScalar()) {
      return item["workload"].Scalar();
    }
  }
  return "";
}

dlio::Result<YAML::Node> LoadWorkloadNode(const std::string& config_dir, const std::string& name,
                                          std::string* source) {
  const fs::path file = fs::path(config_dir) / "workload" / (name + ".yaml");
  std::error_code ec;
  YAML::Node node;
  if (!config_dir.empty() && fs::is_regular_file(file, ec)) {
    *source = file.string();
    DLIO_ASSIGN_OR_RETURN(node, LoadYamlFile(file.string()));
  } else {
    const dlio::WorkloadPresetInfo* preset = nullptr;
    for (const auto& p : dlio::WorkloadPresets()) {
      if (p.name == name) preset = &p;
    }
    if (preset == nullptr) {
      return dlio::Status::NotFound(
          "workload '", name, "': no ",
          config_dir.empty() ? std::string("--config-dir given") : file.string(),
          " and no built-in preset of that name (see `dlio-run list workloads`)");
    }
    *source = "built-in preset '" + name + "'";
    node = YAML::Load(preset->yaml);
    if (node.IsMap() && node["workload"] && node.size() == 1) node = node["workload"];
    // A preset's output.folder is dlio-run's layout; here the outputs go to hydra.run.dir.
    if (node.IsMap() && node["output"] && node["output"].IsMap()) node["output"].remove("folder");
  }
  if (node.IsMap() && node["workload"] && node.size() == 1) node = node["workload"];
  if (node.IsNull()) node = YAML::Node(YAML::NodeType::Map);
  if (!node.IsMap()) return dlio::Status::InvalidArgument(*source, ": not a map of sections");
  return node;
}

// Sets `path` (a.b.c) in `root` to `value`, making the maps on the way.
dlio::Status SetPath(YAML::Node root, const std::string& path, const YAML::Node& value) {
  std::vector<std::string> parts;
  std::stringstream in(path);
  for (std::string p; std::getline(in, p, '.');) parts.push_back(p);
  YAML::Node cur = root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i].empty()) break;
    if (!cur[parts[i]] || !cur[parts[i]].IsMap()) cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
    cur.reset(cur[parts[i]]);
  }
  if (parts.empty() || parts.back().empty()) {
    return dlio::Status::InvalidArgument("override 'workload.", path, "': empty key");
  }
  cur[parts.back()] = value;
  return dlio::Status::OK();
}

YAML::Node ParseValue(const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception&) {
    return YAML::Node(text);  // a string with YAML punctuation, taken literally
  }
}

std::string Now(const std::string& format) {
  const time_t t = std::time(nullptr);
  struct tm local;
  localtime_r(&t, &local);
  char buf[256];
  const size_t n = std::strftime(buf, sizeof buf, format.c_str(), &local);
  return std::string(buf, n);
}

// ${now:FORMAT} and ${workload.a.b} (a scalar of the composed workload), as Hydra resolves them.
dlio::Result<std::string> Interpolate(const std::string& text, const YAML::Node& workload) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t open = text.find("${", pos);
    if (open == std::string::npos) break;
    const size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    out += text.substr(pos, open - pos);
    const std::string expr = text.substr(open + 2, close - open - 2);
    if (StartsWith(expr, "now:")) {
      out += Now(expr.substr(4));
    } else if (StartsWith(expr, "workload.")) {
      YAML::Node cur = workload;
      std::stringstream in(expr.substr(9));
      for (std::string p; std::getline(in, p, '.');) {
        if (!cur.IsMap() || !cur[p])
          return dlio::Status::InvalidArgument("hydra.run.dir '", text, "': ${", expr,
                                               "} is not in the workload");
        cur.reset(cur[p]);
      }
      if (!cur.IsScalar()) {
        return dlio::Status::InvalidArgument("hydra.run.dir '", text, "': ${", expr,
                                             "} is not a single value");
      }
      out += cur.Scalar();
    } else {
      return dlio::Status::InvalidArgument("hydra.run.dir '", text, "': cannot resolve ${", expr,
                                           "} (dlio resolves ${now:...} and ${workload...})");
    }
    pos = close + 1;
  }
  return out + text.substr(pos);
}

}  // namespace

dlio::Result<HydraCommandLine> ParseHydraCommandLine(const std::vector<std::string>& args) {
  HydraCommandLine cl;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      cl.help = true;
      continue;
    }
    if (a == "--version") {
      cl.version = true;
      continue;
    }
    std::string dir;
    DLIO_ASSIGN_OR_RETURN(bool dir_flag, TakeFlag(args, &i, {"--config-dir", "-cd"}, &dir));
    if (!dir_flag) {
      // --config-path names the primary config's folder too (Hydra: relative to the app).
      DLIO_ASSIGN_OR_RETURN(dir_flag, TakeFlag(args, &i, {"--config-path", "-cp"}, &dir));
    }
    if (dir_flag) {
      cl.config_dir = dir;
      continue;
    }
    DLIO_ASSIGN_OR_RETURN(bool name_flag,
                          TakeFlag(args, &i, {"--config-name", "-cn"}, &cl.config_name));
    if (name_flag) continue;
    if (StartsWith(a, "-")) {
      return dlio::Status::InvalidArgument(
          "unsupported Hydra flag '", a,
          "' (dlio_benchmark takes --config-dir, --config-name, --help, --version and overrides)");
    }
    DLIO_RETURN_NOT_OK(AddOverride(a, &cl));
  }
  return cl;
}

dlio::Result<HydraComposition> ComposeHydraConfig(const HydraCommandLine& cl) {
  HydraComposition c;
  const std::string name = cl.config_name.empty() ? "config" : cl.config_name;
  const fs::path primary_file =
      fs::path(cl.config_dir.empty() ? "." : cl.config_dir) / (name + ".yaml");
  std::error_code ec;
  YAML::Node primary;
  std::string run_dir = kBuiltinRunDir;
  std::string workload = "default";
  c.output_subdir = kHydraOutputSubdir;
  if (!cl.config_dir.empty() && fs::is_regular_file(primary_file, ec)) {
    DLIO_ASSIGN_OR_RETURN(primary, LoadYamlFile(primary_file.string()));
    workload = DefaultWorkload(primary);
    const YAML::Node hydra = primary["hydra"];
    if (hydra && hydra.IsMap()) {
      if (hydra["run"] && hydra["run"]["dir"] && hydra["run"]["dir"].IsScalar()) {
        run_dir = hydra["run"]["dir"].Scalar();
      }
      if (hydra["output_subdir"]) {
        c.output_subdir = hydra["output_subdir"].IsNull() ? "" : hydra["output_subdir"].Scalar();
      }
    }
  } else if (name != "config") {
    return dlio::Status::NotFound("--config-name ", name, ": no ", primary_file.string());
  }
  if (!cl.workload.empty()) workload = cl.workload;
  if (workload.empty()) {
    return dlio::Status::InvalidArgument("no workload: give workload=NAME (", primary_file.string(),
                                         " names none in its defaults list)");
  }
  c.workload_name = workload;
  DLIO_ASSIGN_OR_RETURN(c.workload, LoadWorkloadNode(cl.config_dir, workload, &c.source));
  for (const auto& [key, value] : cl.workload_sets) {
    DLIO_RETURN_NOT_OK(SetPath(c.workload, key, ParseValue(value)));
  }
  if (cl.run_dir) run_dir = *cl.run_dir;
  DLIO_ASSIGN_OR_RETURN(c.run_dir, Interpolate(run_dir, c.workload));
  if (cl.output_subdir) c.output_subdir = *cl.output_subdir == "null" ? "" : *cl.output_subdir;
  return c;
}

}  // namespace dlio_run
