// dlio-run: generate a dataset and/or train on it as a DLIO workload describes.
//
//   dlio-run                                  the default workload (generate, then train)
//   dlio-run --config unet3d.yaml ++workload.train.epochs=2
//   dlio-run --workload default --set reader.read_threads=4 --trace
//   dlio-run list [workloads|formats|storages|samplers|pipelines|computes|checkpointers|keys]
//   dlio-run inspect data/train/img_0_of_8.npz
//   mpiexec -n 4 dlio-run --config unet3d.yaml      (one rank per process; --comm auto picks MPI)
//   dlio-run trace-merge out/trace.pfw out/trace-*.pfw
//   dlio-run profile --output prof --data-dir /data -- python3 train.py
//   dlio-run analyze prof [--json] [--timeline-us N] [-o FILE]
//   dlio-run compare prof-app prof-emulation --json
//   dlio-run report prof -o report.html
//   dlio-run fit prof -o workload.yaml
//   dlio-run cache-serve cache.yaml --socket /tmp/dlio-cache.sock [--stats-json stats.json]
//   dlio-run sweep --config cfg.yaml --vary reader.read_threads=1,2,4 [--until-au-below 70]

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyze.h"
#include "cache_serve.h"
#include "compare.h"
#include "dlio/config.h"
#include "dlio/registries.h"
#include "dlio/runner.h"
#include "dlio/tracer.h"
#include "dlio/version.h"
#include "dlio/workloads.h"
#include "fit.h"
#include "isolate.h"
#include "profile.h"
#include "report.h"
#include "run_common.h"
#include "run_workload.h"
#include "sweep.h"

namespace {

using dlio_run::BuildConfig;
using dlio_run::Fail;
using dlio_run::kExitOk;
using dlio_run::kExitRunError;
using dlio_run::kExitUsage;
using dlio_run::RunFlags;

int Run(const RunFlags& f, const std::vector<std::string>& overrides, int* argc, char*** argv) {
  dlio::Registries registries;
  if (auto s = dlio::RegisterBuiltins(&registries); !s.ok()) return Fail(s, kExitRunError);
  std::vector<std::string> warnings;
  auto config_or = BuildConfig(f, overrides, registries, &warnings);
  if (!config_or.ok()) return Fail(config_or.status(), kExitUsage);
  return dlio_run::RunConfig(f, registries, *config_or, warnings, argc, argv);
}

int TraceMerge(const std::string& output, const std::vector<std::string>& inputs) {
  auto merged = dlio::MergeTraceFiles(inputs, output);
  if (!merged.ok()) return Fail(merged.status(), kExitRunError);
  std::printf("%s: %llu events from %zu trace%s (pids", output.c_str(),
              static_cast<unsigned long long>(merged->events), inputs.size(),
              inputs.size() == 1 ? "" : "s");
  for (int64_t pid : merged->pids) std::printf(" %lld", static_cast<long long>(pid));
  std::printf(")\n");
  if (merged->truncated_lines > 0) {
    std::fprintf(stderr, "dlio-run: warning: skipped %llu truncated last line%s\n",
                 static_cast<unsigned long long>(merged->truncated_lines),
                 merged->truncated_lines == 1 ? "" : "s");
  }
  return kExitOk;
}

int List(const std::string& what) {
  dlio::Registries r;
  if (auto s = dlio::RegisterBuiltins(&r); !s.ok()) return Fail(s, kExitRunError);
  auto print = [](const char* title, const auto& entries) {
    std::printf("%s:\n", title);
    for (const auto& e : entries) {
      std::printf("  %-16s %s\n", e.name.c_str(), e.description.c_str());
      if (!e.options.empty()) std::printf("  %-16s options: %s\n", "", e.options.c_str());
    }
  };
  const bool all = what.empty() || what == "all";
  if (all || what == "workloads") {
    std::printf("workloads:\n");
    for (const auto& p : dlio::WorkloadPresets()) {
      std::printf("  %-16s %s\n", p.name.c_str(), p.description.c_str());
    }
  }
  if (all || what == "formats") print("formats", r.formats.List());
  if (all || what == "storages") print("storages", r.storages.List());
  if (all || what == "samplers") print("samplers", r.samplers.List());
  if (all || what == "pipelines") print("pipelines", r.pipelines.List());
  if (all || what == "computes") print("compute emulators", r.computes.List());
  if (all || what == "checkpointers") print("checkpointers", r.checkpointers.List());
  if (what == "keys") {
    for (const auto& k : dlio::ConfigKeyDocs()) {
      const std::string& values = k.accepted_values.empty() ? k.range : k.accepted_values;
      const std::string accepted = values.empty() ? "" : " (accepted: " + values + ")";
      std::printf("%-44s %-10s %-14s %s%s\n", k.key.c_str(), k.type.c_str(),
                  k.default_value.c_str(), k.description.c_str(), accepted.c_str());
    }
  }
  static const char* kKnown[] = {"",         "all",       "workloads", "formats",       "storages",
                                 "samplers", "pipelines", "computes",  "checkpointers", "keys"};
  for (const char* k : kKnown) {
    if (what == k) return kExitOk;
  }
  return Fail(dlio::Status::InvalidArgument(
                  "list: unknown kind '" + what +
                  "' (known: workloads, formats, storages, samplers, pipelines, computes, "
                  "checkpointers, keys)"),
              kExitUsage);
}

struct InspectFlags {
  std::string path;
  std::string format;
  uint64_t transfer_size = 0;
  std::string sample_layout = "first_axis";
};

// Prints the file's DescribeJson. Exit 0 when it opened and describes no problems; 1 when it
// cannot be opened or its "problems" list is not empty (each printed to stderr too); 2 for an
// unknown format name.
int Inspect(const InspectFlags& f) {
  dlio::Registries r;
  if (auto s = dlio::RegisterBuiltins(&r); !s.ok()) return Fail(s, kExitRunError);
  auto storage = dlio::NewPosixStorage(dlio::StorageOptions{});
  storage->Bind(dlio::SystemClock(), nullptr);
  std::string name = f.format;
  if (name.empty()) {
    auto detected = dlio::DetectFormat(r.formats, storage.get(), f.path);
    if (!detected.ok()) return Fail(detected.status(), kExitRunError);
    name = *detected;
  }
  auto factory = r.formats.Get(name);
  if (!factory.ok()) return Fail(factory.status(), kExitUsage);
  auto format = (*factory)();
  if (!format.ok()) return Fail(format.status(), kExitRunError);
  dlio::FormatOptions options;
  options.transfer_size = f.transfer_size;
  // inspect describes and checks the whole file (indexes included), not a framework's reads.
  options.io_model = dlio::IoModel::kNative;
  options.npy.sample_layout = dlio::EnumFromName<dlio::SampleLayout>(f.sample_layout)
                                  .value_or(dlio::SampleLayout::kFirstAxis);  // CLI11 checked it
  auto reader = (*format)->Open(storage.get(), f.path, options);
  if (!reader.ok()) return Fail(reader.status(), kExitRunError);
  const std::string json = (*reader)->DescribeJson();
  std::printf("%s\n", json.c_str());
  std::fflush(stdout);
  const nlohmann::json parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Fail(
        dlio::Status::Internal("inspect: the description of " + f.path + " is not a JSON object"),
        kExitRunError);
  }
  const auto problems = parsed.find("problems");
  if (problems == parsed.end() || !problems->is_array() || problems->empty()) return kExitOk;
  for (const auto& p : *problems) {
    std::fprintf(stderr, "dlio-run: problem: %s\n",
                 p.is_string() ? p.get<std::string>().c_str() : p.dump().c_str());
  }
  return kExitRunError;
}

