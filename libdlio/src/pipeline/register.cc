#include "dlio/registries.h"
#include "pipeline/batch_pipeline.h"

namespace dlio {
namespace {

constexpr const char* kCommonOptions =
    "reader.batch_size, reader.read_threads, reader.computation_threads, reader.prefetch_size, "
    "reader.preprocess_time, drop_last";

PipelineFactory FactoryFor(PipelineMode mode) {
  return [mode](const PipelineOptions& options, const PipelineEnv& env) {
    return MakeBatchPipeline(mode, options, env);
  };
}

}  // namespace

Status RegisterBuiltinPipelines(Registries* registries) {
  auto& pipelines = registries->pipelines;
  DLIO_RETURN_NOT_OK(pipelines.Register(
      {"threaded",
       "read threads + preprocessing workers + bounded prefetch, I/O overlapped with compute "
       "(tf.data / PyTorch DataLoader)",
       kCommonOptions, FactoryFor(PipelineMode::kThreaded)}));
  DLIO_RETURN_NOT_OK(pipelines.Register(
      {"sync", "read the batch inside Next, then compute: no overlap (Cosmic Tagger, FRNN)",
       kCommonOptions, FactoryFor(PipelineMode::kSync)}));
  DLIO_RETURN_NOT_OK(pipelines.Register(
      {"preload",
       "read every planned sample into memory once, serve later epochs from memory "
       "(read_type: memory, CANDLE)",
       kCommonOptions, FactoryFor(PipelineMode::kPreload)}));
  return Status::OK();
}

}  // namespace dlio
