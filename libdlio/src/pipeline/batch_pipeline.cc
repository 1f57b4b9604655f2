#include "pipeline/batch_pipeline.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dlio/clock.h"
#include "dlio/distribution.h"
#include "pipeline/buffer_pool.h"
#include "pipeline/preload_store.h"

namespace dlio {
namespace {

using pipeline_internal::BufferPool;
using pipeline_internal::PreloadStore;

constexpr int64_t kNoError = std::numeric_limits<int64_t>::max();
constexpr int32_t kFileIdUnknown = std::numeric_limits<int32_t>::min();
constexpr uint64_t kMaxThreads = 1024;

enum class SlotState { kIdle, kFilling, kPreprocessing, kReady, kLeased };

// A pooled batch plus the bookkeeping of the batch it is filled with. Slot k % ring holds batch k.
struct Slot : Batch {
  SlotState state = SlotState::kIdle;  // guarded by mu_, like every field not atomic
  int64_t k = -1;                      // batch held or being filled
  int64_t next_k = -1;                 // batch to fill once idle (-1: none)
  uint64_t count = 0;                  // samples in batch k
  Status status;                       // first failure among its samples
  uint64_t pp_next = 0;                // next sample to hand to a preprocessing worker
  uint64_t pp_remaining = 0;           // samples still being preprocessed
  // Readers check this without the lock: == k while batch k may be filled.
  std::atomic<int64_t> open_for{-1};
  std::atomic<uint64_t> remaining{0};  // reads left; whoever takes it to 0 completes the batch
  std::vector<int64_t> read_start, read_end;  // per sample, written by its reader only
  std::vector<uint64_t> read_bytes;           // per sample: bytes read (before any decode)
  std::vector<uint8_t> holds;                 // per sample: buffers[j] came from the free list
  std::vector<SampleBuffer> decoded;          // per sample, when the pipeline decodes
};

class BatchPipeline final : public Pipeline, public BatchRecycler {
 public:
  BatchPipeline(PipelineMode mode, const PipelineOptions& options, const PipelineEnv& env);
  ~BatchPipeline() override;

  void StartThreads();
  Status ReserveBuffers() { return pool_.Reserve(options_.reserve_sample_bytes); }
  Status StartEpoch(uint64_t epoch, std::vector<SampleRef> plan) override;
  Status Next(BatchLease* out, bool* end_of_epoch) override;
  Status Stop() override;
  PipelineStats stats() const override;
  void Recycle(Batch* batch) override;

 private:
  void ReaderLoop(size_t reader);
  void RunReads(Distribution* dist);
  void WorkerLoop(size_t worker);
  void ProcessSample(uint64_t s, Slot* slot, int64_t k, Distribution* dist);
  Status Fetch(const SampleRef& ref, Slot* slot, uint64_t j);
  void RecordError(Slot* slot, int64_t k, const SampleRef& ref, const Status& status);
  void CompleteRead(Slot* slot);
  Status Preprocess(Distribution* dist, Slot* slot, uint64_t j);
  bool Gate(int64_t k) const;
  bool TryOpen(Slot* slot);
  void TryOpenAll();
  Status LeasedError(int64_t k) const;
  Status LoadMissing(const std::vector<SampleRef>& plan);
  int32_t FileId(uint32_t file);

  const PipelineMode mode_;
  const PipelineOptions options_;
  DataSource* const source_;
  const Clock* const clock_;
  Tracer* const tracer_;         // nullptr unless tracing is enabled
  const Format* const decoder_;  // nullptr unless samples are decoded
  const uint64_t max_decoded_bytes_;
  const uint64_t batch_size_;
  const bool inline_reads_;  // the consumer reads in Next
  const bool preprocess_enabled_;
  const bool use_workers_;   // preprocessing on computation threads (else inline after the read)
  const uint64_t inflight_;  // batches being filled beyond the prefetched ones
  const size_t ring_;

