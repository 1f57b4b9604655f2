// The C API over libdlio: each entry point turns its Status into an int and the thread's last
// error, and catches whatever a dependency might throw so that nothing unwinds into C.
#include "dlio/dlio_c.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "dlio/comm.h"
#include "dlio/config.h"
#include "dlio/generator.h"
#include "dlio/loop.h"
#include "dlio/registries.h"
#include "dlio/runner.h"
#include "dlio/status.h"
#include "dlio/version.h"
#include "dlio/workloads.h"

struct dlio_config {
  dlio::WorkloadConfig config;
  std::vector<std::string> warnings;
};

// Members are destroyed bottom-up: the lease goes back to the pipeline before `loop` (pipeline,
// then source) is destroyed, and the loop before the format, storage and tracer it uses.
struct dlio_loader {
  dlio::WorkloadConfig config;  // validated, paths resolved
  dlio::Split split = dlio::Split::kTrain;
  int rank = 0, world = 1;
  std::unique_ptr<dlio::Registries> registries;
  std::unique_ptr<dlio::Tracer> tracer;
  std::unique_ptr<dlio::Storage> storage;
  std::unique_ptr<dlio::Format> format;
  dlio::LoopParts loop;
  std::vector<dlio::SampleRef> plan;
  std::vector<dlio_sample> samples;  // the C view of the current batch, reused
  dlio_stats stats{};
  bool epoch_started = false;
  std::atomic<bool> stopped{false};
  dlio::BatchLease lease;
};

