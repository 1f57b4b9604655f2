// Parsing, overrides, validation and JSON of WorkloadConfig, all driven by config_table.cc.
#include "dlio/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config/config_table.h"
#include "config/value_parse.h"

namespace dlio {
namespace {

using config_internal::FindKey;
using config_internal::KeySpec;
using config_internal::KeyTable;
using config_internal::KeyType;

struct ParseContext {
  std::string source;      // file name, "<string>" or "override '...'"
  bool show_lines = true;  // an override's YAML has no useful line numbers
  std::vector<std::string>* warnings = nullptr;
  bool saw_name = false;  // the text set the top-level `name`
};

std::string Where(const ParseContext& ctx, const YAML::Mark& mark) {
  if (ctx.show_lines && mark.line >= 0) {
    return "(in " + ctx.source + " line " + std::to_string(mark.line + 1) + ")";
  }
  return "(in " + ctx.source + ")";
}

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    default:
      return "an undefined value";
  }
}

Status TypeError(const ParseContext& ctx, const std::string& key, const std::string& expected,
                 const YAML::Node& node) {
  return Status::InvalidArgument(key + ": expected " + expected + ", got " + Describe(node) + " " +
                                 Where(ctx, node.Mark()));
}

void Warn(const ParseContext& ctx, const std::string& message) {
  if (ctx.warnings) ctx.warnings->push_back(message);
}

std::string JoinAccepted(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : ", ") + v;
  return out;
}

Result<DistributionSpec> ParseDistribution(const ParseContext& ctx, const std::string& key,
                                           const YAML::Node& node) {
  DistributionSpec spec;
  const std::string expected =
      "a number of seconds or a map {type, mean, stdev, min, max, shape, scale}";
  if (node.IsScalar()) {
    double v = 0;
    if (!config_internal::ParseDoubleText(node.Scalar(), &v))
      return TypeError(ctx, key, expected, node);
    spec.mean = v;
    return spec;
  }
  if (!node.IsMap()) return TypeError(ctx, key, expected, node);
  bool has_type = false, has_stdev = false, has_mean = false, has_range = false;
  for (const auto& item : node) {
    const std::string param = item.first.Scalar();
    const std::string sub = key + "." + param;
    const YAML::Node& value = item.second;
    if (param == "type") {
      static const std::vector<std::string> kTypes = {"constant", "normal",      "uniform",
                                                      "gamma",    "exponential", "poisson"};
      std::string t = value.IsScalar() ? value.Scalar() : "";
      bool found = false;
      for (size_t i = 0; i < kTypes.size(); ++i) {
        if (t == kTypes[i]) {
          spec.type = static_cast<DistributionSpec::Type>(i);
          found = true;
        }
      }
      if (!found) return TypeError(ctx, sub, "one of " + JoinAccepted(kTypes), value);
      has_type = true;
      continue;
    }
    double* field = nullptr;
    if (param == "mean")
      field = &spec.mean, has_mean = true;
    else if (param == "stdev")
      field = &spec.stdev, has_stdev = true;
    else if (param == "min")
      field = &spec.min, has_range = true;
    else if (param == "max")
      field = &spec.max, has_range = true;
    else if (param == "shape")
      field = &spec.shape;
    else if (param == "scale")
      field = &spec.scale;
    if (field == nullptr) {
      return Status::InvalidArgument("unknown key '" + sub + "' " + Where(ctx, item.first.Mark()) +
                                     " (a distribution takes type, mean, stdev, min, max, shape, "
                                     "scale)");
    }
    if (!value.IsScalar() || !config_internal::ParseDoubleText(value.Scalar(), field)) {
      return TypeError(ctx, sub, "a number", value);
    }
  }
  if (!has_type) {
    // DLIO's {mean, stdev} is a normal distribution; {min, max} reads naturally as uniform.
    if (has_stdev)
      spec.type = DistributionSpec::Type::kNormal;
    else if (has_range && !has_mean)
      spec.type = DistributionSpec::Type::kUniform;
  }
  return spec;
}

