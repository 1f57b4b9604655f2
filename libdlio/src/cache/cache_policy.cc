#include "cache/cache_policy.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace dlio::cache_internal {
namespace {

constexpr double kNever = kNeverUsed;

// MONARCH: a file is copied (in the background) the first time it is read, into the first tier
// with room; nothing ever leaves, so placement stops once the tiers are full.
class MonarchPolicy final : public CachePolicy {
 public:
  PolicyCapabilities capabilities() const override {
    return {.place_on_miss = true,
            .copy_on_open = false,
            .wait_for_copy = false,
            .evicts = false,
            .uses_future = false};
  }
  void OnOpen(const std::string&) override {}
  double EvictionRank(const std::string&) const override { return 0; }
};

// Least recently used: the rank of a file is how long ago it was last opened.
class LruPolicy final : public CachePolicy {
 public:
  PolicyCapabilities capabilities() const override {
    return {.place_on_miss = true,
            .copy_on_open = true,
            .wait_for_copy = true,
            .evicts = true,
            .uses_future = false};
  }
  void OnOpen(const std::string& path) override { last_use_[path] = ++tick_; }
  void OnRemoved(const std::string& path) override { last_use_.erase(path); }
  double EvictionRank(const std::string& path) const override {
    auto it = last_use_.find(path);
    return it == last_use_.end() ? kNever : -static_cast<double>(it->second);
  }

 private:
  uint64_t tick_ = 0;
  std::unordered_map<std::string, uint64_t> last_use_;
};

// Belady over a known future: the rank of a file is the position of its next use in the access
// sequence (never used again: infinity). Each open consumes the path's next position; the cursor
// is the first position not consumed yet. The cache prefetches the replacements MIN would make
// ahead of the reader (Upcoming, RankAt), and a miss is read through a copy when that copy
// displaces only files used later.
class ClairvoyantPolicy final : public CachePolicy {
 public:
  PolicyCapabilities capabilities() const override {
    // A miss is placed only if it displaces a file used later (or finds room), as Belady does.
    return {.place_on_miss = true,
            .copy_on_open = true,
            .wait_for_copy = true,
            .evicts = true,
            .uses_future = true};
  }
  void SetFutureAccesses(std::vector<std::string> paths) override {
    future_ = std::move(paths);
    consumed_.assign(future_.size(), false);
    next_uses_.clear();
    for (size_t i = 0; i < future_.size(); ++i) next_uses_[future_[i]].push_back(i);
    cursor_ = 0;
  }
  void OnOpen(const std::string& path) override {
    auto it = next_uses_.find(path);
    if (it == next_uses_.end() || it->second.empty()) return;  // not in the sequence (any more)
    consumed_[it->second.front()] = true;
    it->second.pop_front();
    while (cursor_ < future_.size() && consumed_[cursor_]) ++cursor_;
  }
  double EvictionRank(const std::string& path) const override {
    auto it = next_uses_.find(path);
    if (it == next_uses_.end() || it->second.empty()) return kNever;
    return static_cast<double>(it->second.front());
  }
  // A file never used again is not worth a copy.
  bool WorthPlacing(const std::string& path) const override { return EvictionRank(path) != kNever; }
  std::vector<UpcomingFile> Upcoming(size_t max) const override {
    std::vector<UpcomingFile> out;
    std::unordered_set<std::string_view> seen;
    for (size_t i = cursor_; i < future_.size() && out.size() < max; ++i) {
      if (consumed_[i] || !seen.insert(future_[i]).second) continue;
      out.push_back({&future_[i], i});
    }
    return out;
  }
  double RankAt(const std::string& path, size_t position) const override {
    auto it = next_uses_.find(path);
    if (it == next_uses_.end()) return kNever;
    auto use = std::lower_bound(it->second.begin(), it->second.end(), position);
    return use == it->second.end() ? kNever : static_cast<double>(*use);
  }

