// The batching engine's class, shared by its two source files: batch_pipeline.cc (lifecycle,
// epochs, handing out batches) and batch_pipeline_reads.cc (what reader and preprocessing threads
// do to fill a batch). See batch_pipeline.h for how the engine works.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dlio/clock.h"
#include "dlio/distribution.h"
#include "pipeline/batch_pipeline.h"
#include "pipeline/buffer_pool.h"
#include "pipeline/epoch_state.h"
#include "pipeline/preload_store.h"
#include "pipeline/read_scratch.h"
#include "pipeline/spin_wait.h"

namespace dlio::pipeline_internal {

constexpr int64_t kNoError = std::numeric_limits<int64_t>::max();
constexpr int32_t kFileIdUnknown = std::numeric_limits<int32_t>::min();
constexpr uint64_t kMaxThreads = 1024;
constexpr uint64_t kViewsAtOnce = 64;  // samples ViewsInRun serves at once (a claim's most)

// StartEpoch's epochs and the batch numbers k count from 0 (they seed the sampler and index the
// ring); trace events count epochs and steps from 1, as DLIO's and the runner's own events do.
inline int64_t TraceEpoch(uint64_t epoch) { return static_cast<int64_t>(epoch) + 1; }
inline int64_t TraceStep(int64_t k) { return k + 1; }

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
  // The batch last marked ready here, stored after mu_ is released: what Next polls for before
  // it sleeps (a hint only; Next then checks the state under mu_).
  std::atomic<int64_t> ready_for{-1};
  std::vector<int64_t> read_start, read_end;  // per sample, written by its reader only
  std::vector<uint64_t> read_bytes;           // per sample: bytes read (before any decode)
  std::vector<uint8_t> holds;                 // per sample: buffers[j] came from the free list
  std::vector<SampleBuffer> decoded;          // per sample, when the pipeline decodes
};

// Samples of one batch that one reader read in a row while their reads are not timed one by one
// (BatchPipeline::time_runs_): the run is timed once, from before its first read to after its
// last, and counted off the batch's `remaining` at once. Its first sample gets the start, its last
// the end, the others times that change neither the batch's first start nor its last end.
struct ReadRun {
  Slot* slot = nullptr;  // nullptr: no run open
  int64_t k = -1;
  uint64_t first_j = 0, last_j = 0, count = 0;
  int64_t start = 0;
};

// The plan positions a reader claimed from the shared cursor and has not read yet: [next, end),
// all of one batch (PipelineOptions::claim_run_bytes), and the size of its last sample read.
struct Claim {
  uint64_t next = 0, end = 0;
  uint64_t last_bytes = 0;  // 0: none read yet
};

// How many positions one claim from the shared cursor takes after a sample of `last_bytes`
// (PipelineOptions::claim_run_bytes): up to claim_run_bytes of them, at most 64, with one reader
// thread only. Several readers claim one position at a time, so that storage sees the positions
// in plan order, as before: runs claimed by each would interleave (fit takes a reader's in-order
// reads interleaved with another's for a shuffle). 1 when the size is unknown or larger.
uint64_t ClaimRunLength(uint64_t claim_run_bytes, uint64_t read_threads, uint64_t last_bytes);

class BatchPipeline final : public Pipeline, public BatchRecycler {
 public:
  BatchPipeline(PipelineMode mode, const PipelineOptions& options, const PipelineEnv& env);
  ~BatchPipeline() override;

  void StartThreads();
  // The pool's buffers, or (own_buffers_) each reader's ReadScratch, get reserve_sample_bytes.
  Status ReserveBuffers();
  Status StartEpoch(uint64_t epoch, std::vector<SampleRef> plan) override;
  std::vector<SampleRef> TakeSpentPlan() override;
  Status Next(BatchLease* out, bool* end_of_epoch) override;
  Status Stop() override;
  PipelineStats stats() const override;
  void Recycle(Batch* batch) override;

