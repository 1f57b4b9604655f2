// EstimateRunFootprint and CheckRunFits: the arithmetic of the preflight check (no I/O).
#include "dlio/preflight.h"

#include <algorithm>
#include <cmath>

#include "dlio/data_source.h"
#include "dlio/loop.h"
#include "dlio/metrics.h"
#include "dlio/str_cat.h"
#include "runner/report.h"

namespace dlio {
namespace {

// Per-item costs behind the estimate, measured on the Release build (growth of the peak RSS of a
// run per file and per sample: ~296 and ~33 bytes) and rounded down, so the estimate stays a lower
// bound of what the run allocates.
constexpr uint64_t kBytesPerFile = 288;  // the file's path in the run's list, its sample count,
                                         // its place in the file order, the generator's list
constexpr uint64_t kBytesPerPlannedSample = 2 * sizeof(SampleRef);  // plan + the pipeline's copy
// Estimates from the structures' sizes (small next to the sample bytes they go with).
constexpr uint64_t kBytesPerBufferedSample = 128;  // a pooled sample buffer's bookkeeping
constexpr uint64_t kBytesPerEpochReport = 512;     // an EpochReport besides its steps

uint64_t Mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

uint64_t Add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

std::string Human(uint64_t bytes) { return HumanBytes(static_cast<double>(bytes)); }

bool UsesPreload(const WorkloadConfig& c, const HostResources& host) {
  return host.pipeline.holds_dataset || c.reader.read_type == ReadType::kMemory;
}

bool EvaluationRuns(const WorkloadConfig& c) {
  return c.workflow.train && c.workflow.evaluation && c.dataset.num_files_eval > 0;
}

// The samples of one split and the share of the smallest and the largest rank, after
// reader.read_fraction (the runner's and sampler's rules).
struct Share {
  uint64_t total = 0, min = 0, max = 0;
};

Share SplitShare(const WorkloadConfig& c, uint64_t files, int world) {
  Share s;
  s.total = Mul(files, c.dataset.num_samples_per_file);
  const uint64_t w = static_cast<uint64_t>(std::max(world, 1));
  const bool replicated = c.reader.sharding == Sharding::kNone;
  s.min = replicated ? s.total : s.total / w;
  s.max = replicated ? s.total : CeilDiv(s.total, w);
  auto kept = [&c](uint64_t n) -> uint64_t {
    if (n == 0 || c.reader.read_fraction >= 1.0) return n;
    const double keep = std::ceil(c.reader.read_fraction * static_cast<double>(n));
    return std::clamp<uint64_t>(static_cast<uint64_t>(keep), 1, n);
  };
  s.min = kept(s.min);
  s.max = kept(s.max);
  return s;
}

// Steps of an epoch every rank takes: with drop_last the smallest share's full batches, else the
// largest share's batches (the runner's rule).
uint64_t StepsPerEpoch(const WorkloadConfig& c, const Share& share, uint64_t batch) {
  batch = std::max<uint64_t>(batch, 1);
  return c.reader.drop_last ? share.min / batch : CeilDiv(share.max, batch);
}

// "dataset.num_files_train x dataset.num_samples_per_file / 4 ranks".
std::string SampleKeys(const WorkloadConfig& c, const char* files_key, int world) {
  std::string keys = std::string(files_key) + " x dataset.num_samples_per_file";
  if (world > 1 && c.reader.sharding != Sharding::kNone) {
    keys += StrCat(" / ", world, " ranks");
  }
  return keys;
}

uint64_t CountCheckpoints(const WorkloadConfig& c, uint64_t steps_per_epoch, bool dlio_cadence) {
  const CheckpointConfig& k = c.checkpoint;
  if (!c.workflow.checkpoint) return 0;
  if (!c.workflow.train)
    return static_cast<uint64_t>(std::max<int64_t>(0, k.num_checkpoints_write));
  const uint64_t epochs = c.train.epochs;
  if (k.steps_between_checkpoints > 0) {
    const uint64_t every = static_cast<uint64_t>(k.steps_between_checkpoints);
    // DLIO's cadence counts each epoch's steps afresh.
    if (dlio_cadence) return Mul(steps_per_epoch / every, epochs);
    return Mul(steps_per_epoch, epochs) / every;
  }
  const uint64_t every = std::max<uint64_t>(1, k.epochs_between_checkpoints);
  const uint64_t after = k.checkpoint_after_epoch;
  if (after == 0) return epochs / every;
  return epochs >= after ? (epochs - after) / every + 1 : 0;
}

void AddCheckpoints(const WorkloadConfig& c, const HostResources& host, RunFootprint* f) {
  const CheckpointPlan& plan = host.checkpoint;
  f->checkpoints = CountCheckpoints(c, f->train_steps_per_epoch, plan.dlio_cadence);
  f->checkpoint_bytes = CeilDiv(plan.bytes, std::max<uint64_t>(1, c.checkpoint.size_divisor));
  f->checkpoint_keys = !plan.size_keys.empty()             ? plan.size_keys
                       : c.checkpoint.model_size_bytes > 0 ? "checkpoint.model_size_bytes"
                                                           : "model.model_size_bytes";
}

void AddItem(RunFootprint* f, std::string what, std::string keys, uint64_t bytes) {
  f->memory.push_back({std::move(what), std::move(keys), bytes});
  f->memory_bytes = Add(f->memory_bytes, bytes);
}

// The batches in flight: (prefetch_size + read threads + 1) batches of `batch` samples.
uint64_t BatchBufferBytes(const WorkloadConfig& c, uint64_t batch) {
  const uint64_t ring = c.reader.prefetch_size + std::max<uint64_t>(1, c.reader.read_threads) + 1;
  return Mul(Mul(ring, batch), Add(c.dataset.record_length_bytes, kBytesPerBufferedSample));
}

// What the pipeline the runner builds (PipelineNameFor) counts of its own buffers for batches of
// `batch`, when `host` carries the registry and the entry has PipelineHooks::estimate_memory.
PipelineFootprint OwnBufferFootprint(const WorkloadConfig& c, const HostResources& host,
                                     uint64_t batch) {
  if (host.pipelines == nullptr) return {};
  auto entry = host.pipelines->Find(PipelineNameFor(c, host.storage_needs_mpi, host.pipeline));
  if (!entry.ok() || !entry->hooks.estimate_memory) return {};
  MemoryPlanFacts facts;
  facts.batch_size = batch;
  facts.bounded_read_bytes = BoundedReadBytesFor(c, host.streaming_format, entry->capabilities);
  facts.bytes_per_buffered_sample = kBytesPerBufferedSample;
  return entry->hooks.estimate_memory(c, facts);
}

void AddBatchBufferItem(const WorkloadConfig& c, bool eval, const HostResources& host,
                        RunFootprint* f) {
  const PipelineFootprint own = OwnBufferFootprint(c, host, c.reader.batch_size);
  if (own.counted) {
    const uint64_t eval_bytes =
        eval ? OwnBufferFootprint(c, host, c.reader.batch_size_eval).bytes : 0;
    AddItem(f, "batch buffers", own.keys, Add(own.bytes, eval_bytes));
    return;
  }
  uint64_t bytes = BatchBufferBytes(c, c.reader.batch_size);
  if (eval) bytes = Add(bytes, BatchBufferBytes(c, c.reader.batch_size_eval));
  AddItem(f, "batch buffers",
          "(reader.prefetch_size + reader.read_threads + 1) x reader.batch_size x "
          "dataset.record_length_bytes",
          bytes);
}

void AddTrainingItems(const WorkloadConfig& c, int world, const HostResources& host,
                      RunFootprint* f) {
  const Share train = SplitShare(c, c.dataset.num_files_train, world);
  const bool eval = EvaluationRuns(c);
  const Share valid = eval ? SplitShare(c, c.dataset.num_files_eval, world) : Share{};
  AddItem(f, "sample plan", SampleKeys(c, "dataset.num_files_train", world),
          Mul(Add(train.max, valid.max), kBytesPerPlannedSample));
  const uint64_t per_sample = Add(c.dataset.record_length_bytes, kBytesPerBufferedSample);
  if (UsesPreload(c, host)) {
    AddItem(f, "preloaded samples",
            "reader.pipeline preload: " + SampleKeys(c, "dataset.num_files_train", world) +
                " x dataset.record_length_bytes",
            Mul(Add(train.max, valid.max), per_sample));
  } else {
    AddBatchBufferItem(c, eval, host, f);
  }
  const uint64_t steps = f->train_steps_per_epoch;
  const bool capped = c.train.total_training_steps > 0 &&
                      steps == static_cast<uint64_t>(c.train.total_training_steps);
  AddItem(f, "per-step records",
          capped ? "train.epochs x train.total_training_steps"
                 : "train.epochs x " + SampleKeys(c, "dataset.num_files_train", world) +
                       " / reader.batch_size",
          Mul(c.train.epochs, Add(Mul(steps, sizeof(StepRecord)), kBytesPerEpochReport)));
}

}  // namespace

RunFootprint EstimateRunFootprint(const WorkloadConfig& c, int world, const HostResources& host) {
  world = std::max(world, 1);
  RunFootprint f;
  const Share train = SplitShare(c, c.dataset.num_files_train, world);
  f.train_steps_per_epoch = StepsPerEpoch(c, train, c.reader.batch_size);
  if (c.train.total_training_steps > 0) {
    f.train_steps_per_epoch =
        std::min(f.train_steps_per_epoch, static_cast<uint64_t>(c.train.total_training_steps));
  }
  if (EvaluationRuns(c)) {
    f.eval_steps =
        StepsPerEpoch(c, SplitShare(c, c.dataset.num_files_eval, world), c.reader.batch_size_eval);
  }
  f.file_bytes = Mul(c.dataset.num_samples_per_file, c.dataset.record_length_bytes);
  const bool data = c.workflow.train || c.workflow.generate_data;
  const uint64_t files = Add(c.dataset.num_files_train, c.dataset.num_files_eval);
  if (data) {
    AddItem(&f, "file list",
            c.dataset.num_files_eval > 0 ? "dataset.num_files_train + dataset.num_files_eval"
                                         : "dataset.num_files_train",
            Mul(files, kBytesPerFile));
  }
  if (c.workflow.train) AddTrainingItems(c, world, host, &f);
  if (data && host.dataset_in_memory) {
    AddItem(
        &f, "dataset in memory storage",
        "storage.storage_type (in memory): dataset.num_files_* x dataset.num_samples_per_file x "
        "dataset.record_length_bytes",
        Mul(CeilDiv(files, static_cast<uint64_t>(world)), f.file_bytes));
  }
  if (c.workflow.generate_data) {
    AddItem(&f, "sample sizes of a generated file", "dataset.num_samples_per_file",
            Mul(c.dataset.num_samples_per_file, sizeof(uint64_t)));
  }
  if (c.workflow.checkpoint) {
    AddItem(&f, "checkpoint transfer buffer", "checkpoint.transfer_size",
            c.checkpoint.transfer_size);
    AddCheckpoints(c, host, &f);
  }
  return f;
}

namespace {

Status CheckSteps(const WorkloadConfig& c, int world, const RunFootprint& f) {
  auto no_step = [&](const char* split, const char* files_key, uint64_t files,
                     const char* batch_key, uint64_t batch) {
    const Share s = SplitShare(c, files, world);
    return Status::InvalidArgument(split, " epoch would have no step: a rank gets ", s.min,
                                   " samples (", SampleKeys(c, files_key, world),
                                   c.reader.read_fraction < 1 ? " x reader.read_fraction" : "",
                                   "), fewer than ", batch_key, " ", batch,
                                   " (reader.drop_last drops a partial batch)");
  };
  if (c.workflow.train && f.train_steps_per_epoch == 0) {
    return no_step("a training", "dataset.num_files_train", c.dataset.num_files_train,
                   "reader.batch_size", c.reader.batch_size);
  }
  if (EvaluationRuns(c) && f.eval_steps == 0) {
    return no_step("an evaluation", "dataset.num_files_eval", c.dataset.num_files_eval,
                   "reader.batch_size_eval", c.reader.batch_size_eval);
  }
  return Status::OK();
}

Status CheckMemory(const RunFootprint& f, const HostResources& host) {
  if (host.memory_bytes == 0 || f.memory.empty()) return Status::OK();
  const uint64_t ranks = std::max<uint64_t>(1, host.ranks_on_host);
  const uint64_t need = Mul(f.memory_bytes, ranks);
  if (need <= host.memory_bytes) return Status::OK();
  const FootprintItem& largest = *std::max_element(
      f.memory.begin(), f.memory.end(),
      [](const FootprintItem& a, const FootprintItem& b) { return a.bytes < b.bytes; });
  const std::string per = ranks > 1 ? StrCat(" x ", ranks, " ranks on this host") : "";
  return Status::ResourceExhausted(
      largest.keys, ": the run needs at least ", Human(f.memory_bytes), " of memory per rank", per,
      ", ", Human(largest.bytes), " of it for the ", largest.what, ", but the host has ",
      Human(host.memory_bytes), "; lower these values (nothing was generated or read)");
}

Status CheckGenerationDisk(const WorkloadConfig& c, const RunFootprint& f,
                           const HostResources& host) {
  if (!c.workflow.generate_data || host.data_free_bytes == kUnknownBytes) return Status::OK();
  const uint64_t train_missing =
      c.dataset.num_files_train - std::min(c.dataset.num_files_train, host.train_files_present);
  const uint64_t eval_missing =
      c.dataset.num_files_eval - std::min(c.dataset.num_files_eval, host.eval_files_present);
  const uint64_t missing = Add(train_missing, eval_missing);
  const uint64_t need = Mul(missing, f.file_bytes);
  if (need <= host.data_free_bytes) return Status::OK();
  return Status::ResourceExhausted(
      "dataset.num_files_train x dataset.num_samples_per_file x dataset.record_length_bytes: "
      "generating ",
      missing, " missing files of ", Human(f.file_bytes), " needs ", Human(need),
      ", but the file system of dataset.data_folder '", c.dataset.data_folder, "' has ",
      Human(host.data_free_bytes), " free (nothing was generated)");
}

Status CheckCheckpointDisk(const WorkloadConfig& c, const RunFootprint& f,
                           const HostResources& host) {
  if (host.checkpoint_free_bytes == kUnknownBytes || f.checkpoint_bytes == 0) return Status::OK();
  const uint64_t need = Mul(f.checkpoints, f.checkpoint_bytes);
  if (need <= host.checkpoint_free_bytes) return Status::OK();
  std::string keys = f.checkpoint_keys;
  if (c.checkpoint.size_divisor > 1) keys += " / checkpoint.size_divisor";
  return Status::ResourceExhausted(
      keys, ": ", f.checkpoints, f.checkpoints == 1 ? " checkpoint of " : " checkpoints of ",
      Human(f.checkpoint_bytes), " need ", Human(need),
      ", but the file system of checkpoint.checkpoint_folder '", c.checkpoint.checkpoint_folder,
      "' has ", Human(host.checkpoint_free_bytes), " free");
}

}  // namespace

Status CheckRunFits(const WorkloadConfig& config, int world, const HostResources& host) {
  const RunFootprint f = EstimateRunFootprint(config, world, host);
  DLIO_RETURN_NOT_OK(CheckSteps(config, world, f));
  DLIO_RETURN_NOT_OK(CheckMemory(f, host));
  DLIO_RETURN_NOT_OK(CheckGenerationDisk(config, f, host));
  return CheckCheckpointDisk(config, f, host);
}

}  // namespace dlio
