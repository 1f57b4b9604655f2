// TieredCache (dlio/cache.h): the index of copies, capacity accounting, placement and eviction.
// Tiers' bytes live in cache/tier_store.cc; the policies in cache/cache_policy.cc.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "cache/cache_file.h"
#include "cache/cache_policy.h"
#include "cache/tier_store.h"
#include "dlio/cache.h"

namespace dlio {
namespace {

using cache_internal::CachePolicy;
using cache_internal::LevelCounters;
using cache_internal::PolicyCapabilities;
using cache_internal::Prefetch;
using cache_internal::SourceStat;
using cache_internal::TierCopy;
using cache_internal::TierStore;

// How many upcoming files the clairvoyant policy considers after each open, and how many of them
// that need an eviction it weighs (each weighs every copy in a tier).
constexpr size_t kPlanWindow = 512;
constexpr int kPlanEvictionSearches = 16;

// A file's copy in one tier: reserved while it is being made, complete once it can be served.
struct Entry {
  int tier = -1;
  bool complete = false;
  bool started = false;     // a thread is making the copy (else it waits in its tier's queue)
  uint64_t size = 0;        // bytes reserved in the tier
  uint64_t generation = 0;  // tells a copy whose entry was dropped meanwhile from the current one
  SourceStat stat;          // the source when the copy started
  TierCopy copy;            // complete: where the bytes are
};

struct CopyJob {
  std::string path;
  int tier = -1;
  uint64_t generation = 0;
  uint64_t size = 0;
};

struct Tier {
  std::unique_ptr<TierStore> store;
  uint64_t used = 0;  // complete copies and reservations
  uint64_t peak = 0;
  std::unordered_set<std::string> resident;  // complete copies
  std::unordered_set<std::string> failed;    // files whose copy into this tier failed
  bool warned = false;                       // the first failed copy was reported
  std::deque<CopyJob> queue;
  std::vector<std::thread> workers;
  LevelCounters counters;
};

class TieredCacheImpl final : public TieredCache {
 public:
  TieredCacheImpl(CacheOptions options, Storage* source)
      : options_(std::move(options)),
        source_(source),
        host_files_(source->capabilities().host_files),
        policy_(cache_internal::MakeCachePolicy(options_.policy)),
        uses_future_(policy_->capabilities().uses_future) {}

  ~TieredCacheImpl() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (auto& tier : tiers_) {
      for (auto& worker : tier->workers) worker.join();
    }
    for (auto& [path, entry] : entries_) {
      if (entry.complete) tiers_[entry.tier]->store->Discard(entry.copy);
    }
  }

  Status Start() {
    for (const CacheTierOptions& spec : options_.tiers) {
      auto tier = std::make_unique<Tier>();
      DLIO_ASSIGN_OR_RETURN(tier->store,
                            cache_internal::OpenTierStore(spec, static_cast<int>(tiers_.size())));
      tiers_.push_back(std::move(tier));
    }
    for (size_t t = 0; t < tiers_.size(); ++t) {
      for (uint64_t i = 0; i < std::max<uint64_t>(1, options_.tiers[t].threads); ++i) {
        tiers_[t]->workers.emplace_back([this, t] { CopyLoop(static_cast<int>(t)); });
      }
    }
    return Status::OK();
  }

  Result<std::unique_ptr<File>> Open(const std::string& path, const FileOptions& options) override {
    std::unique_ptr<File> file;
    DLIO_RETURN_NOT_OK(Serve(path, [&](const Entry& entry) {
                         Tier& tier = *tiers_[entry.tier];
                         auto copy = tier.store->OpenCopy(path, entry.copy, &tier.counters);
                         if (copy.ok()) file = std::move(copy).value();
                         return copy.ok();
                       }).status());
    if (file != nullptr) return file;
    DLIO_ASSIGN_OR_RETURN(file, source_->Open(path, OpenMode::kRead, options));
    return cache_internal::NewCountedFile(path, std::move(file), &source_counters_);
  }