// Stores `node` into the field of `spec`. `key` is the path as the user wrote it (an alias).
Status SetValue(ParseContext& ctx, WorkloadConfig* config, const KeySpec& spec,
                const std::string& key, const YAML::Node& node) {
  const bool scalar = node.IsScalar();
  const std::string text = scalar ? node.Scalar() : "";
  switch (spec.type) {
    case KeyType::kBool: {
      bool v = false;
      if (!scalar || !config_internal::ParseBoolText(text, &v)) {
        return TypeError(ctx, key, "a boolean (true/false, yes/no, on/off, 1/0)", node);
      }
      spec.bool_ref(*config) = v;
      return Status::OK();
    }
    case KeyType::kUint: {
      uint64_t v = 0;
      const bool units = spec.flags & config_internal::kSizeUnits;
      if (!scalar || !config_internal::ParseUintText(
                         text, units, spec.flags & config_internal::kRoundFraction, &v)) {
        return TypeError(
            ctx, key, units ? "an unsigned integer or a size such as 4MiB" : "an unsigned integer",
            node);
      }
      spec.uint_ref(*config) = v;
      return Status::OK();
    }
    case KeyType::kInt: {
      int64_t v = 0;
      if (!scalar || !config_internal::ParseIntText(text, &v)) {
        return TypeError(ctx, key, "an integer", node);
      }
      if (v < spec.int_min) {
        return TypeError(ctx, key, "an integer >= " + std::to_string(spec.int_min), node);
      }
      if (spec.int32_ref) {
        if (v < INT32_MIN || v > INT32_MAX) return TypeError(ctx, key, "a 32-bit integer", node);
        spec.int32_ref(*config) = static_cast<int>(v);
      } else {
        spec.int_ref(*config) = v;
      }
      return Status::OK();
    }
    case KeyType::kDouble: {
      double v = 0;
      if (!scalar || !config_internal::ParseDoubleText(text, &v)) {
        return TypeError(ctx, key, "a number", node);
      }
      spec.double_ref(*config) = v;
      return Status::OK();
    }
    case KeyType::kString:
    case KeyType::kEnum: {
      if (!scalar && !node.IsNull()) return TypeError(ctx, key, "a string", node);
      std::string v = text;
      if ((spec.flags & config_internal::kStripSlash) && v.size() > 1) {
        while (v.size() > 1 && v.back() == '/') v.pop_back();
      }
      if (spec.custom) {
        std::string note;
        v = spec.custom(*config, v, &note);
        if (!note.empty()) Warn(ctx, note + " " + Where(ctx, node.Mark()));
      }
      if (spec.type == KeyType::kEnum &&
          std::find(spec.accepted.begin(), spec.accepted.end(), v) == spec.accepted.end()) {
        return TypeError(ctx, key, "one of " + JoinAccepted(spec.accepted), node);
      }
      spec.string_ref(*config) = v;
      return Status::OK();
    }
    case KeyType::kDistribution: {
      DLIO_ASSIGN_OR_RETURN(spec.dist_ref(*config), ParseDistribution(ctx, key, node));
      return Status::OK();
    }
    case KeyType::kDistributionStdev: {
      double v = 0;
      if (!scalar || !config_internal::ParseDoubleText(text, &v)) {
        return TypeError(ctx, key, "a number", node);
      }
      DistributionSpec& d = spec.dist_ref(*config);
      d.stdev = v;
      if (d.type == DistributionSpec::Type::kConstant && v > 0)
        d.type = DistributionSpec::Type::kNormal;
      return Status::OK();
    }
    case KeyType::kUintList: {
      std::vector<uint64_t> values;
      if (node.IsSequence()) {
        for (const auto& item : node) {
          uint64_t v = 0;
          if (!item.IsScalar() ||
              !config_internal::ParseUintText(item.Scalar(), false, false, &v)) {
            return TypeError(ctx, key, "a list of unsigned integers", item);
          }
          values.push_back(v);
        }
      } else if (!node.IsNull()) {
        return TypeError(ctx, key, "a list of unsigned integers such as [1, 2]", node);
      }
      spec.uint_list_ref(*config) = std::move(values);
      return Status::OK();
    }
    case KeyType::kAny:
      return Status::OK();
  }
  return Status::Internal("unhandled key type of " + key);
}

bool IsDeferred(const std::string& path) {
  const KeySpec* spec = FindKey(path);
  return spec && spec->type == KeyType::kDistributionStdev;
}

