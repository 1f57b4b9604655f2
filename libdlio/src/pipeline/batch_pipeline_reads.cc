// What the threads of a batch pipeline do to fill a batch: claim and read samples into their
// slot, record failures, complete the batch, preprocess (decode, emulated time) and, in preload
// mode, load the store.
#include <algorithm>
#include <array>
#include <cassert>
#include <utility>

#include "dlio/ai_events.h"
#include "pipeline/batch_pipeline_impl.h"

namespace dlio::pipeline_internal {

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
  if (k < 0 || k >= epoch_state_.num_batches() || k > first_error_.load(std::memory_order_relaxed))
    return false;
  if (inline_reads_ || mode_ == PipelineMode::kSync) return k < requested_;
  return k < delivered_ + static_cast<int64_t>(options_.prefetch_size + inflight_);
}

bool BatchPipeline::TryOpen(Slot* slot) {
  if (slot->state != SlotState::kIdle || !epoch_state_.active() || !Gate(slot->next_k)) {
    return false;
  }
  const int64_t k = slot->next_k;
  slot->k = k;
  slot->epoch = epoch_state_.epoch();
  slot->index = k;
  slot->count = epoch_state_.CountOf(k);
  slot->samples.resize(slot->count);  // within the reserved capacity: no allocation
  slot->bytes = 0;
  slot->read_ns = 0;
  if (!slot->status.ok()) slot->status = Status::OK();
  slot->remaining.store(slot->count, std::memory_order_relaxed);
  slot->state = SlotState::kFilling;
  slot->open_for.store(k, std::memory_order_release);
  return true;
}

bool BatchPipeline::TryOpenAll() {
  bool opened = false;
  for (auto& slot : slots_) opened |= TryOpen(slot.get());
  return opened;
}

Status BatchPipeline::LeasedError(int64_t k) const { return epoch_state_.LeasedError(k, ring_); }

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
    RunReads(reader, dist, own_buffers_ ? scratch_[reader].get() : nullptr);
    lock.lock();
    if (--active_ == 0) idle_cv_.notify_all();
  }
}

uint64_t ClaimRunLength(uint64_t claim_run_bytes, uint64_t read_threads, uint64_t last_bytes) {
  constexpr uint64_t kMaxClaim = 64;
  if (read_threads > 1 || last_bytes == 0 || claim_run_bytes <= last_bytes) return 1;
  return std::min(kMaxClaim, claim_run_bytes / last_bytes);
}

uint64_t BatchPipeline::ClaimSample(uint64_t* lane_next, Claim* claim) {
  if (options_.reader_lanes > 1) {
    const uint64_t s = *lane_next;
    *lane_next += options_.reader_lanes;
    return s;
  }
  if (claim->next < claim->end) return claim->next++;
  const uint64_t want =
      ClaimRunLength(options_.claim_run_bytes, options_.read_threads, claim->last_bytes);
  if (want == 1) return cursor_.fetch_add(1, std::memory_order_relaxed);
  // Up to `want` positions, none past the batch of the first or the plan's end.
  const uint64_t n_used = epoch_state_.n_used();
  uint64_t s = cursor_.load(std::memory_order_relaxed);
  uint64_t n = 0;
  do {
    if (s >= n_used) return s;  // the epoch's positions are all claimed
    const uint64_t batch_end = std::min(n_used, (s / batch_size_ + 1) * batch_size_);
    n = std::min(want, batch_end - s);
  } while (!cursor_.compare_exchange_weak(s, s + n, std::memory_order_relaxed));
  claim->next = s + 1;
  claim->end = s + n;
  return s;
}

