// Pipeline: turns a sample order into batches, overlapping I/O with compute as a real loader does.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/data_source.h"
#include "dlio/distribution.h"
#include "dlio/option_sections.h"
#include "dlio/registry.h"
#include "dlio/status.h"
#include "dlio/tracer.h"

namespace dlio {

// A view of one sample's bytes, valid while the batch's lease is held.
struct Sample {
  SampleRef ref;
  const uint8_t* data = nullptr;
  uint64_t size = 0;
};

// A batch as the training loop sees it. Owned by the pipeline and reused (with its buffers).
struct Batch {
  uint64_t epoch = 0;
  int64_t index = 0;            // batch number within the epoch, from 0
  std::vector<Sample> samples;  // in plan order
  uint64_t bytes = 0;           // sum of sample sizes
  // Wall time from the start of the first read of this batch to the end of the last. Untraced,
  // with nothing run between reads, a reader times its run of the batch's samples once, from
  // before its first read to after its last, instead of each: the same span.
  int64_t read_ns = 0;
  std::vector<SampleBuffer> buffers;  // pipeline-owned storage that samples may point into
};

// Gives a batch back to its pipeline.
class BatchRecycler {
 public:
  virtual ~BatchRecycler() = default;
  virtual void Recycle(Batch* batch) = 0;
};

// Move-only handle to a batch; returns it to the pipeline when destroyed or reset.
class BatchLease {
 public:
  BatchLease() = default;
  BatchLease(Batch* batch, BatchRecycler* owner) : batch_(batch), owner_(owner) {}
  ~BatchLease() { reset(); }
  BatchLease(BatchLease&& o) noexcept : batch_(o.batch_), owner_(o.owner_) { o.batch_ = nullptr; }
  BatchLease& operator=(BatchLease&& o) noexcept {
    if (this != &o) {
      reset();
      batch_ = o.batch_;
      owner_ = o.owner_;
      o.batch_ = nullptr;
    }
    return *this;
  }
  BatchLease(const BatchLease&) = delete;
  BatchLease& operator=(const BatchLease&) = delete;

  void reset() {
    if (batch_ && owner_) owner_->Recycle(batch_);
    batch_ = nullptr;
  }
  explicit operator bool() const { return batch_ != nullptr; }
  Batch* get() const { return batch_; }
  Batch* operator->() const { return batch_; }
  Batch& operator*() const { return *batch_; }