  Result<CacheHandoff> OpenForHandoff(const std::string& path) override {
    CacheHandoff handoff;
    DLIO_ASSIGN_OR_RETURN(Outcome outcome, Serve(path, [&](const Entry& entry) {
                            auto fd = tiers_[entry.tier]->store->OpenCopyFd(path, entry.copy);
                            if (!fd.ok()) return false;
                            handoff.fd = std::move(fd).value();
                            handoff.tier = entry.tier;
                            return true;
                          }));
    handoff.size = outcome.stat.size;
    handoff.mtime_ns = outcome.stat.mtime_ns;
    handoff.read_through = outcome.read_through;
    handoff.source_dev = outcome.stat.dev;
    handoff.source_ino = outcome.stat.ino;
    return handoff;
  }

  void CreditRead(int tier, uint64_t bytes) override {
    LevelCounters& counters = tier >= 0 && tier < static_cast<int>(tiers_.size())
                                  ? tiers_[tier]->counters
                                  : source_counters_;
    cache_internal::SaturatingAdd(counters.bytes_served, bytes);
  }

  void Invalidate(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    sizes_.erase(path);
    Drop(path);
  }

  void SetFutureAccesses(std::vector<std::string> paths) override {
    std::lock_guard<std::mutex> lock(mu_);
    policy_->SetFutureAccesses(std::move(paths));
    Plan();
  }

  void WaitIdle() override {
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait(lock, [this] { return in_flight_ == 0; });
  }

  CacheStats Stats() const override { return Snapshot(false); }
  CacheStats TakeStats() override { return Snapshot(true); }
  CachePolicyKind policy() const override { return options_.policy; }
  bool uses_future_accesses() const override { return uses_future_; }

 private:
  // Opens the copy an entry holds for the reader (Open: a File; OpenForHandoff: a descriptor);
  // false when it cannot (the copy is then dropped). Called with mu_ held.
  using Opener = std::function<bool(const Entry&)>;
  struct Outcome {
    SourceStat stat;            // the source's, as seen by this open
    bool read_through = false;  // served by a copy made (or finished) during the open
  };

  // The policy's part of an open of `path`: drops a stale copy, counts the hit or miss, places the
  // file and hands the complete copy that serves the open to `open_copy`; when none does (it is
  // not called, or returned false) the caller reads the source.
  Result<Outcome> Serve(const std::string& path, const Opener& open_copy) {
    Outcome outcome;
    DLIO_ASSIGN_OR_RETURN(outcome.stat, cache_internal::StatSource(source_, host_files_, path));
    const SourceStat& stat = outcome.stat;
    std::unique_lock<std::mutex> lock(mu_);
    sizes_[path] = stat.size;
    auto it = entries_.find(path);
    if (it != entries_.end() && it->second.complete && !(it->second.stat == stat)) {
      tiers_[it->second.tier]->counters.invalidations.fetch_add(1, std::memory_order_relaxed);
      Emit("cache.invalidate", path, it->second.tier, it->second.size);
      Drop(path);
      it = entries_.end();
    }
    policy_->OnOpen(path);  // after any Drop, which makes the policy forget the path
    if (it != entries_.end() && it->second.complete && ServeCopy(path, it->second, open_copy)) {
      Plan();
      return outcome;
    }
    for (auto& tier : tiers_) tier->counters.misses.fetch_add(1, std::memory_order_relaxed);
    source_counters_.hits.fetch_add(1, std::memory_order_relaxed);
    Emit("cache.miss", path, -1, stat.size);
    outcome.read_through = ReadThrough(path, stat.size, lock, open_copy);
    Plan();
    return outcome;
  }

