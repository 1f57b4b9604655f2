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
#include <string>
#include <vector>

#include "analyze.h"
#include "cache_serve.h"
#include "compare.h"
#include "dlio/registries.h"
#include "dlio/version.h"
#include "fit.h"
#include "inspect.h"
#include "list.h"
#include "profile.h"
#include "report.h"
#include "run_common.h"
#include "run_workload.h"
#include "subcommand.h"
#include "sweep.h"
#include "trace_merge.h"

namespace dlio_run {
namespace {

// Every subcommand, in the order `dlio-run --help` lists them.
std::vector<SubcommandRow> SubcommandTable() {
  return {
      Row("list", "list workloads, formats, storages, ... or config keys", &DeclareListOptions,
          &List),
      Row("inspect",
          "describe a data file as JSON; exits 1 when it cannot be read or the description lists "
          "problems (a failed checksum, no samples)",
          &DeclareInspectOptions, &Inspect),
      Row("trace-merge", "merge per-rank traces into one file, one Perfetto process per rank",
          &DeclareTraceMergeOptions, &TraceMerge),
      Row("profile",
          "run a program under libdlio_preload.so: one .pfw trace of its file I/O per process, "
          "then their analysis (analysis.json, analysis.txt) and report.html",
          &DeclareProfileOptions, &ProfileCommand),
      Row("analyze",
          "analyze I/O traces (.pfw/.pfw.gz of dlio, DFTracer or `dlio-run profile`, "
          "darshan-dxt-parser text, strace -f -ttt -T logs; a directory: its *.pfw files): times, "
          "bytes, bandwidth, Darshan counters, sizes, access patterns, timeline",
          &DeclareAnalyzeOptions, &Analyze),
      Row("compare",
          "how alike the I/O of two runs is: the DLIO paper's similarity (cosine of max-normalized "
          "read features, plus write features when either run writes), KS distances of request "
          "sizes, gaps and write sizes, and what differs, at the kernel level when both traces "
          "record the system calls beneath stdio calls, else at the call level they record",
          &DeclareCompareOptions, &Compare),
      Row("report",
          "write one self-contained HTML report (inline SVG charts) of traces or trace directories",
          &DeclareReportOptions, &RunReport),
      Row("fit",
          "derive a runnable dlio workload (DLIO YAML) from I/O traces or `dlio-run profile` "
          "directories: format, files, samples, sizes, threads, batch, compute time, shuffles, "
          "epochs, side reads, checkpoints, I/O model; each key with a confidence and a reason",
          &DeclareFitOptions, &RunFit),
      Row("cache-serve",
          "serve the tiered cache of a config's storage: section over a Unix socket to the "
          "processes of this node (libdlio_cache_preload.so), until SIGINT/SIGTERM "
          "(docs/caching.md)",
          &DeclareCacheServeOptions, &RunCacheServe),
      Row("sweep",
          "run the workload once per point of a grid of config values (--vary, repeatable: the "
          "cartesian product), each point in <output>/<key=value__...>/, in this process (under "
          "mpiexec every rank takes part in every point); or, with --until-au-below, search upward "
          "along the last --vary key for the largest value whose AU meets the target (MLPerf "
          "Storage's procedure). Writes sweep.csv, sweep.json, sweep.svg and sweep.html in the "
          "output folder and prints a table (docs/sweep.md)",
          &DeclareSweepOptions, &Sweep),
  };
}

// A declared subcommand: its CLI11 app, and what runs when the command line named it.
struct Declared {
  CLI::App* app;
  SubcommandRun run;
};

std::vector<Declared> DeclareSubcommands(CLI::App* app) {
  std::vector<Declared> declared;
  for (const SubcommandRow& row : SubcommandTable()) {
    CLI::App* command = app->add_subcommand(row.name, row.help);
    declared.push_back({command, row.declare(command)});
  }
  return declared;
}

int Run(const RunFlags& f, const std::vector<std::string>& overrides, int* argc, char*** argv) {
  dlio::Registries registries;
  if (auto s = dlio::RegisterBuiltins(&registries); !s.ok()) return Fail(s, kExitRunError);
  std::vector<std::string> warnings;
  auto config_or = BuildConfig(f, overrides, registries, &warnings);
  if (!config_or.ok()) return Fail(config_or.status(), kExitUsage);
  return RunConfig(f, registries, *config_or, warnings, argc, argv);
}

}  // namespace
}  // namespace dlio_run

int main(int argc, char** argv) {
  CLI::App app{
      "dlio-run: emulate the I/O of deep-learning training (DLIO workloads).\n"
      "Without a subcommand, runs a workload: the built-in 'default' unless --config or\n"
      "--workload names another. Overrides: `++workload.section.key=value` (DLIO/Hydra style) or\n"
      "`--set section.key=value`, applied in order after the config.",
      "dlio-run"};
  app.set_version_flag("--version", std::string("dlio-run ") + dlio::kVersion);
  app.allow_extras();
  dlio_run::RunFlags f;
  dlio_run::AddRunOptions(&app, &f);
  dlio_run::Invocation call{&app, nullptr, dlio_run::TakeProfileCommand(&argc, argv), &argc, &argv};
  const std::vector<dlio_run::Declared> subcommands = dlio_run::DeclareSubcommands(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, version or the error
    return code == 0 ? dlio_run::kExitOk : dlio_run::kExitUsage;
  }
  for (const dlio_run::Declared& command : subcommands) {
    if (!command.app->parsed()) continue;
    call.command = command.app;
    return command.run(call);
  }
  auto overrides = dlio_run::OverridesFrom(app.remaining());
  if (!overrides.ok()) return dlio_run::Fail(overrides.status(), dlio_run::kExitUsage);
  return dlio_run::Run(f, *overrides, &argc, &argv);
}
