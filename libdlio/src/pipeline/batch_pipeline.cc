// The batching engine's lifecycle: building it, its threads, epochs, handing batches out and
// taking them back (MakeBatchPipeline). What its threads do is in batch_pipeline_reads.cc.
#include "pipeline/batch_pipeline.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <utility>

#include "core/thread_name.h"
#include "core/thread_priority.h"
#include "dlio/ai_events.h"
#include "pipeline/batch_pipeline_impl.h"

namespace dlio {
namespace pipeline_internal {

BatchPipeline::BatchPipeline(PipelineMode mode, const PipelineOptions& options,
                             const PipelineEnv& env)
    : mode_(mode),
      options_(options),
      source_(env.source),
      clock_(env.clock ? env.clock : SystemClock()),
      tracer_(env.tracer && env.tracer->enabled() ? env.tracer : nullptr),
      decoder_(env.decoder),
      max_decoded_bytes_(env.max_decoded_bytes),
      batch_size_(options.batch_size),
      inline_reads_(options.read_threads == 0 ||
                    (mode == PipelineMode::kSync && options.read_threads <= 1)),
      preprocess_enabled_(decoder_ != nullptr || !options.preprocess_time.AlwaysZero()),
      use_workers_(mode != PipelineMode::kSync && !inline_reads_ &&
                   options.computation_threads > 0 && preprocess_enabled_),
      time_runs_(tracer_ == nullptr && (use_workers_ || !preprocess_enabled_)),
      own_buffers_(mode != PipelineMode::kPreload &&
                   ReadersUseOwnBuffers(options, decoder_ != nullptr)),
      inflight_(std::max<uint64_t>(1, options.read_threads)),
      ring_(options.prefetch_size + inflight_ + 1),
      batches_per_wake_(
          options.consumer_wakes_per_run
              ? static_cast<int64_t>(std::max<uint64_t>(1, (options.prefetch_size + inflight_) / 2))
              : 1),
      consumer_dist_(options.preprocess_time, MixSeed(options.seed, options.rank, 0)),
      consumer_spin_(env.spare_cpu ? env.spare_cpu : std::function<bool()>([this] {
        return HostHasSpareCpu(ThreadsATakeMayWake());
      })) {
  slots_.reserve(ring_);
  if (mode_ != PipelineMode::kPreload) pool_.ReserveSlots(ring_ * batch_size_);
  for (size_t i = 0; i < ring_; ++i) {
    auto slot = std::make_unique<Slot>();
    if (mode_ != PipelineMode::kPreload) {
      slot->buffers.resize(batch_size_);  // empty until a reader takes one from the free list
      pool_.Add(batch_size_);
      buffers_allocated_ += batch_size_;
    }
    if (decoder_ != nullptr) {
      slot->decoded.reserve(batch_size_);
      for (uint64_t j = 0; j < batch_size_; ++j) slot->decoded.emplace_back();
      buffers_allocated_ += batch_size_;
    }
    slot->samples.reserve(batch_size_);
    slot->read_start.assign(batch_size_, 0);
    slot->read_end.assign(batch_size_, 0);
    slot->read_bytes.assign(batch_size_, 0);
    slot->holds.assign(batch_size_, 0);
    slots_.push_back(std::move(slot));
  }
  pp_ring_.assign(ring_, nullptr);
  ring_slots_.reserve(ring_);
  const size_t readers = inline_reads_ ? 0 : options.read_threads;
  for (size_t r = 0; r < readers; ++r) {
    reader_dists_.emplace_back(options.preprocess_time, MixSeed(options.seed, options.rank, r));
  }
  const size_t workers = use_workers_ ? options.computation_threads : 0;
  for (size_t w = 0; w < workers; ++w) {
    worker_dists_.emplace_back(options.preprocess_time, MixSeed(options.seed, options.rank, w));
  }
  if (tracer_) {
    file_ids_.reset(new std::atomic<int32_t>[source_->num_files()]);
    for (size_t f = 0; f < source_->num_files(); ++f) file_ids_[f].store(kFileIdUnknown);
  }
}

uint64_t BatchPipeline::ThreadsATakeMayWake() const {
  if (inline_reads_) return 0;
  return options_.read_threads + (use_workers_ ? options_.computation_threads : 0);
}

BatchPipeline::~BatchPipeline() {
  (void)Stop();
  // Leases point into slots_: every lease must be released before the pipeline goes.
  assert(epoch_state_.leased() == 0 && "BatchLease outlived its pipeline");
}

Status BatchPipeline::ReserveBuffers() {
  if (!own_buffers_) {
    return pool_.Reserve(options_.reserve_sample_bytes, options_.reserve_buffers, &reserved_bytes_);
  }
  reserved_bytes_ = 0;
  for (size_t r = 0; r <= reader_dists_.size(); ++r) {
    scratch_.push_back(std::make_unique<ReadScratch>());
    char name[64];  // (not StrCat: GCC 12's -Wrestrict false positive on its inlined appends)
    std::snprintf(name, sizeof name, "dlio-reader-%d-%zu", options_.rank, r);
    // The consumer's (the last) reads only when the reads are inline.
    const bool reads = r < reader_dists_.size() || inline_reads_;
    DLIO_RETURN_NOT_OK(scratch_.back()->Init(name, options_.samples_stream,
                                             options_.reserve_sample_bytes,
                                             reads ? options_.reserve_landing_bytes : 0));
    reserved_bytes_ += scratch_.back()->physical_bytes();
  }
  return Status::OK();
}

void BatchPipeline::StartThreads() {
  for (size_t r = 0; r < reader_dists_.size(); ++r) {
    threads_.emplace_back([this, r] {
      NameThisThread("dlio-reader", r);
      LowerThisThreadPriority(options_.thread_nice);
      ReaderLoop(r);
    });
  }
  for (size_t w = 0; w < worker_dists_.size(); ++w) {
    threads_.emplace_back([this, w] {
      NameThisThread("dlio-worker", w);
      LowerThisThreadPriority(options_.thread_nice);
      WorkerLoop(w);
    });
  }
}

void BatchPipeline::ReadInline(Slot* slot, int64_t k) {
  const uint64_t first = static_cast<uint64_t>(k) * batch_size_;
  ReadScratch* scratch = own_buffers_ ? scratch_.back().get() : nullptr;
  const std::unique_ptr<DataSourceCursor> cursor = source_->NewCursor();  // this batch's reads
  ReadRun run;
  for (uint64_t j = 0; j < slot->count; ++j) {
    if (stopping_.load()) break;
    if (time_runs_) {
      ProcessInRun(first + j, slot, k, &consumer_dist_, scratch, cursor.get(), &run);
    } else {
      ProcessSample(first + j, slot, k, &consumer_dist_, scratch, cursor.get());
    }
  }
  CloseRun(&run);
}

Status BatchPipeline::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_.store(true);
    cancel_.store(true);
    readers_cv_.notify_all();
    workers_cv_.notify_all();
    consumer_cv_.notify_all();
    idle_cv_.notify_all();
  }
  std::lock_guard<std::mutex> lock(join_mu_);
  if (!joined_) {
    for (auto& t : threads_) t.join();
    joined_ = true;
  }
  return Status::OK();
}