namespace {

// Validate() plus the capability rules against the built-in implementations (the C API registers
// no others).
dlio::Status ValidateWithBuiltins(const dlio::WorkloadConfig& c) {
  DLIO_RETURN_NOT_OK(c.Validate());
  dlio::Registries registries;
  DLIO_RETURN_NOT_OK(dlio::RegisterBuiltins(&registries));
  return dlio::ValidateCapabilities(c, registries);
}

static_assert(DLIO_INVALID_ARGUMENT == static_cast<int>(dlio::StatusCode::kInvalidArgument));
static_assert(DLIO_IO_ERROR == static_cast<int>(dlio::StatusCode::kIOError));
static_assert(DLIO_CANCELLED == static_cast<int>(dlio::StatusCode::kCancelled));
static_assert(DLIO_INTERNAL == static_cast<int>(dlio::StatusCode::kInternal));

// The one mutable global: C has no other channel for a message beside an int return, and per-thread
// storage (like errno) keeps concurrent callers from seeing each other's errors.
thread_local std::string t_last_error;

int Finish(const dlio::Status& status) {
  if (status.ok()) {
    t_last_error.clear();
    return DLIO_OK;
  }
  t_last_error = status.message();
  return static_cast<int>(status.code());
}

// Runs `body` (returning a Status) with every exception turned into a status.
template <typename F>
int Guard(F&& body) noexcept {
  try {
    return Finish(body());
  } catch (const std::bad_alloc&) {
    return Finish(dlio::Status::ResourceExhausted("out of memory"));
  } catch (const std::exception& e) {
    return Finish(dlio::Status::Internal(std::string("unexpected exception: ") + e.what()));
  } catch (...) {
    return Finish(dlio::Status::Internal("unexpected exception"));
  }
}

dlio::Status Null(const char* function, const char* argument) {
  return dlio::Status::InvalidArgument(std::string(function) + ": " + argument + " is NULL");
}

char* CopyString(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, s.data(), s.size() + 1);
  return out;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

dlio::Status NewConfig(dlio::Result<dlio::WorkloadConfig> loaded, std::vector<std::string> warnings,
                       dlio_config** out) {
  if (!loaded.ok()) return loaded.status();
  auto handle = std::make_unique<dlio_config>();
  handle->config = std::move(loaded).value();
  handle->warnings = std::move(warnings);
  *out = handle.release();
  return dlio::Status::OK();
}

// dlio-run's log: the same file and line format (see apps/dlio-run/main.cc), without the console.
std::shared_ptr<spdlog::logger> MakeRunLogger(const dlio::WorkloadConfig& config) {
  std::vector<spdlog::sink_ptr> sinks;
  if (!config.output.log_file.empty()) {
    try {
      auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(
          config.output.folder + "/" + config.output.log_file, true);
      file->set_pattern("%Y-%m-%dT%H:%M:%S.%f [%l] %v");
      sinks.push_back(file);
    } catch (const spdlog::spdlog_ex&) {
      // As dlio-run: a log file that cannot be opened does not stop the run.
    }
  }
  auto logger = std::make_shared<spdlog::logger>("dlio", sinks.begin(), sinks.end());
  const dlio::LogLevel level = config.output.log_level;
  logger->set_level(level == dlio::LogLevel::kDebug   ? spdlog::level::debug
                    : level == dlio::LogLevel::kWarn  ? spdlog::level::warn
                    : level == dlio::LogLevel::kError ? spdlog::level::err
                                                      : spdlog::level::info);
  logger->flush_on(spdlog::level::warn);
  return logger;
}

dlio::Status CheckLoader(const dlio_loader* loader, const char* function) {
  if (loader == nullptr) return Null(function, "loader");
  if (loader->stopped.load()) {
    return dlio::Status::Cancelled(std::string(function) + ": the loader was stopped");
  }
  return dlio::Status::OK();
}

dlio::Status CreateLoader(const dlio_config* config, int rank, int world, int split,
                          const uint64_t* random_seed, dlio_loader** out) {
  if (config == nullptr) return Null("dlio_loader_create", "config");
  if (out == nullptr) return Null("dlio_loader_create", "out");
  if (world < 1 || rank < 0 || rank >= world) {
    return dlio::Status::InvalidArgument("dlio_loader_create: rank ", rank,
                                         " is not in [0, world) for world ", world);
  }
  if (split != DLIO_SPLIT_TRAIN && split != DLIO_SPLIT_EVAL) {
    return dlio::Status::InvalidArgument("dlio_loader_create_ex: split ", split,
                                         " is neither DLIO_SPLIT_TRAIN nor DLIO_SPLIT_EVAL");
  }
  DLIO_RETURN_NOT_OK(ValidateWithBuiltins(config->config));
  auto l = std::make_unique<dlio_loader>();
  l->registries = std::make_unique<dlio::Registries>();
  DLIO_RETURN_NOT_OK(dlio::RegisterBuiltins(l->registries.get()));
  // As RunWorkload: paths resolved, the format's record sizes and `scale` applied, so a loader
  // reads the files a run generated.
  DLIO_ASSIGN_OR_RETURN(l->config, dlio::RunConfigFor(config->config, world, *l->registries));
  l->split = split == DLIO_SPLIT_TRAIN ? dlio::Split::kTrain : dlio::Split::kEval;
  l->rank = rank;
  l->world = world;
  const dlio::WorkloadConfig& c = l->config;

  uint64_t seed = 0;
  if (dlio::UsesRandomShuffle(c)) {
    if (random_seed != nullptr) {
      seed = *random_seed;
    } else if (world > 1) {
      return dlio::Status::InvalidArgument(
          "reader.file_shuffle / reader.sample_shuffle 'random' with world ", world,
          ": the ranks must agree on the random seed; use dlio_loader_create_ex with the same "
          "seed on every rank");
    } else {
      auto comm = dlio::MakeSerialComm();
      DLIO_ASSIGN_OR_RETURN(seed, dlio::SharedRandomSeed(comm.get()));
    }
  }
  if (c.output.trace || c.workflow.profiling) {
    std::error_code ec;
    std::filesystem::create_directories(c.output.folder, ec);
    if (ec) {
      return dlio::Status::IOError("output.folder '" + c.output.folder +
                                   "': cannot create: " + ec.message());
    }
  }
  DLIO_ASSIGN_OR_RETURN(l->tracer, dlio::MakeTracerFor(c, rank, world));
  DLIO_ASSIGN_OR_RETURN(l->storage,
                        dlio::MakeStorage(dlio::StorageOptionsFor(c), l->registries->storages,
                                          dlio::SystemClock(), l->tracer.get()));
  DLIO_ASSIGN_OR_RETURN(auto format_factory, l->registries->formats.Get(c.dataset.format));
  DLIO_ASSIGN_OR_RETURN(l->format, format_factory());
  dlio::LoopEnv env;
  env.registries = l->registries.get();
  env.storage = l->storage.get();
  env.format = l->format.get();
  env.tracer = l->tracer.get();
  env.rank = rank;
  env.world = world;
  env.random_seed = seed;
  // Run step: the allocator where the I/O model's Python stack leaves it (dlio/loop.h).
  dlio::MatchAllocatorToIoModel(c, *l->format, l->storage->capabilities().needs_mpi,
                                dlio::PipelineCapabilitiesFor(c, l->registries->pipelines));
  DLIO_ASSIGN_OR_RETURN(l->loop, dlio::MakeLoopParts(c, l->split, env));
  l->samples.reserve(l->loop.batch_size);
  *out = l.release();
  return dlio::Status::OK();
}

}  // namespace