// One subcommand: its CLI11 app, and what runs when the command line named it.
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// A subcommand whose Add*Command declares the options into `Options` and whose Run* takes them.
template <typename Options>
Subcommand Declared(CLI::App* app, CLI::App* (*add)(CLI::App*, Options*),
                    int (*run)(const Options&)) {
  auto options = std::make_shared<Options>();
  return {add(app, options.get()), [options, run] { return run(*options); }};
}

Subcommand AddList(CLI::App* app) {
  auto what = std::make_shared<std::string>();
  auto* list = app->add_subcommand("list", "list workloads, formats, storages, ... or config keys");
  list->add_option("kind", *what,
                   "workloads, formats, storages, samplers, pipelines, computes, checkpointers, "
                   "keys (default: all but keys)");
  return {list, [what] { return List(*what); }};
}

Subcommand AddInspect(CLI::App* app) {
  auto f = std::make_shared<InspectFlags>();
  auto* inspect = app->add_subcommand(
      "inspect",
      "describe a data file as JSON; exits 1 when it cannot be read or the description lists "
      "problems (a failed checksum, no samples)");
  inspect->add_option("file", f->path, "the file")->required();
  inspect->add_option("-f,--format", f->format, "format name (default: detected)");
  inspect->add_option("--transfer-size", f->transfer_size, "read request size in bytes");
  inspect
      ->add_option("--sample-layout", f->sample_layout,
                   "npy/npz: sample axis when the file's labels do not tell "
                   "(dataset.sample_layout)")
      ->check(CLI::IsMember({"first_axis", "last_axis"}));
  return {inspect, [f] {
            // In a child process: a reader crashing on a corrupt file becomes an error naming it.
            auto code = dlio_run::RunIsolated(f->path, [&] { return Inspect(*f); });
            return code.ok() ? *code : Fail(code.status(), kExitRunError);
          }};
}