Status UnknownKey(const ParseContext& ctx, const std::string& path, const YAML::Mark& mark) {
  std::string message = "unknown key '" + path + "' " + Where(ctx, mark);
  std::string suggestion = config_internal::SuggestKey(path);
  if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
  return Status::InvalidArgument(message);
}

// Applies `node` at `path` ("" = the document root), descending into sections.
Status ApplyNode(ParseContext& ctx, WorkloadConfig* config, const std::string& path,
                 const YAML::Node& node, const YAML::Mark& key_mark) {
  if (!path.empty()) {
    if (const KeySpec* spec = FindKey(path)) {
      if (!spec->alias_of.empty()) {
        const KeySpec* target = FindKey(spec->alias_of);
        if (target == nullptr) return Status::Internal("alias " + path + " has no target");
        return SetValue(ctx, config, *target, path, node);
      }
      if (!spec->used()) {
        Warn(ctx, "'" + path + "' " + Where(ctx, key_mark) +
                      " is a DLIO key that dlio accepts but does not emulate");
        return Status::OK();
      }
      if (path == "name") ctx.saw_name = true;
      return SetValue(ctx, config, *spec, path, node);
    }
    if (!config_internal::IsSectionPrefix(path)) {
      if (const KeySpec* any = config_internal::FindAnyAncestor(path)) {
        Warn(ctx, "'" + path + "' " + Where(ctx, key_mark) + " is part of '" + any->path +
                      "', a DLIO key that dlio accepts but does not emulate");
        return Status::OK();
      }
      return UnknownKey(ctx, path, key_mark);
    }
    if (path == "model" && node.IsScalar()) {  // DLIO's `model: cosmoflow`
      config->model.name = node.Scalar();
      return Status::OK();
    }
  }
  if (node.IsNull()) return Status::OK();  // an empty section
  if (!node.IsMap()) {
    return TypeError(ctx, path.empty() ? "the document" : path, "a map of keys", node);
  }
  // Two passes: DLIO's *_stdev siblings modify the distribution set by their main key,
  // whichever comes first in the file.
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& item : node) {
      if (!item.first.IsScalar()) {
        return TypeError(ctx, path.empty() ? "the document" : path, "string keys", item.first);
      }
      std::string name = item.first.Scalar();
      if (path.empty()) {
        if (name == "hydra" || name == "defaults") continue;  // Hydra's own sections
        if (name == "workload") {
          if (pass == 1) continue;
          DLIO_RETURN_NOT_OK(ApplyNode(ctx, config, "", item.second, item.first.Mark()));
          continue;
        }
        if (name == "data_reader") name = "reader";  // older DLIO section name
      }
      const std::string child = path.empty() ? name : path + "." + name;
      if (IsDeferred(child) != (pass == 1)) continue;
      DLIO_RETURN_NOT_OK(ApplyNode(ctx, config, child, item.second, item.first.Mark()));
    }
  }
  return Status::OK();
}

