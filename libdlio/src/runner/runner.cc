#include "dlio/runner.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "core/host_memory.h"
#include "dlio/compute.h"
#include "dlio/data_source.h"
#include "dlio/distribution.h"
#include "dlio/loop.h"
#include "dlio/pipeline.h"
#include "dlio/sampler.h"
#include "dlio/side_io.h"
#include "dlio/tracer.h"
#include "dlio/version.h"
#include "runner/checkpoint_options.h"
#include "runner/preflight_run.h"
#include "runner/report.h"

namespace dlio {
namespace {

// Upper bound on the pipeline buffer memory the runner pre-touches before the first epoch.
constexpr uint64_t kMaxReservedPoolBytes = uint64_t{1} << 30;

using json = nlohmann::json;

// The parts of one training (or evaluation) loop (dlio/loop.h).
using Loop = LoopParts;

// Everything one rank's run owns, torn down in reverse order of construction.
struct RunState {
  const WorkloadConfig* config = nullptr;
  RunEnv env;
  std::unique_ptr<Registries> own_registries;
  const Registries* registries = nullptr;
  std::unique_ptr<Comm> own_comm;
  Comm* comm = nullptr;
  std::unique_ptr<Tracer> tracer;
  std::unique_ptr<Storage> storage;
  std::unique_ptr<Format> format;
  std::unique_ptr<Storage> checkpoint_storage;  // when checkpoint.storage_type names another
  std::unique_ptr<Checkpointer> checkpointer;
  // The loops live here, not in Train(), so that after an error they are torn down only once
  // the other ranks were stopped (Abort): closing a collectively opened MPI file is collective.
  std::unique_ptr<Loop> train_loop, eval_loop;
  std::unique_ptr<SideIo> side_io;  // when side_io reads or writes anything
  std::vector<SampleRef> plan;
  uint64_t global_step = 0;
  RunReport report;

