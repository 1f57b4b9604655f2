#include "pipeline/preload_store.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <thread>

#include "core/thread_name.h"

namespace dlio::pipeline_internal {
namespace {

constexpr int kIndexBits = 40;  // keys pack (file, index) into 64 bits

}  // namespace

bool PreloadStore::Key(const SampleRef& ref, uint64_t* key) {
  if (ref.index >> kIndexBits || ref.file >> (64 - kIndexBits)) return false;
  *key = (static_cast<uint64_t>(ref.file) << kIndexBits) | ref.index;
  return true;
}

Result<size_t> PreloadStore::Plan(const std::vector<SampleRef>& plan) {
  pending_.clear();
  for (const auto& [key, status] : failures_) {  // retry what failed before
    const SampleRef ref{static_cast<uint32_t>(key >> kIndexBits),
                        key & ((uint64_t{1} << kIndexBits) - 1)};
    pending_.push_back(Item{ref, key, index_.at(key)});
  }
  failures_.clear();
  for (const SampleRef& ref : plan) {
    uint64_t key = 0;
    if (!Key(ref, &key)) {
      return Status::OutOfRange("pipeline preload: sample ", ref.index, " of file ", ref.file,
                                " is beyond the supported range");
    }
    if (index_.count(key)) continue;
    index_.emplace(key, store_.size());
    store_.emplace_back();
    pending_.push_back(Item{ref, key, store_.size() - 1});
  }
  return pending_.size();
}

Status PreloadStore::Load(DataSource* source, uint64_t threads, const std::atomic<bool>& stop,
                          const Clock* clock, const ItemTrace& trace) {
  std::mutex failures_mu;
  std::atomic<size_t> cursor{0};
  auto load = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      const size_t i = cursor.fetch_add(1, std::memory_order_relaxed);
      if (i >= pending_.size()) return;
      const Item& item = pending_[i];
      const int64_t wall_start = trace ? clock->WallMicros() : 0;
      Status status = source->Read(item.ref, &store_[item.slot]);
      if (trace) {
        trace(item.ref, wall_start, clock->WallMicros(),
              status.ok() ? static_cast<int64_t>(store_[item.slot].size()) : -1);
      }
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(failures_mu);
        failures_.emplace(item.key, std::move(status));
      }
    }
  };
  const size_t n = std::min<size_t>(std::max<uint64_t>(1, threads), pending_.size());
  if (n <= 1) {
    load();
  } else {
    std::vector<std::thread> loaders;
    for (size_t t = 0; t < n; ++t) {
      loaders.emplace_back([&load, t] {
        NameThisThread("dlio-loader", t);
        load();
      });
    }
    for (auto& t : loaders) t.join();
  }
  pending_.clear();
  if (stop.load()) return Status::Cancelled("pipeline stopped while preloading");
  return Status::OK();
}

Status PreloadStore::Find(const SampleRef& ref, const SampleBuffer** out) const {
  uint64_t key = 0;
  if (!Key(ref, &key)) return Status::OutOfRange("sample reference out of range");
  if (!failures_.empty()) {
    auto failed = failures_.find(key);
    if (failed != failures_.end()) return failed->second;
  }
  auto it = index_.find(key);
  if (it == index_.end()) return Status::Internal("sample was not preloaded");
  *out = &store_[it->second];
  return Status::OK();
}

}  // namespace dlio::pipeline_internal