  std::vector<std::unique_ptr<Slot>> slots_;
  // Batch k is filled in ring_slots_[k % ring_size_]: the slots not leased when the epoch began
  // (a batch the caller still holds from the previous epoch sits out this one).
  std::vector<Slot*> ring_slots_;
  size_t ring_size_ = 0;
  std::vector<Distribution> reader_dists_, worker_dists_;
  Distribution consumer_dist_;
  std::unique_ptr<std::atomic<int32_t>[]> file_ids_;

  mutable std::mutex mu_;
  std::condition_variable readers_cv_, workers_cv_, consumer_cv_, idle_cv_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> cancel_{false};
  uint64_t gen_ = 0;  // bumped by every StartEpoch; parked readers wait for it to change
  int active_ = 0;    // readers inside an epoch plus workers preprocessing a sample
  bool epoch_active_ = false;
  bool had_epoch_ = false;
  uint64_t epoch_ = 0;
  std::vector<SampleRef> plan_;  // changed only while every thread is parked
  uint64_t n_used_ = 0;
  int64_t num_batches_ = 0;
  std::atomic<uint64_t> cursor_{0};
  std::atomic<int64_t> first_error_{kNoError};
  int64_t next_index_ = 0;
  int64_t delivered_ = 0;
  int64_t requested_ = 0;
  Status epoch_error_;
  int leased_ = 0;
  std::vector<Slot*> pp_ring_;
  size_t pp_head_ = 0, pp_count_ = 0;

  BufferPool pool_;  // sample buffers not in use

  // Counters.
  uint64_t buffers_allocated_ = 0;
  std::atomic<uint64_t> buffer_growths_{0}, buffer_bytes_{0};
  uint64_t samples_read_ = 0;
  uint64_t batches_delivered_ = 0;

  PreloadStore store_;  // preload mode; changed only while every thread is parked

