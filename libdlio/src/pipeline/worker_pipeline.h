// The pytorch pipeline: PyTorch DataLoader's multi-process loading (torch/utils/data/
// dataloader.py, _MultiProcessingDataLoaderIter; _utils/worker.py, _worker_loop).
//
// num_workers = reader.read_threads worker PROCESSES, forked by the main process when the
// pipeline is built (persistent_workers, pytorch_options.h) or at every StartEpoch, in which case
// they exit once the epoch has been delivered. Batch k is built whole by worker k % num_workers
// (the index queues are fed round robin); at most prefetch_factor * num_workers batches are
// outstanding (sent to a worker, not yet handed to the consumer), and one more is sent each time
// Next hands one out, as _try_put_index does. prefetch_factor is DLIO's: ceil(reader.prefetch_size
// / read_threads), 2 when prefetch_size is 0. Batches are handed out in order.
//
// Each worker has prefetch_factor + 1 slots, each a shared-memory region (worker_channel.h): the
// main process writes the batch's SampleRefs there and sends a command over the worker's
// socketpair; the worker reads every sample through its own copy of the DataSource (its own open
// files: nothing is open at the fork), preprocesses it (decode, reader.preprocess_time) and copies
// it into the region (PyTorch's collate into shared memory), then reports. The consumer's Batch
// points into the region, so no byte is copied in the main process. With reserve_batch_bytes and
// reserve_sample_bytes the regions and a read buffer per worker are allocated when the pipeline is
// built (fallocate), and each worker maps them into its page tables before it reports ready, so
// no epoch pays for fresh memory.
//
// Fork safety: the main process runs no thread of this pipeline, and nothing is read while it
// forks; the child only reads through its DataSource copy and writes its own trace (Storage
// rebound in the child), never calls MPI, and ends with _exit. A storage that needs MPI (mpiio)
// is refused. Errors: a worker's failure comes back with its batch, in order, naming the file;
// a worker that dies (killed) fails the batch it owed with its pid and signal. Stop (also from
// another thread) and the destructor end every worker: stop flag, stop command, then SIGKILL
// after a grace period; every child is reaped.
//
// read_threads == 0 is DataLoader's num_workers=0: the batch is read in Next, in this process
// (the sync batch pipeline with no reader thread).
#pragma once

#include <memory>

#include "dlio/pipeline.h"
#include "dlio/status.h"

namespace dlio {

// InvalidArgument naming the key when `options`/`env` cannot work (batch_size 0, no source, too
// many workers, a storage that needs MPI).
Result<std::unique_ptr<Pipeline>> MakeWorkerPipeline(const PipelineOptions& options,
                                                     const PipelineEnv& env);

// The pytorch entry's PipelineHooks::derive_options (pytorch_options.cc): `options`'
// PytorchLoaderOptions (pytorch_options.h) from the config's section already in
// options->sections (reader.persistent_workers), the config's dataset.record_length_bytes_resize
// (what DLIO's loader hands PyTorch per sample) and output.trace_gzip, and the runner's `facts`
// (the memory plan's batch and bounded read bytes, the workers' trace prefix).
Status DerivePytorchOptions(const WorkloadConfig& config, const PipelineFacts& facts,
                            PipelineOptions* options);

// The pytorch entry's PipelineHooks::plan_memory (pytorch_memory.cc): with read_threads > 0
// (none: not planned, the runner's pool), every worker's prefetch factor + 1 slots, each
// reserved for `facts.batch_size` samples of what a worker collates (at most
// dataset.record_length_bytes_resize each; none when nothing is collated: deliver_sample_bytes
// false without reader.client_costs framework), and a read buffer of facts.sample_bytes when the
// worker reads into a buffer of its own (framework, a resize smaller than a sample, or nothing
// collated; a bounded one, facts.bounded_read_bytes > 0, spans mean + 4 stdev); nothing when
// all the workers' memory would exceed facts.budget_bytes.
PipelineMemoryPlan PlanPytorchMemory(const WorkloadConfig& config, const PipelineOptions& options,
                                     const MemoryPlanFacts& facts);
// The pytorch entry's PipelineHooks::estimate_memory (pytorch_memory.cc): with read_threads > 0,
// read_threads x ((prefetch factor + 1) x facts.batch_size x (a collated sample +
// facts.bytes_per_buffered_sample) + the read buffer: facts.bounded_read_bytes + 1 MiB when
// bounded, else a whole sample under reader.client_costs framework or a resize smaller than a
// sample), saturating; not counted without a worker.
PipelineFootprint EstimatePytorchMemory(const WorkloadConfig& config, const MemoryPlanFacts& facts);

// Whether a pytorch worker reads each sample through a 256 KiB ring (ReadScratch::kRingBytes), as
// a reader thread does, rather than into a buffer of the sample's size: when it collates nothing,
// the format streams its samples and none is decoded. The one rule of the memory plan
// (PlanPytorchMemory) and of the workers (WorkerPipeline::ReadRingBytes).
bool PytorchWorkerReadsThroughRing(bool collates, bool samples_stream, bool decodes);

// The prefetch_factor DLIO's PyTorch loader passes for reader.prefetch_size and read_threads.
uint64_t PytorchPrefetchFactor(uint64_t prefetch_size, uint64_t read_threads);

}  // namespace dlio
