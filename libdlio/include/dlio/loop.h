// The parts of a training (or evaluation) loop, built from a WorkloadConfig exactly as RunWorkload
// builds them: a training code (or the C API in bindings/) that drives its own loop calls these and
// gets the runner's DataSource, Sampler, Pipeline and ComputeEmulator, seeds included.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/comm.h"
#include "dlio/compute.h"
#include "dlio/config.h"
#include "dlio/data_source.h"
#include "dlio/format.h"
#include "dlio/generator.h"
#include "dlio/pipeline.h"
#include "dlio/registries.h"
#include "dlio/sampler.h"
#include "dlio/status.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"

namespace dlio {

// The config's storage.storage_root prefixed to the relative dataset.data_folder and
// checkpoint.checkpoint_folder (DLIO's rule); the config unchanged when the root is "./".
WorkloadConfig ResolvePaths(const WorkloadConfig& config);

// The config a run reads, made from the one it is given as RunWorkload and PreflightRun make it:
// ResolvePaths, ApplyFormatRecordShapes (the record sizes the named format declares), then
// ScaleConfig for `world` ranks (its notes appended to `scale_notes` when not null).
// InvalidArgument as those name it.
Result<WorkloadConfig> RunConfigFor(const WorkloadConfig& config, int world,
                                    const Registries& registries,
                                    std::vector<std::string>* scale_notes = nullptr);

// The options each component gets from the config (no validation beyond what parsing needs).
StorageOptions StorageOptionsFor(const WorkloadConfig& config);
FormatOptions FormatOptionsFor(const WorkloadConfig& config);
// InvalidArgument naming reader.file_shuffle / sample_shuffle / sharding for a bad mode.
Result<SamplerOptions> SamplerOptionsFor(const WorkloadConfig& config, uint64_t random_seed);
// reader.io_model's first meaning: the request model `format`'s readers use (ResolveIoModel:
// auto and pytorch become the format's default).
IoModel RequestModelFor(const WorkloadConfig& config, const Format& format);
// What the entry reader.pipeline names in `pipelines` declares ({} when none is registered under
// that name: building the pipeline names the problem). The loader choices below take it as a
// plain value, so a preflight of a made-up host needs no registries.
PipelineCapabilities PipelineCapabilitiesFor(const WorkloadConfig& config,
                                             const PipelineRegistry& pipelines);
// Its second: who runs the reads. kPytorchWorkers for reader.io_model pytorch, or auto with
// reader.data_loader pytorch and a reader.pipeline whose entry overlaps I/O (`configured`, its
// PipelineCapabilitiesFor: threaded) over a storage that does not need MPI (PipelineNameFor then
// builds "pytorch"); else kThreads.
Loader LoaderFor(const WorkloadConfig& config, bool storage_needs_mpi,
                 const PipelineCapabilities& configured);
// The sampler adaptation of the I/O-model table's entry for `model` (the request model). Under
// tf.data, reads follow TFRecordDataset's streams: a sample shuffle is tf.data's shuffle buffer,
// applied after the reads (window_shuffle: sampler auto picks shuffle_buffer; and
// shuffle_after_read), so each file is read front to back. An explicit reader.sampler 'shuffle'
// is kept (each read out of stream order then restarts the file's stream). Other models:
// unchanged.
void AdaptSamplerToIoModel(IoModel model, SamplerOptions* options);
// The sampler adaptation of a format whose files are shards streamed whole (FormatCapabilities::
// shard_streams, webdataset): samples split over ranks by shard (Sharding::kShard unless
// reader.sharding is none) and a sample shuffle is a window after the reads, so every shard is
// read front to back by the rank that owns it, as WebDataset's split_by_node and shuffle(N) do;
// without reader.file_interleave, reader.read_threads shards are streamed at a time, one sample
// of each in turn (each reader thread streams its own shard: split_by_worker); under the pytorch
// worker processes (`loader`), one batch of each in turn, so that batch k, which worker k mod
// read_threads builds, holds samples of that worker's shards only.
void AdaptSamplerToFormat(const WorkloadConfig& config, const FormatCapabilities& format,
                          Loader loader, SamplerOptions* options);
// PipelineOptions::reader_lanes for that adaptation: read_threads when the sampler (`sampler`, as
// adapted) interleaves read_threads shards of a shard-streaming format one sample at a time and the
// pipeline's reader threads take samples (not `worker_processes`, which are handed whole
// batches), so that reader r reads plan positions r, r + read_threads, ...: the shard of its
// interleave slot. 0 otherwise.
uint64_t ReaderLanesFor(const WorkloadConfig& config, const FormatCapabilities& format,
                        const SamplerOptions& sampler, const PipelineCapabilities& pipeline);
// A run step, taken once per process before the loops are built (the runner's
// MakeTrainingParts and the C API's loader call it before MakeLoopParts; docs/io_models.md,
// "glibc's thresholds"): under reader.client_costs framework, raises this process's glibc mmap
// and trim thresholds to where importing the run's Python stack leaves them (the I/O-model
// table's heap setting: torch's when the loader is the pytorch worker processes, which then
// inherit it, else the request model's), so a Python model's reads land in fresh or warm pages as
// Python's do. Nothing under client_costs none (the reads land in dlio's reused buffers, whatever
// the allocator's state), nor for models whose reads do not land in Python's heap (native,
// tf.data). Never lowers the thresholds (ones fixed with mallopt or MALLOC_MMAP_THRESHOLD_ stay).
// (`storage_needs_mpi` and `configured` as for LoaderFor.)
void MatchAllocatorToIoModel(const WorkloadConfig& config, const Format& format,
                             bool storage_needs_mpi, const PipelineCapabilities& configured);
// The threshold that step sets, in bytes (0: it does nothing).
size_t AllocatorThresholdFor(const WorkloadConfig& config, const Format& format,
                             bool storage_needs_mpi, const PipelineCapabilities& configured);
// "preload" when reader.read_type is memory; else "pytorch" (DataLoader worker processes) when
// LoaderFor picks them (reader.io_model pytorch, or auto with reader.data_loader pytorch and a
// reader.pipeline whose entry overlaps I/O, `configured`, over a storage that does not need MPI:
// forked workers cannot use it, StorageCapabilities::needs_mpi); else reader.pipeline.
std::string PipelineNameFor(const WorkloadConfig& config, bool storage_needs_mpi,
                            const PipelineCapabilities& configured);
// The pipeline buffers allocated and touched before the first epoch (PipelineOptions::
// reserve_sample_bytes and reserve_buffers; PipelineFacts::batch_reserve_bytes, and
// bounded_read_bytes as BoundedReadBytesFor gives it) for the pipeline of registry entry
// `pipeline` (PipelineNameFor's choice) with batches of `batch_size`, so no timed epoch pays
// first-touch page faults. Sized from dataset.record_length_bytes and _stdev (a sample: mean +
// 2 stdev, or the largest of record_length_bytes_sizes), reader.prefetch_size and read_threads,
// for formats whose stored sample size is the record length (docs/architecture.md, "The hot path
// does not allocate"). Every buffer the pipeline can hold at once is reserved. An entry whose
// PipelineHooks::plan_memory plans its own buffers sizes them (pytorch: its workers' slots and
// read buffers, pipeline/pytorch_memory.cc), given the sample, the batch and the budget below;
// otherwise the runner reserves the threaded/sync pool's (prefetch_size + max(1, read_threads) +
// 1) x batch_size buffers, or one sample's buffer per reader when the readers read into buffers
// of their own (ReadersUseOwnBuffers). What the train.accelerators_per_process pipelines of a
// process would reserve together is bounded by half of `host_memory_bytes` (0: unbounded): the
// threaded pool then reserves the buffers it hands out first up to that, a plan of the entry's
// own beyond it reserves nothing (grown on demand). Leaves the fields at 0 (grow on demand) for
// other formats and for a pipeline that holds the dataset (preload).
void ReserveBuffersFor(const WorkloadConfig& config, const Format& format,
                       const PipelineRegistry::Entry& pipeline, uint64_t batch_size,
                       uint64_t host_memory_bytes, PipelineOptions* options, PipelineFacts* facts);
// The same with this host's memory (HostMemoryBytes: physical memory or the cgroup's limit).
void ReserveBuffersFor(const WorkloadConfig& config, const Format& format,
                       const PipelineRegistry::Entry& pipeline, uint64_t batch_size,
                       PipelineOptions* options, PipelineFacts* facts);
// PipelineFacts::bounded_read_bytes (set by ReserveBuffersFor): for a pipeline declaring
// worker_processes (pytorch) with worker processes, dataset.record_length_bytes_resize (what a
// worker collates of a sample) when the format's readers stream samples
// (FormatCapabilities::streams_samples), without decoding and without reader.client_costs framework
// (which pays the framework's whole-sample arrays); else 0.
uint64_t BoundedReadBytesFor(const WorkloadConfig& config, const Format& format,
                             const PipelineCapabilities& pipeline);
// The same for a format whose readers stream samples or not (the preflight's estimate).
uint64_t BoundedReadBytesFor(const WorkloadConfig& config, bool streams_samples,
                             const PipelineCapabilities& pipeline);
// reader.thread_nice as the pipeline applies it: the key's value, or under auto (-1) 10 when the
// process runs train.accelerators_per_process > 1 accelerator threads (their training threads
// then wake from each step's compute while many read threads copy: docs/performance.md), else 0
// (readers at the training thread's priority, as a framework's loader runs).
int EffectiveThreadNice(const WorkloadConfig& config);
// reader.client_costs is framework: a framework model also pays the framework's client work.
bool FrameworkClientCosts(const WorkloadConfig& config);
// Whether the run's readers stream samples (FormatCapabilities::streams_samples): the format's
// readers do, and the request model reader.io_model resolves to does not read a sample's bytes
// back once it loaded them (io_model pyio checks the whole file it loaded).
bool SamplesStream(const WorkloadConfig& config, const Format& format);
// Whether the config asks for PyTorch's DataLoader model (io_model pytorch, or auto with
// data_loader pytorch).
bool UsesPytorchWorkers(const WorkloadConfig& config);
// PipelineFacts::trace_prefix, where processes a pipeline starts write their own traces (the
// pytorch pipeline's worker processes add "-worker-<n>-<os pid>.pfw"):
// "output.folder/trace-<rank>-of-<world>" when the run traces, else "".
std::string WorkerTracePrefixFor(const WorkloadConfig& config, int rank, int world);

// Whether a shuffle mode of the config is "random" (so the plan needs SharedRandomSeed).
bool UsesRandomShuffle(const WorkloadConfig& config);
// Entropy for "random" shuffles, drawn on rank 0 and broadcast, so all ranks agree on the order.
// Collective over `comm`.
Result<uint64_t> SharedRandomSeed(Comm* comm);

// The name of rank `rank`'s trace among `world` ranks: "trace-<rank>-of-<world>.pfw", as the
// Python DLIO (utils/utility.py get_trace_name) and DFTracer name them.
std::string TraceFileName(int rank, int world);
// The tracer a run writes: output.folder/TraceFileName(rank, world)[.gz] when output.trace or
// workflow.profiling is set (the folder must exist), a null tracer otherwise.
Result<std::unique_ptr<Tracer>> MakeTracerFor(const WorkloadConfig& config, int rank, int world);

// What MakeLoopParts builds from. Nothing is owned; everything must outlive the LoopParts.
struct LoopEnv {
  const Registries* registries = nullptr;  // samplers, pipelines, computes are looked up here
  Storage* storage = nullptr;              // the data files are read through it
  const Format* format = nullptr;          // registries->formats[dataset.format]
  const Clock* clock = SystemClock();
  Tracer* tracer = nullptr;  // MakeNullTracer() when tracing is off
  int rank = 0;              // seeds the preprocessing and compute draws
  int world = 1;             // ranks in the run (names the worker processes' traces)
  uint64_t random_seed = 0;  // SharedRandomSeed() when UsesRandomShuffle()
  // Whether the loop's consumer reads the samples' bytes (PipelineOptions::deliver_sample_bytes):
  // the C API's loader does; dlio-run's training loop does not (false: under client_costs none
  // each reader reads into a buffer of its own and nothing is collated).
  bool consumer_reads_bytes = true;
};

// One loop's parts. The pipeline reads from `source`, so it is declared after it (destroyed first);
// every BatchLease must be released before the LoopParts is destroyed.
struct LoopParts {
  const char* phase = "train";  // "train" or "eval"
  std::unique_ptr<DataSource> source;
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<Pipeline> pipeline;
  std::unique_ptr<ComputeEmulator> compute;
  uint64_t batch_size = 1;  // reader.batch_size (train) or reader.batch_size_eval
  bool drop_last = true;    // reader.drop_last
  // Time spent building the pipeline, most of it allocating and touching its buffers
  // (ReserveBuffersFor); outside every timed epoch.
  int64_t prepare_ns = 0;
  uint64_t reserved_bytes = 0;  // pipeline->stats().reserved_bytes once built
};

// Builds the loop over `split`'s files (ListDatasetFiles: the first num_files_* of the split's
// folder, sorted by name, as the Python DLIO finds them) from `config`, which should be validated
// and passed through RunConfigFor (as RunWorkload does). Errors name the config key or the
// registry name that failed.
Result<LoopParts> MakeLoopParts(const WorkloadConfig& config, Split split, const LoopEnv& env);

}  // namespace dlio
