// Pipeline: turns a sample order into batches, overlapping I/O with compute as a real loader does.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/data_source.h"
#include "dlio/distribution.h"
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
  int64_t index = 0;             // batch number within the epoch, from 0
  std::vector<Sample> samples;   // in plan order
  uint64_t bytes = 0;            // sum of sample sizes
  int64_t read_ns = 0;           // wall time from the first read of this batch to the last
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

struct PipelineOptions {
  std::string name = "threaded";  // threaded (overlap), sync (read then compute), preload (memory)
  uint64_t batch_size = 1;
  uint64_t read_threads = 1;         // 0: read on the caller's thread
  uint64_t computation_threads = 1;  // preprocessing workers (0: preprocessing inline)
  uint64_t prefetch_size = 2;        // ready batches buffered ahead of the consumer
  bool drop_last = true;             // drop the final partial batch of an epoch
  DistributionSpec preprocess_time;  // seconds per sample, spent by a preprocessing worker
  bool preprocess_spin = false;      // spin instead of sleep for preprocessing
  uint64_t seed = 0;                 // preprocessing-time draws derive from it
  int rank = 0;
};

// Thread safety: the methods are called from one consumer thread; internally the pipeline runs its
// own threads, which its destructor (and Stop) cancel and join.
class Pipeline {
 public:
  virtual ~Pipeline() = default;
  // Begins an epoch over `plan`. An epoch still running is cancelled first.
  virtual Status StartEpoch(uint64_t epoch, std::vector<SampleRef> plan) = 0;
  // Blocks until the next batch is ready. At the end of the epoch returns OK with
  // *end_of_epoch = true and an empty lease. A read or preprocessing error of a batch is
  // returned when that batch's turn comes (in order), never swallowed.
  virtual Status Next(BatchLease* out, bool* end_of_epoch) = 0;
  // Cancels work in flight and joins every thread. Idempotent.
  virtual Status Stop() = 0;
};

struct PipelineEnv {
  DataSource* source = nullptr;  // not owned; outlives the pipeline
  const Clock* clock = nullptr;
  Tracer* tracer = nullptr;
};

using PipelineFactory =
    std::function<Result<std::unique_ptr<Pipeline>>(const PipelineOptions&, const PipelineEnv&)>;

}  // namespace dlio