Subcommand AddTraceMerge(CLI::App* app) {
  struct Flags {
    std::string output;
    std::vector<std::string> inputs;
  };
  auto f = std::make_shared<Flags>();
  auto* merge = app->add_subcommand(
      "trace-merge", "merge per-rank traces into one file, one Perfetto process per rank");
  merge->add_option("output", f->output, "merged trace (.pfw, or .pfw.gz)")->required();
  merge->add_option("inputs", f->inputs, "trace-<rank>-of-<ranks>.pfw[.gz] files")->required();
  return {merge, [f] { return TraceMerge(f->output, f->inputs); }};
}

// `command`: what followed `--` on the command line (dlio_run::TakeProfileCommand).
Subcommand AddProfile(CLI::App* app, std::vector<std::string> command) {
  auto options = std::make_shared<dlio_run::ProfileOptions>();
  auto* profile = app->add_subcommand(
      "profile",
      "run a program under libdlio_preload.so: one .pfw trace of its file I/O per process, "
      "then their analysis (analysis.json, analysis.txt) and report.html");
  profile->add_option("-o,--output", options->output,
                      "trace directory (default dlio-profile; created; traces never replaced, "
                      "analysis.json/.txt and report.html rewritten)");
  profile->add_option("--data-dir", options->data_dirs,
                      "trace only files under this prefix (repeatable; default: every file but "
                      ".py/.pyc/.so and /proc, /sys, /dev)");
  profile->add_option("command", options->command, "the program and its arguments, after --");
  return {profile, [options, command = std::move(command)] {
            if (!command.empty()) options->command = command;
            auto code = dlio_run::Profile(*options);
            return code.ok() ? *code : Fail(code.status(), kExitRunError);
          }};
}

// The run options belong after `sweep`; before it they would be silently ignored.
Subcommand AddSweep(CLI::App* app, int* argc, char*** argv) {
  auto options = std::make_shared<dlio_run::SweepCommandOptions>();
  auto* sweep = dlio_run::AddSweepCommand(app, options.get());
  return {sweep, [app, sweep, options, argc, argv] {
            for (const CLI::Option* opt : app->get_options()) {
              if (opt->count() > 0) {
                return Fail(dlio::Status::InvalidArgument("sweep: give ", opt->get_name(),
                                                          " after 'sweep' (dlio-run sweep ",
                                                          opt->get_name(), " ...)"),
                            kExitUsage);
              }
            }
            if (!app->remaining().empty()) {
              return Fail(dlio::Status::InvalidArgument("sweep: give '", app->remaining().front(),
                                                        "' after 'sweep'"),
                          kExitUsage);
            }
            return dlio_run::RunSweepCommand(*options, sweep->remaining(), argc, argv);
          }};
}

// Every subcommand, in the order `dlio-run --help` lists them.
std::vector<Subcommand> AddSubcommands(CLI::App* app, std::vector<std::string> profile_command,
                                       int* argc, char*** argv) {
  return {AddList(app),
          AddInspect(app),
          AddTraceMerge(app),
          AddProfile(app, std::move(profile_command)),
          Declared(app, &dlio_run::AddAnalyzeCommand, &dlio_run::Analyze),
          Declared(app, &dlio_run::AddCompareCommand, &dlio_run::Compare),
          Declared(app, &dlio_run::AddReportCommand, &dlio_run::RunReport),
          Declared(app, &dlio_run::AddFitCommand, &dlio_run::RunFit),
          Declared(app, &dlio_run::AddCacheServeCommand, &dlio_run::RunCacheServe),
          AddSweep(app, argc, argv)};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "dlio-run: emulate the I/O of deep-learning training (DLIO workloads).\n"
      "Without a subcommand, runs a workload: the built-in 'default' unless --config or\n"
      "--workload names another. Overrides: `++workload.section.key=value` (DLIO/Hydra style) or\n"
      "`--set section.key=value`, applied in order after the config.",
      "dlio-run"};
  app.set_version_flag("--version", std::string("dlio-run ") + dlio::kVersion);
  app.allow_extras();
  RunFlags f;
  dlio_run::AddRunOptions(&app, &f);
  std::vector<std::string> profile_command = dlio_run::TakeProfileCommand(&argc, argv);
  const std::vector<Subcommand> subcommands =
      AddSubcommands(&app, std::move(profile_command), &argc, &argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, version or the error
    return code == 0 ? kExitOk : kExitUsage;
  }
  for (const Subcommand& command : subcommands) {
    if (command.app->parsed()) return command.run();
  }
  auto overrides = dlio_run::OverridesFrom(app.remaining());
  if (!overrides.ok()) return Fail(overrides.status(), kExitUsage);
  return Run(f, *overrides, &argc, &argv);
}
