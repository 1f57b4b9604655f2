// The one batching engine behind the three built-in pipelines (threaded, sync, preload).
//
// Batch k holds plan[k*B, k*B+B) and is filled in pooled slot k % ring (ring = prefetch_size +
// max(1, read_threads) + 1 Batch objects). ring * B SampleBuffers, reused across epochs, sit in a
// LIFO free list: a reader takes the most recently released one for each sample and a batch's
// buffers return when its lease is released, so a consumer that keeps up cycles a few
// cache-warm buffers rather than all of them.
// Readers claim sample indices from an atomic cursor and write straight into the slot of their
// batch; whoever reads a batch's last sample completes it (to the preprocessing workers, or
// ready). Next waits for batch `next_index` specifically, so order holds even when later batches
// finish first. A slot opens for batch k only when it is free and k passes the mode's gate:
//   threaded: k < delivered + prefetch_size + max(1, read_threads)  (bounded run-ahead)
//   sync:     k < requested (Next asks for k), so nothing runs while the consumer computes;
//             read_threads > 1 split the batch's reads, preprocessing runs in the reading thread
//   preload:  as threaded, but StartEpoch first reads every not-yet-loaded SampleRef of the plan
//             into a store (read_threads loader threads); batches then point into the store.
// read_threads == 0 (and sync with read_threads == 1) reads in Next on the caller's thread.
// computation_threads == 0, or a zero preprocess_time, preprocesses inline after each read.
#pragma once

#include <memory>

#include "dlio/pipeline.h"
#include "dlio/status.h"

namespace dlio {

enum class PipelineMode {
  kThreaded,  // readers and preprocessing run ahead of the consumer, up to prefetch_size batches
  kSync,      // nothing runs until Next asks for a batch ("read the batch, then compute")
  kPreload,   // every sample is read into memory once; batches point into that store
};

// InvalidArgument naming the option when `options` or `env` cannot work (batch_size 0, no
// source, a bad preprocess_time).
Result<std::unique_ptr<Pipeline>> MakeBatchPipeline(PipelineMode mode,
                                                    const PipelineOptions& options,
                                                    const PipelineEnv& env);

}  // namespace dlio
