// The body of one pytorch pipeline worker process (a fork of the main process): it reads whole
// batches, one command at a time, into its slots' shared regions, as a DataLoader worker runs
// its Dataset's __getitem__ over a batch of indices and collates the result into shared memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/data_source.h"
#include "dlio/distribution.h"
#include "dlio/format.h"
#include "dlio/storage.h"
#include "pipeline/worker_channel.h"

namespace dlio::pipeline_internal {

struct WorkerSetup {
  size_t worker = 0;                    // n of dlio-worker-n
  int channel = -1;                     // this worker's end of its socketpair
  std::vector<SharedRegion*> regions;   // its batch slots, by slot number
  SharedRegion* read_buffer = nullptr;  // memory to read samples into (null: the heap)
  // PytorchLoaderOptions::bounded_read_bytes (> 0: the worker reads into a BoundedReadBuffer
  // keeping that many bytes of each sample, read_buffer unused) and reserve_sample_bytes (its first
  // span).
  uint64_t bounded_read = 0;
  uint64_t read_span = 0;
  // > 0: the worker reads every sample through a BoundedReadBuffer of this ring (with
  // bounded_read's head when it collates, none otherwise) and read_buffer is unused
  // (WorkerPipeline::ReadRingBytes); 0: into read_buffer or the heap.
  uint64_t read_ring = 0;
  DataSource* source = nullptr;  // the process's copy (no file open at the fork)
  Storage* storage = nullptr;    // rebound here to the worker's own tracer (may be null)
  const Clock* clock = nullptr;
  const Format* decoder = nullptr;  // decode in the worker, as a Dataset's transform would
  uint64_t max_decoded_bytes = 0;
  // PipelineOptions::framework_client_costs, PytorchLoaderOptions::collate_limit_bytes and
  // PipelineOptions::deliver_sample_bytes.
  bool framework_client_costs = false;
  uint64_t collate_limit = 0;
  bool deliver = true;
  DistributionSpec preprocess_time;  // per sample, spent in the worker after its read
  bool preprocess_spin = false;
  uint64_t seed = 0;  // of the preprocessing draws
  int rank = 0;
  int nice = 0;  // added to the worker process's nice value (PipelineOptions::thread_nice)
  // Trace file "<trace_prefix>-worker-<worker>-<os pid>.pfw[.gz]"; "" = no trace.
  std::string trace_prefix;
  bool trace_gzip = false;
  // One flag per worker in memory shared with the main process: set, the worker stops before its
  // next sample (an early end of the run need not wait for the prefetched batches).
  const std::atomic<uint32_t>* stop_flag = nullptr;
  pid_t parent = 0;  // the main process (a worker whose parent died exits)
};

// Runs in the child right after fork; never returns (ends with _exit, so no destructor or atexit
// handler of the copied main process runs: no MPI call, no flush of the parent's buffers).
[[noreturn]] void RunWorkerProcess(const WorkerSetup& setup);

}  // namespace dlio::pipeline_internal
