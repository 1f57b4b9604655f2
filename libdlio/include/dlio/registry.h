// Name -> factory registries for every pluggable kind, so configs name implementations
// ("npz", "posix", "spin") and users register their own without touching the core.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "dlio/status.h"

namespace dlio {

struct WorkloadConfig;

// What an entry of a kind without registered capabilities declares: nothing.
struct NoCapabilities {};
// What an entry of a kind without hooks does besides building: nothing.
struct NoHooks {};

// A registry of factories of one kind. Safe for concurrent use. `Capabilities` is what an entry
// declares about its implementation before one is built (the storages' StorageCapabilitiesFn), so
// config validation can ask instead of comparing names; `Hooks` what an entry does besides
// building one (the pipelines' PipelineHooks: deriving options of their own).
template <typename Factory, typename Capabilities = NoCapabilities, typename Hooks = NoHooks>
class Registry {
 public:
  struct Entry {
    std::string name;
    std::string description;  // one line, shown by `dlio-run list`
    std::string options;      // the config keys this implementation reads, for `dlio-run list`
    Factory factory;
    Capabilities capabilities{};  // default: declares none
    // Checks the config keys this implementation reads, when the config names it (slow: a
    // storage.slow_inner to wrap); InvalidArgument naming the key. Empty: nothing to check.
    // ValidateCapabilities (dlio/registries.h) calls it.
    std::function<Status(const WorkloadConfig&)> validate{};
    // The prefixes of the config keys this implementation declares itself and parses into its
    // own options type (s3: "storage.storage_options."; tiered: "storage.tiered_source",
    // "storage.tiers", "storage.cache_"; parquet: "dataset.parquet.", "reader.pyarrow_read"; the
    // pytorch pipeline: "reader.persistent_workers"; torch_save: "checkpoint.torch_"; its keys
    // are in the key table, rendered into docs/configuration.md, which config_docs_test checks
    // by walking the registries). Empty: none.
    std::vector<std::string> key_sections{};
    Hooks hooks{};  // default: none
  };

  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  // AlreadyExists if `name` is taken.
  Status Register(Entry entry) {
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.count(entry.name)) {
      return Status::AlreadyExists(kind_ + " '" + entry.name + "' is already registered");
    }
    std::string name = entry.name;
    entries_.emplace(std::move(name), std::move(entry));
    return Status::OK();
  }

  // NotFound naming the accepted values when `name` is unknown.
  Result<Factory> Get(const std::string& name) const {
    DLIO_ASSIGN_OR_RETURN(Entry entry, Find(name));
    return std::move(entry.factory);
  }

  // The entry registered as `name` (NotFound as Get).
  Result<Entry> Find(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(name);
    if (it != entries_.end()) return it->second;
    std::string known;
    for (const auto& [n, e] : entries_) known += (known.empty() ? "" : ", ") + n;
    return Status::NotFound("unknown " + kind_ + " '" + name + "' (known: " + known + ")");
  }

  bool Contains(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.count(name) > 0;
  }

  // Entries sorted by name.
  std::vector<Entry> List() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Entry> out;
    for (const auto& [n, e] : entries_) out.push_back(e);
    return out;
  }

  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

}  // namespace dlio
