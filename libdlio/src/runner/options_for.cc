// The options each component gets from the config (dlio/loop.h).
#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "core/host_memory.h"
#include "dlio/loop.h"
#include "io_models/io_model_table.h"

namespace dlio {
namespace {

// reader.thread_nice under auto with accelerator threads: at 16 cosmoflow accelerators on 2 cores
// it cut the wait per step from ~3.5 to 0.8 ms (docs/performance.md).
constexpr int kAcceleratorThreadsNice = 10;

}  // namespace

StorageOptions StorageOptionsFor(const WorkloadConfig& c) {
  StorageOptions o;
  o.name = c.storage.storage_type;
  // The data files' folders (mpiio reads only these collectively: rank 0 alone reads the
  // dataset marker beside them).
  std::string folder = c.dataset.data_folder.empty() ? "." : c.dataset.data_folder;
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  o.data_dirs = {folder + "/train", folder + "/valid"};
  o.direct = c.reader.odirect;
  o.seed = MixSeed(c.train.seed, 0x5107);
  o.backends = c.storage.backends;  // the sections implementations parse themselves (s3, slow,
                                    // mpiio, tiered)
  return o;
}

FormatOptions FormatOptionsFor(const WorkloadConfig& c) {
  FormatOptions o;
  o.compression = c.dataset.compression;
  o.compression_level = c.dataset.compression_level;
  o.compression_ratio = c.dataset.compression_ratio;
  o.compression_ratio_stdev = c.dataset.compression_ratio_stdev;
  // The sections formats parse themselves (parquet, webdataset, hdf5, npy/npz, tfrecord, csv,
  // jpeg and png; pyio's).
  o.formats = c.dataset.formats;
  o.samples_per_file = c.dataset.num_samples_per_file;
  o.record_length_bytes = c.dataset.record_length_bytes;
  o.record_dims = c.dataset.record_dims;
  o.record_element_type = c.dataset.record_element_type;
  o.read_type = c.reader.read_type;  // DLIO's read_type memory keeps np.load's array while open
  o.verify = c.reader.verify_checksums;
  o.io_model = c.reader.io_model;
  o.framework_client_costs = FrameworkClientCosts(c);
  o.decode = c.reader.decode;
  o.max_decoded_bytes = c.reader.max_decoded_bytes;
  o.transfer_size = c.reader.transfer_size;
  o.direct = c.reader.odirect;
  return o;
}

Result<uint64_t> SharedRandomSeed(Comm* comm) {
  std::string value;
  if (comm->rank() == 0) {
    std::random_device rd;
    value = std::to_string((static_cast<uint64_t>(rd()) << 32) ^ rd());
  }
  DLIO_RETURN_NOT_OK(comm->Broadcast(&value, 0));
  return static_cast<uint64_t>(std::stoull(value));
}

Result<SamplerOptions> SamplerOptionsFor(const WorkloadConfig& c, uint64_t random_seed) {
  SamplerOptions o;
  o.name = c.reader.sampler;
  o.file_shuffle = c.reader.file_shuffle;
  o.sample_shuffle = c.reader.sample_shuffle;
  o.sharding = c.reader.sharding;
  // DLIO's TensorFlow loader shuffles samples through tf.data's shuffle(shuffle_size) window.
  o.window_shuffle = c.reader.data_loader == DataLoader::kTensorflow;
  o.shuffle_size = c.reader.shuffle_size;
  o.seed = c.train.seed;
  o.seed_change_epoch = c.train.seed_change_epoch;
  o.random_seed = random_seed;
  o.fraction = c.reader.read_fraction;
  o.interleave = c.reader.file_interleave;
  return o;
}

int EffectiveThreadNice(const WorkloadConfig& c) {
  if (c.reader.thread_nice >= 0) return static_cast<int>(c.reader.thread_nice);
  return c.train.accelerators_per_process > 1 ? kAcceleratorThreadsNice : 0;
}

bool FrameworkClientCosts(const WorkloadConfig& c) {
  return c.reader.client_costs == ClientCosts::kFramework;
}

namespace {

// Whether reader.loader, or reader.io_model's value itself (the I/O-model table), asks for the
// pytorch loader.
bool IoModelPicksPytorchWorkers(const WorkloadConfig& c) {
  if (c.reader.loader != ReaderLoader::kAuto) {
    return c.reader.loader == ReaderLoader::kPytorchWorkers;
  }
  return io_models::IoModelEntryFor(c.reader.io_model).loader == Loader::kPytorchWorkers;
}

}  // namespace

bool UsesPytorchWorkers(const WorkloadConfig& c) {
  return IoModelPicksPytorchWorkers(c) ||
         (c.reader.loader == ReaderLoader::kAuto && c.reader.io_model == IoModel::kAuto &&
          c.reader.data_loader == DataLoader::kPytorch);
}

PipelineCapabilities PipelineCapabilitiesFor(const WorkloadConfig& c,
                                             const PipelineRegistry& pipelines) {
  auto entry = pipelines.Find(c.reader.pipeline);
  return entry.ok() ? entry->capabilities : PipelineCapabilities{};
}

Loader LoaderFor(const WorkloadConfig& c, bool storage_needs_mpi,
                 const PipelineCapabilities& configured) {
  if (c.reader.read_type == ReadType::kMemory) return Loader::kThreads;
  // DataLoader worker processes: asked for (io_model pytorch), or the default of a PyTorch
  // loader that overlaps I/O (reader.pipeline sync stays sync under auto).
  if (IoModelPicksPytorchWorkers(c)) return Loader::kPytorchWorkers;
  // Under auto, in place of a pipeline that overlaps I/O (as its entry declares), and not over a
  // storage that needs MPI (the workers could not use it): the threaded loader then.
  return UsesPytorchWorkers(c) && configured.overlaps_io && !storage_needs_mpi
             ? Loader::kPytorchWorkers
             : Loader::kThreads;
}

std::string PipelineNameFor(const WorkloadConfig& c, bool storage_needs_mpi,
                            const PipelineCapabilities& configured) {
  if (c.reader.read_type == ReadType::kMemory) return "preload";
  if (LoaderFor(c, storage_needs_mpi, configured) == Loader::kPytorchWorkers) return "pytorch";
  return c.reader.pipeline;
}

uint64_t BoundedReadBytesFor(const WorkloadConfig& c, bool streams_samples,
                             const PipelineCapabilities& pipeline) {
  if (!pipeline.worker_processes || c.reader.read_threads == 0 || FrameworkClientCosts(c) ||
      c.reader.decode || !streams_samples) {
    return 0;
  }
  return c.dataset.record_length_bytes_resize;
}

uint64_t BoundedReadBytesFor(const WorkloadConfig& c, const Format& format,
                             const PipelineCapabilities& pipeline) {
  return BoundedReadBytesFor(c, SamplesStream(c, format), pipeline);
}

bool SamplesStream(const WorkloadConfig& c, const Format& format) {
  const FormatCapabilities caps = format.capabilities();
  const IoModel model = ResolveIoModel(c.reader.io_model, caps);
  return caps.streams_samples && !io_models::IoModelEntryFor(model).reads_sample_back;
}

namespace {

// The sample size the buffers are reserved for: dataset.record_length_bytes + 2 stdev, or the
// largest of dataset.record_length_bytes_sizes.
uint64_t LargestPlannedSample(const WorkloadConfig& c) {
  const std::vector<uint64_t>& sizes = c.dataset.record_length_bytes_sizes;
  if (!sizes.empty()) return *std::max_element(sizes.begin(), sizes.end());
  return c.dataset.record_length_bytes +
         static_cast<uint64_t>(2 * static_cast<double>(c.dataset.record_length_bytes_stdev));
}

// Half of the host's memory, shared by the process's accelerator threads' pipelines; beyond it
// the buffers grow on demand (the preflight check and the kernel decide whether they fit)
// rather than the run failing while its pipeline is built. Unbounded when the memory is unknown.
double ReserveBudgetBytes(const WorkloadConfig& c, uint64_t host_memory_bytes) {
  if (host_memory_bytes == 0) return HUGE_VAL;
  return static_cast<double>(host_memory_bytes) / 2.0 /
         static_cast<double>(std::max<uint64_t>(1, c.train.accelerators_per_process));
}

}  // namespace

void ReserveBuffersFor(const WorkloadConfig& c, const Format& format,
                       const PipelineRegistry::Entry& pipeline, uint64_t batch_size,
                       uint64_t host_memory_bytes, PipelineOptions* po, PipelineFacts* facts) {
  po->reserve_sample_bytes = po->reserve_buffers = facts->batch_reserve_bytes = 0;
  facts->bounded_read_bytes = BoundedReadBytesFor(c, format, pipeline.capabilities);
  const uint64_t mean = c.dataset.record_length_bytes;
  if (!format.exact_sample_sizes() || !format.uses_files() || pipeline.capabilities.holds_dataset ||
      mean == 0) {
    return;
  }
  const double stdev = static_cast<double>(c.dataset.record_length_bytes_stdev);
  const uint64_t sample = LargestPlannedSample(c);
  const uint64_t b = std::max<uint64_t>(1, batch_size);
  const double budget = ReserveBudgetBytes(c, host_memory_bytes);
  // A pipeline that keeps buffers of its own sizes them itself (pytorch: its workers' slots).
  if (pipeline.hooks.plan_memory) {
    MemoryPlanFacts plan_facts;
    plan_facts.batch_size = b;
    plan_facts.sample_bytes = sample;
    plan_facts.budget_bytes = budget;
    plan_facts.bounded_read_bytes = facts->bounded_read_bytes;
    const PipelineMemoryPlan own = pipeline.hooks.plan_memory(c, *po, plan_facts);
    if (own.planned) {
      po->reserve_sample_bytes = own.reserve_sample_bytes;
      facts->batch_reserve_bytes = own.batch_reserve_bytes;
      return;
    }
  }
  // Each reader thread (and the consumer) reads every sample into one buffer of its own when the
  // consumer reads no byte (deliver_sample_bytes false, no client costs, no decoding): a sample's
  // worth, or for readers that stream samples a span of mean + 4 stdev over a 1 MiB ring.
  PipelineOptions asked = *po;
  asked.framework_client_costs = FrameworkClientCosts(c);
  if (ReadersUseOwnBuffers(asked, c.reader.decode)) {
    po->reserve_sample_bytes =
        po->samples_stream ? mean + static_cast<uint64_t>(4 * stdev) : sample;
    return;
  }
  // The whole ring: readers that meet a slow read run ahead into the buffers the prefetch allows,
  // and each of those touched for the first time inside epoch 1 costs a page fault per page (on
  // this project's VM, memory the guest left idle is backed again at 0.3-0.65 GB/s).
  const uint64_t ring = c.reader.prefetch_size + std::max<uint64_t>(1, c.reader.read_threads) + 1;
  const double fit = std::floor(budget / static_cast<double>(sample));
  const uint64_t buffers = fit >= static_cast<double>(ring * b) ? ring * b : uint64_t(fit);
  if (buffers == 0) return;
  po->reserve_sample_bytes = sample;
  po->reserve_buffers = buffers;
}

void ReserveBuffersFor(const WorkloadConfig& c, const Format& format,
                       const PipelineRegistry::Entry& pipeline, uint64_t batch_size,
                       PipelineOptions* po, PipelineFacts* facts) {
  ReserveBuffersFor(c, format, pipeline, batch_size, HostMemoryBytes(), po, facts);
}

std::string WorkerTracePrefixFor(const WorkloadConfig& c, int rank, int world) {
  if (!c.output.trace && !c.workflow.profiling) return "";
  return StrCat(c.output.folder, "/trace-", rank, "-of-", world);
}

std::string TraceFileName(int rank, int world) {
  return StrCat("trace-", rank, "-of-", world, ".pfw");
}

bool UsesRandomShuffle(const WorkloadConfig& c) {
  return c.reader.file_shuffle == ShuffleMode::kRandom ||
         c.reader.sample_shuffle == ShuffleMode::kRandom;
}

Result<std::unique_ptr<Tracer>> MakeTracerFor(const WorkloadConfig& config, int rank, int world) {
  if (!config.output.trace && !config.workflow.profiling) return MakeNullTracer();
  TraceFileOptions to;
  to.path = StrCat(config.output.folder, "/", TraceFileName(rank, world),
                   config.output.trace_gzip ? ".gz" : "");
  to.pid = rank + 1;  // never 0 (Perfetto's advice); trace-merge gives rank R the same pid
  to.process_name = "dlio rank " + std::to_string(rank);
  return MakeTraceFileTracer(to);
}

WorkloadConfig ResolvePaths(const WorkloadConfig& in) {
  WorkloadConfig c = in;
  const std::string& root = c.storage.storage_root;
  if (root.empty() || root == "./" || root == ".") return c;
  auto prefix = [&root](std::string* folder) {
    // A URL (DLIO's data_folder s3://bucket/prefix) names its bucket itself, as in DLIO.
    if (!folder->empty() && (*folder)[0] != '/' && folder->find("://") == std::string::npos) {
      *folder = root + (root.back() == '/' ? "" : "/") + *folder;
    }
  };
  prefix(&c.dataset.data_folder);
  prefix(&c.checkpoint.checkpoint_folder);
  return c;
}

Result<WorkloadConfig> RunConfigFor(const WorkloadConfig& config, int world,
                                    const Registries& registries,
                                    std::vector<std::string>* scale_notes) {
  WorkloadConfig resolved = ResolvePaths(config);
  DLIO_RETURN_NOT_OK(ApplyFormatRecordShapes(&resolved, registries));
  return ScaleConfig(resolved, world, scale_notes);
}

}  // namespace dlio
