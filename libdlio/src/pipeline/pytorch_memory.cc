// The pytorch pipeline's memory plan: what its worker processes reserve before the first epoch
// and what the preflight counts for them (the entry's PipelineHooks::plan_memory and
// estimate_memory, worker_pipeline.h).
#include <cmath>
#include <cstdint>

#include "dlio/config.h"
#include "pipeline/bounded_read_buffer.h"
#include "pipeline/read_scratch.h"
#include "pipeline/worker_pipeline.h"

namespace dlio {
namespace {

uint64_t MulBytesSaturating(uint64_t a, uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

uint64_t AddBytesSaturating(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

// The batches a worker holds at once: DLIO's prefetch factor + the one it builds.
uint64_t PytorchSlotsPerWorker(const WorkloadConfig& c) {
  return PytorchPrefetchFactor(c.reader.prefetch_size, c.reader.read_threads) + 1;
}

bool PytorchFrameworkCosts(const WorkloadConfig& c) {
  return c.reader.client_costs == ClientCosts::kFramework;
}

// dataset.record_length_bytes_resize when it is smaller than a sample: what a slot holds of each.
bool PytorchResizeLimits(const WorkloadConfig& c) {
  const uint64_t resize = c.dataset.record_length_bytes_resize;
  return resize > 0 && resize < c.dataset.record_length_bytes;
}

}  // namespace

bool PytorchWorkerReadsThroughRing(bool collates, bool samples_stream, bool decodes) {
  return !collates && samples_stream && !decodes;
}

PipelineMemoryPlan PlanPytorchMemory(const WorkloadConfig& c, const PipelineOptions& options,
                                     const MemoryPlanFacts& facts) {
  // No worker process (DataLoader(num_workers=0)): the batch is read in the main process, into
  // the runner's pool.
  if (c.reader.read_threads == 0) return {};
  // Every slot of every worker holds a batch each round of the epoch: all of them are used.
  // A slot holds at most the resize bytes of each sample (what DLIO hands PyTorch to collate).
  // A worker reads into its own buffer when it collates a copy: always under client_costs
  // framework, and whenever the resize is smaller than a sample (else it reads into the slot).
  // A bounded one (facts.bounded_read_bytes) spans a sample but holds only the resize + 1 MiB.
  // When nothing is collated (deliver_sample_bytes false, no client costs) a slot holds no
  // sample bytes, every sample is read into the worker's own buffer, and a bounded one holds
  // the ring alone: for a sample the format streams (undecoded), bound or not, a 256 KiB ring as
  // a reader thread's (WorkerPipeline::ReadRingBytes).
  const uint64_t mean = c.dataset.record_length_bytes;
  const double stdev = static_cast<double>(c.dataset.record_length_bytes_stdev);
  const uint64_t b = facts.batch_size;
  const bool framework = PytorchFrameworkCosts(c);
  const bool collates = framework || options.deliver_sample_bytes;
  const bool limited = PytorchResizeLimits(c);
  const uint64_t batch = !collates ? 0
                         : limited
                             ? b * c.dataset.record_length_bytes_resize
                             : b * mean + static_cast<uint64_t>(2 * std::sqrt(double(b)) * stdev);
  const uint64_t read_buffer = framework || limited || !collates ? facts.sample_bytes : 0;
  const bool ring_read =
      PytorchWorkerReadsThroughRing(collates, options.samples_stream, c.reader.decode);
  uint64_t read_memory = read_buffer;
  if (ring_read) {
    read_memory = pipeline_internal::BoundedReadBuffer::PhysicalBytesFor(
        0, pipeline_internal::ReadScratch::kRingBytes);
  } else if (facts.bounded_read_bytes > 0) {
    read_memory = pipeline_internal::BoundedReadBuffer::PhysicalBytesFor(
        collates ? facts.bounded_read_bytes : 0, kBoundedReadRingBytes);
  }
  const double total =
      static_cast<double>(c.reader.read_threads) *
      (static_cast<double>(PytorchSlotsPerWorker(c)) * batch + static_cast<double>(read_memory));
  PipelineMemoryPlan plan;
  plan.planned = true;
  if (total > facts.budget_bytes) return plan;  // grown on demand
  // A bounded buffer's span costs address space and page tables only: mean + 4 stdev, so that
  // hardly a sample outgrows it (one that does is read into the heap once, then freed).
  plan.reserve_sample_bytes = (facts.bounded_read_bytes > 0 || ring_read) && read_buffer > 0
                                  ? mean + static_cast<uint64_t>(4 * stdev)
                                  : read_buffer;
  plan.batch_reserve_bytes = batch;
  return plan;
}

PipelineFootprint EstimatePytorchMemory(const WorkloadConfig& c, const MemoryPlanFacts& facts) {
  // With at least one worker (0 reads in the main process, through the runner's pool): each
  // holds prefetch factor + 1 batches of what DLIO hands PyTorch per sample (at most the resize
  // bytes) and, when it collates a copy, one sample it read, or its bounded read buffer.
  if (c.reader.read_threads == 0) return {};
  const uint64_t mean = c.dataset.record_length_bytes;
  const bool limited = PytorchResizeLimits(c);
  const uint64_t collated = AddBytesSaturating(
      limited ? c.dataset.record_length_bytes_resize : mean, facts.bytes_per_buffered_sample);
  const uint64_t bounded = facts.bounded_read_bytes;
  const uint64_t read_buffer = bounded > 0 ? AddBytesSaturating(bounded, kBoundedReadRingBytes)
                                           : (PytorchFrameworkCosts(c) || limited ? mean : 0);
  const uint64_t slot_bytes =
      MulBytesSaturating(MulBytesSaturating(PytorchSlotsPerWorker(c), facts.batch_size), collated);
  PipelineFootprint f;
  f.counted = true;
  f.bytes = MulBytesSaturating(c.reader.read_threads, AddBytesSaturating(slot_bytes, read_buffer));
  f.keys = bounded > 0
               ? "reader.read_threads x ((prefetch factor + 1) x reader.batch_size x "
                 "dataset.record_length_bytes_resize + dataset.record_length_bytes_resize + "
                 "1 MiB)"
               : "reader.read_threads x ((prefetch factor + 1) x reader.batch_size x "
                 "dataset.record_length_bytes_resize + dataset.record_length_bytes)";
  return f;
}

}  // namespace dlio