PipelineStats BatchPipeline::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  PipelineStats s;
  s.batches_allocated = slots_.size();
  s.buffers_allocated = buffers_allocated_;
  s.buffer_growths = buffer_growths_.load(std::memory_order_relaxed);
  s.buffer_bytes = buffer_bytes_.load(std::memory_order_relaxed);
  s.reserved_bytes = reserved_bytes_;
  s.samples_read = samples_read_;
  s.batches_delivered = epoch_state_.batches_delivered();
  return s;
}

Status BatchPipeline::StartEpoch(uint64_t epoch, std::vector<SampleRef> plan) {
  std::unique_lock<std::mutex> lock(mu_);
  DLIO_RETURN_NOT_OK(EpochState::CheckStart(stopping_.load()));
  // Park every thread: readers finish their current read, then nothing touches the slots.
  cancel_.store(true);
  readers_cv_.notify_all();
  workers_cv_.notify_all();
  idle_cv_.wait(lock, [&] { return active_ == 0; });
  epoch_state_.Deactivate();
  pp_head_ = pp_count_ = 0;
  for (auto& slot : slots_) {
    slot->open_for.store(-1, std::memory_order_relaxed);
    slot->ready_for.store(-1, std::memory_order_relaxed);
    slot->next_k = -1;
    if (slot->state != SlotState::kLeased) {
      slot->state = SlotState::kIdle;
      pool_.Give(&slot->buffers, &slot->holds);  // filled for the old epoch: nobody will take it
    }
  }
  const bool had_epoch = had_epoch_;
  lock.unlock();

  if (had_epoch && options_.reopen_files_each_epoch) source_->CloseAll();  // no read in flight
  if (mode_ == PipelineMode::kPreload) DLIO_RETURN_NOT_OK(LoadMissing(epoch, plan));

  lock.lock();
  if (stopping_.load()) return Status::Cancelled("pipeline stopped during StartEpoch");
  // The old plan is kept for TakeSpentPlan, not freed here (inside the epoch's timing).
  spent_plan_ = epoch_state_.Begin(epoch, std::move(plan), batch_size_, options_.drop_last);
  const int64_t num_batches = epoch_state_.num_batches();
  cursor_.store(0);
  first_error_.store(kNoError);
  delivered_ = requested_ = 0;
  ring_slots_.clear();
  for (auto& slot : slots_) {
    if (slot->state == SlotState::kLeased) continue;
    const auto position = static_cast<int64_t>(ring_slots_.size());
    slot->next_k = position < num_batches ? position : -1;
    ring_slots_.push_back(slot.get());
  }
  ring_size_ = ring_slots_.size();
  epoch_state_.Activate();
  had_epoch_ = true;
  cancel_.store(false);
  ++gen_;
  (void)TryOpenAll();
  readers_cv_.notify_all();
  return Status::OK();
}