Status ParseInto(ParseContext& ctx, const std::string& text, WorkloadConfig* config) {
  try {
    YAML::Node root = YAML::Load(text);
    if (root.IsNull()) return Status::OK();  // an empty file changes nothing
    return ApplyNode(ctx, config, "", root, root.Mark());
  } catch (const YAML::ParserException& e) {
    return Status::InvalidArgument(ctx.source + " line " + std::to_string(e.mark.line + 1) +
                                   ", column " + std::to_string(e.mark.column + 1) +
                                   ": YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(ctx.source + ": YAML error: " + e.what());
  } catch (const std::exception& e) {
    return Status::Internal(ctx.source + ": " + e.what());
  }
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// MPI collective reads (storage.mpiio_collective) need every rank to open the same files in the
// same order and to issue the same number of reads of the same sizes on them, from one thread;
// otherwise a rank waits forever in a collective the others never join. These are the
// configurations where the runner guarantees that (docs/scaling.md explains each rule).
Status ValidateCollectiveIo(const WorkloadConfig& c) {
  if (!c.storage.mpiio_collective) return Status::OK();
  auto refuse = [](const std::string& why) {
    return Status::InvalidArgument("storage.mpiio_collective: true " + why);
  };
  const bool mpiio = c.storage.storage_type == "mpiio" ||
                     (c.storage.storage_type == "slow" && c.storage.slow_inner == "mpiio");
  if (!mpiio) {
    return refuse("needs storage.storage_type 'mpiio', got '" + c.storage.storage_type + "'");
  }
  if (c.reader.pipeline != "sync" || c.reader.read_type == "memory") {
    return refuse("needs reader.pipeline 'sync' (got '" + c.reader.pipeline +
                  "', reader.read_type '" + c.reader.read_type +
                  "'): a collective read must be issued by the training loop's own thread, in "
                  "step with the other ranks");
  }
  if (c.reader.read_threads > 1) {
    return refuse("needs reader.read_threads <= 1, got " + std::to_string(c.reader.read_threads) +
                  ": MPI collectives on one file cannot be issued from several reader threads");
  }
  if (!c.reader.drop_last) {
    return refuse(
        "needs reader.drop_last: true, or the ranks' last batches would differ in size "
        "and so in the number of collective reads");
  }
  if (c.dataset.num_files_train != 1 || (c.workflow.evaluation && c.dataset.num_files_eval != 1)) {
    return refuse(
        "needs one shared file per split (dataset.num_files_train = 1, and "
        "dataset.num_files_eval = 1 with evaluation), got " +
        std::to_string(c.dataset.num_files_train) +
        " train files: every rank must open "
        "the same file together");
  }
  if (c.dataset.record_length_bytes_stdev != 0) {
    return refuse(
        "needs dataset.record_length_bytes_stdev = 0: ranks must read samples of one "
        "size to make the same number of read calls");
  }
  if (c.dataset.compression != "none" && !c.dataset.compression.empty()) {
    return refuse("needs dataset.compression 'none' (compressed samples differ in stored size)");
  }
  // hdf5 reads through parallel HDF5 (one collective H5Dread per sample), not through the
  // storage's collective files: HDF5's own metadata reads through them would differ per rank.
  static const char* kFormats[] = {"npy", "npz", "indexed_binary", "hdf5"};
  if (std::find(std::begin(kFormats), std::end(kFormats), c.dataset.format) == std::end(kFormats)) {
    return refuse(
        "supports dataset.format npy, npz, indexed_binary (whose reads per sample "
        "depend only on the sample size) and hdf5 (parallel HDF5), got '" +
        c.dataset.format + "'");
  }
  if (c.dataset.format == "hdf5" && c.dataset.metadata_file) {
    return refuse(
        "with dataset.format hdf5 needs dataset.metadata_file: false (its per-sample "
        "lookups would be independent reads of a collectively opened file)");
  }
  return Status::OK();
}

}  // namespace

Result<WorkloadConfig> ParseConfig(const std::string& text, const std::string& source,
                                   const WorkloadConfig& base, std::vector<std::string>* warnings) {
  WorkloadConfig config = base;
  ParseContext ctx;
  ctx.source = source;
  ctx.warnings = warnings;
  DLIO_RETURN_NOT_OK(ParseInto(ctx, text, &config));
  return config;
}

Result<WorkloadConfig> LoadConfigFile(const std::string& path, const WorkloadConfig& base,
                                      std::vector<std::string>* warnings) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      return Status::NotFound("config file '" + path + "' does not exist");
    }
    return Status::IOError("cannot open config file '" + path + "'");
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Status::IOError("cannot read config file '" + path + "'");
  WorkloadConfig config = base;
  ParseContext ctx;
  ctx.source = path;
  ctx.warnings = warnings;
  DLIO_RETURN_NOT_OK(ParseInto(ctx, buffer.str(), &config));
  if (!ctx.saw_name) config.name = std::filesystem::path(path).stem().string();
  return config;
}

