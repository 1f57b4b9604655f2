#include "runner/checkpoint_phase.h"

#include <algorithm>
#include <optional>
#include <string>

#include "dlio/ai_events.h"
#include "dlio/compute.h"
#include "dlio/loop.h"
#include "dlio/str_cat.h"
#include "runner/checkpoint_options.h"
#include "runner/checkpoint_select.h"

namespace dlio::runner_internal {
namespace {

// Rank 0 states what a transformer checkpoint amounts to over the whole job, before writing it.
Status DescribeTransformerCheckpoint(const RunContext& ctx, const CheckpointOptions& co) {
  const int world = ctx.world();
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
    ctx.messages->Warn(StrCat(
        "model.parallelism.data is ", t.data,
        " but checkpoint.mode is 'default', where the data-parallel degree is the world (", world,
        ") / (tensor x pipeline = ", mp, ") = ", dp,
        "; set checkpoint.mode subset to emulate the first ", world, " ranks of a larger job"));
  }
  std::string scaled;
  if (co.size_divisor > 1) {
    scaled = StrCat(" (files written at 1/", co.size_divisor, " of that: checkpoint.size_divisor)");
  }
  ctx.messages->Log(
      LogLevel::kInfo,
      StrCat("transformer checkpoint: ", TransformerParameterCount(t), " parameters, tensor ",
             t.tensor, " x pipeline ", t.pipeline, " x data ", dp, ", ZeRO stage ", t.zero_stage,
             ": ", model, " model + ", optimizer, " optimizer bytes in ", files,
             " files per checkpoint over ", world, world == 1 ? " rank" : " ranks", scaled));
  return Status::OK();
}

}  // namespace

Status MakeCheckpointing(const RunContext& ctx, Checkpointing* out) {
  const WorkloadConfig& c = *ctx.config;
  const CheckpointOptions co = CheckpointOptionsFor(c, ctx.rank(), ctx.world());
  out->type = co.name;
  DLIO_ASSIGN_OR_RETURN(const auto entry, ctx.registries->checkpointers.Find(co.name));
  out->dlio_cadence = entry.capabilities.dlio_cadence;
  const auto& layered = entry.capabilities.writes_transformer_layers;
  if (layered && layered(co) && ctx.rank() == 0) {
    DLIO_RETURN_NOT_OK(DescribeTransformerCheckpoint(ctx, co));
  }
  Storage* storage = ctx.storage;
  if (!c.checkpoint.storage_type.empty() && c.checkpoint.storage_type != c.storage.storage_type) {
    StorageOptions so = StorageOptionsFor(c);
    so.name = c.checkpoint.storage_type;
    so.direct = false;  // reader.odirect is about the data files
    auto made = MakeStorage(so, ctx.registries->storages, ctx.clock, ctx.tracer);
    if (!made.ok()) return made.status().WithContext("checkpoint.storage_type");
    out->own_storage = std::move(made).value();
    storage = out->own_storage.get();
  }
  CheckpointEnv ce{storage, ctx.clock, ctx.tracer};
  DLIO_ASSIGN_OR_RETURN(out->checkpointer,
                        Build<Checkpointer>(ctx.registries->checkpointers, co.name, co, ce));
  return Status::OK();
}

