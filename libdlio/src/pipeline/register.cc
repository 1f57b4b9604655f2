#include <algorithm>

#include "dlio/config.h"
#include "dlio/pipeline.h"
#include "dlio/str_cat.h"
#include "pipeline/batch_pipeline.h"
#include "pipeline/worker_pipeline.h"

namespace dlio {
namespace {

constexpr const char* kCommonOptions =
    "reader.batch_size, reader.read_threads, reader.computation_threads, reader.prefetch_size, "
    "reader.preprocess_time, drop_last";

// The pytorch pipeline's own key (pipeline/pytorch_keys.cc), parsed into its
// PytorchLoaderOptions.
constexpr const char* kPytorchKeySection = "reader.persistent_workers";

PipelineFactory FactoryFor(PipelineMode mode) {
  return [mode](const PipelineOptions& options, const PipelineEnv& env) {
    return MakeBatchPipeline(mode, options, env);
  };
}

// The preload store keys a sample by (file, index) packed into 64 bits: 24 bits of file.
Status ValidatePreload(const WorkloadConfig& c) {
  constexpr uint64_t kMaxPreloadFiles = uint64_t{1} << 24;
  if (std::max(c.dataset.num_files_train, c.dataset.num_files_eval) > kMaxPreloadFiles) {
    return Status::InvalidArgument(
        StrCat("dataset.num_files_train and dataset.num_files_eval must be <= ", kMaxPreloadFiles,
               " with reader.pipeline 'preload'"));
  }
  return Status::OK();
}

}  // namespace

Status RegisterBuiltinPipelines(PipelineRegistry* registry) {
  auto& pipelines = *registry;
  DLIO_RETURN_NOT_OK(pipelines.Register(
      {"threaded",
       "read threads + preprocessing workers + bounded prefetch, I/O overlapped with compute "
       "(tf.data / PyTorch DataLoader)",
       kCommonOptions, FactoryFor(PipelineMode::kThreaded),
       PipelineCapabilities{.overlaps_io = true}}));
  DLIO_RETURN_NOT_OK(pipelines.Register(
      {"sync", "read the batch inside Next, then compute: no overlap (Cosmic Tagger, FRNN)",
       kCommonOptions, FactoryFor(PipelineMode::kSync),
       PipelineCapabilities{.reads_on_loop_thread = true}}));
  DLIO_RETURN_NOT_OK(pipelines.Register(
      {"preload",
       "read every planned sample into memory once, serve later epochs from memory "
       "(read_type: memory, CANDLE)",
       kCommonOptions, FactoryFor(PipelineMode::kPreload),
       PipelineCapabilities{.holds_dataset = true}, &ValidatePreload}));
  DLIO_RETURN_NOT_OK(pipelines.Register(
      {"pytorch",
       "PyTorch DataLoader: read_threads worker processes (forked), each building whole batches "
       "(batch i by worker i % workers), prefetch_factor batches per worker, in order; "
       "reader.io_model pytorch (docs/io_models.md)",
       "reader.batch_size, reader.read_threads, reader.prefetch_size, reader.persistent_workers, "
       "reader.preprocess_time, drop_last",
       [](const PipelineOptions& options, const PipelineEnv& env) {
         return MakeWorkerPipeline(options, env);
       },
       PipelineCapabilities{.worker_processes = true, .overlaps_io = true},
       {},
       {kPytorchKeySection},
       PipelineHooks{.derive_options = &DerivePytorchOptions,
                     .plan_memory = &PlanPytorchMemory,
                     .estimate_memory = &EstimatePytorchMemory}}));
  return Status::OK();
}

}  // namespace dlio