Status ApplyOverride(WorkloadConfig* config, const std::string& assignment,
                     std::vector<std::string>* warnings) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) {
    return Status::InvalidArgument("override '" + assignment +
                                   "': expected key=value, e.g. dataset.num_files_train=8");
  }
  std::string key = Trim(assignment.substr(0, eq));
  const std::string value = assignment.substr(eq + 1);
  if (key.rfind("++", 0) == 0)
    key.erase(0, 2);
  else if (key.rfind("+", 0) == 0)
    key.erase(0, 1);
  if (key.rfind("workload.", 0) == 0) key.erase(0, 9);
  if (key.empty() || key == "workload") {
    return Status::InvalidArgument("override '" + assignment + "': missing key before '='");
  }
  ParseContext ctx;
  ctx.source = "override '" + assignment + "'";
  ctx.show_lines = false;
  ctx.warnings = warnings;
  const KeySpec* spec = FindKey(key);
  if (spec && !spec->alias_of.empty()) spec = FindKey(spec->alias_of);
  const bool string_key = spec && (spec->type == KeyType::kString || spec->type == KeyType::kEnum);
  try {
    YAML::Node node;
    bool parsed = true;
    try {
      node = YAML::Load(value);
    } catch (const YAML::ParserException& e) {
      if (!string_key) {
        return Status::InvalidArgument(ctx.source + ": value is not valid YAML: " + e.msg);
      }
      parsed = false;
    }
    // A path or other string with YAML punctuation ("a: b", "[x") is taken literally.
    if (string_key && (!parsed || !(node.IsScalar() || node.IsNull()))) {
      node = YAML::Node(Trim(value));
    }
    return ApplyNode(ctx, config, key, node, YAML::Mark::null_mark());
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(ctx.source + ": " + e.what());
  } catch (const std::exception& e) {
    return Status::Internal(ctx.source + ": " + e.what());
  }
}

namespace {

// The specs of the comma-separated keys of `scale_keys`: integer counts only.
Result<std::vector<const KeySpec*>> ScaleKeySpecs(const std::string& keys) {
  std::vector<const KeySpec*> specs;
  size_t start = 0;
  while (start <= keys.size()) {
    size_t comma = keys.find(',', start);
    if (comma == std::string::npos) comma = keys.size();
    std::string key = Trim(keys.substr(start, comma - start));
    start = comma + 1;
    if (key.empty()) continue;
    const KeySpec* spec = FindKey(key);
    if (spec != nullptr && !spec->alias_of.empty()) spec = FindKey(spec->alias_of);
    if (spec == nullptr) {
      return Status::InvalidArgument("scale_keys: unknown key '" + key + "'");
    }
    if (spec->uint_ref == nullptr && spec->int_ref == nullptr) {
      return Status::InvalidArgument("scale_keys: '" + key +
                                     "' is not an integer count (scale multiplies counts only)");
    }
    specs.push_back(spec);
  }
  return specs;
}

}  // namespace

