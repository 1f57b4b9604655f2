#include "list.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "dlio/config.h"
#include "dlio/registries.h"
#include "dlio/workloads.h"
#include "run_common.h"

namespace dlio_run {
namespace {

constexpr const char* kKnownKinds[] = {
    "",         "all",       "workloads", "formats",       "storages",
    "samplers", "pipelines", "computes",  "checkpointers", "keys"};

template <typename Entries>
void PrintEntries(const char* title, const Entries& entries) {
  std::printf("%s:\n", title);
  for (const auto& e : entries) {
    std::printf("  %-16s %s\n", e.name.c_str(), e.description.c_str());
    if (!e.options.empty()) std::printf("  %-16s options: %s\n", "", e.options.c_str());
  }
}

void PrintWorkloads() {
  std::printf("workloads:\n");
  for (const auto& p : dlio::WorkloadPresets()) {
    std::printf("  %-16s %s\n", p.name.c_str(), p.description.c_str());
  }
}

void PrintRegistries(const dlio::Registries& r, const std::string& what) {
  const bool all = what.empty() || what == "all";
  if (all || what == "workloads") PrintWorkloads();
  if (all || what == "formats") PrintEntries("formats", r.formats.List());
  if (all || what == "storages") PrintEntries("storages", r.storages.List());
  if (all || what == "samplers") PrintEntries("samplers", r.samplers.List());
  if (all || what == "pipelines") PrintEntries("pipelines", r.pipelines.List());
  if (all || what == "computes") PrintEntries("compute emulators", r.computes.List());
  if (all || what == "checkpointers") PrintEntries("checkpointers", r.checkpointers.List());
}

void PrintConfigKeys() {
  for (const auto& k : dlio::ConfigKeyDocs()) {
    const std::string& values = k.accepted_values.empty() ? k.range : k.accepted_values;
    const std::string accepted = values.empty() ? "" : " (accepted: " + values + ")";
    std::printf("%-44s %-10s %-14s %s%s\n", k.key.c_str(), k.type.c_str(), k.default_value.c_str(),
                k.description.c_str(), accepted.c_str());
  }
}

}  // namespace

void DeclareListOptions(CLI::App* command, ListOptions* options) {
  command->add_option("kind", options->kind,
                      "workloads, formats, storages, samplers, pipelines, computes, "
                      "checkpointers, keys (default: all but keys)");
  command->add_flag("--markdown", options->markdown,
                    "keys: print the key reference of docs/configuration.md (markdown tables; "
                    "tools/update_config_docs.sh puts it into the document)");
}

int List(const ListOptions& options) {
  dlio::Registries r;
  if (auto s = dlio::RegisterBuiltins(&r); !s.ok()) return Fail(s, kExitRunError);
  const std::string& what = options.kind;
  if (options.markdown && what != "keys") {
    return Fail(dlio::Status::InvalidArgument("list: --markdown applies to 'keys' only, not '" +
                                              what + "'"),
                kExitUsage);
  }
  if (options.markdown) {
    std::fputs(dlio::ConfigKeysMarkdown().c_str(), stdout);
    return kExitOk;
  }
  PrintRegistries(r, what);
  if (what == "keys") PrintConfigKeys();
  for (const char* k : kKnownKinds) {
    if (what == k) return kExitOk;
  }
  return Fail(dlio::Status::InvalidArgument(
                  "list: unknown kind '" + what +
                  "' (known: workloads, formats, storages, samplers, pipelines, computes, "
                  "checkpointers, keys)"),
              kExitUsage);
}

}  // namespace dlio_run