extern "C" {

DLIO_C_API const char* dlio_version(void) { return dlio::kVersion; }

DLIO_C_API const char* dlio_last_error(void) { return t_last_error.c_str(); }

DLIO_C_API const char* dlio_status_name(int code) {
  static const char* const kNames[] = {"OK",
                                       "InvalidArgument",
                                       "NotFound",
                                       "AlreadyExists",
                                       "IOError",
                                       "Corruption",
                                       "OutOfRange",
                                       "Unimplemented",
                                       "FailedPrecondition",
                                       "Cancelled",
                                       "ResourceExhausted",
                                       "Internal"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == DLIO_INTERNAL + 1);
  return code >= 0 && code <= DLIO_INTERNAL ? kNames[code] : "Unknown";
}

DLIO_C_API void dlio_free_string(char* s) { std::free(s); }

DLIO_C_API int dlio_config_load(const char* path, const char* workload, dlio_config** out) {
  return Guard([&] {
    if (out == nullptr) return Null("dlio_config_load", "out");
    std::vector<std::string> warnings;
    auto loaded = dlio::LoadWorkload(path ? path : "", workload ? workload : "", &warnings);
    return NewConfig(std::move(loaded), std::move(warnings), out);
  });
}

DLIO_C_API int dlio_config_parse(const char* text, const char* source_name, dlio_config** out) {
  return Guard([&] {
    if (text == nullptr) return Null("dlio_config_parse", "text");
    if (out == nullptr) return Null("dlio_config_parse", "out");
    std::vector<std::string> warnings;
    auto parsed = dlio::ParseConfig(text, source_name ? source_name : "<config text>",
                                    dlio::WorkloadConfig(), &warnings);
    return NewConfig(std::move(parsed), std::move(warnings), out);
  });
}

DLIO_C_API int dlio_config_set(dlio_config* config, const char* key, const char* value) {
  return Guard([&] {
    if (config == nullptr) return Null("dlio_config_set", "config");
    if (key == nullptr) return Null("dlio_config_set", "key");
    std::string assignment = key;
    if (value != nullptr) assignment += std::string("=") + value;
    return dlio::ApplyOverride(&config->config, assignment, &config->warnings);
  });
}

DLIO_C_API int dlio_config_validate(const dlio_config* config) {
  return Guard([&] {
    if (config == nullptr) return Null("dlio_config_validate", "config");
    return ValidateWithBuiltins(config->config);
  });
}

DLIO_C_API int dlio_config_to_json(const dlio_config* config, char** out) {
  return Guard([&] {
    if (config == nullptr) return Null("dlio_config_to_json", "config");
    if (out == nullptr) return Null("dlio_config_to_json", "out");
    // With the record sizes the named format declares, as a run's config.json holds them.
    dlio::WorkloadConfig c = config->config;
    dlio::Registries registries;
    DLIO_RETURN_NOT_OK(dlio::RegisterBuiltins(&registries));
    DLIO_RETURN_NOT_OK(dlio::ApplyFormatRecordShapes(&c, registries));
    *out = CopyString(dlio::ConfigToJson(c));
    return dlio::Status::OK();
  });
}

DLIO_C_API int dlio_config_warnings(const dlio_config* config, char** out) {
  return Guard([&] {
    if (config == nullptr) return Null("dlio_config_warnings", "config");
    if (out == nullptr) return Null("dlio_config_warnings", "out");
    *out = CopyString(Join(config->warnings));
    return dlio::Status::OK();
  });
}

DLIO_C_API void dlio_config_free(dlio_config* config) { delete config; }

DLIO_C_API int dlio_generate(const dlio_config* config, int force) {
  return Guard([&]() -> dlio::Status {
    if (config == nullptr) return Null("dlio_generate", "config");
    dlio::WorkloadConfig c = config->config;
    c.workflow.generate_data = true;
    c.workflow.train = false;
    c.output.trace = false;
    c.workflow.profiling = false;
    dlio::RunEnv env;
    env.force_generate = force != 0;
    env.write_outputs = false;
    return dlio::RunWorkload(c, env).status();
  });
}

DLIO_C_API int dlio_run(const dlio_config* config, const char* output_dir, char** summary_json) {
  return Guard([&]() -> dlio::Status {
    if (config == nullptr) return Null("dlio_run", "config");
    dlio::WorkloadConfig c = config->config;
    if (output_dir != nullptr) c.output.folder = output_dir;
    DLIO_RETURN_NOT_OK(ValidateWithBuiltins(c));
    std::error_code ec;
    std::filesystem::create_directories(c.output.folder, ec);  // for the log, as dlio-run does
    auto logger = MakeRunLogger(c);
    for (const auto& w : config->warnings) logger->warn("{}", w);
    dlio::RunEnv env;
    env.log = [&logger](dlio::LogLevel level, const std::string& msg) {
      switch (level) {
        case dlio::LogLevel::kDebug:
          logger->debug("{}", msg);
          break;
        case dlio::LogLevel::kInfo:
          logger->info("{}", msg);
          break;
        case dlio::LogLevel::kWarn:
          logger->warn("{}", msg);
          break;
        case dlio::LogLevel::kError:
          logger->error("{}", msg);
          break;
      }
    };
    logger->info("dlio {}: workload '{}' (format {}, data in {}, outputs in {})", dlio::kVersion,
                 c.name, c.dataset.format, c.dataset.data_folder, c.output.folder);
    auto report = dlio::RunWorkload(c, env);
    if (!report.ok()) logger->error("{}", report.status().ToString());
    logger->flush();
    if (!report.ok()) return report.status();
    if (summary_json != nullptr) *summary_json = CopyString(report->summary_json);
    return dlio::Status::OK();
  });
}

DLIO_C_API int dlio_loader_create(const dlio_config* config, int rank, int world,
                                  dlio_loader** out) {
  return Guard([&] { return CreateLoader(config, rank, world, DLIO_SPLIT_TRAIN, nullptr, out); });
}

DLIO_C_API int dlio_loader_create_ex(const dlio_config* config, int rank, int world, int split,
                                     const uint64_t* random_seed, dlio_loader** out) {
  return Guard([&] { return CreateLoader(config, rank, world, split, random_seed, out); });
}

DLIO_C_API int dlio_loader_num_files(const dlio_loader* loader, uint64_t* out) {
  return Guard([&] {
    if (loader == nullptr) return Null("dlio_loader_num_files", "loader");
    if (out == nullptr) return Null("dlio_loader_num_files", "out");
    *out = loader->loop.source->num_files();
    return dlio::Status::OK();
  });
}

DLIO_C_API int dlio_loader_file_path(const dlio_loader* loader, uint64_t file, const char** out) {
  return Guard([&] {
    if (loader == nullptr) return Null("dlio_loader_file_path", "loader");
    if (out == nullptr) return Null("dlio_loader_file_path", "out");
    const uint64_t n = loader->loop.source->num_files();
    if (file >= n) {
      return dlio::Status::OutOfRange("dlio_loader_file_path: file ", file, " of ", n);
    }
    *out = loader->loop.source->file_path(static_cast<uint32_t>(file)).c_str();
    return dlio::Status::OK();
  });
}

DLIO_C_API int dlio_loader_start_epoch(dlio_loader* loader, uint64_t epoch, uint64_t* num_batches) {
  return Guard([&] {
    DLIO_RETURN_NOT_OK(CheckLoader(loader, "dlio_loader_start_epoch"));
    dlio_loader& l = *loader;
    l.lease.reset();
    dlio::PlanRequest req;
    req.epoch = epoch;
    req.rank = l.rank;
    req.world = l.world;
    req.samples_per_file = &l.loop.source->samples_per_file();
    DLIO_RETURN_NOT_OK(l.loop.sampler->Plan(req, &l.plan));
    // The runner's step count, without its minimum over ranks (the caller's loop owns that).
    const uint64_t b = l.loop.batch_size;
    uint64_t steps = l.loop.drop_last ? l.plan.size() / b : (l.plan.size() + b - 1) / b;
    const int64_t cap = l.config.train.total_training_steps;
    if (l.split == dlio::Split::kTrain && cap > 0) {
      steps = std::min<uint64_t>(steps, static_cast<uint64_t>(cap));
    }
    if (l.plan.size() > steps * b) l.plan.resize(steps * b);
    DLIO_RETURN_NOT_OK(l.loop.pipeline->StartEpoch(epoch, l.plan));
    l.epoch_started = true;
    ++l.stats.epochs;
    if (num_batches != nullptr) *num_batches = steps;
    return dlio::Status::OK();
  });
}

DLIO_C_API int dlio_loader_next(dlio_loader* loader, dlio_batch* out, int* end_of_epoch) {
  return Guard([&] {
    DLIO_RETURN_NOT_OK(CheckLoader(loader, "dlio_loader_next"));
    if (out == nullptr) return Null("dlio_loader_next", "out");
    if (end_of_epoch == nullptr) return Null("dlio_loader_next", "end_of_epoch");
    dlio_loader& l = *loader;
    *out = dlio_batch{};
    *end_of_epoch = 0;
    if (!l.epoch_started) {
      return dlio::Status::FailedPrecondition(
          "dlio_loader_next: no epoch started (call dlio_loader_start_epoch first)");
    }
    l.lease.reset();
    l.samples.clear();
    const dlio::Clock* clock = dlio::SystemClock();
    const int64_t t0 = clock->NowNanos();
    bool eoe = false;
    dlio::Status status = l.loop.pipeline->Next(&l.lease, &eoe);
    l.stats.wait_s += (clock->NowNanos() - t0) * 1e-9;
    DLIO_RETURN_NOT_OK(status);
    if (eoe || !l.lease) {
      *end_of_epoch = 1;
      return dlio::Status::OK();
    }
    const dlio::Batch& b = *l.lease;
    for (const dlio::Sample& s : b.samples) {
      l.samples.push_back(dlio_sample{s.data, s.size, s.ref.index, s.ref.file});
    }
    out->epoch = b.epoch;
    out->index = b.index;
    out->num_samples = l.samples.size();
    out->bytes = b.bytes;
    out->samples = l.samples.data();
    ++l.stats.batches;
    l.stats.samples += l.samples.size();
    l.stats.bytes += b.bytes;
    return dlio::Status::OK();
  });
}

DLIO_C_API int dlio_loader_release(dlio_loader* loader) {
  return Guard([&] {
    if (loader == nullptr) return Null("dlio_loader_release", "loader");
    loader->lease.reset();
    loader->samples.clear();
    return dlio::Status::OK();
  });
}

DLIO_C_API int dlio_loader_compute(dlio_loader* loader, int64_t step, double* seconds) {
  return Guard([&] {
    DLIO_RETURN_NOT_OK(CheckLoader(loader, "dlio_loader_compute"));
    const double s = loader->loop.compute->Step(step) * 1e-9;
    loader->stats.compute_s += s;
    if (seconds != nullptr) *seconds = s;
    return dlio::Status::OK();
  });
}

DLIO_C_API int dlio_loader_stats(const dlio_loader* loader, dlio_stats* out) {
  return Guard([&] {
    if (loader == nullptr) return Null("dlio_loader_stats", "loader");
    if (out == nullptr) return Null("dlio_loader_stats", "out");
    *out = loader->stats;
    const dlio::IoStats io = loader->storage->stats();
    out->read_ops = io.read_ops;
    out->read_bytes = io.read_bytes;
    out->opens = io.opens;
    return dlio::Status::OK();
  });
}

DLIO_C_API int dlio_loader_stop(dlio_loader* loader) {
  return Guard([&] {
    if (loader == nullptr) return Null("dlio_loader_stop", "loader");
    loader->stopped.store(true);
    dlio::Status stop = loader->loop.pipeline->Stop();
    dlio::Status flush = loader->tracer->Flush();
    return stop.ok() ? flush : stop;
  });
}

DLIO_C_API void dlio_loader_free(dlio_loader* loader) {
  if (loader == nullptr) return;
  try {
    loader->lease.reset();
    // Errors are lost here (free has no status); dlio_loader_stop first reports them.
    (void)loader->loop.pipeline->Stop();
    (void)loader->tracer->Flush();
  } catch (...) {
  }
  delete loader;
}

}  // extern "C"
