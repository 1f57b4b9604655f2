#include "run_common.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "dlio/comm.h"
#include "dlio/str_cat.h"
#include "dlio/workloads.h"

namespace dlio_run {
namespace {

std::string HumanRate(double bytes_per_s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB/s", bytes_per_s / (1024.0 * 1024.0));
  return buf;
}

// Whether the configured storage needs MPI initialized before it is built (mpiio, or slow over it).
bool StorageNeedsMpi(const dlio::WorkloadConfig& c, const dlio::Registries& registries) {
  dlio::StorageOptions options;
  options.name = c.storage.storage_type;
  options.backends = c.storage.backends;  // slow's inner storage
  auto capabilities = dlio::StorageCapabilitiesFor(options, registries.storages);
  return capabilities.ok() && capabilities->needs_mpi;
}

}  // namespace

void AddRunOptions(CLI::App* app, RunFlags* f) {
  app->add_option("-c,--config", f->config_file, "DLIO workload YAML or JSON file")
      ->check(CLI::ExistingFile);
  app->add_option("-w,--workload", f->workload, "built-in workload preset (see `list workloads`)");
  app->add_option("-s,--set", f->sets, "override a key: section.key=value (repeatable)");
  auto* gen = app->add_flag("-g,--generate", f->generate,
                            "generate the dataset first (workflow.generate_data)");
  app->add_flag("--no-generate", f->no_generate, "do not generate, even if the config says so")
      ->excludes(gen);
  app->add_flag("--no-train", f->no_train, "do not train (with --generate: generate only)");
  app->add_option("-o,--output", f->output, "output folder (output.folder)");
  app->add_flag("-t,--trace", f->trace, "write a DFTracer-style trace (output.trace)");
  app->add_flag("--force", f->force,
                "generate into a non-empty folder that is not a dlio dataset (never overwrites)");
  app->add_option("--log-level", f->log_level, "debug, info, warn or error (output.log_level)")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
  app->add_flag("-q,--quiet", f->quiet, "only warnings and the summary");
  app->add_option("--comm", f->comm,
                  "auto (MPI when started by mpiexec/mpirun/srun or with storage mpiio), mpi, "
                  "serial")
      ->check(CLI::IsMember({"auto", "mpi", "serial"}));
}

dlio::Result<std::vector<std::string>> OverridesFrom(const std::vector<std::string>& extras) {
  std::vector<std::string> overrides;
  for (const auto& extra : extras) {
    if (extra.rfind("+", 0) != 0 && extra.find('=') == std::string::npos) {
      return dlio::Status::InvalidArgument("unexpected argument '", extra,
                                           "' (overrides look like ++workload.a.b=value)");
    }
    overrides.push_back(extra);
  }
  return overrides;
}

namespace {
const char* program_name = "dlio-run";
}  // namespace

void SetProgramName(const char* name) { program_name = name; }

int Fail(const dlio::Status& status, int code) {
  std::fprintf(stderr, "%s: error: %s\n", program_name, status.ToString().c_str());
  return code;
}

dlio::Result<dlio::WorkloadConfig> BuildConfig(const RunFlags& f,
                                               const std::vector<std::string>& overrides,
                                               const dlio::Registries& registries,
                                               std::vector<std::string>* warnings,
                                               const std::vector<std::string>& last) {
  DLIO_ASSIGN_OR_RETURN(dlio::WorkloadConfig config,
                        dlio::LoadWorkload(f.config_file, f.workload, warnings));
  for (const auto& o : overrides) DLIO_RETURN_NOT_OK(dlio::ApplyOverride(&config, o, warnings));
  for (const auto& o : f.sets) DLIO_RETURN_NOT_OK(dlio::ApplyOverride(&config, o, warnings));
  for (const auto& o : last) DLIO_RETURN_NOT_OK(dlio::ApplyOverride(&config, o, warnings));
  if (f.generate) config.workflow.generate_data = true;
  if (f.no_generate) config.workflow.generate_data = false;
  if (f.no_train) config.workflow.train = false;
  if (!f.output.empty()) config.output.folder = f.output;
  if (f.trace) config.output.trace = true;
  if (!f.log_level.empty()) {
    DLIO_RETURN_NOT_OK(dlio::ApplyOverride(&config, "output.log_level=" + f.log_level, warnings));
  }
  DLIO_RETURN_NOT_OK(config.Validate());
  DLIO_RETURN_NOT_OK(dlio::ValidateCapabilities(config, registries));
  return config;
}

bool IsConfigError(const dlio::Status& status) {
  switch (status.code()) {
    case dlio::StatusCode::kInvalidArgument:
    case dlio::StatusCode::kResourceExhausted:
    case dlio::StatusCode::kNotFound:
    case dlio::StatusCode::kUnimplemented:
      return true;
    default:
      return false;
  }
}

std::string CommNameFor(const RunFlags& f, const dlio::WorkloadConfig& config,
                        const dlio::Registries& registries) {
  return f.comm == "auto" && StorageNeedsMpi(config, registries) && dlio::BuiltWithMpi() ? "mpi"
                                                                                         : f.comm;
}

std::shared_ptr<spdlog::logger> MakeLogger(const std::string& log_file, bool quiet, int rank,
                                           int world) {
  std::vector<spdlog::sink_ptr> sinks;
  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  const std::string who = world > 1 ? dlio::StrCat(" rank ", rank) : "";
  console->set_pattern("[dlio" + who + " %^%l%$] %v");
  if (quiet || rank != 0) console->set_level(spdlog::level::warn);
  sinks.push_back(console);
  if (!log_file.empty()) {
    try {
      auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_file, true);
      file->set_pattern("%Y-%m-%dT%H:%M:%S.%f [%l" + who + "] %v");
      sinks.push_back(file);
    } catch (const spdlog::spdlog_ex& e) {
      std::fprintf(stderr, "dlio-run: cannot open log file %s: %s\n", log_file.c_str(), e.what());
    }
  }
  auto logger = std::make_shared<spdlog::logger>("dlio", sinks.begin(), sinks.end());
  logger->flush_on(spdlog::level::warn);
  return logger;
}