void BatchPipeline::RunReads(size_t reader, Distribution* dist, ReadScratch* scratch) {
  uint64_t lane_next = reader;
  std::unique_ptr<DataSourceCursor> cursor = source_->NewCursor();  // this epoch's reads
  ReadRun run;
  Claim claim;
  while (!cancel_.load(std::memory_order_acquire)) {
    const uint64_t s = ClaimSample(&lane_next, &claim);
    if (s >= epoch_state_.n_used()) break;
    const int64_t k = static_cast<int64_t>(s / batch_size_);
    if (run.slot != nullptr && run.k != k) CloseRun(&run);
    if (k > first_error_.load(std::memory_order_acquire)) break;  // the epoch ends at batch k-
    Slot* slot = ring_slots_[static_cast<size_t>(k) % ring_size_];
    if (slot->open_for.load(std::memory_order_acquire) != k) {
      // Batch k is beyond the prefetch window or its pooled batch is still in use.
      std::unique_lock<std::mutex> lock(mu_);
      readers_cv_.wait(lock, [&] {
        return slot->open_for.load(std::memory_order_relaxed) == k || cancel_.load() ||
               k > first_error_.load(std::memory_order_relaxed);
      });
      if (slot->open_for.load(std::memory_order_relaxed) != k || cancel_.load()) break;
    }
    if (!time_runs_) {
      claim.last_bytes = ProcessSample(s, slot, k, dist, scratch, cursor.get());
      continue;
    }
    claim.last_bytes = ProcessInRun(s, slot, k, dist, scratch, cursor.get(), &run);
    if (scratch != nullptr && claim.next < claim.end) {
      ViewsInRun(s, slot, k, scratch, cursor.get(), &run, &claim);
    }
  }
  cursor.reset();  // before the last batch completes: the epoch may end with it
  CloseRun(&run);
}

Status BatchPipeline::Fetch(const SampleRef& ref, Slot* slot, uint64_t j, ReadScratch* scratch,
                            DataSourceCursor* cursor) {
  if (mode_ == PipelineMode::kPreload) {
    const SampleBuffer* stored = nullptr;
    DLIO_RETURN_NOT_OK(store_.Find(ref, &stored));
    slot->samples[j] = Sample{ref, stored->data(), stored->size()};
    slot->read_bytes[j] = stored->size();
    return Status::OK();
  }
  SampleBuffer& buffer =
      scratch != nullptr ? scratch->buffer() : pool_.Take(&slot->buffers, &slot->holds, j);
  const size_t capacity = buffer.capacity();
  Status status = source_->ReadWith(ref, &buffer, cursor);
  if (buffer.capacity() != capacity) {
    buffer_growths_.fetch_add(1, std::memory_order_relaxed);
    buffer_bytes_.fetch_add(buffer.capacity() - capacity, std::memory_order_relaxed);
  }
  slot->samples[j] = Sample{ref, buffer.data(), buffer.size()};
  slot->read_bytes[j] = buffer.size();
  if (scratch != nullptr && status.ok()) status = scratch->AfterRead();
  return status;
}

uint64_t BatchPipeline::ProcessSample(uint64_t s, Slot* slot, int64_t k, Distribution* dist,
                                      ReadScratch* scratch, DataSourceCursor* cursor) {
  const uint64_t j = s - static_cast<uint64_t>(k) * batch_size_;
  const SampleRef ref = epoch_state_.plan()[s];
  const bool trace_item = tracer_ && mode_ != PipelineMode::kPreload;
  const int64_t wall_start = trace_item ? clock_->WallMicros() : 0;
  const int64_t start = clock_->NowNanos();
  Status status = Fetch(ref, slot, j, scratch, cursor);
  const int64_t end = clock_->NowNanos();
  slot->read_start[j] = start;
  slot->read_end[j] = end;
  if (trace_item) {
    TraceEvent event = ai_events::AiSpan(ai_events::kDataCat, ai_events::kItem, wall_start,
                                         (end - start) / 1000, TraceEpoch(epoch_state_.epoch()),
                                         TraceStep(k), static_cast<int64_t>(ref.index));
    event.file_id = FileId(ref.file);
    event.ret = status.ok() ? static_cast<int64_t>(slot->samples[j].size) : -1;
    tracer_->Record(event);
  }
  if (status.ok() && !use_workers_) status = Preprocess(dist, slot, j);
  if (!status.ok()) RecordError(slot, k, ref, status);
  const uint64_t bytes = slot->read_bytes[j];  // the slot is the consumer's once completed
  if (slot->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) CompleteRead(slot);
  return bytes;
}