std::vector<SampleRef> BatchPipeline::TakeSpentPlan() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(spent_plan_);
}

Status BatchPipeline::Next(BatchLease* out, bool* end_of_epoch) {
  *end_of_epoch = false;
  *out = BatchLease();  // give back the previous batch first: it may be the one we need
  const int64_t wall_start = tracer_ ? clock_->WallMicros() : 0;
  std::unique_lock<std::mutex> lock(mu_);
  int64_t k = 0;
  DLIO_RETURN_NOT_OK(epoch_state_.CheckNext(stopping_.load(), end_of_epoch, &k));
  if (*end_of_epoch) return Status::OK();
  if (ring_size_ == 0) return LeasedError(k);
  Slot* slot = ring_slots_[static_cast<size_t>(k) % ring_size_];
  if (inline_reads_ || mode_ == PipelineMode::kSync) {
    requested_ = k + 1;
    if (TryOpenAll()) readers_cv_.notify_all();
  }
  if (inline_reads_) {
    if (slot->state == SlotState::kLeased) return LeasedError(k);
    if (slot->state != SlotState::kFilling || slot->k != k) {
      return Status::Internal("pipeline: batch ", k, " was not opened");
    }
    lock.unlock();
    ReadInline(slot, k);
    lock.lock();
    if (stopping_.load()) return Status::Cancelled("pipeline: stopped");
  } else {
    AwaitBatch(&lock, slot, k);
    if (handed_off_) {
      handed_off_ = false;
      lock.unlock();
      RecordFetchIter(tracer_, clock_, wall_start, *slot, k);
      *out = BatchLease(slot, this);
      return Status::OK();
    }
    if (stopping_.load()) return Status::Cancelled("pipeline: stopped");
    if (slot->state == SlotState::kLeased) return LeasedError(k);
  }
  if (!slot->status.ok()) {
    // The epoch ends here; the error stays until the next StartEpoch.
    slot->state = SlotState::kIdle;
    slot->next_k = -1;
    return epoch_state_.Fail(slot->status);
  }
  const bool opened = DeliverLocked(slot, k);
  lock.unlock();
  if (opened) readers_cv_.notify_all();  // after the unlock: a woken reader finds mu_ free
  RecordFetchIter(tracer_, clock_, wall_start, *slot, k);
  *out = BatchLease(slot, this);
  return Status::OK();
}

bool BatchPipeline::BatchThere(const Slot* slot, int64_t k) const {
  return stopping_.load() || handed_off_ || slot->state == SlotState::kLeased ||
         (slot->k == k && slot->state == SlotState::kReady);
}