 private:
  std::vector<std::string> future_;
  std::vector<bool> consumed_;
  std::unordered_map<std::string, std::deque<size_t>> next_uses_;
  size_t cursor_ = 0;
};

// NoPFS's static placement over a known future: the files ranked once per sequence by how often
// it uses them (ties: the earlier first use first), copied in that order ahead of the reader into
// the first tier with room, and never evicted; a file that found no room is read from the source.
// With every file read once per epoch the ranking is the order of first use; it differs where a
// cache's readers use some files more often than others (several ranks of a node reading
// different shards each epoch).
class StaticFrequencyPolicy final : public CachePolicy {
 public:
  PolicyCapabilities capabilities() const override {
    return {.place_on_miss = false,
            .copy_on_open = false,
            .wait_for_copy = true,
            .evicts = false,
            .uses_future = true};
  }
  void SetFutureAccesses(std::vector<std::string> paths) override {
    std::unordered_map<std::string, size_t> index;
    files_.clear();
    for (size_t i = 0; i < paths.size(); ++i) {
      auto [it, added] = index.emplace(paths[i], files_.size());
      if (added) files_.push_back({std::move(paths[i]), 0, i});
      ++files_[it->second].uses;
    }
    std::stable_sort(files_.begin(), files_.end(), [](const Ranked& a, const Ranked& b) {
      return a.uses != b.uses ? a.uses > b.uses : a.first_use < b.first_use;
    });
    remaining_.clear();
    for (const Ranked& f : files_) remaining_[f.path] = f.uses;
  }
  void OnOpen(const std::string& path) override {
    auto it = remaining_.find(path);
    if (it != remaining_.end() && it->second > 0) --it->second;
  }
  // More uses rank lower (kept first); not used again: never.
  double EvictionRank(const std::string& path) const override {
    auto it = remaining_.find(path);
    return it == remaining_.end() || it->second == 0 ? kNever : -static_cast<double>(it->second);
  }
  // The ranking, highest first, of the files still to be used.
  std::vector<UpcomingFile> Upcoming(size_t max) const override {
    std::vector<UpcomingFile> out;
    for (const Ranked& f : files_) {
      if (out.size() >= max) break;
      if (remaining_.at(f.path) > 0) out.push_back({&f.path, f.first_use});
    }
    return out;
  }

 private:
  struct Ranked {
    std::string path;
    size_t uses = 0;
    size_t first_use = 0;
  };
  std::vector<Ranked> files_;  // highest rank first
  std::unordered_map<std::string, size_t> remaining_;
};

}  // namespace

Prefetch SelectMinVictims(std::vector<VictimCandidate> candidates, uint64_t free, uint64_t size,
                          double incoming_rank, std::vector<std::string>* victims) {
  std::sort(candidates.begin(), candidates.end(),
            [](const VictimCandidate& a, const VictimCandidate& b) {
              if (a.rank != b.rank) return a.rank > b.rank;
              if (a.evictable != b.evictable) return a.evictable;
              return *a.path > *b.path;
            });
  for (const VictimCandidate& c : candidates) {
    if (free >= size) break;
    // A file never used again may always make room: the incoming file is fetched once either
    // way (copied now, or read from the source when MIN would not keep it).
    if (c.rank <= incoming_rank && c.rank != kNeverUsed) return Prefetch::kSkipped;
    if (!c.evictable) return Prefetch::kBlocked;
    victims->push_back(*c.path);
    free += c.size;
  }
  return free >= size ? Prefetch::kQueued : Prefetch::kBlocked;
}

std::unique_ptr<CachePolicy> MakeCachePolicy(CachePolicyKind kind) {
  switch (kind) {
    case CachePolicyKind::kMonarch:
      return std::make_unique<MonarchPolicy>();
    case CachePolicyKind::kLru:
      return std::make_unique<LruPolicy>();
    case CachePolicyKind::kClairvoyant:
      return std::make_unique<ClairvoyantPolicy>();
    case CachePolicyKind::kClairvoyantStatic:
      return std::make_unique<StaticFrequencyPolicy>();
  }
  return std::make_unique<LruPolicy>();
}

}  // namespace dlio::cache_internal

namespace dlio {

const char* CachePolicyName(CachePolicyKind kind) {
  switch (kind) {
    case CachePolicyKind::kMonarch:
      return "monarch";
    case CachePolicyKind::kLru:
      return "lru";
    case CachePolicyKind::kClairvoyant:
      return "clairvoyant";
    case CachePolicyKind::kClairvoyantStatic:
      return "clairvoyant_static";
  }
  return "lru";
}

Result<CachePolicyKind> ParseCachePolicy(const std::string& name) {
  for (CachePolicyKind kind :
       {CachePolicyKind::kMonarch, CachePolicyKind::kLru, CachePolicyKind::kClairvoyant,
        CachePolicyKind::kClairvoyantStatic}) {
    if (name == CachePolicyName(kind)) return kind;
  }
  return Status::InvalidArgument(
      "storage.cache_policy: '", name,
      "' is not a cache policy (accepted: monarch, lru, clairvoyant, clairvoyant_static)");
}

}  // namespace dlio
