#include "runner/training.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "dlio/ai_events.h"
#include "dlio/metrics.h"
#include "dlio/str_cat.h"
#include "runner/report.h"

namespace dlio::runner_internal {
namespace {

bool EvalAfterEpoch(const WorkloadConfig& c, uint64_t epoch) {
  if (!c.workflow.evaluation || c.dataset.num_files_eval == 0) return false;
  if (epoch < c.evaluation.eval_after_epoch) return false;
  const uint64_t every = std::max<uint64_t>(1, c.evaluation.epochs_between_evals);
  return (epoch - c.evaluation.eval_after_epoch) % every == 0;
}

// What this rank reads from epoch `epoch` (1-based) to the run's last, for the storage's
// OnEpochPlan: each epoch's files from `loop`'s sampler plan, a run of samples of one file once.
EpochPlan PlanFrom(const LoopParts& loop, uint64_t epoch, uint64_t epochs, int rank, int world) {
  EpochPlan plan;
  plan.first_epoch = epoch - 1;
  plan.last_epoch = epochs - 1;
  plan.files_of = [&loop,
                   request = PlanRequest{epoch - 1, rank, world, &loop.source->samples_per_file()}](
                      uint64_t e, std::vector<std::string>* paths) mutable {
    std::vector<SampleRef> order;
    request.epoch = e;
    DLIO_RETURN_NOT_OK(loop.sampler->Plan(request, &order));
    for (size_t i = 0; i < order.size(); ++i) {
      if (i > 0 && order[i].file == order[i - 1].file) continue;
      paths->push_back(loop.source->file_path(order[i].file));
    }
    return Status::OK();
  };
  return plan;
}

Result<std::unique_ptr<LoopParts>> MakeLoop(const RunContext& ctx, Split split,
                                            uint64_t random_seed) {
  LoopEnv env;
  env.registries = ctx.registries;
  env.storage = ctx.storage;
  env.format = ctx.format;
  env.clock = ctx.clock;
  env.tracer = ctx.tracer;
  env.rank = ctx.rank();
  env.world = ctx.world();
  env.random_seed = random_seed;
  env.consumer_reads_bytes = false;  // the loop times steps; it never looks at a sample's bytes
  DLIO_ASSIGN_OR_RETURN(LoopParts loop, MakeLoopParts(*ctx.config, split, env));
  return std::make_unique<LoopParts>(std::move(loop));
}

// The steps of one pass on this rank.
struct EpochSteps {
  uint64_t steps = 0;  // taken by every rank
  uint64_t real = 0;   // of those, the ones with a batch on this rank (the rest are idle)
};

// The epoch loop of one rank: the sample plan it reuses, the global step count that step-cadence
// checkpoints follow, and the checkpoints it saves. Requires external synchronization.
class EpochLoop {
 public:
  // `resumed`: the global step and epochs of the checkpoint the run resumed from (0: none).
  EpochLoop(const RunContext& ctx, const Checkpointing& checkpointing, SideIo* side_io,
            std::vector<CheckpointResult>* checkpoints, Resumed resumed)
      : ctx_(ctx),
        c_(*ctx.config),
        checkpointer_(checkpointing.checkpointer.get()),
        side_io_(side_io),
        checkpoints_(checkpoints),
        dlio_cadence_(checkpointing.dlio_cadence),
        resumed_(resumed) {}

  // One pass over the data: a training epoch or an evaluation.
  Status Run(LoopParts& loop, uint64_t epoch, bool train, EpochReport* rep);
  // Saves a checkpoint (when there is a checkpointer) and waits for every rank; adds the time it
  // took to *spent_ns and when it ran to rep->saves (as DLIO's save_ckptN, N its last block).
  // `step`: the run's steps so far, or with DLIO's cadence the epoch's step (at the end of an
  // epoch one past its last, as DLIO names that checkpoint); the checkpoint is saved after that
  // step plus the resumed one (the global step a resumed framework counts), in `epoch` plus the
  // resumed epochs (the epoch a resumed framework counts).
  Status Checkpoint(uint64_t epoch, int64_t step, EpochReport* rep, int64_t* spent_ns);
  // The step an end-of-epoch checkpoint carries.
  int64_t EpochEndStep() const {
    return static_cast<int64_t>(dlio_cadence_ ? epoch_step_ + 1 : global_step_);
  }