Status WorkloadConfig::Validate() const {
  WorkloadConfig c = *this;  // the table's accessors take a mutable config
  auto invalid = [](const std::string& m) { return Status::InvalidArgument(m); };

  for (const KeySpec& spec : KeyTable()) {
    if (spec.type != KeyType::kEnum || !spec.alias_of.empty()) continue;
    const std::string& v = spec.string_ref(c);
    if (std::find(spec.accepted.begin(), spec.accepted.end(), v) == spec.accepted.end()) {
      return invalid(spec.path + ": '" + v + "' is not one of " + JoinAccepted(spec.accepted));
    }
  }
  // Names looked up in registries at run time must at least be present.
  const std::pair<const char*, const std::string*> non_empty[] = {
      {"dataset.data_folder", &dataset.data_folder},
      {"dataset.format", &dataset.format},
      {"dataset.file_prefix", &dataset.file_prefix},
      {"checkpoint.checkpoint_folder", &checkpoint.checkpoint_folder},
      {"checkpoint.type", &checkpoint.type},
      {"output.folder", &output.folder},
      {"storage.storage_type", &storage.storage_type},
  };
  for (const auto& [key, value] : non_empty) {
    if (value->empty()) return invalid(std::string(key) + " must not be empty");
  }
  if (storage.storage_type == "slow" && storage.slow_inner.empty()) {
    return invalid("storage.slow_inner must not be empty when storage.storage_type is 'slow'");
  }
  if (storage.slow_latency_us < 0) return invalid("storage.slow_latency_us must be >= 0");
  if (storage.slow_latency_stdev_us < 0)
    return invalid("storage.slow_latency_stdev_us must be >= 0");
  if (storage.slow_bandwidth_mib_s < 0) return invalid("storage.slow_bandwidth_mib_s must be >= 0");
  DLIO_RETURN_NOT_OK(ValidateCollectiveIo(*this));

  if ((workflow.train || workflow.generate_data) && dataset.num_files_train < 1) {
    return invalid(
        "dataset.num_files_train must be >= 1 when workflow.train or "
        "workflow.generate_data is true");
  }
  if (workflow.evaluation && dataset.num_files_eval < 1) {
    return invalid("dataset.num_files_eval must be >= 1 when workflow.evaluation is true");
  }
  if (dataset.num_samples_per_file < 1) return invalid("dataset.num_samples_per_file must be >= 1");
  if (dataset.record_length_bytes < 1) return invalid("dataset.record_length_bytes must be >= 1");
  if (dataset.compression_level < 0 || dataset.compression_level > 9) {
    return invalid("dataset.compression_level must be in 0-9, got " +
                   std::to_string(dataset.compression_level));
  }
  if (dataset.image_quality < 1 || dataset.image_quality > 100) {
    return invalid("dataset.image_quality must be in 1-100, got " +
                   std::to_string(dataset.image_quality));
  }
  if (dataset.enable_chunking && dataset.chunk_size < 1 && dataset.chunk_samples < 1) {
    return invalid(
        "dataset.chunk_size or dataset.chunk_samples must be >= 1 when "
        "dataset.enable_chunking is true");
  }

  if (reader.batch_size < 1) return invalid("reader.batch_size must be >= 1");
  if (reader.batch_size_eval < 1) return invalid("reader.batch_size_eval must be >= 1");
  if (reader.sampler == "shuffle_buffer" && reader.shuffle_size < 1) {
    return invalid("reader.shuffle_size must be >= 1 with reader.sampler 'shuffle_buffer'");
  }
  if (reader.read_type == "memory" && reader.pipeline != "preload") {
    return invalid("reader.read_type 'memory' requires reader.pipeline 'preload', got '" +
                   reader.pipeline + "'");
  }
  if (reader.odirect && reader.transfer_size % 4096 != 0) {
    return invalid("reader.transfer_size must be a multiple of 4096 with reader.odirect, got " +
                   std::to_string(reader.transfer_size));
  }
  if (reader.max_open_files < 1) return invalid("reader.max_open_files must be >= 1");

  if (train.epochs < 1) return invalid("train.epochs must be >= 1");
  if (train.total_training_steps == 0 || train.total_training_steps < -1) {
    return invalid("train.total_training_steps must be -1 (whole epochs) or >= 1, got " +
                   std::to_string(train.total_training_steps));
  }
  if (workflow.evaluation && evaluation.epochs_between_evals < 1) {
    return invalid("evaluation.epochs_between_evals must be >= 1 when workflow.evaluation is true");
  }

  if (checkpoint.steps_between_checkpoints == 0 || checkpoint.steps_between_checkpoints < -1) {
    return invalid("checkpoint.steps_between_checkpoints must be -1 (off) or >= 1, got " +
                   std::to_string(checkpoint.steps_between_checkpoints));
  }
  if (workflow.checkpoint && checkpoint.steps_between_checkpoints < 1 &&
      checkpoint.epochs_between_checkpoints < 1 && checkpoint.num_checkpoints_write < 1) {
    return invalid(
        "checkpoint.epochs_between_checkpoints must be >= 1 when workflow.checkpoint "
        "is true and checkpoint.steps_between_checkpoints is -1");
  }
  if (checkpoint.transfer_size < 1) return invalid("checkpoint.transfer_size must be >= 1");
  if (checkpoint.num_checkpoints_write < -1) {
    return invalid("checkpoint.num_checkpoints_write must be >= -1");
  }
  // As DLIO: with no writes, a run reads checkpoints an earlier run left in the folder.
  if (checkpoint.num_checkpoints_write > 0 &&
      checkpoint.num_checkpoints_read > checkpoint.num_checkpoints_write) {
    return invalid("checkpoint.num_checkpoints_read (" +
                   std::to_string(checkpoint.num_checkpoints_read) +
                   ") must not exceed checkpoint.num_checkpoints_write (" +
                   std::to_string(checkpoint.num_checkpoints_write) + ")");
  }

  if (checkpoint.size_divisor < 1) return invalid("checkpoint.size_divisor must be >= 1");
  const ParallelismConfig& par = model.parallelism;
  if (par.tensor < 1) return invalid("model.parallelism.tensor must be >= 1");
  if (par.pipeline < 1) return invalid("model.parallelism.pipeline must be >= 1");
  if (par.zero_stage > 3) {
    return invalid("model.parallelism.zero_stage must be 0, 1, 2 or 3, got " +
                   std::to_string(par.zero_stage));
  }
  if (par.data == 0 || par.data < -1) {
    return invalid("model.parallelism.data must be -1 (derive) or >= 1, got " +
                   std::to_string(par.data));
  }
  if (checkpoint.mode == "subset" && par.data < 1) {
    return invalid(
        "checkpoint.mode 'subset' needs model.parallelism.data >= 1 (the data-parallel "
        "degree of the job whose first ranks this run emulates)");
  }
  if (model.num_layers > 0) {
    // DLIO's rules: every stage needs a layer, and ZeRO-3 shards cannot cross pipeline stages.
    if (static_cast<uint64_t>(model.num_layers) < par.pipeline) {
      return invalid("model.num_layers (" + std::to_string(model.num_layers) +
                     ") must be >= model.parallelism.pipeline (" + std::to_string(par.pipeline) +
                     ")");
    }
    if (par.pipeline > 1 && par.zero_stage == 3) {
      return invalid(
          "model.parallelism.zero_stage 3 does not combine with "
          "model.parallelism.pipeline > 1");
    }
    const TransformerConfig& t = model.transformer;
    const std::pair<const char*, uint64_t> positive[] = {
        {"model.transformer.hidden_size", t.hidden_size},
        {"model.transformer.vocab_size", t.vocab_size},
        {"model.transformer.num_attention_heads", t.num_attention_heads},
    };
    for (const auto& [key, value] : positive) {
      if (value < 1) return invalid(std::string(key) + " must be >= 1 when model.num_layers > 0");
    }
  }
  if (!(reader.read_fraction > 0 && reader.read_fraction <= 1)) {
    return invalid("reader.read_fraction must be in (0, 1], got " +
                   config_internal::FormatDouble(reader.read_fraction));
  }
  if (checkpoint.model_files < 1) return invalid("checkpoint.model_files must be >= 1");
  if (!side_io.read_file.empty()) {
    if (side_io.read_size < 1) return invalid("side_io.read_size must be >= 1");
    if (side_io.read_file_format.empty()) {
      return invalid("side_io.read_file_format must not be empty (raw or a format name)");
    }
  }
  if (side_io.write_bytes > 0 && side_io.write_file.find("{rank}") == std::string::npos) {
    return invalid(
        "side_io.write_file must contain {rank} (every rank writes its own file), got '" +
        side_io.write_file + "'");
  }
  if (!(scale > 0 && std::isfinite(scale))) {
    return invalid("scale must be a finite number > 0, got " +
                   config_internal::FormatDouble(scale));
  }
  DLIO_RETURN_NOT_OK(ScaleKeySpecs(scale_keys).status());

  if (!(metric.au > 0 && metric.au <= 1)) {
    return invalid("metric.au must be in (0, 1], got " + config_internal::FormatDouble(metric.au));
  }

  DLIO_RETURN_NOT_OK(train.computation_time.Validate("train.computation_time"));
  DLIO_RETURN_NOT_OK(reader.preprocess_time.Validate("reader.preprocess_time"));
  DLIO_RETURN_NOT_OK(evaluation.eval_time.Validate("evaluation.eval_time"));
  return Status::OK();
}

