// The pytorch pipeline's own options, completed from the config and the runner's facts
// (pytorch_options.h; the entry's PipelineHooks::derive_options).
#include "pipeline/pytorch_options.h"

#include "dlio/config.h"
#include "pipeline/worker_pipeline.h"

namespace dlio {

Status DerivePytorchOptions(const WorkloadConfig& c, const PipelineFacts& facts,
                            PipelineOptions* options) {
  PytorchLoaderOptions& own = options->sections.Get<PytorchLoaderOptions>();
  // What DLIO's loader hands PyTorch per sample, whatever the client costs: a slot never holds
  // more than the framework's collated batch.
  own.collate_limit_bytes = c.dataset.record_length_bytes_resize;
  own.reserve_batch_bytes = facts.batch_reserve_bytes;
  own.bounded_read_bytes = facts.bounded_read_bytes;
  own.worker_trace_prefix = facts.trace_prefix;
  own.worker_trace_gzip = c.output.trace_gzip;
  return Status::OK();
}

}  // namespace dlio