  std::vector<std::thread> threads_;
  std::mutex join_mu_;
  bool joined_ = false;
};

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
      preprocess_enabled_(decoder_ != nullptr ||
                          !(options.preprocess_time.type == DistributionSpec::Type::kConstant &&
                            options.preprocess_time.mean <= 0)),
      use_workers_(mode != PipelineMode::kSync && !inline_reads_ &&
                   options.computation_threads > 0 && preprocess_enabled_),
      inflight_(std::max<uint64_t>(1, options.read_threads)),
      ring_(options.prefetch_size + inflight_ + 1),
      consumer_dist_(options.preprocess_time, MixSeed(options.seed, options.rank, 0)) {
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

BatchPipeline::~BatchPipeline() {
  (void)Stop();
  // Leases point into slots_: every lease must be released before the pipeline goes.
  assert(leased_ == 0 && "BatchLease outlived its pipeline");
}

void BatchPipeline::StartThreads() {
  for (size_t r = 0; r < reader_dists_.size(); ++r) {
    threads_.emplace_back([this, r] { ReaderLoop(r); });
  }
  for (size_t w = 0; w < worker_dists_.size(); ++w) {
    threads_.emplace_back([this, w] { WorkerLoop(w); });
  }
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
  s.samples_read = samples_read_;
  s.batches_delivered = batches_delivered_;
  return s;
}

int32_t BatchPipeline::FileId(uint32_t file) {
  if (file >= source_->num_files()) return -1;
  int32_t id = file_ids_[file].load(std::memory_order_relaxed);
  if (id == kFileIdUnknown) {
    id = tracer_->InternFile(source_->file_path(file));  // stable per path, so races are benign
    file_ids_[file].store(id, std::memory_order_relaxed);
  }
  return id;
}

bool BatchPipeline::Gate(int64_t k) const {
  if (k < 0 || k >= num_batches_ || k > first_error_.load(std::memory_order_relaxed)) return false;
  if (inline_reads_ || mode_ == PipelineMode::kSync) return k < requested_;
  return k < delivered_ + static_cast<int64_t>(options_.prefetch_size + inflight_);
}

bool BatchPipeline::TryOpen(Slot* slot) {
  if (slot->state != SlotState::kIdle || !epoch_active_ || !Gate(slot->next_k)) return false;
  const int64_t k = slot->next_k;
  const uint64_t first = static_cast<uint64_t>(k) * batch_size_;
  slot->k = k;
  slot->epoch = epoch_;
  slot->index = k;
  slot->count = std::min<uint64_t>(batch_size_, n_used_ - first);
  slot->samples.resize(slot->count);  // within the reserved capacity: no allocation
  slot->bytes = 0;
  slot->read_ns = 0;
  if (!slot->status.ok()) slot->status = Status::OK();
  slot->remaining.store(slot->count, std::memory_order_relaxed);
  slot->state = SlotState::kFilling;
  slot->open_for.store(k, std::memory_order_release);
  return true;
}

void BatchPipeline::TryOpenAll() {
  bool opened = false;
  for (auto& slot : slots_) opened |= TryOpen(slot.get());
  if (opened) readers_cv_.notify_all();
}

Status BatchPipeline::LeasedError(int64_t k) const {
  return Status::FailedPrecondition(
      "pipeline: batch ", k, " needs a pooled batch that is still leased (", leased_, " of ", ring_,
      " batches held by the caller); release leases before calling Next");
}

void BatchPipeline::ReaderLoop(size_t reader) {
  Distribution* dist = &reader_dists_[reader];
  uint64_t my_gen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    readers_cv_.wait(lock, [&] { return stopping_.load() || (gen_ != my_gen && !cancel_.load()); });
    if (stopping_.load()) return;
    my_gen = gen_;
    ++active_;
    lock.unlock();
    RunReads(dist);
    lock.lock();
    if (--active_ == 0) idle_cv_.notify_all();
  }
}

void BatchPipeline::RunReads(Distribution* dist) {
  while (!cancel_.load(std::memory_order_acquire)) {
    const uint64_t s = cursor_.fetch_add(1, std::memory_order_relaxed);
    if (s >= n_used_) return;
    const int64_t k = static_cast<int64_t>(s / batch_size_);
    if (k > first_error_.load(std::memory_order_acquire)) return;  // the epoch ends at batch k-
    Slot* slot = ring_slots_[static_cast<size_t>(k) % ring_size_];
    if (slot->open_for.load(std::memory_order_acquire) != k) {
      // Batch k is beyond the prefetch window or its pooled batch is still in use.
      std::unique_lock<std::mutex> lock(mu_);
      readers_cv_.wait(lock, [&] {
        return slot->open_for.load(std::memory_order_relaxed) == k || cancel_.load() ||
               k > first_error_.load(std::memory_order_relaxed);
      });
      if (slot->open_for.load(std::memory_order_relaxed) != k || cancel_.load()) return;
    }
    ProcessSample(s, slot, k, dist);
  }
}

Status BatchPipeline::Fetch(const SampleRef& ref, Slot* slot, uint64_t j) {
  if (mode_ == PipelineMode::kPreload) {
    const SampleBuffer* stored = nullptr;
    DLIO_RETURN_NOT_OK(store_.Find(ref, &stored));
    slot->samples[j] = Sample{ref, stored->data(), stored->size()};
    slot->read_bytes[j] = stored->size();
    return Status::OK();
  }
  SampleBuffer& buffer = pool_.Take(&slot->buffers, &slot->holds, j);
  const size_t capacity = buffer.capacity();
  Status status = source_->Read(ref, &buffer);
  if (buffer.capacity() != capacity) {
    buffer_growths_.fetch_add(1, std::memory_order_relaxed);
    buffer_bytes_.fetch_add(buffer.capacity() - capacity, std::memory_order_relaxed);
  }
  slot->samples[j] = Sample{ref, buffer.data(), buffer.size()};
  slot->read_bytes[j] = buffer.size();
  return status;
}

void BatchPipeline::ProcessSample(uint64_t s, Slot* slot, int64_t k, Distribution* dist) {
  const uint64_t j = s - static_cast<uint64_t>(k) * batch_size_;
  const SampleRef ref = plan_[s];
  const bool trace_item = tracer_ && mode_ != PipelineMode::kPreload;
  const int64_t wall_start = trace_item ? clock_->WallMicros() : 0;
  const int64_t start = clock_->NowNanos();
  Status status = Fetch(ref, slot, j);
  const int64_t end = clock_->NowNanos();
  slot->read_start[j] = start;
  slot->read_end[j] = end;
  if (trace_item) {
    TraceEvent event;
    event.name = "ai.data.item";
    event.cat = "ai";
    event.start_us = wall_start;
    event.dur_us = (end - start) / 1000;
    event.file_id = FileId(ref.file);
    event.ret = status.ok() ? static_cast<int64_t>(slot->samples[j].size) : -1;
    event.epoch = static_cast<int64_t>(epoch_);
    event.step = k;
    event.index = static_cast<int64_t>(ref.index);
    tracer_->Record(event);
  }
  if (status.ok() && !use_workers_) status = Preprocess(dist, slot, j);
  if (!status.ok()) RecordError(slot, k, ref, status);
  if (slot->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) CompleteRead(slot);
}

void BatchPipeline::RecordError(Slot* slot, int64_t k, const SampleRef& ref, const Status& status) {
  const std::string path =
      ref.file < source_->num_files() ? source_->file_path(ref.file) : "<no such file>";
  Status with_context =
      status.WithContext(StrCat("pipeline: sample ", ref.index, " of file ", ref.file, " (", path,
                                ") in batch ", k, " of epoch ", epoch_));
  std::lock_guard<std::mutex> lock(mu_);
  if (slot->status.ok()) slot->status = std::move(with_context);
  if (k < first_error_.load(std::memory_order_relaxed)) {
    first_error_.store(k, std::memory_order_release);
  }
  readers_cv_.notify_all();  // readers waiting on later batches give up
}

void BatchPipeline::CompleteRead(Slot* slot) {
  uint64_t bytes = 0;
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  for (uint64_t j = 0; j < slot->count; ++j) {
    bytes += slot->read_bytes[j];
    first = std::min(first, slot->read_start[j]);
    last = std::max(last, slot->read_end[j]);
  }
  slot->bytes = bytes;
  slot->read_ns = slot->count ? last - first : 0;
  std::lock_guard<std::mutex> lock(mu_);
  if (cancel_.load()) return;  // the epoch is being torn down; StartEpoch resets the slot
  if (mode_ != PipelineMode::kPreload) samples_read_ += slot->count;
  slot->open_for.store(-1, std::memory_order_relaxed);
  if (slot->status.ok() && use_workers_) {
    slot->state = SlotState::kPreprocessing;
    slot->pp_next = 0;
    slot->pp_remaining = slot->count;
    pp_ring_[(pp_head_ + pp_count_) % ring_] = slot;
    ++pp_count_;
    workers_cv_.notify_all();
  } else {
    slot->state = SlotState::kReady;
    consumer_cv_.notify_all();
  }
}

void BatchPipeline::WorkerLoop(size_t worker) {
  Distribution* dist = &worker_dists_[worker];
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    workers_cv_.wait(lock, [&] { return stopping_.load() || (pp_count_ > 0 && !cancel_.load()); });
    if (stopping_.load()) return;
    // Samples of one batch go to several workers, as a parallel map would.
    Slot* slot = pp_ring_[pp_head_];
    const uint64_t j = slot->pp_next++;
    if (slot->pp_next == slot->count) {
      pp_head_ = (pp_head_ + 1) % ring_;
      --pp_count_;
    }
    ++active_;
    lock.unlock();
    if (!cancel_.load()) {
      Status status = Preprocess(dist, slot, j);
      if (!status.ok()) RecordError(slot, slot->k, slot->samples[j].ref, status);
    }
    lock.lock();
    --active_;
    if (cancel_.load()) {
      if (active_ == 0) idle_cv_.notify_all();
      continue;
    }
    if (--slot->pp_remaining == 0) {
      slot->state = SlotState::kReady;
      consumer_cv_.notify_all();
    }
  }
}

Status BatchPipeline::Preprocess(Distribution* dist, Slot* slot, uint64_t j) {
  if (!preprocess_enabled_) return Status::OK();
  const int64_t wall_start = tracer_ ? clock_->WallMicros() : 0;
  if (decoder_ != nullptr) {
    Sample& sample = slot->samples[j];
    SampleBuffer& out = slot->decoded[j];
    const size_t capacity = out.capacity();
    DLIO_RETURN_NOT_OK(
        decoder_->DecodeWithLimit(sample.data, sample.size, max_decoded_bytes_, &out));
    if (out.capacity() != capacity) {
      buffer_growths_.fetch_add(1, std::memory_order_relaxed);
      buffer_bytes_.fetch_add(out.capacity() - capacity, std::memory_order_relaxed);
    }
    sample.data = out.data();
    sample.size = out.size();
  }
  const int64_t nanos = static_cast<int64_t>(dist->Next() * 1e9);
  if (nanos > 0) {
    if (options_.preprocess_spin) {
      clock_->SpinForNanos(nanos);
    } else {
      clock_->SleepForNanos(nanos);
    }
  } else if (decoder_ == nullptr) {
    return Status::OK();
  }
  if (tracer_) {
    TraceEvent event;
    event.name = "ai.data.preprocess";
    event.cat = "ai";
    event.start_us = wall_start;
    event.dur_us = clock_->WallMicros() - wall_start;
    event.epoch = static_cast<int64_t>(slot->epoch);
    event.step = slot->index;
    event.index = static_cast<int64_t>(slot->samples[j].ref.index);
    tracer_->Record(event);
  }
  return Status::OK();
}

Status BatchPipeline::LoadMissing(const std::vector<SampleRef>& plan) {
  DLIO_ASSIGN_OR_RETURN(size_t reads, store_.Plan(plan));
  if (reads == 0) return Status::OK();
  {
    std::lock_guard<std::mutex> lock(mu_);
    buffers_allocated_ += reads;
    samples_read_ += reads;
  }
  PreloadStore::ItemTrace trace;
  if (tracer_) {
    trace = [this](const SampleRef& ref, int64_t start_us, int64_t end_us, int64_t ret) {
      TraceEvent event;
      event.name = "ai.data.item";
      event.cat = "ai";
      event.start_us = start_us;
      event.dur_us = end_us - start_us;
      event.file_id = FileId(ref.file);
      event.ret = ret;
      event.epoch = static_cast<int64_t>(epoch_);
      event.index = static_cast<int64_t>(ref.index);
      tracer_->Record(event);
    };
  }
  return store_.Load(source_, options_.read_threads, stopping_, clock_, trace);
}

Status BatchPipeline::StartEpoch(uint64_t epoch, std::vector<SampleRef> plan) {
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_.load()) return Status::FailedPrecondition("pipeline: StartEpoch after Stop");
  // Park every thread: readers finish their current read, then nothing touches the slots.
  cancel_.store(true);
  readers_cv_.notify_all();
  workers_cv_.notify_all();
  idle_cv_.wait(lock, [&] { return active_ == 0; });
  epoch_active_ = false;
  pp_head_ = pp_count_ = 0;
  for (auto& slot : slots_) {
    slot->open_for.store(-1, std::memory_order_relaxed);
    slot->next_k = -1;
    if (slot->state != SlotState::kLeased) {
      slot->state = SlotState::kIdle;
      pool_.Give(&slot->buffers, &slot->holds);  // filled for the old epoch: nobody will take it
    }
  }
  const bool had_epoch = had_epoch_;
  lock.unlock();