Result<WorkloadConfig> ScaleConfig(const WorkloadConfig& config, int world,
                                   std::vector<std::string>* notes) {
  if (!(config.scale > 0 && std::isfinite(config.scale))) {
    return Status::InvalidArgument("scale must be a finite number > 0, got " +
                                   config_internal::FormatDouble(config.scale));
  }
  DLIO_ASSIGN_OR_RETURN(std::vector<const KeySpec*> specs, ScaleKeySpecs(config.scale_keys));
  WorkloadConfig c = config;
  c.scale = 1.0;
  if (config.scale == 1.0) return c;
  const double f = config.scale;
  std::string changes;
  auto note = [&changes](const std::string& key, int64_t from, int64_t to) {
    changes += (changes.empty() ? "" : ", ") + key + " " + std::to_string(from) + " -> " +
               std::to_string(to);
  };
  for (const KeySpec* spec : specs) {
    const bool files =
        spec->path == "dataset.num_files_train" || spec->path == "dataset.num_files_eval";
    auto scaled = [&](double v) {
      const double floor = files ? std::min(v, static_cast<double>(std::max(world, 1))) : 1.0;
      return std::max(floor, std::round(v * f));
    };
    if (spec->uint_ref != nullptr) {
      uint64_t& v = spec->uint_ref(c);
      const uint64_t from = v;
      if (v > 0) v = static_cast<uint64_t>(scaled(static_cast<double>(v)));
      note(spec->path, static_cast<int64_t>(from), static_cast<int64_t>(v));
    } else {
      int64_t& v = spec->int_ref(c);
      const int64_t from = v;
      if (v > 0) v = static_cast<int64_t>(scaled(static_cast<double>(v)));
      note(spec->path, from, v);
    }
  }
  if (notes != nullptr) {
    notes->push_back("scale " + config_internal::FormatDouble(f) + ": " +
                     (changes.empty() ? "no counts to scale" : changes));
  }
  return c;
}