 private:
  Batch* batch_ = nullptr;
  BatchRecycler* owner_ = nullptr;
};

// The memory of a bounded read buffer beyond its PipelineFacts::bounded_read_bytes: the 1 MiB
// every later byte of a sample goes through (pipeline/bounded_read_buffer.h).
inline constexpr uint64_t kBoundedReadRingBytes = uint64_t{1} << 20;

struct PipelineOptions {
  // threaded (overlap), sync (read then compute), preload (memory), pytorch (DataLoader worker
  // processes: docs/io_models.md)
  std::string name = "threaded";
  uint64_t batch_size = 1;
  uint64_t read_threads = 1;         // 0: read on the caller's thread
  uint64_t computation_threads = 1;  // preprocessing workers (0: preprocessing inline)
  uint64_t prefetch_size = 2;        // ready batches buffered ahead of the consumer
  bool drop_last = true;             // drop the final partial batch of an epoch
  DistributionSpec preprocess_time;  // seconds per sample, spent by a preprocessing worker
  bool preprocess_spin = false;      // spin instead of sleep for preprocessing
  uint64_t seed = 0;                 // preprocessing-time draws derive from it
  int rank = 0;
  // Capacity every pooled sample buffer gets, and touches, when the pipeline is built, so the
  // first epoch does not pay first-touch page faults inside its timing (0: grow on demand).
  // Larger samples still grow their buffer on first use. pytorch: each worker's read buffer.
  uint64_t reserve_sample_bytes = 0;
  // threaded/sync with deliver_sample_bytes false and not samples_stream: the capacity each
  // reader thread's landing buffer (SampleBuffer::landing) gets, and touches, when the pipeline is
  // built (Format::landing_bytes; 0: grown by the first read that lands bytes, inside epoch 1).
  uint64_t reserve_landing_bytes = 0;
  // threaded/sync: how many pooled buffers get that capacity (0: all of the pool's
  // (prefetch_size + max(1, read_threads) + 1) x batch_size). The pool hands out the most recently
  // released buffer first, so these are the ones a consumer that keeps up cycles through.
  uint64_t reserve_buffers = 0;
  // Drop the DataSource's open files at every StartEpoch (a loader whose workers restart each
  // epoch, as PyTorch's without persistent_workers). false keeps them open across epochs.
  bool reopen_files_each_epoch = false;
  // The client work of a framework model (reader.client_costs): false (none) reads into dlio's
  // reused, pre-touched buffers with no framework copy; true (framework) reads into buffers of
  // the framework's own as the framework does (pytorch: each worker's own buffer, then the
  // collate copy; pipeline/pytorch_options.h).
  bool framework_client_costs = false;
  // Whether the consumer reads the samples' bytes (Sample::data). false (dlio-run, which reads
  // none), without framework_client_costs and without decoding: the requests stay the same, but
  // the only copy the client pays is the storage read's, into memory that stays in the CPU's
  // caches. threaded/sync: each reader thread reads every sample into one buffer of its own
  // (bounded as below when samples_stream; Sample::data then points into it and is overwritten
  // by the thread's next read, Sample::size is the bytes read) and the pool's buffers are unused.
  // pytorch: a worker collates no byte into its slot (Sample::size 0; Batch::bytes still counts
  // the bytes read), reads each sample into its own reused buffer, and a bounded buffer keeps no
  // head of its own (all of a sample goes through the ring).
  bool deliver_sample_bytes = true;
  // The format's readers write a sample front to back and read none of it back once 256 KiB more
  // were written (FormatCapabilities::streams_samples): a threaded/sync reader's own buffer
  // (deliver_sample_bytes false) is then one 256 KiB ring (ReadScratch::kRingBytes) mapped over a
  // span of reserve_sample_bytes (pipeline/bounded_read_buffer.h).
  bool samples_stream = false;
  // Added to the nice value of the read and preprocessing threads (pytorch: the worker
  // processes), 0 to 19, so that the training thread wakes on time from its compute on a host
  // with more busy threads than cores (reader.thread_nice; 0: same priority).
  int thread_nice = 0;
  // threaded/sync with read_threads > 1: 0 (default) lets the reader threads take the epoch's
  // samples from one shared cursor, whichever is free; N == read_threads gives reader r the
  // samples at positions r, r + N, r + 2N, ... of the plan. The runner sets it for a format that
  // streams shards (FormatCapabilities::shard_streams) when the sampler interleaves read_threads
  // shards one sample at a time, so each thread streams its own shard as a WebDataset worker
  // does, instead of two threads meeting on one shard's stream (docs/io_models.md). Any other
  // value is refused when the pipeline is built.
  uint64_t reader_lanes = 0;
  // threaded/sync, shared cursor (reader_lanes 0), one read thread: the reader claims up to this
  // many bytes of consecutive positions of one batch at once, counted in its last sample's size
  // (at most 64 positions; 1 when that size is unknown or larger), instead of one position a
  // claim, so small samples do not pay the shared cursor's atomic each. The samples read, their
  // requests, the batches and their read times stay the same. Several read threads claim one
  // position at a time (their runs would interleave at the storage). 0: one position a claim.
  uint64_t claim_run_bytes = 64 << 10;
  // threaded with read threads: when the consumer must sleep for batch k with no spare CPU to
  // poll on, it sleeps until the batches opened after k in a row (at most half the prefetch
  // window, prefetch_size plus the batches in flight, counting k) are filled too, not until k
  // alone: one wake-up, and one switch away from a reader, per run of batches instead of per
  // batch. The readers read the same samples in the same order with the same concurrency; what
  // changes is when the consumer takes the run's first batches. The runner sets it when a step
  // has no compute (train.computation_time, evaluation.eval_time 0): the run's last step then
  // ends when its batch is filled either way, and the epoch when its last batch is.
  bool consumer_wakes_per_run = false;
  // The options an implementation owns, one typed value per implementation (pytorch's
  // PytorchLoaderOptions, pipeline/pytorch_options.h): the config's sections, parsed by the keys
  // each declares (ReaderConfig::pipelines), handed on whole, then completed by the entry's
  // PipelineHooks::derive_options from the runner's PipelineFacts. Neither this header nor the
  // runner names their fields.
  OptionSections sections;
};

// Whether each reader reads every sample into one buffer of its own (pipeline/read_scratch.h)
// rather than into the pool's per-batch buffers: the consumer reads no byte
// (deliver_sample_bytes false), the framework's client costs are not asked for and nothing is
// decoded (`decodes`: reader.decode / PipelineEnv::decoder).
inline bool ReadersUseOwnBuffers(const PipelineOptions& options, bool decodes) {
  return !options.deliver_sample_bytes && !options.framework_client_costs && !decodes;
}

// Counters for tests and reports. Buffers are pooled: the pool's size is fixed when the pipeline
// is built, and a pooled buffer only grows when it meets a sample larger than any it held, so over
// samples of a steady size each buffer grows at most once (never with reserve_sample_bytes) and
// the steady state allocates nothing per sample.
struct PipelineStats {
  uint64_t batches_allocated = 0;  // Batch objects in the pool (prefetch + in flight + 1)
  uint64_t buffers_allocated = 0;  // SampleBuffers created (pool, plus the preload store)
  uint64_t buffer_growths = 0;     // times a pooled buffer (pytorch: a slot's region or a
                                   // worker's buffer) had to grow its capacity
  uint64_t buffer_bytes = 0;       // bytes of capacity added by those growths
  uint64_t reserved_bytes = 0;     // bytes allocated and touched when the pipeline was built
  // pytorch: the most memory one worker held to read samples into, after a batch (the bounded
  // read buffer's, else its sample buffers' capacity), as the workers report it.
  uint64_t worker_read_buffer_bytes = 0;
  uint64_t samples_read = 0;       // DataSource::Read calls made
  uint64_t batches_delivered = 0;  // batches handed to the consumer by Next
};

// Thread safety: the methods are called from one consumer thread (Stop may also come from another
// thread, to unblock a consumer waiting in Next); internally the pipeline runs its own threads,
// which its destructor (and Stop) cancel and join.
//
// Leases: every BatchLease must be released before the pipeline is destroyed (debug builds
// assert). The consumer may hold several leases, but a pipeline has a fixed pool of batches
// (stats().batches_allocated); Next returns FailedPrecondition instead of deadlocking when the
// batch it needs is still leased. Next releases the lease passed in `out` before waiting, so one
// lease variable reused across steps is the intended pattern.
//
// Errors: a failed read of batch k is returned by the Next call for batch k (batches before it
// are delivered normally). The error is sticky: later Next calls of that epoch return it again
// until the next StartEpoch. The pipeline never calls DataSource::CloseAll while reads may run;
// it calls it in StartEpoch between epochs, when no read is in flight.
class Pipeline {
 public:
  virtual ~Pipeline() = default;
  // Begins an epoch over `plan`. An epoch still running is cancelled first (readers stop after
  // their current read; buffers return to the pool). FailedPrecondition after Stop.
  virtual Status StartEpoch(uint64_t epoch, std::vector<SampleRef> plan) = 0;
  // The plan of the epoch before the current one, handed back (once) so that the caller can
  // refill its memory for the next epoch (Sampler::Plan reuses a vector's capacity) instead of
  // StartEpoch freeing it inside the next epoch's timing (a plan of 1 KiB samples: 4 MiB an epoch
  // of 256 MiB, ~0.2 ms to free). Empty when there is none; a pipeline may keep none (default).
  virtual std::vector<SampleRef> TakeSpentPlan() { return {}; }
  // Blocks until the next batch is ready. At the end of the epoch returns OK with
  // *end_of_epoch = true and an empty lease. A read or preprocessing error of a batch is
  // returned when that batch's turn comes (in order), never swallowed. Cancelled once Stop ran
  // (including for a consumer blocked here when Stop is called from another thread).
  virtual Status Next(BatchLease* out, bool* end_of_epoch) = 0;
  // Cancels work in flight and joins every thread. Idempotent.
  virtual Status Stop() = 0;
  // A snapshot of the counters; safe to call from the consumer thread at any time.
  virtual PipelineStats stats() const { return {}; }
};

struct PipelineEnv {
  DataSource* source = nullptr;  // not owned; outlives the pipeline
  const Clock* clock = nullptr;
  Tracer* tracer = nullptr;
  // When set (reader.decode), preprocessing decodes every sample with decoder->Decode: batches
  // then carry the decoded bytes, Batch::bytes still counts the bytes read. Not owned.
  const Format* decoder = nullptr;
  // The decoded-size limit handed to decoder->DecodeWithLimit (reader.max_decoded_bytes).
  uint64_t max_decoded_bytes = kDefaultMaxDecodedBytes;
  // The storage `source` reads through, when known. The pytorch pipeline's worker processes bind
  // their copy of it to their own trace file; a storage that needs MPI (mpiio) is refused there.
  // Not owned.
  Storage* storage = nullptr;
  // Whether a CPU is free for the consumer to poll for its batch (up to 100 us) before it
  // sleeps (the threaded and sync pipelines; docs/architecture.md, "The batch the consumer
  // sleeps on"). Unset: the host's runnable threads against its CPUs, asked every 32 waits.
  // Tests set it to make the consumer always or never poll.
  std::function<bool()> spare_cpu = nullptr;
};

using PipelineFactory =
    std::function<Result<std::unique_ptr<Pipeline>>(const PipelineOptions&, const PipelineEnv&)>;

// What a pipeline's registry entry declares, so the runner and config validation ask instead of
// comparing pipeline names. Every field defaults to false.
struct PipelineCapabilities {
  // Reads every planned sample into memory once and serves the epochs from there (preload):
  // reader.read_type memory needs it, the preflight counts the dataset in the host's memory, and
  // no per-sample read buffers are reserved.
  bool holds_dataset = false;
  // Reads in worker processes, each building whole batches into its own slots (pytorch): the
  // read buffers may be bounded (PipelineFacts::bounded_read_bytes) and are sized per worker.
  bool worker_processes = false;
  // Issues every read from the training loop's own thread (sync): storage.mpiio_collective needs
  // it, as a collective read must be made in step with the other ranks.
  bool reads_on_loop_thread = false;
  // Reads ahead of the training loop on threads or processes of its own, overlapping I/O with
  // compute (threaded, pytorch): under reader.io_model auto, reader.data_loader pytorch runs the
  // DataLoader's worker processes in place of such a pipeline (LoaderFor, dlio/loop.h).
  bool overlaps_io = false;
};

// What the runner derives for the pipeline it builds from the config, the format's capabilities,
// the host's memory and the run's place, in no implementation's terms; an entry's
// PipelineHooks::derive_options turns what it uses into options of its own.
struct PipelineFacts {
  // The memory plan (ReserveBuffersFor), for a pipeline whose entry plans its own buffers
  // (PipelineHooks::plan_memory): the sample bytes each of its batch buffers is allocated and
  // touched for before the first epoch (0: grown on demand), ...
  uint64_t batch_reserve_bytes = 0;
  // ... and, > 0, the bytes of a sample each worker's read buffer keeps as memory of its own, the
  // rest going through a reused kBoundedReadRingBytes piece (BoundedReadBytesFor; 0: none).
  uint64_t bounded_read_bytes = 0;
  // Where processes the pipeline starts write traces of their own (WorkerTracePrefixFor:
  // "output.folder/trace-<rank>-of-<world>"), "" when the run does not trace.
  std::string trace_prefix;
};

// What the runner knows when it asks a pipeline to size its own buffers (PipelineHooks::
// plan_memory and estimate_memory), in no implementation's terms.
struct MemoryPlanFacts {
  // The samples of a batch (plan_memory: at least 1; estimate_memory: the train or the eval batch).
  uint64_t batch_size = 1;
  // plan_memory: the largest sample expected (dataset.record_length_bytes + 2 stdev, or the
  // largest of dataset.record_length_bytes_sizes) ...
  uint64_t sample_bytes = 0;
  // ... and what the buffers of one pipeline may take: half of the host's memory shared by the
  // process's train.accelerators_per_process pipelines (infinite when the host's memory is
  // unknown). A plan beyond it reserves nothing (the buffers grow on demand).
  double budget_bytes = std::numeric_limits<double>::infinity();
  // Both: PipelineFacts::bounded_read_bytes for this pipeline (BoundedReadBytesFor, dlio/loop.h).
  uint64_t bounded_read_bytes = 0;
  // estimate_memory: the bookkeeping the preflight counts for every buffered sample besides its
  // bytes (a pooled buffer's).
  uint64_t bytes_per_buffered_sample = 0;
};

// A pipeline's own plan of the buffers it allocates and touches before the first epoch
// (PipelineHooks::plan_memory).
struct PipelineMemoryPlan {
  bool planned = false;  // false: the runner's plan (a pool of per-batch buffers) applies
  uint64_t reserve_sample_bytes = 0;  // PipelineOptions::reserve_sample_bytes
  uint64_t batch_reserve_bytes = 0;   // PipelineFacts::batch_reserve_bytes
};

// The preflight's count of a pipeline's buffers for batches of one size, per rank
// (PipelineHooks::estimate_memory).
struct PipelineFootprint {
  bool counted = false;  // false: the preflight counts the runner's pool of per-batch buffers
  uint64_t bytes = 0;
  std::string keys;  // the config keys that size them, as the preflight's refusal names them
};

// What a pipeline's registry entry does besides building it. Empty members: nothing.
struct PipelineHooks {
  // Completes the implementation's own section of `options` (PipelineOptions::sections) from the
  // config and the runner's facts, before the factory is called (MakeLoopParts); InvalidArgument
  // naming a key it cannot use.
  std::function<Status(const WorkloadConfig&, const PipelineFacts&, PipelineOptions*)>
      derive_options{};
  // Sizes the buffers the pipeline allocates and touches before the first epoch, when it keeps
  // buffers of its own rather than the runner's pool (pytorch: its workers' slots and read
  // buffers, PlanPytorchMemory). ReserveBuffersFor (dlio/loop.h) asks it, for formats whose
  // stored sample size is the record length, with `options` as MakeLoopParts filled them
  // (deliver_sample_bytes), and applies a plan that is `planned`; the runner's own plan
  // otherwise.
  std::function<PipelineMemoryPlan(const WorkloadConfig&, const PipelineOptions&,
                                   const MemoryPlanFacts&)>
      plan_memory{};
  // The preflight's lower bound of what those buffers hold per rank for batches of
  // facts.batch_size (pytorch: EstimatePytorchMemory). EstimateRunFootprint (dlio/preflight.h)
  // asks the entry of the pipeline the runner builds (PipelineNameFor) and counts a footprint
  // that is `counted` as its "batch buffers"; the runner's pool otherwise.
  std::function<PipelineFootprint(const WorkloadConfig&, const MemoryPlanFacts&)> estimate_memory{};
};

// The pipelines by name (Registries::pipelines).
using PipelineRegistry = Registry<PipelineFactory, PipelineCapabilities, PipelineHooks>;
// Registers the built-in pipelines; called by RegisterBuiltins.
Status RegisterBuiltinPipelines(PipelineRegistry* pipelines);

}  // namespace dlio