  if (had_epoch && options_.reopen_files_each_epoch) source_->CloseAll();  // no read in flight
  if (mode_ == PipelineMode::kPreload) {
    epoch_ = epoch;
    DLIO_RETURN_NOT_OK(LoadMissing(plan));
  }

  lock.lock();
  if (stopping_.load()) return Status::Cancelled("pipeline stopped during StartEpoch");
  plan_ = std::move(plan);
  const uint64_t n = plan_.size();
  num_batches_ = static_cast<int64_t>(options_.drop_last ? n / batch_size_
                                                         : (n + batch_size_ - 1) / batch_size_);
  n_used_ = std::min<uint64_t>(n, static_cast<uint64_t>(num_batches_) * batch_size_);
  epoch_ = epoch;
  cursor_.store(0);
  first_error_.store(kNoError);
  next_index_ = delivered_ = requested_ = 0;
  epoch_error_ = Status::OK();
  ring_slots_.clear();
  for (auto& slot : slots_) {
    if (slot->state == SlotState::kLeased) continue;
    const auto position = static_cast<int64_t>(ring_slots_.size());
    slot->next_k = position < num_batches_ ? position : -1;
    ring_slots_.push_back(slot.get());
  }
  ring_size_ = ring_slots_.size();
  epoch_active_ = true;
  had_epoch_ = true;
  cancel_.store(false);
  ++gen_;
  TryOpenAll();
  readers_cv_.notify_all();
  return Status::OK();
}