std::string ConfigToJson(const WorkloadConfig& config) {
  WorkloadConfig c = config;  // the table's accessors take a mutable config
  nlohmann::ordered_json root = nlohmann::ordered_json::object();
  for (const KeySpec& spec : KeyTable()) {
    if (!spec.emitted()) continue;
    nlohmann::ordered_json* node = &root;
    std::string rest = spec.path;
    for (size_t dot; (dot = rest.find('.')) != std::string::npos; rest.erase(0, dot + 1)) {
      node = &(*node)[rest.substr(0, dot)];
    }
    nlohmann::ordered_json& out = (*node)[rest];
    switch (spec.type) {
      case KeyType::kBool:
        out = spec.bool_ref(c);
        break;
      case KeyType::kUint:
        out = spec.uint_ref(c);
        break;
      case KeyType::kInt:
        out = spec.int_ref ? spec.int_ref(c) : static_cast<int64_t>(spec.int32_ref(c));
        break;
      case KeyType::kDouble:
        out = spec.double_ref(c);
        break;
      case KeyType::kString:
      case KeyType::kEnum:
        out = spec.string_ref(c);
        break;
      case KeyType::kDistribution: {
        const DistributionSpec& d = spec.dist_ref(c);
        out = nlohmann::ordered_json{{"type", config_internal::DistTypeName(d.type)},
                                     {"mean", d.mean},
                                     {"stdev", d.stdev},
                                     {"min", d.min},
                                     {"max", d.max},
                                     {"shape", d.shape},
                                     {"scale", d.scale}};
        break;
      }
      case KeyType::kUintList:
        out = spec.uint_list_ref(c);
        break;
      case KeyType::kDistributionStdev:
      case KeyType::kAny:
        break;
    }
  }
  return root.dump(2) + "\n";
}

std::vector<ConfigKeyDoc> ConfigKeyDocs() {
  WorkloadConfig defaults;
  std::vector<ConfigKeyDoc> docs;
  for (const KeySpec& spec : KeyTable()) {
    ConfigKeyDoc doc;
    doc.key = spec.path;
    doc.description = spec.description;
    doc.used = spec.used() || !spec.alias_of.empty();
    doc.alias_of = spec.alias_of;
    if (!spec.alias_of.empty()) {
      const KeySpec* target = FindKey(spec.alias_of);
      doc.type = target ? config_internal::KeyTypeName(target->type) : "any";
      doc.default_value = '-';  // not "-": GCC 12 -Wrestrict false positive on the inlined copy
    } else {
      doc.type = config_internal::KeyTypeName(spec.type);
      doc.default_value = config_internal::RenderValue(spec, defaults);
      if (spec.flags & config_internal::kSizeUnits) doc.type += " (bytes, units ok)";
    }
    doc.accepted_values = JoinAccepted(spec.accepted);
    docs.push_back(std::move(doc));
  }
  return docs;
}

}  // namespace dlio
