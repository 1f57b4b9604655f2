// The pytorch pipeline's epochs and batches (worker_pipeline.h); its processes are in
// worker_pool.cc.
#include "pipeline/worker_pipeline.h"

#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

#include "dlio/ai_events.h"
#include "pipeline/batch_pipeline.h"
#include "pipeline/bounded_read_buffer.h"
#include "pipeline/read_scratch.h"
#include "pipeline/worker_pipeline_impl.h"

namespace dlio {
namespace pipeline_internal {

WorkerPipeline::WorkerPipeline(const PipelineOptions& options, const PipelineEnv& env,
                               uint64_t prefetch_factor)
    : options_(options),
      loader_(options.sections.Value<PytorchLoaderOptions>()),
      source_(env.source),
      storage_(env.storage),
      clock_(env.clock ? env.clock : SystemClock()),
      tracer_(env.tracer && env.tracer->enabled() ? env.tracer : nullptr),
      decoder_(env.decoder),
      max_decoded_bytes_(env.max_decoded_bytes),
      workers_n_(options.read_threads),
      prefetch_factor_(prefetch_factor),
      slots_per_worker_(prefetch_factor + 1),
      collates_(options.deliver_sample_bytes || options.framework_client_costs) {}

WorkerPipeline::~WorkerPipeline() {
  (void)Stop();
  assert(epoch_state_.leased() == 0 && "BatchLease outlived its pipeline");
  for (auto& slot : slots_) slot->region.Close();
  for (auto& buffer : read_buffers_) buffer->Close();
  if (stop_flags_ != nullptr) ::munmap(stop_flags_, 4096);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

Status WorkerPipeline::Init() {
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) return Status::FromErrno(errno, "pipeline 'pytorch': eventfd");
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return Status::FromErrno(errno, "pipeline 'pytorch': mmap stop flags");
  stop_flags_ = static_cast<std::atomic<uint32_t>*>(page);
  for (size_t w = 0; w < workers_n_; ++w) new (&stop_flags_[w]) std::atomic<uint32_t>(0);
  const uint64_t b = options_.batch_size;
  // A batch's samples start at 64-byte aligned offsets: up to 63 bytes of padding each.
  const uint64_t region_bytes =
      loader_.reserve_batch_bytes > 0 ? DataOffset(b) + loader_.reserve_batch_bytes + 64 * b : 0;
  for (size_t w = 0; w < workers_n_; ++w) {
    for (size_t i = 0; i < slots_per_worker_; ++i) {
      auto slot = std::make_unique<WorkerSlot>();
      DLIO_RETURN_NOT_OK(slot->region.Create(StrCat("dlio-worker-", w, "-slot-", i)));
      if (region_bytes > 0) {
        DLIO_RETURN_NOT_OK(slot->region.Prefault(region_bytes));
        reserved_bytes_ += region_bytes;
      } else {
        DLIO_RETURN_NOT_OK(slot->region.Reserve(DataOffset(b)));
      }
      slot->known_size = slot->region.mapped();
      slot->samples.reserve(b);
      slots_.push_back(std::move(slot));
    }
    if (ReadRingBytes() > 0) {
      // Each worker allocates its own bounded buffer when it starts (BoundedReadBuffer).
      reserved_bytes_ += BoundedReadBuffer::PhysicalBytesFor(
          collates_ ? loader_.bounded_read_bytes : 0, ReadRingBytes());
    } else if (options_.reserve_sample_bytes > 0) {
      auto buffer = std::make_unique<SharedRegion>();
      DLIO_RETURN_NOT_OK(buffer->Create(StrCat("dlio-worker-", w, "-read")));
      DLIO_RETURN_NOT_OK(buffer->Prefault(options_.reserve_sample_bytes));
      reserved_bytes_ += options_.reserve_sample_bytes;
      read_buffers_.push_back(std::move(buffer));
    }
  }
  procs_.resize(workers_n_);
  if (!loader_.persistent_workers) return Status::OK();
  // Persistent workers are forked now, while the pipeline is built, rather than at the first
  // StartEpoch: setting up their memory is then not part of epoch 1 (docs/io_models.md).
  source_->CloseAll();  // they start with no file open (each opens its own)
  return Spawn();
}

uint64_t WorkerPipeline::ReadRingBytes() const {
  if (PytorchWorkerReadsThroughRing(collates_, options_.samples_stream, decoder_ != nullptr)) {
    return ReadScratch::kRingBytes;
  }
  return loader_.bounded_read_bytes > 0 ? BoundedReadBuffer::kRingBytes : 0;
}

WorkerSlot* WorkerPipeline::SlotFor(int64_t k) const {
  const auto w = static_cast<size_t>(k) % workers_n_;
  const auto m = static_cast<size_t>(k) / workers_n_;
  return slots_[w * slots_per_worker_ + m % slots_per_worker_].get();
}

Status WorkerPipeline::Stop() {
  if (!stopping_.exchange(true)) {
    const uint64_t one = 1;
    if (stop_fd_ >= 0) (void)!::write(stop_fd_, &one, sizeof one);
  }
  std::lock_guard<std::mutex> lock(mu_);
  EndWorkers();
  return Status::OK();
}

PipelineStats WorkerPipeline::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  PipelineStats s;
  s.batches_allocated = slots_.size();
  s.buffers_allocated = slots_.size() + read_buffers_.size();
  s.buffer_growths = buffer_growths_;
  s.worker_read_buffer_bytes = worker_read_buffer_bytes_;
  s.reserved_bytes = reserved_bytes_;
  s.samples_read = samples_read_;
  s.batches_delivered = epoch_state_.batches_delivered();
  return s;
}

Status WorkerPipeline::StartEpoch(uint64_t epoch, std::vector<SampleRef> plan) {
  std::lock_guard<std::mutex> lock(mu_);
  DLIO_RETURN_NOT_OK(EpochState::CheckStart(stopping_.load()));
  epoch_state_.Deactivate();
  if (running_ && loader_.persistent_workers && !epoch_state_.failed()) {
    Status drained = Drain();  // batches of the previous epoch still on their way
    if (!drained.ok()) EndWorkers();
  } else if (running_) {
    EndWorkers();
  }
  for (auto& slot : slots_) {
    if (slot->state != WorkerSlotState::kLeased) slot->state = WorkerSlotState::kFree;
  }
  epoch_state_.Begin(epoch, std::move(plan), options_.batch_size, options_.drop_last);
  next_send_ = 0;
  if (!running_) {
    // No read is in flight: the workers start with no file open (each opens its own).
    source_->CloseAll();
    DLIO_RETURN_NOT_OK(Spawn());
  }
  epoch_state_.Activate();
  return DispatchAvailable();
}

Status WorkerPipeline::DispatchAvailable() {
  const auto window = static_cast<int64_t>(prefetch_factor_ * workers_n_);
  while (next_send_ < epoch_state_.num_batches() && next_send_ < epoch_state_.next() + window) {
    WorkerSlot* slot = SlotFor(next_send_);
    if (slot->state != WorkerSlotState::kFree) break;  // still leased: sent once released
    DLIO_RETURN_NOT_OK(Dispatch(next_send_, slot));
    ++next_send_;
  }
  return Status::OK();
}

Status WorkerPipeline::Dispatch(int64_t k, WorkerSlot* slot) {
  const uint64_t first = static_cast<uint64_t>(k) * options_.batch_size;
  const uint64_t count = epoch_state_.CountOf(k);
  DLIO_RETURN_NOT_OK(slot->region.Reserve(DataOffset(count)));
  auto* refs = reinterpret_cast<RegionRef*>(slot->region.data() + RefsOffset());
  const std::vector<SampleRef>& plan = epoch_state_.plan();
  for (uint64_t j = 0; j < count; ++j) {
    refs[j] = RegionRef{plan[first + j].file, 0, plan[first + j].index};
  }
  const size_t w = static_cast<size_t>(k) % workers_n_;
  WorkerCommand cmd;
  cmd.type = kCommandBatch;
  cmd.slot = static_cast<uint32_t>((static_cast<size_t>(k) / workers_n_) % slots_per_worker_);
  cmd.k = k;
  cmd.epoch = epoch_state_.epoch();
  cmd.count = count;
  slot->k = k;
  slot->count = count;
  slot->state = WorkerSlotState::kDispatched;
  Status sent = WriteFull(procs_[w].fd, &cmd, sizeof cmd);
  if (!sent.ok()) return WorkerLost(w, StrCat("when sent batch ", k));
  return Status::OK();
}

Status WorkerPipeline::WaitFor(int64_t k, WorkerSlot* slot) {
  const size_t w = static_cast<size_t>(k) % workers_n_;
  while (slot->state == WorkerSlotState::kDispatched && slot->k == k) {
    DLIO_RETURN_NOT_OK(Receive(w));
  }
  return Status::OK();
}

Status WorkerPipeline::Drain() {
  for (int64_t k = epoch_state_.next(); k < next_send_; ++k) {
    DLIO_RETURN_NOT_OK(WaitFor(k, SlotFor(k)));
  }
  return Status::OK();
}

Status WorkerPipeline::Next(BatchLease* out, bool* end_of_epoch) {
  *end_of_epoch = false;
  *out = BatchLease();  // give back the previous batch first: its slot may be the one needed
  const int64_t wall_start = tracer_ ? clock_->WallMicros() : 0;
  std::lock_guard<std::mutex> lock(mu_);
  int64_t k = 0;
  DLIO_RETURN_NOT_OK(epoch_state_.CheckNext(stopping_.load(), end_of_epoch, &k));
  if (*end_of_epoch) {
    if (!loader_.persistent_workers) EndWorkers();  // the iterator is exhausted
    return Status::OK();
  }
  Status status = DispatchAvailable();
  WorkerSlot* slot = SlotFor(k);
  if (status.ok() && k >= next_send_) return epoch_state_.LeasedError(k, slots_.size());
  if (status.ok()) status = WaitFor(k, slot);
  if (status.ok()) status = slot->status;
  if (!status.ok()) {
    if (slot->k == k && slot->state != WorkerSlotState::kLeased) {
      slot->state = WorkerSlotState::kFree;
    }
    return epoch_state_.Fail(status);  // sticky until the next StartEpoch
  }
  return Deliver(k, slot, wall_start, out);
}

Status WorkerPipeline::Deliver(int64_t k, WorkerSlot* slot, int64_t wall_start, BatchLease* out) {
  if (slot->region_size > slot->region.mapped()) DLIO_RETURN_NOT_OK(slot->region.Refresh());
  if (slot->region_size > slot->known_size) {
    ++buffer_growths_;  // the worker had to grow the region for this batch
    slot->known_size = slot->region_size;
  }
  const uint8_t* base = slot->region.data();
  const auto* samples = reinterpret_cast<const RegionSample*>(base + SamplesOffset(slot->count));
  const auto* refs = reinterpret_cast<const RegionRef*>(base + RefsOffset());
  slot->epoch = epoch_state_.epoch();
  slot->index = k;
  slot->samples.resize(slot->count);
  slot->bytes = 0;
  for (uint64_t j = 0; j < slot->count; ++j) {
    if (samples[j].offset + samples[j].size > slot->region.mapped()) {
      return Status::Internal("pipeline 'pytorch': sample ", j, " of batch ", k,
                              " lies beyond its shared region");
    }
    slot->samples[j] =
        Sample{SampleRef{refs[j].file, refs[j].index}, base + samples[j].offset, samples[j].size};
    slot->bytes += samples[j].bytes_read;
  }
  slot->state = WorkerSlotState::kLeased;
  epoch_state_.Delivered(k);
  samples_read_ += slot->count;
  DLIO_RETURN_NOT_OK(DispatchAvailable());
  RecordFetchIter(tracer_, clock_, wall_start, *slot, k);
  *out = BatchLease(slot, this);
  return Status::OK();
}

void WorkerPipeline::Recycle(Batch* batch) {
  auto* slot = static_cast<WorkerSlot*>(batch);
  std::lock_guard<std::mutex> lock(mu_);
  assert(slot->state == WorkerSlotState::kLeased);
  slot->state = WorkerSlotState::kFree;
  epoch_state_.Released();
  // A batch waiting for this slot goes out now (an error shows at its Next).
  if (epoch_state_.active() && !epoch_state_.failed() && running_ && !stopping_.load()) {
    (void)DispatchAvailable();
  }
}

}  // namespace pipeline_internal