Status BatchPipeline::Next(BatchLease* out, bool* end_of_epoch) {
  *end_of_epoch = false;
  *out = BatchLease();  // give back the previous batch first: it may be the one we need
  const int64_t wall_start = tracer_ ? clock_->WallMicros() : 0;
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_.load()) return Status::Cancelled("pipeline: stopped");
  if (!epoch_active_) return Status::FailedPrecondition("pipeline: Next before StartEpoch");
  if (!epoch_error_.ok()) return epoch_error_;
  if (next_index_ >= num_batches_) {
    *end_of_epoch = true;
    return Status::OK();
  }
  const int64_t k = next_index_;
  if (ring_size_ == 0) return LeasedError(k);
  Slot* slot = ring_slots_[static_cast<size_t>(k) % ring_size_];
  if (inline_reads_ || mode_ == PipelineMode::kSync) {
    requested_ = k + 1;
    TryOpenAll();
  }
  if (inline_reads_) {
    if (slot->state == SlotState::kLeased) return LeasedError(k);
    if (slot->state != SlotState::kFilling || slot->k != k) {
      return Status::Internal("pipeline: batch ", k, " was not opened");
    }
    lock.unlock();
    const uint64_t first = static_cast<uint64_t>(k) * batch_size_;
    for (uint64_t j = 0; j < slot->count; ++j) {
      if (stopping_.load()) break;
      ProcessSample(first + j, slot, k, &consumer_dist_);
    }
    lock.lock();
    if (stopping_.load()) return Status::Cancelled("pipeline: stopped");
  } else {
    consumer_cv_.wait(lock, [&] {
      return stopping_.load() || slot->state == SlotState::kLeased ||
             (slot->k == k && slot->state == SlotState::kReady);
    });
    if (stopping_.load()) return Status::Cancelled("pipeline: stopped");
    if (slot->state == SlotState::kLeased) return LeasedError(k);
  }
  if (!slot->status.ok()) {
    // The epoch ends here; the error stays until the next StartEpoch.
    epoch_error_ = slot->status;
    slot->state = SlotState::kIdle;
    slot->next_k = -1;
    return epoch_error_;
  }
  slot->state = SlotState::kLeased;
  slot->next_k = k + static_cast<int64_t>(ring_size_);
  ++leased_;
  ++batches_delivered_;
  next_index_ = k + 1;
  delivered_ = next_index_;
  TryOpenAll();
  lock.unlock();
  if (tracer_) {
    TraceEvent event;
    event.name = "ai.dataloader.fetch";
    event.cat = "ai";
    event.start_us = wall_start;
    event.dur_us = clock_->WallMicros() - wall_start;
    event.epoch = static_cast<int64_t>(slot->epoch);
    event.step = k;
    event.index = k;
    event.ret = static_cast<int64_t>(slot->bytes);
    tracer_->Record(event);
  }
  *out = BatchLease(slot, this);
  return Status::OK();
}

void BatchPipeline::Recycle(Batch* batch) {
  Slot* slot = static_cast<Slot*>(batch);
  std::lock_guard<std::mutex> lock(mu_);
  assert(slot->state == SlotState::kLeased);
  pool_.Give(&slot->buffers, &slot->holds);
  slot->state = SlotState::kIdle;
  --leased_;
  if (TryOpen(slot)) readers_cv_.notify_all();
}

}  // namespace

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