uint64_t BatchPipeline::ProcessInRun(uint64_t s, Slot* slot, int64_t k, Distribution* dist,
                                     ReadScratch* scratch, DataSourceCursor* cursor, ReadRun* run) {
  const uint64_t j = s - static_cast<uint64_t>(k) * batch_size_;
  if (run->slot == nullptr) {
    run->slot = slot;
    run->k = k;
    run->first_j = j;
    run->count = 0;
    run->start = clock_->NowNanos();
  }
  const SampleRef ref = epoch_state_.plan()[s];
  Status status = Fetch(ref, slot, j, scratch, cursor);
  slot->read_start[j] = std::numeric_limits<int64_t>::max();  // the run's ends carry its time
  slot->read_end[j] = std::numeric_limits<int64_t>::min();
  run->last_j = j;
  ++run->count;
  // No Preprocess: with time_runs_ it has nothing to do here (it runs on the workers, or is off
  // and untraced).
  if (!status.ok()) RecordError(slot, k, ref, status);
  return slot->read_bytes[j];
}

void BatchPipeline::ViewsInRun(uint64_t s, Slot* slot, int64_t k, ReadScratch* scratch,
                               DataSourceCursor* cursor, ReadRun* run, Claim* claim) {
  SampleBuffer& buffer = scratch->buffer();
  if (!buffer.has_view()) return;  // sample s was copied: nothing held to serve views of
  assert(claim->next == s + 1 && run->slot == slot);
  // The claimed positions after s that hold the next samples of s's file, in order.
  const std::vector<SampleRef>& plan = epoch_state_.plan();
  const uint64_t most = std::min<uint64_t>(claim->end - claim->next, kViewsAtOnce);
  uint64_t n = 0;
  while (n < most && plan[s + 1 + n] == SampleRef{plan[s].file, plan[s].index + 1 + n}) ++n;
  if (n == 0) return;
  std::array<SampleSpan, kViewsAtOnce> spans;
  const uint64_t got = source_->ViewsOfHeld(plan[s + 1], n, &buffer, cursor, spans.data());
  if (got == 0) return;
  const uint64_t j0 = s + 1 - static_cast<uint64_t>(k) * batch_size_;
  Sample* samples = slot->samples.data() + j0;
  uint64_t* bytes = slot->read_bytes.data() + j0;
  const SampleRef* refs = plan.data() + s + 1;
  for (uint64_t r = 0; r < got; ++r) {
    samples[r] = Sample{refs[r], spans[r].data, spans[r].size};
    bytes[r] = spans[r].size;
  }
  // As ProcessInRun leaves a run's samples: the run's ends carry its time.
  std::fill_n(slot->read_start.begin() + static_cast<std::ptrdiff_t>(j0), got,
              std::numeric_limits<int64_t>::max());
  std::fill_n(slot->read_end.begin() + static_cast<std::ptrdiff_t>(j0), got,
              std::numeric_limits<int64_t>::min());
  run->last_j = j0 + got - 1;
  run->count += got;
  claim->next += got;
  claim->last_bytes = spans[got - 1].size;
}

void BatchPipeline::CloseRun(ReadRun* run) {
  Slot* slot = run->slot;
  if (slot == nullptr) return;
  slot->read_start[run->first_j] = run->start;
  slot->read_end[run->last_j] = clock_->NowNanos();
  const uint64_t count = run->count;
  *run = ReadRun{};
  if (slot->remaining.fetch_sub(count, std::memory_order_acq_rel) == count) CompleteRead(slot);
}

