// The preload pipeline's store: one buffer per distinct SampleRef ever planned, read once (by
// loader threads) when an epoch's plan first names it and kept for the pipeline's life; batches
// point into it. A failed read is remembered (its Status is what the sample's batch returns) and
// retried when the next epoch starts.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <vector>

#include "dlio/clock.h"
#include "dlio/data_source.h"
#include "dlio/format.h"
#include "dlio/status.h"

namespace dlio::pipeline_internal {

// Requires external synchronization: Plan and Load run while nothing calls Find; Find is then
// safe from many threads (it only reads).
class PreloadStore {
 public:
  // Called after each read when tracing: the read's wall-clock start and end (microseconds) and
  // its result (the bytes read, or -1).
  using ItemTrace =
      std::function<void(const SampleRef& ref, int64_t start_us, int64_t end_us, int64_t ret)>;

  // Queues every SampleRef of `plan` not stored yet, and those whose read failed before; returns
  // how many reads Load will make. OutOfRange for a reference beyond what the store can key.
  Result<size_t> Plan(const std::vector<SampleRef>& plan);
  // Makes the queued reads on min(threads, queued) threads (the caller's when 1), timed on
  // `clock`'s wall time for `trace`. Cancelled when `stop` became true meanwhile. A failed read is
  // not an error here: Find returns it.
  Status Load(DataSource* source, uint64_t threads, const std::atomic<bool>& stop,
              const Clock* clock, const ItemTrace& trace);
  // The stored sample `ref` (valid until the next Load), or the error its read failed with.
  Status Find(const SampleRef& ref, const SampleBuffer** out) const;

 private:
  struct Item {
    SampleRef ref;
    uint64_t key;
    size_t slot;
  };
  static bool Key(const SampleRef& ref, uint64_t* key);

  std::deque<SampleBuffer> store_;
  std::unordered_map<uint64_t, size_t> index_;  // key -> position in store_
  std::unordered_map<uint64_t, Status> failures_;
  std::vector<Item> pending_;
};

}  // namespace dlio::pipeline_internal
