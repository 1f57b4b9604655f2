#include "checkpoint/torch_save_plan.h"

#include <memory>
#include <string>

#include "checkpoint/torch_save_options.h"
#include "dlio/str_cat.h"
#include "format/torch/torch_save_file.h"

namespace dlio::checkpoint_internal {

using torch_save::ParseTorchStateDict;
using torch_save::TorchArchiveName;
using torch_save::TorchOwnPickleSize;
using torch_save::TorchSaveFileSize;
using torch_save::TorchStateDict;
using torch_save::TrimBlanks;
namespace {

std::vector<std::string> SplitTrimmed(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t p = s.find(sep, start);
    out.push_back(
        TrimBlanks(s.substr(start, p == std::string::npos ? std::string::npos : p - start)));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

// One name of checkpoint.torch_file_name with {rank} replaced: a plain name (ranks that all write
// need {rank} in it, or they would write one file).
Result<std::string> TorchFileName(const std::string& pattern, const CheckpointOptions& options) {
  std::string name = pattern;
  const bool per_rank = name.find("{rank}") != std::string::npos;
  const std::string rank = std::to_string(options.rank);
  for (size_t at; (at = name.find("{rank}")) != std::string::npos;) name.replace(at, 6, rank);
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.rfind(".dlio", 0) == 0) {
    return Status::InvalidArgument("checkpoint.torch_file_name: '", pattern,
                                   "' is not a file name (no '/', not '.dlio...')");
  }
  DLIO_RETURN_NOT_OK(
      FolderNameTemplate::ParseFileName(name, "checkpoint.torch_file_name").status());
  if (!per_rank && !options.root_only && options.world > 1) {
    return Status::InvalidArgument("checkpoint.torch_file_name: '", pattern,
                                   "' has no {rank}, but all ", options.world,
                                   " ranks write (use {rank} or checkpoint.rank_mode root)");
  }
  return name;
}

// `values` (one per file, or one for all): the i-th file's, "" when the key is empty.
Result<std::vector<std::string>> PerFile(const std::string& key, const std::string& text, char sep,
                                         size_t files) {
  std::vector<std::string> values = SplitTrimmed(text, sep);
  if (values.size() == 1) values.resize(files, values.front());
  if (values.size() != files) {
    return Status::InvalidArgument(key, ": ", values.size(), " groups separated by '", sep,
                                   "' for ", files,
                                   " files in checkpoint.torch_file_name (give one per file)");
  }
  return values;
}

Result<uint64_t> PickleBytes(const std::string& text) {
  if (text.empty()) return uint64_t{0};
  if (text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos) {
    return Status::InvalidArgument("checkpoint.torch_pickle_bytes: '", text,
                                   "' is not a byte count (digits, under 1 TB)");
  }
  return std::stoull(text);
}

}  // namespace

Result<std::vector<PlannedFile>> PlanTorchSaveFiles(const CheckpointOptions& options) {
  const TorchSaveOptions own = options.sections.Value<TorchSaveOptions>();
  const std::vector<std::string> names = SplitTrimmed(own.file_name, ',');
  const size_t n = names.size();
  std::vector<std::string> dicts = SplitTrimmed(own.state_dict, ';');
  if (dicts.size() != n) {
    return Status::InvalidArgument("checkpoint.torch_state_dict: ", dicts.size(),
                                   " groups separated by ';' for ", n,
                                   " files in checkpoint.torch_file_name (give one per file)");
  }
  DLIO_ASSIGN_OR_RETURN(const auto modules,
                        PerFile("checkpoint.torch_modules", own.modules, ';', n));
  DLIO_ASSIGN_OR_RETURN(const auto pickles,
                        PerFile("checkpoint.torch_pickle_bytes", own.pickle_bytes, ',', n));
  std::vector<PlannedFile> plan;
  for (size_t i = 0; i < n; ++i) {
    PlannedFile f;
    DLIO_ASSIGN_OR_RETURN(f.name, TorchFileName(names[i], options));
    for (const PlannedFile& earlier : plan) {
      if (earlier.name == f.name) {
        return Status::InvalidArgument("checkpoint.torch_file_name: '", f.name, "' is named twice");
      }
    }
    DLIO_ASSIGN_OR_RETURN(TorchStateDict sd, ParseTorchStateDict(dicts[i], modules[i]));
    DLIO_ASSIGN_OR_RETURN(sd.pickle_bytes, PickleBytes(pickles[i]));
    const uint64_t own = TorchOwnPickleSize(sd);
    if (sd.pickle_bytes != 0 && sd.pickle_bytes < own) {
      return Status::InvalidArgument("checkpoint.torch_pickle_bytes: ", sd.pickle_bytes,
                                     " bytes for ", f.name, ", whose state dict alone pickles to ",
                                     own, " bytes (give at least that, or 0)");
    }
    auto names = FolderNameTemplate::ParseFileName(f.name, "checkpoint.torch_file_name");
    if (names.ok() && names->per_save()) {  // checked by TorchFileName
      f.per_save = std::make_shared<const FolderNameTemplate>(std::move(names).value());
    }
    // With a per-save name, the template's length stands for the names' (the preflight's sizes);
    // each save's file is sized for its own name (ForSave).
    f.bytes = TorchSaveFileSize(TorchArchiveName(f.name), sd);
    f.torch = std::make_shared<const TorchStateDict>(std::move(sd));
    plan.push_back(std::move(f));
  }
  return plan;
}

}  // namespace dlio::checkpoint_internal