  void Log(LogLevel level, const std::string& message) const {
    if (env.log) env.log(level, message);
  }
  void Warn(const std::string& message) {
    report.warnings.push_back(message);
    Log(LogLevel::kWarn, message);
  }
  void Progress(const RunProgress& p) const {
    if (env.progress && comm->rank() == 0) env.progress(p);
  }
};

}  // namespace

StorageOptions StorageOptionsFor(const WorkloadConfig& c) {
  StorageOptions o;
  o.name = c.storage.storage_type;
  o.slow_inner = c.storage.slow_inner;
  o.slow_latency_us = c.storage.slow_latency_us;
  o.slow_latency_stdev_us = c.storage.slow_latency_stdev_us;
  o.slow_bandwidth_mib_s = c.storage.slow_bandwidth_mib_s;
  o.mpiio_collective = c.storage.mpiio_collective;
  if (o.mpiio_collective) {
    // Only the data files: rank 0 alone reads the dataset marker beside them.
    std::string folder = c.dataset.data_folder.empty() ? "." : c.dataset.data_folder;
    while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
    o.mpiio_collective_dirs = {folder + "/train", folder + "/valid"};
  }
  o.direct = c.reader.odirect;
  o.seed = MixSeed(c.train.seed, 0x5107);
  return o;
}

FormatOptions FormatOptionsFor(const WorkloadConfig& c) {
  FormatOptions o;
  o.compression = c.dataset.compression;
  o.compression_level = c.dataset.compression_level;
  o.hdf5.enable_chunking = c.dataset.enable_chunking;
  o.hdf5.chunk_size = c.dataset.chunk_size;
  o.hdf5.chunk_samples = c.dataset.chunk_samples;
  o.hdf5.shuffle_filter = c.dataset.hdf5_shuffle;
  o.hdf5.metadata_file = c.dataset.metadata_file;
  o.csv.header = c.dataset.csv_header;
  o.image.quality = c.dataset.image_quality;
  o.tfrecord.write_index = c.dataset.write_index;
  o.tfrecord.use_index = c.reader.use_index;
  o.verify = c.reader.verify_checksums;
  o.decode = c.reader.decode;
  o.max_decoded_bytes = c.reader.max_decoded_bytes;
  o.transfer_size = c.reader.transfer_size;
  o.direct = c.reader.odirect;
  o.synthetic.samples = c.dataset.num_samples_per_file;
  o.synthetic.record_length = c.dataset.record_length_bytes;
  o.npy.sample_layout = c.dataset.sample_layout;
  o.npy.expected_samples = c.dataset.num_samples_per_file;
  o.npy.keep_arrays =
      c.reader.read_type == ReadType::kMemory;  // DLIO keeps np.load's array while open
  return o;
}

Result<uint64_t> SharedRandomSeed(Comm* comm) {
  std::string value;
  if (comm->rank() == 0) {
    std::random_device rd;
    value = std::to_string((static_cast<uint64_t>(rd()) << 32) ^ rd());
  }
  DLIO_RETURN_NOT_OK(comm->Broadcast(&value, 0));
  return static_cast<uint64_t>(std::stoull(value));
}

Result<SamplerOptions> SamplerOptionsFor(const WorkloadConfig& c, uint64_t random_seed) {
  SamplerOptions o;
  o.name = c.reader.sampler;
  o.file_shuffle = c.reader.file_shuffle;
  o.sample_shuffle = c.reader.sample_shuffle;
  o.sharding = c.reader.sharding;
  // DLIO's TensorFlow loader shuffles samples through tf.data's shuffle(shuffle_size) window.
  if (o.name == "auto" && c.reader.data_loader == "tensorflow" &&
      o.sample_shuffle != ShuffleMode::kOff) {
    o.name = "shuffle_buffer";
  }
  o.shuffle_size = c.reader.shuffle_size;
  o.seed = c.train.seed;
  o.seed_change_epoch = c.train.seed_change_epoch;
  o.random_seed = random_seed;
  o.fraction = c.reader.read_fraction;
  o.interleave = c.reader.file_interleave;
  return o;
}

std::string PipelineNameFor(const WorkloadConfig& c) {
  return c.reader.read_type == ReadType::kMemory ? std::string("preload") : c.reader.pipeline;
}

bool UsesRandomShuffle(const WorkloadConfig& c) {
  return c.reader.file_shuffle == ShuffleMode::kRandom ||
         c.reader.sample_shuffle == ShuffleMode::kRandom;
}

Result<std::unique_ptr<Tracer>> MakeTracerFor(const WorkloadConfig& config, int rank) {
  if (!config.output.trace && !config.workflow.profiling) return MakeNullTracer();
  TraceFileOptions to;
  to.path = config.output.folder + "/trace-" + std::to_string(rank) + ".pfw" +
            (config.output.trace_gzip ? ".gz" : "");
  to.pid = rank;
  return MakeTraceFileTracer(to);
}

namespace {

template <typename T, typename R, typename... Args>
Result<std::unique_ptr<T>> Build(const R& registry, const std::string& name, Args&&... args) {
  DLIO_ASSIGN_OR_RETURN(auto factory, registry.Get(name));
  return factory(std::forward<Args>(args)...);
}

}  // namespace

Result<LoopParts> MakeLoopParts(const WorkloadConfig& c, Split split, const LoopEnv& env) {
  if (env.registries == nullptr || env.storage == nullptr || env.format == nullptr ||
      env.clock == nullptr || env.tracer == nullptr) {
    return Status::InvalidArgument(
        "MakeLoopParts: registries, storage, format, clock and tracer are required");
  }
  const int rank = env.rank;
  LoopParts loop;
  loop.phase = split == Split::kTrain ? "train" : "eval";
  loop.batch_size = split == Split::kTrain ? c.reader.batch_size : c.reader.batch_size_eval;
  loop.drop_last = c.reader.drop_last;

  FormatDataSourceOptions ds;
  ds.format = FormatOptionsFor(c);
  ds.samples_per_file = c.dataset.num_samples_per_file;
  ds.max_open_files = c.reader.max_open_files;
  std::vector<std::string> files = DatasetFiles(c.dataset, *env.format, split);
  DLIO_ASSIGN_OR_RETURN(loop.source, MakeFormatDataSource(env.storage, env.format, files, ds));

  DLIO_ASSIGN_OR_RETURN(SamplerOptions so, SamplerOptionsFor(c, env.random_seed));
  DLIO_ASSIGN_OR_RETURN(loop.sampler, Build<Sampler>(env.registries->samplers, so.name, so));

  PipelineOptions po;
  po.name = PipelineNameFor(c);
  po.batch_size = loop.batch_size;
  po.read_threads = c.reader.read_threads;
  po.computation_threads = c.reader.computation_threads;
  po.prefetch_size = c.reader.prefetch_size;
  po.drop_last = c.reader.drop_last;
  po.preprocess_time = c.reader.preprocess_time;
  po.preprocess_spin = c.train.compute == "spin";
  po.seed = MixSeed(c.train.seed, rank, split == Split::kTrain ? 0x77 : 0xe7);
  po.rank = rank;
  po.reopen_files_each_epoch = c.reader.reopen_files_each_epoch;
  // Pre-touch pooled buffers for the typical sample (stored sizes of exact formats equal
  // record_length_bytes; others grow on first use). Capped so a huge batch cannot pin memory
  // that the run would never have touched.
  const uint64_t pool_samples =
      (c.reader.prefetch_size + std::max<uint64_t>(1, c.reader.read_threads) + 1) * loop.batch_size;
  if (env.format->exact_sample_sizes() && env.format->uses_files() &&
      PipelineNameFor(c) != "preload" &&
      pool_samples * c.dataset.record_length_bytes <= kMaxReservedPoolBytes) {
    po.reserve_sample_bytes = c.dataset.record_length_bytes;
  }
  PipelineEnv pe{loop.source.get(), env.clock, env.tracer, c.reader.decode ? env.format : nullptr,
                 c.reader.max_decoded_bytes};
  if (c.reader.decode && !env.format->has_decoder()) {
    return Status::InvalidArgument("reader.decode is true but format '" + env.format->name() +
                                   "' has no decoder (formats with one: jpeg, png, csv)");
  }
  DLIO_ASSIGN_OR_RETURN(loop.pipeline, Build<Pipeline>(env.registries->pipelines, po.name, po, pe));

  ComputeOptions co;
  co.name = c.train.compute;
  co.time = split == Split::kTrain ? c.train.computation_time : c.evaluation.eval_time;
  co.seed = MixSeed(c.train.seed, rank, split == Split::kTrain ? 0xc0 : 0xce);
  co.key = split == Split::kTrain ? "train.computation_time" : "evaluation.eval_time";
  DLIO_ASSIGN_OR_RETURN(loop.compute,
                        Build<ComputeEmulator>(env.registries->computes, co.name, co, env.clock));
  return loop;
}

namespace {

Result<Loop> MakeLoop(RunState& st, Split split, uint64_t random_seed) {
  LoopEnv env;
  env.registries = st.registries;
  env.storage = st.storage.get();
  env.format = st.format.get();
  env.clock = st.env.clock;
  env.tracer = st.tracer.get();
  env.rank = st.comm->rank();
  env.random_seed = random_seed;
  return MakeLoopParts(*st.config, split, env);
}

void TraceSpan(Tracer* tracer, const char* name, const char* cat, int64_t start_us, int64_t end_us,
               int64_t epoch, int64_t step, int64_t index = -1) {
  if (!tracer->enabled()) return;
  TraceEvent e;
  e.name = name;
  e.cat = cat;
  e.start_us = start_us;
  e.dur_us = end_us - start_us;
  e.epoch = epoch;
  e.step = step;
  e.index = index;
  tracer->Record(e);
}

Status MaybeCheckpoint(RunState& st, uint64_t epoch, int64_t step, int64_t* spent_ns) {
  if (!st.checkpointer) return Status::OK();
  const int64_t t0 = st.env.clock->NowNanos();
  DLIO_ASSIGN_OR_RETURN(CheckpointResult r, st.checkpointer->Save(epoch, step));
  DLIO_RETURN_NOT_OK(st.comm->Barrier());
  *spent_ns += st.env.clock->NowNanos() - t0;
  st.Log(LogLevel::kDebug, "checkpoint " + std::to_string(r.id) + ": " +
                               std::to_string(r.bytes_written) + " bytes in " +
                               std::to_string(r.write_ns * 1e-9) + " s");
  st.report.checkpoints.push_back(std::move(r));
  return Status::OK();
}

// One pass over the data: a training epoch or an evaluation.
Status RunEpoch(RunState& st, Loop& loop, uint64_t epoch, bool train, EpochReport* rep) {
  const WorkloadConfig& c = *st.config;
  const Clock* clock = st.env.clock;
  Tracer* tracer = st.tracer.get();
  rep->epoch = epoch;
  PlanRequest req;
  req.epoch = epoch - 1;
  req.rank = st.comm->rank();
  req.world = st.comm->size();
  req.samples_per_file = &loop.source->samples_per_file();
  DLIO_RETURN_NOT_OK(loop.sampler->Plan(req, &st.plan));

  const uint64_t b = loop.batch_size;
  const uint64_t my_steps = loop.drop_last ? st.plan.size() / b : (st.plan.size() + b - 1) / b;
  // Every rank must take the same number of steps, or the per-step barrier (and step-cadence
  // checkpoints) would deadlock. With drop_last, the minimum over ranks: a longer shard's extra
  // batch is dropped like a partial one. Without it, the maximum, so that every sample is read:
  // a rank whose shard ran out takes idle steps (no batch, no compute, still the barrier).
  std::vector<double> steps_v{static_cast<double>(my_steps)};
  if (loop.drop_last) {
    DLIO_RETURN_NOT_OK(st.comm->AllReduceMin(&steps_v));
  } else {
    DLIO_RETURN_NOT_OK(st.comm->AllReduceMax(&steps_v));
  }
  uint64_t steps = static_cast<uint64_t>(steps_v[0]);
  if (train && c.train.total_training_steps > 0) {
    steps = std::min<uint64_t>(steps, static_cast<uint64_t>(c.train.total_training_steps));
  }
  const uint64_t real_steps = std::min(steps, my_steps);
  if (steps == 0) {
    return Status::InvalidArgument(
        std::string(loop.phase) + " epoch " + std::to_string(epoch) + ": rank " +
        std::to_string(req.rank) + " has " + std::to_string(st.plan.size()) +
        " samples, fewer than one batch of " + std::to_string(b) +
        " (raise dataset.num_files_* / num_samples_per_file or lower reader.batch_size)");
  }
  if (st.plan.size() > steps * b) st.plan.resize(steps * b);
  if (my_steps < steps) {
    st.Log(LogLevel::kDebug, "rank " + std::to_string(req.rank) + " takes " +
                                 std::to_string(steps - my_steps) +
                                 " idle steps at the end of the epoch: its shard is shorter");
  }
  if (my_steps > steps && !(train && c.train.total_training_steps > 0)) {
    st.Log(LogLevel::kDebug, "rank " + std::to_string(req.rank) + " skips " +
                                 std::to_string(my_steps - steps) +
                                 " steps to stay in step with the other ranks");
  }

  rep->steps.clear();
  rep->steps.reserve(steps);
  const int64_t epoch_start_ns = clock->NowNanos();
  rep->start_us = WallMicros();
  DLIO_RETURN_NOT_OK(loop.pipeline->StartEpoch(epoch - 1, st.plan));
  const int64_t spe = c.checkpoint.steps_between_checkpoints;
  RunProgress progress;
  progress.phase = loop.phase;
  progress.epoch = epoch;
  progress.epochs = c.train.epochs;
  progress.steps = steps;

  if (train && st.side_io) st.side_io->SetRunSteps(steps * c.train.epochs);
  for (uint64_t s = 0; s < steps; ++s) {
    if (s >= real_steps) {  // idle: keep the other ranks' barriers and checkpoints company
      if (c.train.barrier_per_step) DLIO_RETURN_NOT_OK(st.comm->Barrier());
      if (train) {
        ++st.global_step;
        if (spe > 0 && st.global_step % static_cast<uint64_t>(spe) == 0) {
          DLIO_RETURN_NOT_OK(MaybeCheckpoint(st, epoch, static_cast<int64_t>(st.global_step),
                                             &rep->checkpoint_ns));
        }
      }
      continue;
    }
    StepRecord rec;
    const int64_t t0 = clock->NowNanos();
    BatchLease lease;
    bool end_of_epoch = false;
    // The side reads a code makes before fetching its batch are part of the step's load time.
    Status status = train && st.side_io ? st.side_io->BeforeStep(st.global_step) : Status::OK();
    if (status.ok()) status = loop.pipeline->Next(&lease, &end_of_epoch);
    const int64_t t1 = clock->NowNanos();
    if (!status.ok()) {
      return status.WithContext(std::string(loop.phase) + " epoch " + std::to_string(epoch) +
                                " step " + std::to_string(s + 1));
    }
    if (end_of_epoch || !lease) {
      return Status::Internal("pipeline ended after " + std::to_string(s) + " of " +
                              std::to_string(steps) + " steps");
    }
    rec.samples = lease->samples.size();
    rec.bytes = lease->bytes;
    const int64_t step_start_us = tracer->enabled() ? WallMicros() : 0;
    loop.compute->Step(static_cast<int64_t>(s));
    const int64_t t2 = clock->NowNanos();
    if (tracer->enabled()) {
      TraceSpan(tracer, train ? "ai.compute.step" : "ai.compute.eval", "ai", step_start_us,
                WallMicros(), epoch, static_cast<int64_t>(s + 1));
    }
    lease.reset();
    if (c.train.barrier_per_step) DLIO_RETURN_NOT_OK(st.comm->Barrier());
    const int64_t t3 = clock->NowNanos();
    rec.load_ns = t1 - t0;
    rec.compute_ns = t2 - t1;
    rec.barrier_ns = t3 - t2;
    rep->steps.push_back(rec);
    progress.bytes += rec.bytes;
    if (train) {
      ++st.global_step;
      if (spe > 0 && st.global_step % static_cast<uint64_t>(spe) == 0) {
        DLIO_RETURN_NOT_OK(
            MaybeCheckpoint(st, epoch, static_cast<int64_t>(st.global_step), &rep->checkpoint_ns));
      }
    }
    progress.step = s + 1;
    progress.elapsed_s = (clock->NowNanos() - epoch_start_ns) * 1e-9;
    st.Progress(progress);
  }
  const int64_t block_ns = clock->NowNanos() - epoch_start_ns - rep->checkpoint_ns;
  rep->end_us = WallMicros();
  TraceSpan(tracer, train ? "ai.pipeline.epoch" : "ai.pipeline.eval", "ai", rep->start_us,
            rep->end_us, epoch, -1);
  rep->metrics = ComputeBlockMetrics(rep->steps, block_ns, c.train.excluded_start_steps);

  std::vector<double> v{rep->metrics.au_percent, rep->metrics.samples_per_s,
                        rep->metrics.bytes_per_s};
  DLIO_RETURN_NOT_OK(st.comm->AllReduceSum(&v));
  rep->au_percent_mean = v[0] / st.comm->size();
  rep->samples_per_s_sum = v[1];
  rep->bytes_per_s_sum = v[2];
  return Status::OK();
}

bool CheckpointAfterEpoch(const WorkloadConfig& c, uint64_t epoch) {
  if (c.checkpoint.steps_between_checkpoints > 0) return false;
  if (epoch < c.checkpoint.checkpoint_after_epoch) return false;
  const uint64_t every = std::max<uint64_t>(1, c.checkpoint.epochs_between_checkpoints);
  return (epoch - c.checkpoint.checkpoint_after_epoch) % every == 0;
}

bool EvalAfterEpoch(const WorkloadConfig& c, uint64_t epoch) {
  if (!c.workflow.evaluation || c.dataset.num_files_eval == 0) return false;
  if (epoch < c.evaluation.eval_after_epoch) return false;
  const uint64_t every = std::max<uint64_t>(1, c.evaluation.epochs_between_evals);
  return (epoch - c.evaluation.eval_after_epoch) % every == 0;
}

Status Generate(RunState& st) {
  const WorkloadConfig& c = *st.config;
  GenerateOptions go;
  go.rank = st.comm->rank();
  go.world = st.comm->size();
  go.seed = c.train.seed;
  go.force = st.env.force_generate;
  Comm* comm = st.comm;
  go.barrier = [comm] { return comm->Barrier(); };
  go.comm = comm;
  const Clock* clock = st.env.clock;
  const int64_t start = clock->NowNanos();
  go.progress = [&st, clock, start](uint64_t done, uint64_t total, uint64_t bytes) {
    RunProgress p;
    p.phase = "generate";
    p.step = done;
    p.steps = total;
    p.bytes = bytes;
    p.elapsed_s = (clock->NowNanos() - start) * 1e-9;
    st.Progress(p);
  };
  const int64_t start_us = WallMicros();
  DLIO_ASSIGN_OR_RETURN(
      st.report.generate,
      GenerateDataset(c.dataset, *st.format, FormatOptionsFor(c), st.storage.get(), go));
  for (const std::string& warning : st.report.generate.warnings) st.Warn(warning);
  if (st.comm->rank() == 0 && !c.side_io.read_file.empty()) {
    DLIO_ASSIGN_OR_RETURN(SideIoOptions so, SideIoOptionsFor(c, 0));
    DLIO_RETURN_NOT_OK(GenerateSideFile(so, *st.registries, st.storage.get()));
  }
  TraceSpan(st.tracer.get(), "dlio.generate", "dlio", start_us, WallMicros(), -1, -1);
  return st.comm->Barrier();
}

// Rank 0 states what a transformer checkpoint amounts to over the whole job, before writing it.
Status DescribeTransformerCheckpoint(RunState& st, const CheckpointOptions& co) {
  const int world = st.comm->size();
  const TransformerModel& t = co.transformer;
  uint64_t model = 0, optimizer = 0, files = 0, dp = 1;
  for (int r = 0; r < world; ++r) {
    DLIO_ASSIGN_OR_RETURN(TransformerRankPlan p, PlanTransformerCheckpoint(t, r, world));
    model += p.model_bytes;
    optimizer += p.optimizer_bytes;
    files += p.files.size();
    dp = p.data_parallelism;
  }
  const uint64_t mp = t.tensor * t.pipeline;
  if (!t.subset && t.data > 0 && static_cast<uint64_t>(t.data) != dp) {
    st.Warn("model.parallelism.data is " + std::to_string(t.data) +
            " but checkpoint.mode is 'default', where the data-parallel degree is the world (" +
            std::to_string(world) + ") / (tensor x pipeline = " + std::to_string(mp) +
            ") = " + std::to_string(dp) + "; set checkpoint.mode subset to emulate the first " +
            std::to_string(world) + " ranks of a larger job");
  }
  std::string scaled;
  if (co.size_divisor > 1) {
    scaled = " (files written at 1/" + std::to_string(co.size_divisor) +
             " of that: checkpoint.size_divisor)";
  }
  st.Log(LogLevel::kInfo,
         "transformer checkpoint: " + std::to_string(TransformerParameterCount(t)) +
             " parameters, tensor " + std::to_string(t.tensor) + " x pipeline " +
             std::to_string(t.pipeline) + " x data " + std::to_string(dp) + ", ZeRO stage " +
             std::to_string(t.zero_stage) + ": " + std::to_string(model) + " model + " +
             std::to_string(optimizer) + " optimizer bytes in " + std::to_string(files) +
             " files per checkpoint over " + std::to_string(world) +
             (world == 1 ? " rank" : " ranks") + scaled);
  return Status::OK();
}

Status MakeCheckpointer(RunState& st) {
  const WorkloadConfig& c = *st.config;
  CheckpointOptions co;
  co.name = CheckpointTypeFor(c);
  co.folder = c.checkpoint.checkpoint_folder;
  co.model_size_bytes =
      c.checkpoint.model_size_bytes ? c.checkpoint.model_size_bytes : c.model.model_size_bytes;
  co.fsync = c.checkpoint.fsync;
  co.read_back = c.checkpoint.read_back;
  co.transfer_size = c.checkpoint.transfer_size;
  co.rank = st.comm->rank();
  co.world = st.comm->size();
  co.root_only = c.checkpoint.rank_mode == CheckpointRankMode::kRoot;
  co.seed = MixSeed(c.train.seed, st.comm->rank(), 0xcc);
  co.size_divisor = c.checkpoint.size_divisor;
  co.model_files = c.checkpoint.model_files;
  co.transformer = TransformerModelFor(c);
  st.report.checkpoint_type = co.name;
  if (co.name == "transformer" && st.comm->rank() == 0) {
    DLIO_RETURN_NOT_OK(DescribeTransformerCheckpoint(st, co));
  }
  Storage* storage = st.storage.get();
  if (!c.checkpoint.storage_type.empty() && c.checkpoint.storage_type != c.storage.storage_type) {
    StorageOptions so = StorageOptionsFor(c);
    so.name = c.checkpoint.storage_type;
    so.direct = false;  // reader.odirect is about the data files
    auto made = MakeStorage(so, *st.registries, st.env.clock, st.tracer.get());
    if (!made.ok()) return made.status().WithContext("checkpoint.storage_type");
    st.checkpoint_storage = std::move(made).value();
    storage = st.checkpoint_storage.get();
  }
  CheckpointEnv ce{storage, st.env.clock, st.tracer.get()};
  DLIO_ASSIGN_OR_RETURN(st.checkpointer,
                        Build<Checkpointer>(st.registries->checkpointers, co.name, co, ce));
  return Status::OK();
}

// DLIO's checkpoint-only workflow (workflow.train false, workflow.checkpoint true): after
// checkpoint.time_between_checkpoints of emulated compute and a barrier, each rank saves; that
// num_checkpoints_write times, then num_checkpoints_read loads of the first checkpoints written
// (with no writes: the newest ones an earlier run left). Each operation is timed per rank from
// its start to its end (plus the barrier with checkpoint.rank_sync).
Status CheckpointOnly(RunState& st) {
  const WorkloadConfig& c = *st.config;
  const uint64_t writes =
      static_cast<uint64_t>(std::max<int64_t>(0, c.checkpoint.num_checkpoints_write));
  const uint64_t reads =
      static_cast<uint64_t>(std::max<int64_t>(0, c.checkpoint.num_checkpoints_read));
  if (writes == 0 && reads == 0) {
    // `--generate --no-train` of a config that checkpoints while training is a generate-only
    // run, not a mistake.
    if (st.comm->rank() == 0 && !c.workflow.generate_data) {
      st.Warn(
          "workflow.train is false and workflow.checkpoint true, but neither "
          "checkpoint.num_checkpoints_write nor checkpoint.num_checkpoints_read is > 0: no "
          "checkpoint written or read");
    }
    return Status::OK();
  }
  DLIO_RETURN_NOT_OK(MakeCheckpointer(st));
  std::unique_ptr<ComputeEmulator> pause;
  if (c.checkpoint.time_between_checkpoints > 0) {
    ComputeOptions co;
    co.name = c.train.compute;
    co.time.mean = c.checkpoint.time_between_checkpoints;
    co.seed = MixSeed(c.train.seed, st.comm->rank(), 0xcb);
    co.key = "checkpoint.time_between_checkpoints";
    DLIO_ASSIGN_OR_RETURN(
        pause, Build<ComputeEmulator>(st.registries->computes, co.name, co, st.env.clock));
  }
  std::vector<uint64_t> read_ids;
  if (writes == 0) {
    const uint64_t next = st.checkpointer->next_id();
    if (next < reads) {
      return Status::NotFound(
          "checkpoint.num_checkpoints_read is " + std::to_string(reads) +
          " and checkpoint.num_checkpoints_write 0, but " + c.checkpoint.checkpoint_folder +
          " holds checkpoints up to id " + std::to_string(next) +
          " only: a read-only run reads what earlier runs of the same workload wrote");
    }
    for (uint64_t id = next - reads; id < next; ++id) read_ids.push_back(id);
  }
  const Clock* clock = st.env.clock;
  RunProgress progress;
  progress.phase = "checkpoint";
  progress.steps = writes + reads;
  const int64_t start_ns = clock->NowNanos();
  DLIO_RETURN_NOT_OK(st.comm->Barrier());
  for (uint64_t i = 0; i < writes + reads; ++i) {
    const bool save = i < writes;
    if (pause) pause->Step(static_cast<int64_t>(i));
    DLIO_RETURN_NOT_OK(st.comm->Barrier());  // DLIO's all-reduce before each checkpoint
    const int64_t t0 = clock->NowNanos();
    CheckpointResult r;
    if (save) {
      DLIO_ASSIGN_OR_RETURN(r, st.checkpointer->Save(1, static_cast<int64_t>(i + 1)));
    } else {
      const uint64_t k = i - writes;
      const uint64_t id = writes > 0 ? st.report.checkpoints[k].id : read_ids[k];
      auto loaded = st.checkpointer->Load(id);
      if (!loaded.ok()) {
        return loaded.status().WithContext("checkpoint-only run: loading checkpoint " +
                                           std::to_string(id));
      }
      r = std::move(*loaded);
    }
    if (c.checkpoint.rank_sync) DLIO_RETURN_NOT_OK(st.comm->Barrier());
    const int64_t ns = clock->NowNanos() - t0;
    st.Log(LogLevel::kDebug, std::string(save ? "saved" : "loaded") + " checkpoint " +
                                 std::to_string(r.id) + ": " +
                                 std::to_string(save ? r.bytes_written : r.bytes_read) +
                                 " bytes in " + std::to_string(ns * 1e-9) + " s");
    if (save) {
      r.write_ns = ns;
      st.report.checkpoints.push_back(std::move(r));
    } else {
      r.read_ns = ns;
      st.report.checkpoint_loads.push_back(std::move(r));
    }
    progress.step = i + 1;
    progress.elapsed_s = (clock->NowNanos() - start_ns) * 1e-9;
    st.Progress(progress);
  }
  return st.comm->Barrier();
}

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

bool IsMlperfTrainingWorkload(const WorkloadConfig& c) {
  if (c.metric.mlperf_rules != MlperfRules::kAuto) return c.metric.mlperf_rules == MlperfRules::kOn;
  const std::string& n = c.model.name;
  return n == "unet3d" || n == "resnet50" || n == "cosmoflow";
}

// MLPerf Storage's rules for a valid training result: the dataset is at least 5x the clients'
// memory (else the page cache serves the reads) and an epoch has at least 500 steps.
Status CheckStorageRules(RunState& st) {
  const WorkloadConfig& c = *st.config;
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown");
  std::vector<std::string> gathered;
  DLIO_RETURN_NOT_OK(st.comm->Gather(std::to_string(HostMemoryBytes()) + " " + host, 0, &gathered));
  if (st.comm->rank() != 0) return Status::OK();
  StorageRulesCheck& check = st.report.storage_rules;
  std::map<std::string, uint64_t> hosts;
  for (const auto& g : gathered) {
    std::istringstream in(g);
    uint64_t bytes = 0;
    std::string name;
    in >> bytes >> name;
    hosts[name] = bytes;
  }
  check.checked = true;
  check.num_hosts = hosts.size();
  for (const auto& [name, bytes] : hosts) check.client_memory_bytes += bytes;
  check.dataset_bytes =
      SaturatingMul(SaturatingMul(c.dataset.num_files_train, c.dataset.num_samples_per_file),
                    c.dataset.record_length_bytes);
  check.dataset_ge_5x_memory = check.client_memory_bytes > 0 &&
                               check.dataset_bytes >= SaturatingMul(5, check.client_memory_bytes);
  // In-memory (synthetic) data has no files for a page cache to hold.
  const bool has_files = st.format == nullptr || st.format->uses_files();
  if (has_files && check.client_memory_bytes > 0 && !check.dataset_ge_5x_memory) {
    std::ostringstream m;
    m << "the dataset (" << HumanBytes(static_cast<double>(check.dataset_bytes))
      << " = dataset.num_files_train x num_samples_per_file x record_length_bytes) is "
         "smaller than 5x the client memory ("
      << HumanBytes(static_cast<double>(check.client_memory_bytes)) << " of memory on "
      << check.num_hosts << (check.num_hosts == 1 ? " host" : " hosts")
      << "): reads after the first epoch can come from the page cache, so results then measure "
         "the page cache, not storage (MLPerf Storage requires >= 5x)";
    st.Warn(m.str());
  }
  check.mlperf_rules = IsMlperfTrainingWorkload(c);
  const uint64_t world = static_cast<uint64_t>(st.comm->size());
  check.steps_per_epoch = SaturatingMul(c.dataset.num_files_train, c.dataset.num_samples_per_file) /
                          std::max<uint64_t>(1, c.reader.batch_size) / world;
  check.steps_ge_500 = check.steps_per_epoch >= 500;
  if (check.mlperf_rules && !check.steps_ge_500) {
    st.Warn("an epoch has " + std::to_string(check.steps_per_epoch) +
            " steps (dataset.num_files_train x num_samples_per_file / reader.batch_size / " +
            std::to_string(world) + " ranks), fewer than the 500 MLPerf Storage requires for '" +
            c.model.name + "' (metric.mlperf_rules)");
  }
  return Status::OK();
}

Status Train(RunState& st) {
  const WorkloadConfig& c = *st.config;
  uint64_t random_seed = 0;
  if (UsesRandomShuffle(c)) {
    DLIO_ASSIGN_OR_RETURN(random_seed, SharedRandomSeed(st.comm));
  }
  DLIO_ASSIGN_OR_RETURN(Loop train_loop, MakeLoop(st, Split::kTrain, random_seed));
  st.train_loop = std::make_unique<Loop>(std::move(train_loop));
  Loop& train = *st.train_loop;
  if (c.workflow.evaluation && c.dataset.num_files_eval > 0) {
    DLIO_ASSIGN_OR_RETURN(Loop e, MakeLoop(st, Split::kEval, random_seed));
    st.eval_loop = std::make_unique<Loop>(std::move(e));
  }
  Loop* eval = st.eval_loop.get();
  if (c.workflow.checkpoint) DLIO_RETURN_NOT_OK(MakeCheckpointer(st));
  if (!c.side_io.read_file.empty() || c.side_io.write_bytes > 0) {
    DLIO_ASSIGN_OR_RETURN(SideIoOptions so, SideIoOptionsFor(c, st.comm->rank()));
    DLIO_ASSIGN_OR_RETURN(st.side_io, SideIo::Make(so, st.storage.get()));
  }
  DLIO_RETURN_NOT_OK(st.comm->Barrier());
  if (st.side_io) DLIO_RETURN_NOT_OK(st.side_io->BeforeTraining());
  for (uint64_t epoch = 1; epoch <= c.train.epochs; ++epoch) {
    EpochReport rep;
    DLIO_RETURN_NOT_OK(RunEpoch(st, train, epoch, /*train=*/true, &rep));
    if (CheckpointAfterEpoch(c, epoch)) {
      int64_t spent = 0;
      DLIO_RETURN_NOT_OK(MaybeCheckpoint(st, epoch, static_cast<int64_t>(st.global_step), &spent));
    }
    st.Log(LogLevel::kInfo, FormatEpochLine("train", rep));
    st.report.epochs.push_back(std::move(rep));
    if (eval && EvalAfterEpoch(c, epoch)) {
      EpochReport erep;
      DLIO_RETURN_NOT_OK(RunEpoch(st, *eval, epoch, /*train=*/false, &erep));
      st.Log(LogLevel::kInfo, FormatEpochLine("eval", erep));
      st.report.eval_epochs.push_back(std::move(erep));
    }
  }
  DLIO_RETURN_NOT_OK(train.pipeline->Stop());
  if (eval) DLIO_RETURN_NOT_OK(eval->pipeline->Stop());
  if (st.side_io) {
    const int64_t start_us = WallMicros();
    DLIO_RETURN_NOT_OK(st.side_io->AfterTraining());
    TraceSpan(st.tracer.get(), "side_io.write", "dlio", start_us, WallMicros(), -1, -1);
  }
  return Status::OK();
}

// Every rank takes part in each checkpoint operation, so the counts agree across ranks.
Status AggregateCheckpointOps(Comm* comm, const std::vector<CheckpointResult>& ops, bool load,
                              std::vector<CheckpointOpSummary>* out) {
  out->clear();
  if (ops.empty()) return Status::OK();
  std::vector<double> seconds, bytes;
  for (const auto& op : ops) {
    seconds.push_back((load ? op.read_ns : op.write_ns) * 1e-9);
    bytes.push_back(static_cast<double>(load ? op.bytes_read : op.bytes_written));
  }
  DLIO_RETURN_NOT_OK(comm->AllReduceMax(&seconds));
  DLIO_RETURN_NOT_OK(comm->AllReduceSum(&bytes));
  for (size_t i = 0; i < ops.size(); ++i) {
    out->push_back({static_cast<uint64_t>(bytes[i]), seconds[i]});
  }
  return Status::OK();
}

Status Aggregate(RunState& st) {
  RunReport& r = st.report;
  const WorkloadConfig& c = *st.config;
  std::vector<double> au, tp, io;
  for (const auto& e : r.epochs) {
    au.push_back(e.au_percent_mean);
    tp.push_back(e.samples_per_s_sum);
    io.push_back(e.bytes_per_s_sum);
  }
  MeanStdev m = ComputeMeanStdev(au);
  r.au_mean_percent = m.mean;
  r.au_stdev_percent = m.stdev;
  m = ComputeMeanStdev(tp);
  r.throughput_mean_samples_per_s = m.mean;
  r.throughput_stdev_samples_per_s = m.stdev;
  m = ComputeMeanStdev(io);
  r.io_mean_bytes_per_s = m.mean;
  r.io_stdev_bytes_per_s = m.stdev;
  r.au_met = !r.epochs.empty() && r.au_mean_percent >= 100.0 * c.metric.au;

  DLIO_RETURN_NOT_OK(
      AggregateCheckpointOps(st.comm, r.checkpoints, /*load=*/false, &r.checkpoint_saves_all));
  DLIO_RETURN_NOT_OK(
      AggregateCheckpointOps(st.comm, r.checkpoint_loads, /*load=*/true, &r.checkpoint_loads_all));
  std::vector<double> durations;
  uint64_t bytes = 0;
  for (const auto& op : r.checkpoint_saves_all) {
    durations.push_back(op.seconds);
    bytes += op.bytes;
  }
  r.checkpoint_max_duration_s = ComputeMeanStdev(durations).mean;
  r.checkpoint_bytes_total = durations.empty() ? 0 : bytes / durations.size();
  r.io = st.storage->stats();
  if (st.checkpoint_storage) {
    const IoStats ck = st.checkpoint_storage->stats();
    r.io.read_ops += ck.read_ops;
    r.io.read_bytes += ck.read_bytes;
    r.io.write_ops += ck.write_ops;
    r.io.write_bytes += ck.write_bytes;
    r.io.opens += ck.opens;
    r.io.closes += ck.closes;
    r.io.syncs += ck.syncs;
  }
  return Status::OK();
}

}  // namespace

WorkloadConfig ResolvePaths(const WorkloadConfig& in) {
  WorkloadConfig c = in;
  const std::string& root = c.storage.storage_root;
  if (root.empty() || root == "./" || root == ".") return c;
  auto prefix = [&root](std::string* folder) {
    if (!folder->empty() && (*folder)[0] != '/') {
      *folder = root + (root.back() == '/' ? "" : "/") + *folder;
    }
  };
  prefix(&c.dataset.data_folder);
  prefix(&c.checkpoint.checkpoint_folder);
  return c;
}

Result<RunReport> RunWorkload(const WorkloadConfig& input_config, const RunEnv& env) {
  DLIO_RETURN_NOT_OK(input_config.Validate());
  RunState st;
  st.env = env;
  if (st.env.clock == nullptr) st.env.clock = SystemClock();
  if (env.registries == nullptr) {
    st.own_registries = std::make_unique<Registries>();
    DLIO_RETURN_NOT_OK(RegisterBuiltins(st.own_registries.get()));
    st.registries = st.own_registries.get();
  } else {
    st.registries = env.registries;
  }
  DLIO_RETURN_NOT_OK(ValidateCapabilities(input_config, *st.registries));
  if (env.comm == nullptr) {
    st.own_comm = MakeSerialComm();
    st.comm = st.own_comm.get();
  } else {
    st.comm = env.comm;
  }
  std::vector<std::string> scaled;
  DLIO_ASSIGN_OR_RETURN(const WorkloadConfig config,
                        ScaleConfig(ResolvePaths(input_config), st.comm->size(), &scaled));
  st.config = &config;
  for (const auto& line : scaled) st.Log(LogLevel::kInfo, line);
  RunReport& report = st.report;
  report.workload = config.name;
  report.rank = st.comm->rank();
  report.world = st.comm->size();
  report.output_folder = config.output.folder;
  if (config.workflow.generate_data ||
      config.workflow.train) {  // checkpoint-only runs read no data
    DLIO_ASSIGN_OR_RETURN(st.format, Build<Format>(st.registries->formats, config.dataset.format));
    if (config.reader.decode && !st.format->has_decoder()) {
      return Status::InvalidArgument("reader.decode is true but format '" + st.format->name() +
                                     "' has no decoder (formats with one: jpeg, png, csv)");
    }
  }
  // Before anything is written: every rank agrees the run fits its host (dlio/preflight.h).
  DLIO_RETURN_NOT_OK(AgreedPreflight(config, st.format.get(), st.comm, *st.registries));

  std::error_code ec;
  if (env.write_outputs) {
    std::filesystem::create_directories(config.output.folder, ec);
    if (ec) {
      return Status::IOError("output.folder '" + config.output.folder +
                             "': cannot create: " + ec.message());
    }
  }
  DLIO_ASSIGN_OR_RETURN(st.tracer, MakeTracerFor(config, report.rank));
  DLIO_ASSIGN_OR_RETURN(st.storage, MakeStorage(StorageOptionsFor(config), *st.registries,
                                                st.env.clock, st.tracer.get()));

  const int64_t start_us = WallMicros();
  Status status = Status::OK();
  if (config.workflow.train) status = CheckStorageRules(st);
  if (status.ok() && config.workflow.generate_data) status = Generate(st);
  if (status.ok() && config.workflow.train) status = Train(st);
  if (status.ok() && !config.workflow.train && config.workflow.checkpoint) {
    status = CheckpointOnly(st);
  }
  if (status.ok()) status = Aggregate(st);
  const int64_t end_us = WallMicros();
  Status flush = st.tracer->Flush();
  if (!status.ok() && env.abort_on_error && st.comm->size() > 1) {
    // The other ranks may be waiting in a collective this rank will never join: end the job now,
    // before this rank's pipelines and files are torn down.
    st.comm->Abort(status);
  }
  if (!status.ok()) return status;
  DLIO_RETURN_NOT_OK(flush);

  DLIO_RETURN_NOT_OK(WriteReports(config, st.comm, start_us, end_us, env.write_outputs, &report));
  return std::move(st.report);
}

}  // namespace dlio