 private:
  void ReaderLoop(size_t reader);
  // Reads the epoch's samples from the shared cursor, or (options_.reader_lanes) reader `reader`'s
  // positions reader, reader + lanes, ...
  void RunReads(size_t reader, Distribution* dist, ReadScratch* scratch);
  // The next sample position a reader reads (`lane_next`: its own cursor with lanes; `claim`:
  // what it claimed from the shared cursor before).
  uint64_t ClaimSample(uint64_t* lane_next, Claim* claim);
  void WorkerLoop(size_t worker);
  // `scratch`: the calling thread's buffer when own_buffers_ (else null: the pool's buffers).
  // `cursor`: the calling thread's DataSourceCursor (or null). Returns the bytes read.
  uint64_t ProcessSample(uint64_t s, Slot* slot, int64_t k, Distribution* dist,
                         ReadScratch* scratch, DataSourceCursor* cursor);
  // Next's reads of batch k on the consumer's thread (inline_reads_).
  void ReadInline(Slot* slot, int64_t k);
  // ProcessSample within `run` (time_runs_): sample s joins the run, which must be of batch k
  // or closed.
  uint64_t ProcessInRun(uint64_t s, Slot* slot, int64_t k, Distribution* dist, ReadScratch* scratch,
                        DataSourceCursor* cursor, ReadRun* run);
  // After ProcessInRun of sample s: the claimed samples that follow s in its file and lie in
  // what the thread's buffer holds of s (a parquet row group) join the run as views of it, served
  // at once (DataSource::ViewsOfHeld, at most kViewsAtOnce) instead of one ReadWith each, with
  // the same bytes, sizes and requests (none). The rest are read one by one as before.
  void ViewsInRun(uint64_t s, Slot* slot, int64_t k, ReadScratch* scratch, DataSourceCursor* cursor,
                  ReadRun* run, Claim* claim);
  // Times the end of `run`, counts its samples off its batch (completing it when they were the
  // last) and leaves it closed. Nothing when no run is open.
  void CloseRun(ReadRun* run);
  Status Fetch(const SampleRef& ref, Slot* slot, uint64_t j, ReadScratch* scratch,
               DataSourceCursor* cursor);
  void RecordError(Slot* slot, int64_t k, const SampleRef& ref, const Status& status);
  void CompleteRead(Slot* slot);
  Status Preprocess(Distribution* dist, Slot* slot, uint64_t j);
  // Records sample j's "preprocess" event (from wall_start until now) when tracing.
  void TracePreprocess(const Slot* slot, uint64_t j, int64_t wall_start);
  bool Gate(int64_t k) const;
  bool TryOpen(Slot* slot);
  // TryOpen of every slot; true when one opened (the caller wakes the readers, after unlocking).
  bool TryOpenAll();
  // Hands batch k in `slot` to the consumer (mu_ held): leased, counted delivered, and the
  // slots the prefetch window now admits opened (true when one was: the caller wakes the readers).
  bool DeliverLocked(Slot* slot, int64_t k);
  // A filled batch is ready (mu_ held). When the consumer sleeps in Next on it, the completing
  // thread delivers it in the consumer's stead (a failed batch is left to the consumer), so the
  // window moves when the batch is ready rather than when the woken consumer gets a CPU; returns
  // whether the consumer must be woken (the only batch that wakes it). *opened as DeliverLocked.
  bool MarkReady(Slot* slot, bool* opened);
  // Next's wait for batch k in `slot` (mu_ held by `lock`): a bounded poll of the slot's
  // ready_for (consumer_spin_) with mu_ released when the batch is not there yet, then the
  // sleep on consumer_cv_ until it is delivered, ready, leased or the pipeline stops.
  // With batches_per_wake_ > 1 and no spare CPU for the poll that sleep first lasts until the
  // last batch of k's run is filled too (LastOfRun), or a read fails before it.
  void AwaitBatch(std::unique_lock<std::mutex>* lock, Slot* slot, int64_t k);
  // The last batch of the run the consumer, about to sleep for batch k, waits for (mu_ held):
  // k, or the last of the batches after k opened in a row (filled by the readers without the
  // consumer taking any), at most batches_per_wake_ in all. Any later batch may not be opened
  // before k is taken.
  int64_t LastOfRun(int64_t k) const;
  bool BatchThere(const Slot* slot, int64_t k) const;
  Status LeasedError(int64_t k) const;
  // Reads the samples of `plan` the preload store lacks (epoch `epoch`'s, for the trace).
  Status LoadMissing(uint64_t epoch, const std::vector<SampleRef>& plan);
  int32_t FileId(uint32_t file);

