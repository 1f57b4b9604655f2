// MakeLoopParts: one training or evaluation loop built from the config (dlio/loop.h).
#include "dlio/loop.h"
#include "runner/run_context.h"

namespace dlio {

using runner_internal::Build;

namespace {

// Whether the emulator `name` declares it busy-waits; an unknown name is refused when the
// emulator is built.
bool ComputeBusyWaits(const std::string& name, const Registries& registries) {
  const auto entry = registries.computes.Find(name);
  return entry.ok() && entry->capabilities.busy_waits;
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
  const DistributionSpec& step_time =
      split == Split::kTrain ? c.train.computation_time : c.evaluation.eval_time;

  FormatDataSourceOptions ds;
  ds.format = FormatOptionsFor(c);
  ds.samples_per_file = c.dataset.num_samples_per_file;
  ds.max_open_files = c.reader.max_open_files;
  ds.open_per_sample = c.reader.open_per_sample;
  ds.open_files_at_start = c.reader.open_files_at_start;
  DLIO_ASSIGN_OR_RETURN(std::vector<std::string> files,
                        ListDatasetFiles(c.dataset, *env.format, ds.format, split, env.storage));
  DLIO_ASSIGN_OR_RETURN(loop.source, MakeFormatDataSource(env.storage, env.format, files, ds));

  DLIO_ASSIGN_OR_RETURN(SamplerOptions so, SamplerOptionsFor(c, env.random_seed));
  AdaptSamplerToIoModel(RequestModelFor(c, *env.format), &so);
  const bool needs_mpi = env.storage->capabilities().needs_mpi;
  const PipelineCapabilities configured = PipelineCapabilitiesFor(c, env.registries->pipelines);
  AdaptSamplerToFormat(c, env.format->capabilities(), LoaderFor(c, needs_mpi, configured), &so);
  DLIO_ASSIGN_OR_RETURN(loop.sampler, Build<Sampler>(env.registries->samplers, so.name, so));

  PipelineOptions po;
  po.name = PipelineNameFor(c, needs_mpi, configured);
  // The allocator's state for the model is the run step MatchAllocatorToIoModel's, before this.
  po.framework_client_costs = FrameworkClientCosts(c);
  po.deliver_sample_bytes = env.consumer_reads_bytes;
  po.samples_stream = SamplesStream(c, *env.format);
  po.batch_size = loop.batch_size;
  po.read_threads = c.reader.read_threads;
  po.computation_threads = c.reader.computation_threads;
  po.prefetch_size = c.reader.prefetch_size;
  po.drop_last = c.reader.drop_last;
  po.preprocess_time = c.reader.preprocess_time;
  po.preprocess_spin = ComputeBusyWaits(c.train.compute, *env.registries);
  po.seed = MixSeed(c.train.seed, rank, split == Split::kTrain ? 0x77 : 0xe7);
  po.rank = rank;
  po.reopen_files_each_epoch =
      c.reader.reopen_files_each_epoch || env.storage->capabilities().reopen_each_epoch;
  po.thread_nice = EffectiveThreadNice(c);
  po.consumer_wakes_per_run = step_time.AlwaysZero();
  DLIO_ASSIGN_OR_RETURN(const auto pipeline_entry, env.registries->pipelines.Find(po.name));
  PipelineFacts facts;
  facts.trace_prefix = WorkerTracePrefixFor(c, rank, env.world);
  ReserveBuffersFor(c, *env.format, pipeline_entry, loop.batch_size, &po, &facts);
  po.reserve_landing_bytes = env.format->landing_bytes(ds.format);
  po.reader_lanes = ReaderLanesFor(c, env.format->capabilities(), so, pipeline_entry.capabilities);
  // The sections implementations parsed from their own keys, then completed by their entry.
  po.sections = c.reader.pipelines;
  if (pipeline_entry.hooks.derive_options) {
    DLIO_RETURN_NOT_OK(pipeline_entry.hooks.derive_options(c, facts, &po));
  }
  PipelineEnv pe{
      loop.source.get(),          env.clock,   env.tracer, c.reader.decode ? env.format : nullptr,
      c.reader.max_decoded_bytes, env.storage, {}};
  if (c.reader.decode && !env.format->has_decoder()) {
    return Status::InvalidArgument("reader.decode is true but format '" + env.format->name() +
                                   "' has no decoder (formats with one: jpeg, png, csv)");
  }
  const int64_t prepare_start = env.clock->NowNanos();
  DLIO_ASSIGN_OR_RETURN(loop.pipeline, Build<Pipeline>(env.registries->pipelines, po.name, po, pe));
  loop.prepare_ns = env.clock->NowNanos() - prepare_start;
  loop.reserved_bytes = loop.pipeline->stats().reserved_bytes;

  ComputeOptions co;
  co.name = c.train.compute;
  co.time = step_time;
  co.seed = MixSeed(c.train.seed, rank, split == Split::kTrain ? 0xc0 : 0xce);
  co.key = split == Split::kTrain ? "train.computation_time" : "evaluation.eval_time";
  DLIO_ASSIGN_OR_RETURN(loop.compute,
                        Build<ComputeEmulator>(env.registries->computes, co.name, co, env.clock));
  return loop;
}

}  // namespace dlio