  // A miss of `path` the policy serves from a copy: one this thread makes now (copy_on_open, or
  // a queued copy it takes over), or one in progress it waits for (wait_for_copy). Otherwise it
  // may queue a background copy and returns false: the source serves the open. Requires mu_
  // (held by `lock`, released while copying or waiting).
  bool ReadThrough(const std::string& path, uint64_t size, std::unique_lock<std::mutex>& lock,
                   const Opener& open_copy) {
    const PolicyCapabilities caps = policy_->capabilities();
    auto it = entries_.find(path);
    CopyJob job;
    if (it != entries_.end()) {  // a copy in progress or queued
      if (!caps.wait_for_copy) return false;
      const uint64_t generation = it->second.generation;
      if (it->second.started) {
        copied_cv_.wait(lock, [&] {
          auto e = entries_.find(path);
          return e == entries_.end() || e->second.generation != generation || e->second.complete;
        });
        return ServePlaced(path, open_copy);
      }
      job = TakeQueued(it->second.tier, path, generation);
    } else {
      if (!caps.place_on_miss || !policy_->WorthPlacing(path)) return false;
      const int tier = ChooseTier(path, size, caps.evicts);
      if (tier < 0) return false;
      job = Reserve(path, tier, size);
      if (!caps.copy_on_open) {
        Enqueue(std::move(job));
        return false;
      }
    }
    entries_.at(path).started = true;
    lock.unlock();
    Copy(job);
    lock.lock();
    return ServePlaced(path, open_copy);
  }

  // Serves the complete copy of `path` just placed (its open already counted); false if none.
  bool ServePlaced(const std::string& path, const Opener& open_copy) {
    auto placed = entries_.find(path);
    if (placed == entries_.end() || !placed->second.complete) return false;
    const int tier = placed->second.tier;
    if (!ServeCopy(path, placed->second, open_copy, /*count_hit=*/false)) return false;
    tiers_[tier]->counters.read_through.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  // Removes the queued copy of `path` (`generation`) from `tier`'s queue, for the caller to make.
  CopyJob TakeQueued(int tier, const std::string& path, uint64_t generation) {
    auto& queue = tiers_[tier]->queue;
    for (auto q = queue.begin(); q != queue.end(); ++q) {
      if (q->path == path && q->generation == generation) {
        CopyJob job = std::move(*q);
        queue.erase(q);
        return job;
      }
    }
    return CopyJob{path, tier, generation, entries_.at(path).size};  // not queued: unreachable
  }

  // Hands the complete copy `entry` of `path` to `open_copy`, counting a hit there and a miss in
  // the faster tiers; false (the copy dropped) when it cannot be opened. Requires mu_.
  bool ServeCopy(const std::string& path, const Entry& entry, const Opener& open_copy,
                 bool count_hit = true) {
    Tier& tier = *tiers_[entry.tier];
    if (!open_copy(entry)) {
      Drop(path);
      return false;
    }
    if (count_hit) {
      tier.counters.hits.fetch_add(1, std::memory_order_relaxed);
      Emit("cache.hit", path, entry.tier, entry.size);
      for (int t = 0; t < entry.tier; ++t) {
        tiers_[t]->counters.misses.fetch_add(1, std::memory_order_relaxed);
      }
    }
    return true;
  }

  // The tier to place a file of `size` bytes in: the first with room, else (when the policy
  // evicts) the first where evicting files of higher rank makes room; -1 when none. A file larger
  // than a tier is counted there and skipped. Requires mu_.
  int ChooseTier(const std::string& path, uint64_t size, bool evicts) {
    bool fits_some = false;
    for (size_t t = 0; t < tiers_.size(); ++t) {
      if (size > tiers_[t]->store->capacity()) {
        tiers_[t]->counters.skipped_too_big.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      if (tiers_[t]->failed.count(path) != 0) continue;  // its copy failed here once
      fits_some = true;
      if (tiers_[t]->store->capacity() - tiers_[t]->used >= size) return static_cast<int>(t);
    }
    if (!evicts || !fits_some) return -1;
    const double rank = policy_->EvictionRank(path);
    for (size_t t = 0; t < tiers_.size(); ++t) {
      if (size <= tiers_[t]->store->capacity() && tiers_[t]->failed.count(path) == 0 &&
          MakeRoom(static_cast<int>(t), size, rank)) {
        return static_cast<int>(t);
      }
    }
    return -1;
  }

  // Evicts complete copies of rank above `rank`, highest first, until `size` bytes are free in
  // `tier`; evicts nothing and returns false when that cannot free enough. Requires mu_.
  bool MakeRoom(int tier, uint64_t size, double rank) {
    Tier& t = *tiers_[tier];
    std::vector<std::pair<double, const std::string*>> candidates;
    for (const std::string& path : t.resident) {
      const double r = policy_->EvictionRank(path);
      if (r > rank) candidates.emplace_back(r, &path);
    }
    // Highest rank first; ties by path, so evictions are deterministic.
    std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : *a.second > *b.second;
    });
    uint64_t free = t.store->capacity() - t.used;
    size_t take = 0;
    while (free < size && take < candidates.size()) {
      free += entries_.at(*candidates[take].second).size;
      ++take;
    }
    if (free < size) return false;
    std::vector<std::string> victims;
    for (size_t i = 0; i < take; ++i) victims.push_back(*candidates[i].second);
    for (const std::string& victim : victims) Evict(tier, victim);
    return true;
  }