void BatchPipeline::RecordError(Slot* slot, int64_t k, const SampleRef& ref, const Status& status) {
  const std::string path =
      ref.file < source_->num_files() ? source_->file_path(ref.file) : "<no such file>";
  Status with_context =
      status.WithContext(StrCat("pipeline: sample ", ref.index, " of file ", ref.file, " (", path,
                                ") in batch ", k, " of epoch ", epoch_state_.epoch()));
  std::lock_guard<std::mutex> lock(mu_);
  if (slot->status.ok()) slot->status = std::move(with_context);
  if (k < first_error_.load(std::memory_order_relaxed)) {
    first_error_.store(k, std::memory_order_release);
  }
  readers_cv_.notify_all();  // readers waiting on later batches give up
  // A consumer waiting for a run's last batch waits no more for a batch after the failed one.
  if (consumer_waits_on_ != nullptr) consumer_cv_.notify_all();
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
  std::unique_lock<std::mutex> lock(mu_);
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
    bool opened = false;
    const int64_t k = slot->k;
    const bool wake = MarkReady(slot, &opened);
    // Woken after the unlock, a thread finds the mutex free instead of blocking on it again;
    // the consumer polling for k (AwaitBatch) sees it after the unlock too, for the same reason.
    lock.unlock();
    slot->ready_for.store(k, std::memory_order_release);
    if (wake) consumer_cv_.notify_all();
    if (opened) readers_cv_.notify_all();
  }
}

bool BatchPipeline::DeliverLocked(Slot* slot, int64_t k) {
  slot->state = SlotState::kLeased;
  slot->next_k = k + static_cast<int64_t>(ring_size_);
  epoch_state_.Delivered(k);
  delivered_ = epoch_state_.next();
  return TryOpenAll();
}

bool BatchPipeline::MarkReady(Slot* slot, bool* opened) {
  slot->state = SlotState::kReady;
  if (consumer_waits_on_ != slot) return false;
  if (slot->status.ok() && slot->k == consumer_wants_ && !handed_off_) {
    *opened = DeliverLocked(slot, slot->k);
    handed_off_ = true;
  }
  return true;
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
      bool opened = false;
      const bool wake = MarkReady(slot, &opened);
      slot->ready_for.store(slot->k, std::memory_order_release);  // (mu_ held: the rarer path)
      if (wake) consumer_cv_.notify_all();
      if (opened) readers_cv_.notify_all();
    }
  }
}

Status BatchPipeline::Preprocess(Distribution* dist, Slot* slot, uint64_t j) {
  const int64_t wall_start = tracer_ ? clock_->WallMicros() : 0;
  if (!preprocess_enabled_) {
    // DLIO's reader traces a preprocess of every sample, an empty one included.
    TracePreprocess(slot, j, wall_start);
    return Status::OK();
  }
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
  }
  TracePreprocess(slot, j, wall_start);
  return Status::OK();
}

void BatchPipeline::TracePreprocess(const Slot* slot, uint64_t j, int64_t wall_start) {
  if (!tracer_) return;
  tracer_->Record(ai_events::AiSpan(ai_events::kDataCat, ai_events::kPreprocess, wall_start,
                                    clock_->WallMicros() - wall_start, TraceEpoch(slot->epoch),
                                    TraceStep(slot->index),
                                    static_cast<int64_t>(slot->samples[j].ref.index)));
}

Status BatchPipeline::LoadMissing(uint64_t epoch, const std::vector<SampleRef>& plan) {
  DLIO_ASSIGN_OR_RETURN(size_t reads, store_.Plan(plan));
  if (reads == 0) return Status::OK();
  {
    std::lock_guard<std::mutex> lock(mu_);
    buffers_allocated_ += reads;
    samples_read_ += reads;
  }
  PreloadStore::ItemTrace trace;
  if (tracer_) {
    trace = [this, epoch](const SampleRef& ref, int64_t start_us, int64_t end_us, int64_t ret) {
      TraceEvent event =
          ai_events::AiSpan(ai_events::kDataCat, ai_events::kItem, start_us, end_us - start_us,
                            TraceEpoch(epoch), -1, static_cast<int64_t>(ref.index));
      event.file_id = FileId(ref.file);
      event.ret = ret;
      tracer_->Record(event);
    };
  }
  return store_.Load(source_, options_.read_threads, stopping_, clock_, trace);
}

}  // namespace dlio::pipeline_internal