uint64_t PytorchPrefetchFactor(uint64_t prefetch_size, uint64_t read_threads) {
  if (prefetch_size == 0) return 2;
  if (read_threads == 0) return prefetch_size;
  return (prefetch_size + read_threads - 1) / read_threads;
}

Result<std::unique_ptr<Pipeline>> MakeWorkerPipeline(const PipelineOptions& options,
                                                     const PipelineEnv& env) {
  if (env.source == nullptr) {
    return Status::InvalidArgument("pipeline '" + options.name + "': no data source");
  }
  if (options.batch_size == 0) {
    return Status::InvalidArgument("reader.batch_size must be >= 1, got 0");
  }
  if (options.read_threads == 0) {
    PipelineOptions inline_options = options;  // DataLoader(num_workers=0): read in Next
    return MakeBatchPipeline(PipelineMode::kSync, inline_options, env);
  }
  constexpr uint64_t kMaxWorkers = 1024;
  if (options.read_threads > kMaxWorkers) {
    return Status::InvalidArgument(
        "reader.read_threads (worker processes of the pytorch loader) "
        "must be <= ",
        kMaxWorkers, ", got ", options.read_threads);
  }
  if (options.prefetch_size > (uint64_t{1} << 20)) {
    return Status::InvalidArgument("reader.prefetch_size is too large: ", options.prefetch_size);
  }
  if (env.storage != nullptr && env.storage->capabilities().needs_mpi) {
    return Status::InvalidArgument(
        "reader.io_model pytorch forks DataLoader worker processes, which must not call MPI; "
        "storage.storage_type '",
        env.storage->name(), "' reads through MPI-IO (use posix, or reader.io_model native)");
  }
  DLIO_RETURN_NOT_OK(options.preprocess_time.Validate("reader.preprocess_time"));
  const uint64_t factor = PytorchPrefetchFactor(options.prefetch_size, options.read_threads);
  auto pipeline = std::make_unique<pipeline_internal::WorkerPipeline>(options, env, factor);
  Status made = pipeline->Init();
  if (!made.ok()) return made.WithContext("pipeline 'pytorch'");
  return std::unique_ptr<Pipeline>(std::move(pipeline));
}

}  // namespace dlio