// After checkpoint.time_between_checkpoints of emulated compute and a barrier, each rank saves;
// that num_checkpoints_write times, then num_checkpoints_read loads of the first checkpoints
// written (with no writes: the newest ones an earlier run left). Each operation is timed per rank
// from its start to its end (plus the barrier with checkpoint.rank_sync).
Status CheckpointOnly(const RunContext& ctx, Checkpointing* ckpt, RunReport* report) {
  const WorkloadConfig& c = *ctx.config;
  std::vector<CheckpointResult>* saves = &report->checkpoints;
  std::vector<CheckpointResult>* loads = &report->checkpoint_loads;
  const uint64_t writes =
      static_cast<uint64_t>(std::max<int64_t>(0, c.checkpoint.num_checkpoints_write));
  const uint64_t reads =
      static_cast<uint64_t>(std::max<int64_t>(0, c.checkpoint.num_checkpoints_read));
  if (writes == 0 && reads == 0) {
    // `--generate --no-train` of a config that checkpoints while training is a generate-only
    // run, not a mistake.
    if (ctx.rank() == 0 && !c.workflow.generate_data) {
      ctx.messages->Warn(
          "workflow.train is false and workflow.checkpoint true, but neither "
          "checkpoint.num_checkpoints_write nor checkpoint.num_checkpoints_read is > 0: no "
          "checkpoint written or read");
    }
    return Status::OK();
  }
  DLIO_RETURN_NOT_OK(MakeCheckpointing(ctx, ckpt));
  Checkpointer* checkpointer = ckpt->checkpointer.get();
  std::unique_ptr<ComputeEmulator> pause;
  if (c.checkpoint.time_between_checkpoints > 0) {
    ComputeOptions co;
    co.name = c.train.compute;
    co.time.mean = c.checkpoint.time_between_checkpoints;
    co.seed = MixSeed(c.train.seed, ctx.rank(), 0xcb);
    co.key = "checkpoint.time_between_checkpoints";
    DLIO_ASSIGN_OR_RETURN(pause,
                          Build<ComputeEmulator>(ctx.registries->computes, co.name, co, ctx.clock));
  }
  std::vector<uint64_t> read_ids;
  if (writes == 0) {
    // With DLIO's cadence and names the first ones, global_epoch1_step1..N, as DLIO reads them;
    // else the newest.
    DLIO_ASSIGN_OR_RETURN(
        read_ids, NewestCompleteCheckpoints(checkpointer, ctx.comm, reads,
                                            c.checkpoint.checkpoint_folder, ckpt->dlio_cadence));
  }
  const Clock* clock = ctx.clock;
  RunProgress progress;
  progress.phase = "checkpoint";
  progress.steps = writes + reads;
  const int64_t start_ns = clock->NowNanos();
  report->checkpoint_only_start_us = clock->WallMicros();
  DLIO_RETURN_NOT_OK(ctx.comm->Barrier());
  for (uint64_t i = 0; i < writes + reads; ++i) {
    const bool save = i < writes;
    // DLIO computes (time_between_checkpoints, maybe 0) before each checkpoint: a "compute" span.
    const int64_t compute_start_us = ctx.tracer->enabled() ? clock->WallMicros() : 0;
    if (pause) pause->Step(static_cast<int64_t>(i));
    TraceSpan(ctx.tracer, ai_events::kCompute, ai_events::kComputeCat, compute_start_us,
              ctx.tracer->enabled() ? clock->WallMicros() : 0, 1, static_cast<int64_t>(i + 1));
    DLIO_RETURN_NOT_OK(ctx.comm->Barrier());  // DLIO's all-reduce before each checkpoint
    const int64_t t0 = clock->NowNanos();
    CheckpointSpan span;
    span.start_us = clock->WallMicros();
    CheckpointResult r;
    if (save) {
      DLIO_ASSIGN_OR_RETURN(r, checkpointer->Save(1, static_cast<int64_t>(i + 1)));
    } else {
      const uint64_t k = i - writes;
      const uint64_t id = writes > 0 ? (*saves)[k].id : read_ids[k];
      auto loaded = checkpointer->Load(id);
      if (!loaded.ok()) {
        return loaded.status().WithContext(StrCat("checkpoint-only run: loading checkpoint ", id));
      }
      r = std::move(*loaded);
    }
    if (c.checkpoint.rank_sync) DLIO_RETURN_NOT_OK(ctx.comm->Barrier());
    const int64_t ns = clock->NowNanos() - t0;
    ctx.messages->Log(LogLevel::kDebug,
                      StrCat(save ? "saved" : "loaded", " checkpoint ", r.id, ": ",
                             save ? r.bytes_written : r.bytes_read, " bytes in ", ns * 1e-9, " s"));
    span.end_us = clock->WallMicros();
    // DLIO numbers the saves 1.. and the loads 1.. (save_ckptN, load_ckptN).
    std::vector<CheckpointSpan>& spans =
        save ? report->checkpoint_only_saves : report->checkpoint_only_loads;
    span.index = spans.size();
    span.block = spans.size() + 1;
    spans.push_back(span);
    if (save) {
      r.write_ns = ns;
      saves->push_back(std::move(r));
    } else {
      r.read_ns = ns;
      loads->push_back(std::move(r));
    }
    progress.step = i + 1;
    progress.elapsed_s = (clock->NowNanos() - start_ns) * 1e-9;
    ctx.messages->Progress(progress);
  }
  DLIO_RETURN_NOT_OK(ctx.comm->Barrier());
  report->checkpoint_only_end_us = clock->WallMicros();
  return Status::OK();
}

