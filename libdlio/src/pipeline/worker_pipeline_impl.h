// The pytorch pipeline's class (worker_pipeline.h), shared by worker_pipeline.cc (epochs and
// handing batches out) and worker_pool.cc (forking, talking to and ending worker processes).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "dlio/pipeline.h"
#include "pipeline/epoch_state.h"
#include "pipeline/pytorch_options.h"
#include "pipeline/worker_channel.h"

namespace dlio::pipeline_internal {

enum class WorkerSlotState { kFree, kDispatched, kReady, kLeased };

struct WorkerSlot : Batch {
  WorkerSlotState state = WorkerSlotState::kFree;
  int64_t k = -1;  // batch dispatched to / held by this slot
  Status status;   // the worker's verdict on batch k
  uint64_t count = 0;
  uint64_t region_size = 0;
  uint64_t known_size = 0;  // the region's size when batch k was sent (to count growths)
  SharedRegion region;
};

struct WorkerProc {
  pid_t pid = -1;
  int fd = -1;  // the main process's end of the socketpair
  Status lost;  // why the worker is gone, once it died
};

class WorkerPipeline final : public Pipeline, public BatchRecycler {
 public:
  WorkerPipeline(const PipelineOptions& options, const PipelineEnv& env, uint64_t prefetch_factor);
  ~WorkerPipeline() override;

  Status Init();
  Status StartEpoch(uint64_t epoch, std::vector<SampleRef> plan) override;
  Status Next(BatchLease* out, bool* end_of_epoch) override;
  Status Stop() override;
  PipelineStats stats() const override;
  void Recycle(Batch* batch) override;

 private:
  // worker_pipeline.cc
  WorkerSlot* SlotFor(int64_t k) const;
  // The ring a worker reads samples through (WorkerSetup::read_ring): when nothing is collated
  // from a sample the format streams, undecoded, a reader thread's 256 KiB
  // (ReadScratch::kRingBytes), whose pages stay in the core's cache as the threads' do; else the
  // bounded buffer's 1 MiB when it keeps a head of each sample (loader_.bounded_read_bytes);
  // else 0.
  uint64_t ReadRingBytes() const;
  Status DispatchAvailable();
  Status Dispatch(int64_t k, WorkerSlot* slot);
  Status WaitFor(int64_t k, WorkerSlot* slot);
  Status Deliver(int64_t k, WorkerSlot* slot, int64_t wall_start, BatchLease* out);
  Status Drain();
  // worker_pool.cc
  Status Spawn();
  Status Receive(size_t w);
  Status WorkerLost(size_t w, const std::string& when);
  void EndWorkers();

  const PipelineOptions options_;
  const PytorchLoaderOptions loader_;  // options_.sections' own section (pytorch_options.h)
  DataSource* const source_;
  Storage* const storage_;
  const Clock* const clock_;
  Tracer* const tracer_;  // nullptr unless tracing
  const Format* const decoder_;
  const uint64_t max_decoded_bytes_;
  const size_t workers_n_;
  const uint64_t prefetch_factor_;
  const size_t slots_per_worker_;
  // A worker copies samples' bytes into its batch's slot (deliver_sample_bytes, or the
  // framework's client costs): the worker's Collates().
  const bool collates_;

  mutable std::mutex
      mu_;  // held by every method but Stop's first step (so Stop can interrupt Next)
  std::atomic<bool> stopping_{false};
  int stop_fd_ = -1;  // eventfd Stop writes to wake a Next blocked in poll
  std::atomic<uint32_t>* stop_flags_ = nullptr;     // shared with the workers (MAP_SHARED page)
  std::vector<std::unique_ptr<WorkerSlot>> slots_;  // worker w's slot i at w * per + i
  // Worker w's read buffer (empty unless reserve_sample_bytes): allocated before the fork, so no
  // worker, persistent or forked again each epoch, faults in fresh memory for its reads.
  std::vector<std::unique_ptr<SharedRegion>> read_buffers_;
  std::vector<WorkerProc> procs_;
  bool running_ = false;  // worker processes exist

  EpochState epoch_state_;
  int64_t next_send_ = 0;  // next batch to send to a worker
  uint64_t samples_read_ = 0;
  uint64_t reserved_bytes_ = 0;
  uint64_t buffer_growths_ = 0;  // region growths seen here plus the workers' buffer growths
  uint64_t worker_read_buffer_bytes_ = 0;  // the largest WorkerResult::read_buffer_bytes
};

}  // namespace dlio::pipeline_internal
