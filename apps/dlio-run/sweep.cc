#include "sweep.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>

#include "dlio/comm.h"
#include "dlio/sweep.h"
#include "sweep_point.h"
#include "sweep_resume.h"
#include "trace_cli.h"

namespace dlio_run {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTables[] = {"sweep.json", "sweep.csv", "sweep.svg", "sweep.html"};

// Everything known before the first point runs: the grid and each point's config.
struct SweepSetup {
  std::vector<dlio::SweepAxis> axes;
  std::vector<dlio::WorkloadConfig> configs;              // one per grid point, in grid order
  std::vector<std::string> names;                         // SweepPointName per grid point
  std::vector<std::string> digests;                       // ConfigDigest per grid point
  std::map<std::string, dlio::SweepMeasurement> earlier;  // --resume: completed points by name
  std::string folder;       // the sweep's output folder (output.folder, as a run has it)
  std::string data_folder;  // dataset.data_folder, as a run has it
  std::string workload;
  std::string comm_name;
  bool data_per_point = false;
  std::vector<std::string> warnings;  // the first point's config's
};

bool IsSweepOutput(std::string_view head) {
  return head.find(dlio::kSweepGeneratorTag) != std::string_view::npos ||
         head.rfind("index,name,", 0) == 0;  // sweep.csv's header
}

dlio::Result<std::vector<dlio::SweepAxis>> ParseAxes(const SweepCommandOptions& o) {
  std::vector<dlio::SweepAxis> axes;
  for (const auto& spec : o.vary) {
    DLIO_ASSIGN_OR_RETURN(dlio::SweepAxis axis, dlio::ParseSweepAxis(spec));
    if (axis.key == "output.folder") {
      return dlio::Status::InvalidArgument(
          "--vary output.folder: each point's output folder is <sweep output>/<point name>; give "
          "the sweep's folder with --output");
    }
    axes.push_back(std::move(axis));
  }
  DLIO_RETURN_NOT_OK(dlio::CheckSweepAxes(axes));
  if (o.until_au_below >= 0) DLIO_RETURN_NOT_OK(dlio::SortLastAxisForSearch(&axes));
  return axes;
}

// A varied key of the dataset section changes the files: each point then needs its own.
bool WantsDataPerPoint(const SweepCommandOptions& o, const std::vector<dlio::SweepAxis>& axes) {
  bool dataset_key = false;
  for (const auto& a : axes) {
    if (a.key == "dataset.data_folder") return false;  // the points' folders are given
    dataset_key = dataset_key || a.key.rfind("dataset.", 0) == 0;
  }
  return o.data_per_point || dataset_key;
}

// The tables this sweep will write: never a file dlio did not write, and an earlier sweep's only
// with --replace.
dlio::Status CheckOutputFolder(const std::string& folder, bool replace) {
  for (const char* name : kTables) {
    DLIO_RETURN_NOT_OK(CheckCommandOutput(folder + "/" + name, IsSweepOutput));
  }
  std::error_code ec;
  if (!replace && fs::exists(folder + "/sweep.json", ec)) {
    return dlio::Status::AlreadyExists(
        folder,
        " holds an earlier sweep (sweep.json): give another --output, or --replace to "
        "replace its tables (points of the same name then rewrite their folders, as a "
        "run rewrites its output folder)");
  }
  return dlio::Status::OK();
}

// The point's config, its folders put under the sweep's.
dlio::Result<dlio::WorkloadConfig> PointConfig(const SweepCommandOptions& o,
                                               const std::vector<std::string>& overrides,
                                               const dlio::Registries& registries,
                                               const dlio::SweepPoint& point, SweepSetup* s,
                                               std::vector<std::string>* warnings) {
  auto config =
      BuildConfig(o.run, overrides, registries, warnings, dlio::SweepOverrides(s->axes, point));
  if (!config.ok()) {
    return dlio::Status::InvalidArgument("sweep point ", dlio::SweepPointLabel(s->axes, point),
                                         ": ", config.status().ToString());
  }
  if (s->configs.empty()) {  // the first point: the folders as a run would use them
    s->folder = config->output.folder;
    s->data_folder = config->dataset.data_folder;
    s->workload = config->name;
  }
  const std::string name = dlio::SweepPointName(s->axes, point);
  config->output.folder = s->folder + "/" + name;
  if (s->data_per_point) config->dataset.data_folder = s->data_folder + "/" + name;
  return config;
}

// Only the points' configs are validated: the config without the --vary values need not be
// valid (a chunk size may be given by --vary alone).
dlio::Result<SweepSetup> Setup(const SweepCommandOptions& o,
                               const std::vector<std::string>& overrides,
                               const dlio::Registries& registries) {
  SweepSetup s;
  DLIO_ASSIGN_OR_RETURN(s.axes, ParseAxes(o));
  s.comm_name = o.run.comm;
  s.data_per_point = WantsDataPerPoint(o, s.axes);
  for (const auto& point : dlio::ExpandSweepGrid(s.axes)) {
    std::vector<std::string> later_warnings;
    DLIO_ASSIGN_OR_RETURN(dlio::WorkloadConfig config,
                          PointConfig(o, overrides, registries, point, &s,
                                      s.configs.empty() ? &s.warnings : &later_warnings));
    if (o.until_au_below >= 0 && !config.workflow.train) {
      return dlio::Status::InvalidArgument(
          "--until-au-below needs training runs (workflow.train is false)");
    }
    if (CommNameFor(o.run, config, registries) == "mpi") s.comm_name = "mpi";
    s.names.push_back(dlio::SweepPointName(s.axes, point));
    s.digests.push_back(ConfigDigest(config));
    s.configs.push_back(std::move(config));
  }
  // The earlier sweep first: what is wrong with it is said field by field, not as "not an
  // earlier output" (a file without the generator tag in its head).
  if (o.resume) {
    DLIO_ASSIGN_OR_RETURN(s.earlier, ReadEarlierSweep(s.folder + "/sweep.json"));
  }
  DLIO_RETURN_NOT_OK(CheckOutputFolder(s.folder, o.replace || o.resume));
  return s;
}

// Rank 0 rewrites every table after each point, so a sweep cut short keeps what it measured.
dlio::Status WriteTables(const SweepSetup& s, const dlio::SweepResult& r) {
  std::error_code ec;
  fs::create_directories(s.folder, ec);
  if (ec) return dlio::Status::IOError(s.folder, ": ", ec.message());
  const std::string title = "dlio sweep: " + s.workload + " (" + s.folder + ")";
  const std::string texts[] = {dlio::SweepJson(r), dlio::SweepCsv(r), dlio::SweepSvg(r),
                               dlio::SweepHtml(r, title)};
  for (size_t i = 0; i < std::size(kTables); ++i) {
    DLIO_RETURN_NOT_OK(WriteCommandOutput(s.folder + "/" + kTables[i], texts[i], IsSweepOutput));
  }
  return dlio::Status::OK();
}

std::string PointLine(const dlio::SweepResult& r) {
  const dlio::SweepPointResult& p = r.points.back();
  char figures[160];
  std::snprintf(figures, sizeof figures, "AU %.2f%%, %.1f samples/s, %.1f MB/s", p.m.au_percent,
                p.m.samples_per_s, p.m.bytes_per_s / 1e6);
  std::string line = "sweep point " + std::to_string(p.index + 1) + "/" +
                     std::to_string(r.grid_points) + " (" + dlio::SweepPointLabel(r.axes, p.point) +
                     "): ";
  line += p.ok() ? figures : "failed: " + p.error;
  if (p.m.resumed) line += " (taken over from the earlier sweep)";
  if (r.until_au_below && p.ok()) line += p.meets_target ? " (meets the target)" : " (below)";
  char rss[64];
  std::snprintf(rss, sizeof rss, "; resident %.1f MiB", ResidentBytes() / 1048576.0);
  return line + rss;
}

// Rank 0's first lines: the setup's warnings, what the sweep will run, where.
void LogSweepStart(spdlog::logger* logger, const SweepSetup& setup, const dlio::Comm& comm) {
  for (const auto& w : setup.warnings) logger->warn("{}", w);
  const dlio::WorkloadConfig& first = setup.configs.front();
  if (!setup.data_per_point && first.workflow.generate_data && first.workflow.train &&
      !first.dataset.keep_files) {
    logger->info(
        "sweep: every point generates the dataset again and removes it after training "
        "(dataset.keep_files=false); --set dataset.keep_files=true generates it once");
  }
  logger->info("sweep: {} point{} of workload '{}', outputs in {}{} ({} comm, {} rank{})",
               setup.configs.size(), setup.configs.size() == 1 ? "" : "s", setup.workload,
               setup.folder, setup.data_per_point ? ", a dataset per point" : "", comm.name(),
               comm.size(), comm.size() == 1 ? "" : "s");
}

}  // namespace

