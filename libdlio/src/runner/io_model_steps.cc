// reader.io_model's two meanings resolved for a run, and the run step that matches the process's
// allocator to the request model (dlio/loop.h; docs/io_models.md, "glibc's thresholds").
#include "dlio/loop.h"
#include "io_models/io_model_table.h"
#include "io_models/pyio/python_heap.h"

namespace dlio {

IoModel RequestModelFor(const WorkloadConfig& c, const Format& format) {
  return ResolveIoModel(c.reader.io_model, format.capabilities());
}

void AdaptSamplerToIoModel(IoModel model, SamplerOptions* o) {
  if (!io_models::IoModelEntryFor(model).stream_order_sampler) return;
  // auto then picks the window (shuffle_buffer); a window applies after the reads.
  o->window_shuffle = true;
  o->shuffle_after_read = true;
}

namespace {

// The format streams its shards and the request model reads them so (not by offset).
bool StreamsShards(const WorkloadConfig& c, const FormatCapabilities& format) {
  return format.shard_streams &&
         !io_models::IoModelEntryFor(ResolveIoModel(c.reader.io_model, format)).seeks_in_shards;
}

}  // namespace

void AdaptSamplerToFormat(const WorkloadConfig& c, const FormatCapabilities& format, Loader loader,
                          SamplerOptions* o) {
  if (!StreamsShards(c, format)) return;
  if (o->sharding != Sharding::kNone) o->sharding = Sharding::kShard;
  if (c.reader.file_interleave == 0) o->interleave = c.reader.read_threads;
  if (loader == Loader::kPytorchWorkers) o->interleave_block = c.reader.batch_size;
  o->window_shuffle = true;
  o->shuffle_after_read = true;
}

uint64_t ReaderLanesFor(const WorkloadConfig& c, const FormatCapabilities& format,
                        const SamplerOptions& sampler, const PipelineCapabilities& pipeline) {
  const uint64_t threads = c.reader.read_threads;
  if (!StreamsShards(c, format) || pipeline.worker_processes || threads <= 1) return 0;
  if (sampler.interleave != threads || sampler.interleave_block > 1) return 0;
  return threads;
}

size_t AllocatorThresholdFor(const WorkloadConfig& c, const Format& format, bool storage_needs_mpi,
                             const PipelineCapabilities& configured) {
  if (!FrameworkClientCosts(c)) return 0;
  // The worker processes' Python imports torch (whatever the request model); dlio's threads
  // emulate a process that imported the request model's stack.
  const IoModel heap = LoaderFor(c, storage_needs_mpi, configured) == Loader::kPytorchWorkers
                           ? IoModel::kPytorch
                           : RequestModelFor(c, format);
  return pyio::PythonImportThreshold(heap);
}

void MatchAllocatorToIoModel(const WorkloadConfig& c, const Format& format, bool storage_needs_mpi,
                             const PipelineCapabilities& configured) {
  pyio::MatchPythonImports(AllocatorThresholdFor(c, format, storage_needs_mpi, configured));
}

}  // namespace dlio