  const PipelineMode mode_;
  const PipelineOptions options_;
  DataSource* const source_;
  const Clock* const clock_;
  Tracer* const tracer_;         // nullptr unless tracing is enabled
  const Format* const decoder_;  // nullptr unless samples are decoded
  const uint64_t max_decoded_bytes_;
  const uint64_t batch_size_;
  // The pipeline's threads a batch the consumer takes may wake (its readers, none when the
  // consumer reads inline, and its preprocessing threads): a consumer that polls beside them all
  // needs a CPU of its own, or it takes one from a reader its take has just let go on.
  uint64_t ThreadsATakeMayWake() const;
  const bool inline_reads_;  // the consumer reads in Next
  const bool preprocess_enabled_;
  const bool use_workers_;  // preprocessing on computation threads (else inline after the read)
  // Nothing is traced and nothing but the reads runs on a reader between its samples: a run of
  // one batch's samples read in a row is timed once instead of each sample (ReadRun).
  const bool time_runs_;
  // PipelineOptions::deliver_sample_bytes false, no client costs, no decoding: every thread reads
  // into its own ReadScratch and the pool's buffers stay empty.
  const bool own_buffers_;
  const uint64_t inflight_;  // batches being filled beyond the prefetched ones
  const size_t ring_;
  // PipelineOptions::consumer_wakes_per_run: half the prefetch window (prefetch_size +
  // inflight_), else 1 (the consumer is woken by the batch it waits for).
  const int64_t batches_per_wake_;

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
  std::vector<SampleRef> spent_plan_;  // the epoch before the current one's (TakeSpentPlan)
  uint64_t gen_ = 0;  // bumped by every StartEpoch; parked readers wait for it to change
  int active_ = 0;    // readers inside an epoch plus workers preprocessing a sample
  bool had_epoch_ = false;
  // The plan, epoch and batch count: changed (Begin) only while every thread is parked.
  EpochState epoch_state_;
  std::atomic<uint64_t> cursor_{0};
  std::atomic<int64_t> first_error_{kNoError};
  int64_t delivered_ = 0;
  // The slot whose batch wakes Next (the batch it waits for, or the last of its run), else null.
  Slot* consumer_waits_on_ = nullptr;
  int64_t consumer_wants_ = -1;  // the batch Next waits for (its own slot's)
  bool handed_off_ = false;      // that batch was delivered by the thread that filled it
  // Next's polls (the consumer's thread only): while the host has a spare CPU beside the
  // pipeline's threads (ThreadsATakeMayWake).
  SpinBeforeSleep consumer_spin_;
  int64_t requested_ = 0;
  std::vector<Slot*> pp_ring_;
  size_t pp_head_ = 0, pp_count_ = 0;

  BufferPool pool_;  // sample buffers not in use
  // own_buffers_: one per reader thread, then the consumer's (inline reads).
  std::vector<std::unique_ptr<ReadScratch>> scratch_;

  // Counters.
  uint64_t buffers_allocated_ = 0;
  uint64_t reserved_bytes_ = 0;
  std::atomic<uint64_t> buffer_growths_{0}, buffer_bytes_{0};
  uint64_t samples_read_ = 0;

  PreloadStore store_;  // preload mode; changed only while every thread is parked

  std::vector<std::thread> threads_;
  std::mutex join_mu_;
  bool joined_ = false;
};

}  // namespace dlio::pipeline_internal