void DeclareSweepOptions(CLI::App* cmd, SweepCommandOptions* o) {
  cmd->allow_extras();
  cmd->footer(
      "Overrides `++workload.section.key=value` may follow, as for a run. Exit 0: every point "
      "ran; 1: a point failed (recorded in the tables); 2: a usage error, before any point runs.");
  AddRunOptions(cmd, &o->run);
  cmd->add_option("--vary", o->vary,
                  "KEY=v1,v2,...: a config key and its values (repeatable; the last key varies "
                  "fastest); LO:HI[:STEP] of integers is every value from LO to HI")
      ->required()
      ->allow_extra_args(false);  // one KEY=... per --vary: later words are overrides
  cmd->add_option("--until-au-below", o->until_au_below,
                  "AU target in percent: along the last --vary key (numbers, taken in increasing "
                  "order), stop at the first point whose train AU is below it or that fails, for "
                  "each combination of the other keys; report the largest value meeting it")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_flag("--fail-fast", o->fail_fast,
                "stop at the first point that fails (default: record its error and go on)");
  cmd->add_flag("--replace", o->replace,
                "the output folder may hold an earlier sweep: replace its tables");
  cmd->add_flag("--resume", o->resume,
                "take over the points an earlier sweep in the output folder completed with the "
                "same whole config (its sweep.json), run the others; replaces its tables");
  cmd->add_flag("--data-per-point", o->data_per_point,
                "each point generates and reads its own dataset in <data_folder>/<point name> "
                "(automatic when a dataset.* key is varied)");
}

