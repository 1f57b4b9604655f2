// The training phase: the epoch loop, its evaluations and step- or epoch-cadence checkpoints.
#include <algorithm>
#include <string>

#include "dlio/metrics.h"
#include "runner/report.h"
#include "runner/run_state.h"

namespace dlio::runner_internal {
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

}  // namespace

void TraceSpan(Tracer* tracer, const char* name, const char* cat, int64_t start_us, int64_t end_us,
               int64_t epoch, int64_t step, int64_t index) {
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

namespace {

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

}  // namespace

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

}  // namespace dlio::runner_internal