std::shared_ptr<spdlog::logger> MakeRunLogger(const dlio::WorkloadConfig& config, bool quiet,
                                              int rank, int world) {
  std::error_code ec;
  std::filesystem::create_directories(config.output.folder, ec);
  const std::string log_file = config.output.log_file.empty() || ec || rank != 0
                                   ? ""
                                   : config.output.folder + "/" + config.output.log_file;
  auto logger = MakeLogger(log_file, quiet, rank, world);
  logger->set_level(SpdlogLevel(config.output.log_level));
  return logger;
}

spdlog::level::level_enum SpdlogLevel(dlio::LogLevel level) {
  switch (level) {
    case dlio::LogLevel::kDebug:
      return spdlog::level::debug;
    case dlio::LogLevel::kWarn:
      return spdlog::level::warn;
    case dlio::LogLevel::kError:
      return spdlog::level::err;
    case dlio::LogLevel::kInfo:
      break;
  }
  return spdlog::level::info;
}

void ProgressLine::Update(const dlio::RunProgress& p) {
  if (!enabled_) return;
  const int64_t now = dlio::SystemClock()->NowNanos();
  const bool last = p.steps > 0 && p.step == p.steps;
  if (!last && now - last_ns_ < 100'000'000) return;
  last_ns_ = now;
  char buf[256];
  const double rate = p.elapsed_s > 0 ? p.bytes / p.elapsed_s : 0;
  if (std::string(p.phase) == "generate") {
    std::snprintf(buf, sizeof buf, "generate: %llu/%llu files, %s",
                  static_cast<unsigned long long>(p.step), static_cast<unsigned long long>(p.steps),
                  HumanRate(rate).c_str());
  } else {
    std::snprintf(buf, sizeof buf, "%s: epoch %llu/%llu step %llu/%llu, %s", p.phase,
                  static_cast<unsigned long long>(p.epoch),
                  static_cast<unsigned long long>(p.epochs),
                  static_cast<unsigned long long>(p.step), static_cast<unsigned long long>(p.steps),
                  HumanRate(rate).c_str());
  }
  std::fprintf(stderr, "\r\033[K%s", buf);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::Finish() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

void WireRunEnv(spdlog::logger* logger, ProgressLine* progress, dlio::RunEnv* env) {
  env->log = [logger, progress](dlio::LogLevel level, const std::string& msg) {
    progress->Finish();
    logger->log(SpdlogLevel(level), "{}", msg);
  };
  env->progress = [progress](const dlio::RunProgress& p) { progress->Update(p); };
}

}  // namespace dlio_run