int Sweep(const SweepCommandOptions& options, const Invocation& call) {
  // The run options belong after `sweep`; before it they would be silently ignored.
  for (const CLI::Option* opt : call.root->get_options()) {
    if (opt->count() > 0) {
      return Fail(dlio::Status::InvalidArgument("sweep: give ", opt->get_name(),
                                                " after 'sweep' (dlio-run sweep ", opt->get_name(),
                                                " ...)"),
                  kExitUsage);
    }
  }
  if (!call.root->remaining().empty()) {
    return Fail(dlio::Status::InvalidArgument("sweep: give '", call.root->remaining().front(),
                                              "' after 'sweep'"),
                kExitUsage);
  }
  return RunSweepCommand(options, call.command->remaining(), call.argc, call.argv);
}

int RunSweepCommand(const SweepCommandOptions& o, const std::vector<std::string>& extras, int* argc,
                    char*** argv) {
  dlio::Registries registries;
  if (auto s = dlio::RegisterBuiltins(&registries); !s.ok()) return Fail(s, kExitRunError);
  auto overrides = OverridesFrom(extras);
  if (!overrides.ok()) return Fail(overrides.status(), kExitUsage);
  auto setup_or = Setup(o, *overrides, registries);
  if (!setup_or.ok()) return Fail(setup_or.status(), kExitUsage);
  const SweepSetup& setup = *setup_or;

  // MPI starts once the whole grid is known good (as for a single run).
  auto comm_or = dlio::MakeComm(setup.comm_name, argc, argv);
  if (!comm_or.ok()) return Fail(comm_or.status(), kExitRunError);
  std::unique_ptr<dlio::Comm> comm = std::move(comm_or).value();
  const int rank = comm->rank();
  auto logger = MakeLogger("", o.run.quiet, rank, comm->size());
  if (rank == 0) LogSweepStart(logger.get(), setup, *comm);

  dlio::Status write_status;
  dlio::SweepPlan plan;
  plan.axes = setup.axes;
  if (o.until_au_below >= 0) plan.until_au_below = o.until_au_below;
  plan.fail_fast = o.fail_fast;
  plan.on_point = [&](const dlio::SweepResult& r) {
    if (rank != 0) return;
    logger->info("{}", PointLine(r));
    if (auto s = WriteTables(setup, r); !s.ok() && write_status.ok()) {
      write_status = s;
      logger->error("{}", s.ToString());
    }
  };
  std::set<std::string> shown_warnings(setup.warnings.begin(), setup.warnings.end());
  const SweepPointEnv env{comm.get(), &registries, o.run.force, o.run.quiet, &shown_warnings};
  // Every rank has read the earlier sweep (--resume) before rank 0 rewrites it.
  if (auto s = comm->Barrier(); !s.ok()) return Fail(s, kExitRunError);
  const dlio::SweepResult result = dlio::RunSweep(
      plan, [&](const dlio::SweepPoint&, size_t i) -> dlio::Result<dlio::SweepMeasurement> {
        const auto earlier = setup.earlier.find(setup.names[i]);
        if (earlier != setup.earlier.end() && earlier->second.config_digest == setup.digests[i]) {
          return earlier->second;
        }
        DLIO_ASSIGN_OR_RETURN(dlio::SweepMeasurement m, RunSweepPoint(setup.configs[i], env));
        m.config_digest = setup.digests[i];
        return m;
      });
  if (rank == 0) {
    std::fputs(dlio::SweepTable(result).c_str(), stdout);
    std::printf("  outputs: %s/sweep.{csv,json,svg,html}\n", setup.folder.c_str());
  }
  if (!write_status.ok()) return kExitRunError;
  return result.failed() > 0 ? kExitRunError : kExitOk;
}

}  // namespace dlio_run