namespace {

// The newest checkpoint complete on every rank, nullopt when there is none.
Result<std::optional<uint64_t>> NewestComplete(const RunContext& ctx, Checkpointer* checkpointer) {
  auto ids = NewestCompleteCheckpoints(checkpointer, ctx.comm, 1,
                                       ctx.config->checkpoint.checkpoint_folder);
  if (ids.status().code() == StatusCode::kNotFound) return std::optional<uint64_t>();
  DLIO_RETURN_NOT_OK(ids.status());
  return std::optional<uint64_t>(ids->back());
}

}  // namespace

Result<Resumed> ResumeFromNewest(const RunContext& ctx, const Checkpointing& ckpt) {
  Checkpointer* checkpointer = ckpt.checkpointer.get();
  if (!ctx.config->checkpoint.resume || checkpointer == nullptr) return Resumed();
  DLIO_ASSIGN_OR_RETURN(const std::optional<uint64_t> id, NewestComplete(ctx, checkpointer));
  if (!id) {
    ctx.messages->Log(LogLevel::kInfo, "checkpoint.resume: no complete checkpoint in " +
                                           ctx.config->checkpoint.checkpoint_folder +
                                           ", training starts fresh");
    return Resumed();
  }
  auto loaded = checkpointer->Load(*id);
  if (!loaded.ok()) return loaded.status().WithContext(StrCat("resuming from checkpoint ", *id));
  ctx.messages->Log(LogLevel::kDebug,
                    StrCat("resumed from checkpoint ", *id,
                           loaded->step >= 0 ? StrCat(" (global step ", loaded->step, ")") : "",
                           loaded->epoch >= 0 ? StrCat(" (epoch ", loaded->epoch, ")") : "", ": ",
                           loaded->bytes_read, " bytes read"));
  DLIO_RETURN_NOT_OK(ctx.comm->Barrier());
  return Resumed{std::max<int64_t>(loaded->step, 0),
                 loaded->epoch >= 0 ? static_cast<uint64_t>(loaded->epoch) + 1 : 0};
}

Status WriteResumeCheckpoint(const RunContext& ctx) {
  Checkpointing ckpt;
  DLIO_RETURN_NOT_OK(MakeCheckpointing(ctx, &ckpt));
  DLIO_ASSIGN_OR_RETURN(const std::optional<uint64_t> id,
                        NewestComplete(ctx, ckpt.checkpointer.get()));
  if (id) return Status::OK();
  const int64_t every = ctx.config->checkpoint.steps_between_checkpoints;
  DLIO_RETURN_NOT_OK(ckpt.checkpointer->Save(1, every > 0 ? every : 1)
                         .status()
                         .WithContext("checkpoint.resume: writing the checkpoint to resume from"));
  return ctx.comm->Barrier();
}

}  // namespace dlio::runner_internal