void BatchPipeline::AwaitBatch(std::unique_lock<std::mutex>* lock, Slot* slot, int64_t k) {
  if (BatchThere(slot, k)) return;
  // Poll first, mu_ released: a batch ready within the poll costs neither thread a futex call.
  (void)consumer_spin_.Poll(
      [&] { return slot->ready_for.load(std::memory_order_acquire) == k || stopping_.load(); },
      lock);
  consumer_wants_ = k;
  // With a CPU of its own (it polls) the consumer's wake-up takes none from a reader: it waits
  // for batch k alone (a sleep for the run made its polls fail more often there, and the reads
  // slower).
  const int64_t last = consumer_spin_.spare_cpu() ? k : LastOfRun(k);
  if (last > k) {
    // The run's last batch wakes us (a batch of the run completed first does not), or a failed
    // read before it (the readers stop there); then the wait below for batch k, which returns at
    // once when k is there.
    Slot* last_slot = ring_slots_[static_cast<size_t>(last) % ring_size_];
    consumer_waits_on_ = last_slot;
    consumer_cv_.wait(*lock, [&] {
      return BatchThere(last_slot, last) || first_error_.load(std::memory_order_relaxed) < last;
    });
  }
  // A reader completing batch k wakes us (no other batch does), having delivered it already.
  consumer_waits_on_ = slot;
  consumer_cv_.wait(*lock, [&] { return BatchThere(slot, k); });
  consumer_waits_on_ = nullptr;
}

int64_t BatchPipeline::LastOfRun(int64_t k) const {
  int64_t last = k;
  while (last - k + 1 < batches_per_wake_) {
    const Slot* next = ring_slots_[static_cast<size_t>(last + 1) % ring_size_];
    const bool open =
        next->k == last + 1 && next->state != SlotState::kIdle && next->state != SlotState::kLeased;
    if (!open) break;
    ++last;
  }
  return last;
}

void BatchPipeline::Recycle(Batch* batch) {
  Slot* slot = static_cast<Slot*>(batch);
  bool opened = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    assert(slot->state == SlotState::kLeased);
    pool_.Give(&slot->buffers, &slot->holds);
    slot->state = SlotState::kIdle;
    epoch_state_.Released();
    opened = TryOpen(slot);
  }
  if (opened) readers_cv_.notify_all();
}

}  // namespace pipeline_internal

using pipeline_internal::BatchPipeline;
using pipeline_internal::kMaxThreads;

Result<std::unique_ptr<Pipeline>> MakeBatchPipeline(PipelineMode mode,
                                                    const PipelineOptions& options,
                                                    const PipelineEnv& env) {
  if (env.source == nullptr) {
    return Status::InvalidArgument("pipeline '" + options.name + "': no data source");
  }
  if (options.batch_size == 0) {
    return Status::InvalidArgument("reader.batch_size must be >= 1, got 0");
  }
  if (options.read_threads > kMaxThreads) {
    return Status::InvalidArgument("reader.read_threads must be <= ", kMaxThreads, ", got ",
                                   options.read_threads);
  }
  if (options.computation_threads > kMaxThreads) {
    return Status::InvalidArgument("reader.computation_threads must be <= ", kMaxThreads, ", got ",
                                   options.computation_threads);
  }
  if (options.reader_lanes != 0 && options.reader_lanes != options.read_threads) {
    return Status::InvalidArgument("pipeline '", options.name, "': reader_lanes (",
                                   options.reader_lanes, ") must be 0 or read_threads (",
                                   options.read_threads, ")");
  }
  if (options.prefetch_size > (uint64_t{1} << 20)) {
    return Status::InvalidArgument("reader.prefetch_size is too large: ", options.prefetch_size);
  }
  DLIO_RETURN_NOT_OK(options.preprocess_time.Validate("reader.preprocess_time"));
  auto pipeline = std::make_unique<BatchPipeline>(mode, options, env);
  Status reserved = pipeline->ReserveBuffers();
  if (!reserved.ok()) {
    return reserved.WithContext(StrCat("pipeline '", options.name, "': reserving ",
                                       options.reserve_sample_bytes,
                                       " bytes per pooled sample buffer"));
  }
  pipeline->StartThreads();
  return std::unique_ptr<Pipeline>(std::move(pipeline));
}

}  // namespace dlio
