// The epoch state machine of a Pipeline, shared by the batching engine (threaded, sync, preload:
// batch_pipeline_impl.h) and the pytorch worker pipeline (worker_pipeline_impl.h), so the rules
// Pipeline::Next documents live once: an epoch begins with a plan cut into batches, Next hands
// them out in order, an error ends the epoch and stays until the next StartEpoch, and leases are
// counted until their batch comes back.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "dlio/ai_events.h"
#include "dlio/clock.h"
#include "dlio/pipeline.h"
#include "dlio/tracer.h"

namespace dlio::pipeline_internal {

// Requires external synchronization: the owning pipeline's mutex guards every call. The plan,
// the epoch and n_used() change only in Begin, which the owner calls while none of its threads
// reads them (the batching engine's readers read them without the lock).
class EpochState {
 public:
  // StartEpoch's first check.
  static Status CheckStart(bool stopping) {
    if (stopping) return Status::FailedPrecondition("pipeline: StartEpoch after Stop");
    return Status::OK();
  }

  // Ends the epoch in progress: Next fails with FailedPrecondition until Activate.
  void Deactivate() { active_ = false; }
  // A new epoch `epoch` over `plan` in batches of `batch_size` (with `drop_last`, a last partial
  // batch is dropped): batch 0 is handed out next and the sticky error is cleared. Still
  // inactive: the owner calls Activate once its threads or workers may fill the batches. Returns
  // the previous epoch's plan, not freed (Pipeline::TakeSpentPlan).
  std::vector<SampleRef> Begin(uint64_t epoch, std::vector<SampleRef> plan, uint64_t batch_size,
                               bool drop_last) {
    std::vector<SampleRef> spent = std::move(plan_);
    plan_ = std::move(plan);
    batch_size_ = batch_size;
    const uint64_t n = plan_.size();
    num_batches_ =
        static_cast<int64_t>(drop_last ? n / batch_size : (n + batch_size - 1) / batch_size);
    n_used_ = std::min<uint64_t>(n, static_cast<uint64_t>(num_batches_) * batch_size);
    epoch_ = epoch;
    next_ = 0;
    error_ = Status::OK();
    return spent;
  }
  void Activate() { active_ = true; }

  // Next's checks, in Pipeline::Next's order: Cancelled once `stopping`, FailedPrecondition
  // before the first epoch, the epoch's sticky error, then the end of the epoch (OK with
  // *end_of_epoch). Otherwise OK with *k, the batch to hand out.
  Status CheckNext(bool stopping, bool* end_of_epoch, int64_t* k) const {
    *end_of_epoch = false;
    if (stopping) return Status::Cancelled("pipeline: stopped");
    if (!active_) return Status::FailedPrecondition("pipeline: Next before StartEpoch");
    if (!error_.ok()) return error_;
    *end_of_epoch = next_ >= num_batches_;
    *k = next_;
    return Status::OK();
  }
  // Ends the epoch with `status`, returned by every Next until the next Begin; returns it.
  Status Fail(Status status) {
    error_ = std::move(status);
    return error_;
  }
  // Batch k was handed out: batch k + 1 comes next, and k is leased until Released.
  void Delivered(int64_t k) {
    next_ = k + 1;
    ++leased_;
    ++batches_delivered_;
  }
  void Released() { --leased_; }
  // Next's refusal when batch k's pooled batch (one of `pooled`) is still leased by the caller.
  Status LeasedError(int64_t k, size_t pooled) const {
    return Status::FailedPrecondition(
        "pipeline: batch ", k, " needs a pooled batch that is still leased (", leased_, " of ",
        pooled, " batches held by the caller); release leases before calling Next");
  }

  bool active() const { return active_; }
  bool failed() const { return !error_.ok(); }
  uint64_t epoch() const { return epoch_; }
  const std::vector<SampleRef>& plan() const { return plan_; }
  int64_t num_batches() const { return num_batches_; }
  uint64_t n_used() const { return n_used_; }  // the plan's samples the batches hold
  int64_t next() const { return next_; }       // the batch Next hands out next
  // The samples of batch k (batch_size, or fewer for a last partial batch).
  uint64_t CountOf(int64_t k) const {
    return std::min<uint64_t>(batch_size_, n_used_ - static_cast<uint64_t>(k) * batch_size_);
  }
  int leased() const { return leased_; }
  uint64_t batches_delivered() const { return batches_delivered_; }

 private:
  std::vector<SampleRef> plan_;
  uint64_t batch_size_ = 1;
  uint64_t epoch_ = 0;
  bool active_ = false;
  int64_t num_batches_ = 0;
  uint64_t n_used_ = 0;
  int64_t next_ = 0;
  Status error_;
  int leased_ = 0;
  uint64_t batches_delivered_ = 0;
};

// Records Next's "fetch.iter" span (from `wall_start` until now) for batch `k` of `batch`'s epoch,
// its bytes read as ret; trace epochs and steps count from 1. Nothing without a tracer.
inline void RecordFetchIter(Tracer* tracer, const Clock* clock, int64_t wall_start,
                            const Batch& batch, int64_t k) {
  if (tracer == nullptr) return;
  TraceEvent event = ai_events::AiSpan(ai_events::kDataLoaderCat, ai_events::kFetchIter, wall_start,
                                       clock->WallMicros() - wall_start,
                                       static_cast<int64_t>(batch.epoch) + 1, k + 1, k);
  event.ret = static_cast<int64_t>(batch.bytes);
  tracer->Record(event);
}

}  // namespace dlio::pipeline_internal