 private:
  Result<EpochSteps> Plan(LoopParts& loop, uint64_t epoch, bool train);
  // One step with a batch: load (with side_io's reads), compute, barrier.
  Status Step(LoopParts& loop, uint64_t epoch, uint64_t s, bool train, StepRecord* rec);
  // Counts a training step and saves a checkpoint at the step cadence.
  Status CountStep(uint64_t epoch, EpochReport* rep);
  // DLIO's blocks: one opens at the start of a training epoch and after each step-cadence
  // checkpoint; the checkpoint and the end of the epoch close it.
  void OpenBlock(EpochReport* rep);
  void CloseBlock(EpochReport* rep);
  // Reduces the epoch's metrics over the ranks.
  Status Finish(uint64_t epoch, bool train, int64_t epoch_start_ns, EpochReport* rep);

  const RunContext& ctx_;
  const WorkloadConfig& c_;
  Checkpointer* checkpointer_;
  SideIo* side_io_;
  std::vector<CheckpointResult>* checkpoints_;
  std::vector<SampleRef> plan_;
  uint64_t global_step_ = 0;
  uint64_t epoch_step_ = 0;  // training steps of the current epoch
  bool dlio_cadence_;        // DLIO's: step checkpoints count each epoch's steps
  Resumed resumed_;          // the resumed checkpoint's step and epochs, added to the saves'
  int64_t block_start_ns_ = 0;
};

void EpochLoop::OpenBlock(EpochReport* rep) {
  BlockReport b;
  b.start_us = ctx_.clock->WallMicros();
  b.first_step = rep->steps.size();
  block_start_ns_ = ctx_.clock->NowNanos();
  rep->blocks.push_back(b);
}

void EpochLoop::CloseBlock(EpochReport* rep) {
  BlockReport& b = rep->blocks.back();
  const int64_t block_ns = ctx_.clock->NowNanos() - block_start_ns_;
  b.end_us = ctx_.clock->WallMicros();
  b.steps = rep->steps.size() - b.first_step;
  const auto first = rep->steps.begin() + static_cast<std::ptrdiff_t>(b.first_step);
  const std::vector<StepRecord> steps(first, first + static_cast<std::ptrdiff_t>(b.steps));
  b.metrics = ComputeBlockMetrics(steps, block_ns, c_.train.excluded_start_steps);
}

Status EpochLoop::Checkpoint(uint64_t epoch, int64_t step, EpochReport* rep, int64_t* spent_ns) {
  if (checkpointer_ == nullptr) return Status::OK();
  const int64_t t0 = ctx_.clock->NowNanos();
  CheckpointSpan span;
  span.block = std::max<size_t>(1, rep->blocks.size());
  span.index = checkpoints_->size();
  span.start_us = ctx_.clock->WallMicros();
  DLIO_ASSIGN_OR_RETURN(CheckpointResult r,
                        checkpointer_->Save(resumed_.epochs + epoch, resumed_.step + step));
  // DLIO times the save alone; the barrier after it is in neither the save nor a block.
  span.end_us = ctx_.clock->WallMicros();
  rep->saves.push_back(span);
  DLIO_RETURN_NOT_OK(ctx_.comm->Barrier());
  *spent_ns += ctx_.clock->NowNanos() - t0;
  ctx_.messages->Log(LogLevel::kDebug, StrCat("checkpoint ", r.id, ": ", r.bytes_written,
                                              " bytes in ", r.write_ns * 1e-9, " s"));
  checkpoints_->push_back(std::move(r));
  return Status::OK();
}

Result<EpochSteps> EpochLoop::Plan(LoopParts& loop, uint64_t epoch, bool train) {
  PlanRequest req;
  req.epoch = epoch - 1;
  req.rank = ctx_.rank();
  req.world = ctx_.world();
  req.samples_per_file = &loop.source->samples_per_file();
  // Refilled in the memory of an earlier epoch's plan, which the pipeline hands back unfreed.
  if (plan_.capacity() == 0) plan_ = loop.pipeline->TakeSpentPlan();
  DLIO_RETURN_NOT_OK(loop.sampler->Plan(req, &plan_));

  const uint64_t b = loop.batch_size;
  const uint64_t my_steps = loop.drop_last ? plan_.size() / b : (plan_.size() + b - 1) / b;
  // Every rank must take the same number of steps, or the per-step barrier (and step-cadence
  // checkpoints) would deadlock. With drop_last, the minimum over ranks: a longer shard's extra
  // batch is dropped like a partial one. Without it, the maximum, so that every sample is read:
  // a rank whose shard ran out takes idle steps (no batch, no compute, still the barrier).
  std::vector<double> steps_v{static_cast<double>(my_steps)};
  if (loop.drop_last) {
    DLIO_RETURN_NOT_OK(ctx_.comm->AllReduceMin(&steps_v));
  } else {
    DLIO_RETURN_NOT_OK(ctx_.comm->AllReduceMax(&steps_v));
  }
  EpochSteps out;
  out.steps = static_cast<uint64_t>(steps_v[0]);
  const bool capped = train && c_.train.total_training_steps > 0;
  if (capped) {
    out.steps = std::min<uint64_t>(out.steps, static_cast<uint64_t>(c_.train.total_training_steps));
  }
  out.real = std::min(out.steps, my_steps);
  if (out.steps == 0) {
    return Status::InvalidArgument(
        loop.phase, " epoch ", epoch, ": rank ", req.rank, " has ", plan_.size(),
        " samples, fewer than one batch of ", b,
        " (raise dataset.num_files_* / num_samples_per_file or lower reader.batch_size)");
  }
  if (plan_.size() > out.steps * b) plan_.resize(out.steps * b);
  if (my_steps < out.steps) {
    ctx_.messages->Log(LogLevel::kDebug,
                       StrCat("rank ", req.rank, " takes ", out.steps - my_steps,
                              " idle steps at the end of the epoch: its shard is shorter"));
  }
  if (my_steps > out.steps && !capped) {
    ctx_.messages->Log(LogLevel::kDebug, StrCat("rank ", req.rank, " skips ", my_steps - out.steps,
                                                " steps to stay in step with the other ranks"));
  }
  return out;
}

Status EpochLoop::Step(LoopParts& loop, uint64_t epoch, uint64_t s, bool train, StepRecord* rec) {
  const Clock* clock = ctx_.clock;
  Tracer* tracer = ctx_.tracer;
  const int64_t t0 = clock->NowNanos();
  BatchLease lease;
  bool end_of_epoch = false;
  // The side reads a code makes before fetching its batch are part of the step's load time.
  Status status = train && side_io_ ? side_io_->BeforeStep(global_step_) : Status::OK();
  if (status.ok()) status = loop.pipeline->Next(&lease, &end_of_epoch);
  const int64_t t1 = clock->NowNanos();
  if (!status.ok()) {
    return status.WithContext(StrCat(loop.phase, " epoch ", epoch, " step ", s + 1));
  }
  if (end_of_epoch || !lease) {
    return Status::Internal("pipeline ended after ", s, " steps of epoch ", epoch);
  }
  rec->samples = lease->samples.size();
  rec->bytes = lease->bytes;
  const int64_t step_start_us = tracer->enabled() ? clock->WallMicros() : 0;
  loop.compute->Step(static_cast<int64_t>(s));
  const int64_t t2 = clock->NowNanos();
  if (tracer->enabled()) {
    TraceSpan(tracer, ai_events::kCompute, ai_events::kComputeCat, step_start_us,
              clock->WallMicros(), epoch, static_cast<int64_t>(s + 1));
  }
  lease.reset();
  if (c_.train.barrier_per_step) DLIO_RETURN_NOT_OK(ctx_.comm->Barrier());
  const int64_t t3 = clock->NowNanos();
  rec->load_ns = t1 - t0;
  rec->compute_ns = t2 - t1;
  rec->barrier_ns = t3 - t2;
  return Status::OK();
}

Status EpochLoop::CountStep(uint64_t epoch, EpochReport* rep) {
  ++global_step_;
  ++epoch_step_;
  const int64_t every = c_.checkpoint.steps_between_checkpoints;
  const uint64_t count = dlio_cadence_ ? epoch_step_ : global_step_;
  if (every > 0 && count % static_cast<uint64_t>(every) == 0 && checkpointer_ != nullptr) {
    CloseBlock(rep);
    DLIO_RETURN_NOT_OK(Checkpoint(epoch, static_cast<int64_t>(count), rep, &rep->checkpoint_ns));
    OpenBlock(rep);  // as DLIO, even when the epoch ends here (an empty last block)
  }
  return Status::OK();
}

Status EpochLoop::Run(LoopParts& loop, uint64_t epoch, bool train, EpochReport* rep) {
  rep->epoch = epoch;
  if (train) epoch_step_ = 0;
  DLIO_ASSIGN_OR_RETURN(EpochSteps steps, Plan(loop, epoch, train));
  rep->steps.clear();
  rep->steps.reserve(steps.steps);
  if (train)
    DLIO_RETURN_NOT_OK(ctx_.storage->OnEpochPlan(
        PlanFrom(loop, epoch, c_.train.epochs, ctx_.rank(), ctx_.world())));
  ctx_.storage->TakeEpochStats(nullptr);  // counts from here on
  if (ctx_.storage->capabilities().shared_by_node && ctx_.world() > 1) {
    // A node's ranks share its first rank's statistics: none opens a file of this epoch before
    // that rank reset the counters.
    DLIO_RETURN_NOT_OK(ctx_.comm->Barrier());
  }
  const int64_t epoch_start_ns = ctx_.clock->NowNanos();
  rep->start_us = ctx_.clock->WallMicros();
  // Handed over, not copied: a copy of a plan of 1 KiB samples (16 B a sample, 4 MiB for an epoch
  // of 256 MiB) cost up to 13 ms of the timed epoch in fresh pages; the sampler refills plan_
  // before the next epoch's timer starts.
  DLIO_RETURN_NOT_OK(loop.pipeline->StartEpoch(epoch - 1, std::move(plan_)));
  rep->blocks.clear();
  rep->saves.clear();
  if (train) OpenBlock(rep);
  RunProgress progress;
  progress.phase = loop.phase;
  progress.epoch = epoch;
  progress.epochs = c_.train.epochs;
  progress.steps = steps.steps;

  if (train && side_io_) side_io_->SetRunSteps(steps.steps * c_.train.epochs);
  for (uint64_t s = 0; s < steps.steps; ++s) {
    if (s >= steps.real) {  // idle: keep the other ranks' barriers and checkpoints company
      if (c_.train.barrier_per_step) DLIO_RETURN_NOT_OK(ctx_.comm->Barrier());
      if (train) DLIO_RETURN_NOT_OK(CountStep(epoch, rep));
      continue;
    }
    StepRecord rec;
    DLIO_RETURN_NOT_OK(Step(loop, epoch, s, train, &rec));
    rep->steps.push_back(rec);
    progress.bytes += rec.bytes;
    if (train) DLIO_RETURN_NOT_OK(CountStep(epoch, rep));
    progress.step = s + 1;
    progress.elapsed_s = (ctx_.clock->NowNanos() - epoch_start_ns) * 1e-9;
    ctx_.messages->Progress(progress);
  }
  return Finish(epoch, train, epoch_start_ns, rep);
}

Status EpochLoop::Finish(uint64_t epoch, bool train, int64_t epoch_start_ns, EpochReport* rep) {
  if (train) CloseBlock(rep);
  const int64_t block_ns = ctx_.clock->NowNanos() - epoch_start_ns - rep->checkpoint_ns;
  rep->end_us = ctx_.clock->WallMicros();
  TraceSpan(ctx_.tracer, train ? ai_events::kTrain : ai_events::kEvaluate, ai_events::kPipelineCat,
            rep->start_us, rep->end_us, static_cast<int64_t>(epoch), -1);
  rep->metrics = ComputeBlockMetrics(rep->steps, block_ns, c_.train.excluded_start_steps);
  std::vector<double> v{rep->metrics.au_percent, rep->metrics.samples_per_s,
                        rep->metrics.bytes_per_s};
  DLIO_RETURN_NOT_OK(ctx_.comm->AllReduceSum(&v));
  // After every rank ended the epoch: a cache shared by a node's ranks counts all their reads.
  EpochStatsSink sink;
  sink.epoch = epoch;
  sink.end_us = rep->end_us;
  sink.tracer = ctx_.tracer;
  ctx_.storage->TakeEpochStats(&sink);
  rep->storage_stats = std::move(sink.blocks);
  rep->au_percent_mean = v[0] / ctx_.world();
  rep->samples_per_s_sum = v[1];
  rep->bytes_per_s_sum = v[2];
  return Status::OK();
}

// Builds the loops and side I/O into `parts`.
Status MakeTrainingParts(const RunContext& ctx, TrainingParts* parts) {
  const WorkloadConfig& c = *ctx.config;
  uint64_t random_seed = 0;
  if (UsesRandomShuffle(c)) {
    DLIO_ASSIGN_OR_RETURN(random_seed, SharedRandomSeed(ctx.comm));
  }
  // Run step: the allocator where the I/O model's Python stack leaves it, before any loop (and
  // the pytorch pipeline's workers) exists.
  MatchAllocatorToIoModel(c, *ctx.format, ctx.storage->capabilities().needs_mpi,
                          PipelineCapabilitiesFor(c, ctx.registries->pipelines));
  DLIO_ASSIGN_OR_RETURN(parts->train, MakeLoop(ctx, Split::kTrain, random_seed));
  if (c.workflow.evaluation && c.dataset.num_files_eval > 0) {
    DLIO_ASSIGN_OR_RETURN(parts->eval, MakeLoop(ctx, Split::kEval, random_seed));
  }
  if (!c.side_io.read_file.empty() || c.side_io.write_bytes > 0) {
    DLIO_ASSIGN_OR_RETURN(SideIoOptions so, SideIoOptionsFor(c, ctx.rank()));
    DLIO_ASSIGN_OR_RETURN(parts->side_io, SideIo::Make(so, ctx.storage));
  }
  return Status::OK();
}

}  // namespace

bool CheckpointAfterEpoch(const WorkloadConfig& c, uint64_t epoch) {
  if (c.checkpoint.steps_between_checkpoints > 0) return false;
  if (epoch < c.checkpoint.checkpoint_after_epoch) return false;
  const uint64_t every = std::max<uint64_t>(1, c.checkpoint.epochs_between_checkpoints);
  return (epoch - c.checkpoint.checkpoint_after_epoch) % every == 0;
}

Status Train(const RunContext& ctx, const Checkpointing& checkpointing, TrainingParts* parts,
             RunReport* report) {
  const WorkloadConfig& c = *ctx.config;
  // A resumed job loads its checkpoint before it builds its data loader.
  DLIO_ASSIGN_OR_RETURN(const Resumed resumed, ResumeFromNewest(ctx, checkpointing));
  DLIO_RETURN_NOT_OK(MakeTrainingParts(ctx, parts));
  LoopParts& train = *parts->train;
  LoopParts* eval = parts->eval.get();
  SideIo* side_io = parts->side_io.get();
  report->buffer_prepare_seconds = (train.prepare_ns + (eval ? eval->prepare_ns : 0)) * 1e-9;
  report->buffer_prepared_bytes = train.reserved_bytes + (eval ? eval->reserved_bytes : 0);
  EpochLoop loop(ctx, checkpointing, side_io, &report->checkpoints, resumed);
  DLIO_RETURN_NOT_OK(ctx.comm->Barrier());
  if (side_io) DLIO_RETURN_NOT_OK(side_io->BeforeTraining());
  for (uint64_t epoch = 1; epoch <= c.train.epochs; ++epoch) {
    // DLIO's pipeline "epoch.block": the epoch's training, checkpoint and evaluation.
    const int64_t epoch_start_us = ctx.tracer->enabled() ? ctx.clock->WallMicros() : 0;
    EpochReport rep;
    DLIO_RETURN_NOT_OK(loop.Run(train, epoch, /*train=*/true, &rep));
    if (CheckpointAfterEpoch(c, epoch)) {
      int64_t spent = 0;
      DLIO_RETURN_NOT_OK(loop.Checkpoint(epoch, loop.EpochEndStep(), &rep, &spent));
    }
    ctx.messages->Log(LogLevel::kInfo, FormatEpochLine("train", rep));
    report->epochs.push_back(std::move(rep));
    if (eval && EvalAfterEpoch(c, epoch)) {
      EpochReport erep;
      DLIO_RETURN_NOT_OK(loop.Run(*eval, epoch, /*train=*/false, &erep));
      ctx.messages->Log(LogLevel::kInfo, FormatEpochLine("eval", erep));
      report->eval_epochs.push_back(std::move(erep));
    }
    if (ctx.tracer->enabled()) {
      TraceSpan(ctx.tracer, ai_events::kEpochBlock, ai_events::kPipelineCat, epoch_start_us,
                ctx.clock->WallMicros(), static_cast<int64_t>(epoch), -1);
    }
  }
  DLIO_RETURN_NOT_OK(train.pipeline->Stop());
  if (eval) DLIO_RETURN_NOT_OK(eval->pipeline->Stop());
  if (side_io) {
    const int64_t start_us = ctx.clock->WallMicros();
    DLIO_RETURN_NOT_OK(side_io->AfterTraining());
    TraceSpan(ctx.tracer, "side_io.write", "dlio", start_us, ctx.clock->WallMicros(), -1, -1);
  }
  return Status::OK();
}

}  // namespace dlio::runner_internal