  // Removes the complete copy of `path` from `tier` to make room. Requires mu_.
  void Evict(int tier, const std::string& path) {
    tiers_[tier]->counters.evictions.fetch_add(1, std::memory_order_relaxed);
    if (options_.on_evict) options_.on_evict(tier, path);
    Emit("cache.evict", path, tier, entries_.at(path).size);
    Drop(path);
  }

  // Reports an event to options_.on_event (traces).
  void Emit(const char* name, const std::string& path, int tier, uint64_t bytes,
            int64_t dur_ns = 0) const {
    if (options_.on_event) options_.on_event(CacheEvent{name, &path, tier, bytes, dur_ns});
  }

  // Counts `size` bytes of `path` against `tier` and records the copy in progress. Requires mu_.
  CopyJob Reserve(const std::string& path, int tier, uint64_t size) {
    Tier& t = *tiers_[tier];
    t.used += size;
    t.peak = std::max(t.peak, t.used);
    Entry& entry = entries_[path];
    entry = Entry{};
    entry.tier = tier;
    entry.size = size;
    entry.generation = ++generation_;
    ++in_flight_;
    return CopyJob{path, tier, entry.generation, size};
  }

  void Enqueue(CopyJob job) {
    tiers_[job.tier]->queue.push_back(std::move(job));
    work_cv_.notify_all();
  }

  // Removes `path`'s entry: a complete copy is discarded and its bytes freed; a copy in progress
  // is left to its copier, which finds its entry gone and frees its reservation. Requires mu_.
  void Drop(const std::string& path) {
    auto it = entries_.find(path);
    if (it == entries_.end()) return;
    Entry entry = std::move(it->second);
    entries_.erase(it);
    policy_->OnRemoved(path);
    if (!entry.complete) return;
    Tier& t = *tiers_[entry.tier];
    t.resident.erase(path);
    t.used -= entry.size;
    t.store->Discard(entry.copy);
  }

  // Makes the copy of `job` (without mu_), then records it as complete, or frees its reservation
  // when it failed, the source changed or the entry was dropped meanwhile.
  void Copy(const CopyJob& job) {
    Tier& t = *tiers_[job.tier];
    auto before = cache_internal::StatSource(source_, host_files_, job.path);
    Result<TierCopy> copy = Status::Cancelled("not copied");
    const auto copy_start = std::chrono::steady_clock::now();
    bool attempted = false;
    if (before.ok() && before->size != job.size) {
      std::lock_guard<std::mutex> lock(mu_);
      sizes_[job.path] = before->size;  // placed by an older size: plan with the new one
    } else if (before.ok()) {
      attempted = true;
      copy = t.store->MakeCopy(source_, job.path, job.size, cache_internal::CopyModeOf(*before),
                               options_.copy_chunk_bytes, &stop_);
    }
    bool changed = false;
    if (copy.ok()) {
      auto after = cache_internal::StatSource(source_, host_files_, job.path);
      changed = !after.ok() || !(*after == *before);
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(job.path);
    const bool current = it != entries_.end() && it->second.generation == job.generation;
    if (copy.ok() && !changed && current) {
      it->second.complete = true;
      it->second.stat = *before;
      it->second.copy = std::move(copy).value();
      t.resident.insert(job.path);
      t.counters.bytes_copied.fetch_add(job.size, std::memory_order_relaxed);
      t.counters.files_copied.fetch_add(1, std::memory_order_relaxed);
      Emit("cache.copy", job.path, job.tier, job.size,
           std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                copy_start)
               .count());
    } else {
      if (copy.ok()) t.store->Discard(*copy);
      if (attempted && !copy.ok() && copy.status().code() != StatusCode::kCancelled) {
        Failed(job, copy.status());
      }
      if (changed) {
        t.counters.invalidations.fetch_add(1, std::memory_order_relaxed);
        Emit("cache.invalidate", job.path, job.tier, job.size);
      }
      if (current) {
        entries_.erase(it);
        policy_->OnRemoved(job.path);
      }
      t.used -= job.size;
    }
    copied_cv_.notify_all();
    if (--in_flight_ == 0) idle_cv_.notify_all();
  }

  // Counts a copy that failed in its tier, which the file is not placed in again (a full file
  // system would fail it at every open); the tier's first failure is a warning. Requires mu_.
  void Failed(const CopyJob& job, const Status& status) {
    Tier& t = *tiers_[job.tier];
    t.counters.failed_copies.fetch_add(1, std::memory_order_relaxed);
    t.failed.insert(job.path);
    if (t.warned) return;
    t.warned = true;
    cache_internal::WarnCopyFailed(options_, job.tier, t.store->name(), job.path, status);
  }

  void CopyLoop(int tier) {
    Tier& t = *tiers_[tier];
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      work_cv_.wait(lock, [&] { return stop_ || !t.queue.empty(); });
      if (stop_) break;
      CopyJob job = std::move(t.queue.front());
      t.queue.pop_front();
      auto it = entries_.find(job.path);
      if (it != entries_.end() && it->second.generation == job.generation) {
        it->second.started = true;
      }
      lock.unlock();
      Copy(job);
      lock.lock();
    }
    // Queued copies never started: free their reservations.
    for (const CopyJob& job : t.queue) {
      auto it = entries_.find(job.path);
      if (it != entries_.end() && it->second.generation == job.generation) entries_.erase(it);
      t.used -= job.size;
      --in_flight_;
    }
    t.queue.clear();
    idle_cv_.notify_all();
  }

  // Prefetches the policy's upcoming files (clairvoyant), soonest first, making exactly the
  // replacements Belady's MIN makes on demand, each as early as possible: Cao et al.'s
  // "conservative" integrated prefetching and caching (SIGMETRICS 1995), which fetches no more
  // than MIN. Files MIN would not keep are skipped (read from the source when opened); planning
  // stops at the first file whose MIN victim cannot leave yet (it is read before that file, or its
  // copy is in progress). Requires mu_.
  void Plan() {
    if (!uses_future_ || stop_) return;
    int searches = 0;
    for (const cache_internal::UpcomingFile& upcoming : policy_->Upcoming(kPlanWindow)) {
      const std::string& path = *upcoming.path;
      if (entries_.count(path) != 0) continue;
      auto size = SizeOf(path);
      if (!size.ok()) continue;
      bool fits_some = false;
      for (const auto& tier : tiers_) fits_some |= *size <= tier->store->capacity();
      if (!fits_some) {
        if (too_big_.insert(path).second) (void)ChooseTier(path, *size, false);
        continue;
      }
      const Prefetch verdict = PlanPrefetch(path, *size, upcoming.position, &searches);
      if (verdict == Prefetch::kBlocked || searches >= kPlanEvictionSearches) break;
    }
  }

  // Queues a copy of `path` (`size` bytes, next used at `position`) into the first tier with room
  // or whose MIN victims at `position` can leave now (evicting them); `searches` counts the tiers
  // where it weighed evictions. Requires mu_.
  Prefetch PlanPrefetch(const std::string& path, uint64_t size, size_t position, int* searches) {
    // Once read at `position`, the file ranks by its use after that one.
    const double rank_after = policy_->RankAt(path, position + 1);
    bool blocked = false;
    for (size_t t = 0; t < tiers_.size(); ++t) {
      Tier& tier = *tiers_[t];
      if (size > tier.store->capacity() || tier.failed.count(path) != 0) continue;
      std::vector<std::string> victims;
      if (tier.store->capacity() - tier.used < size) {
        if (!policy_->capabilities().evicts) continue;  // static placement: the next tier
        ++*searches;
        const Prefetch verdict =
            MinVictims(static_cast<int>(t), size, position, rank_after, &victims);
        if (verdict != Prefetch::kQueued) {
          blocked |= verdict == Prefetch::kBlocked;
          continue;
        }
      }
      for (const std::string& victim : victims) Evict(static_cast<int>(t), victim);
      Enqueue(Reserve(path, static_cast<int>(t), size));
      return Prefetch::kQueued;
    }
    return blocked ? Prefetch::kBlocked : Prefetch::kSkipped;
  }

  // The copies MIN evicts from `tier` when the reader reaches `position` to hold `size` more bytes
  // (ranks as they will be then: files read before `position` rank by their following use). Fills
  // `victims` and returns kQueued when all of them may leave now; kSkipped when MIN would not keep
  // the incoming file (of rank `incoming_rank` after its use) and no file never used again makes
  // room for it; kBlocked when a victim is read before `position` or still being copied. Requires
  // mu_.
  Prefetch MinVictims(int tier, uint64_t size, size_t position, double incoming_rank,
                      std::vector<std::string>* victims) {
    std::vector<cache_internal::VictimCandidate> candidates;
    for (const auto& [path, entry] : entries_) {
      if (entry.tier != tier) continue;
      const bool evictable = entry.complete && policy_->EvictionRank(path) >= position;
      candidates.push_back({policy_->RankAt(path, position), evictable, entry.size, &path});
    }
    const Tier& t = *tiers_[tier];
    return cache_internal::SelectMinVictims(std::move(candidates), t.store->capacity() - t.used,
                                            size, incoming_rank, victims);
  }

  // The size of `path` last seen by an open, or the source's.
  Result<uint64_t> SizeOf(const std::string& path) {
    auto it = sizes_.find(path);
    if (it != sizes_.end()) return it->second;
    DLIO_ASSIGN_OR_RETURN(uint64_t size, source_->FileSize(path));
    sizes_[path] = size;
    return size;
  }

  CacheStats Snapshot(bool reset) const {
    std::lock_guard<std::mutex> lock(mu_);
    CacheStats stats;
    for (const auto& tier : tiers_) {
      CacheTierStats s;
      s.name = tier->store->name();
      s.capacity_bytes = tier->store->capacity();
      tier->counters.Snapshot(&s, reset);
      s.occupancy_bytes = tier->used;
      s.occupancy_files = tier->resident.size();
      s.peak_bytes = tier->peak;
      stats.tiers.push_back(std::move(s));
    }
    stats.source.name = "source";
    source_counters_.Snapshot(&stats.source, reset);
    return stats;
  }

  const CacheOptions options_;
  Storage* const source_;
  const bool host_files_;
  std::vector<std::unique_ptr<Tier>> tiers_;
  mutable LevelCounters source_counters_;

  mutable std::mutex mu_;  // guards everything below and the tiers' non-atomic fields
  std::condition_variable work_cv_, idle_cv_, copied_cv_;
  std::unique_ptr<CachePolicy> policy_;
  const bool uses_future_;
  std::unordered_map<std::string, Entry> entries_;
  std::unordered_map<std::string, uint64_t> sizes_;
  std::unordered_set<std::string> too_big_;
  uint64_t generation_ = 0;
  uint64_t in_flight_ = 0;  // reservations whose copy has not finished
  std::atomic<bool> stop_{false};
};

}  // namespace

Result<std::unique_ptr<TieredCache>> TieredCache::Make(CacheOptions options, Storage* source) {
  if (source == nullptr) return Status::InvalidArgument("tiered cache: the source storage is null");
  DLIO_RETURN_NOT_OK(cache_internal::ValidateCacheOptions(options));
  if (options.copy_chunk_bytes == 0) options.copy_chunk_bytes = 4 << 20;
  auto cache = std::make_unique<TieredCacheImpl>(std::move(options), source);
  DLIO_RETURN_NOT_OK(cache->Start());
  return std::unique_ptr<TieredCache>(std::move(cache));
}

}  // namespace dlio
