// Request sizes and access patterns of AnalyzeTrace.
#include <algorithm>
#include <map>
#include <utility>

#include "profile/analysis/analysis_internal.h"

namespace dlio::profile {
namespace {

struct DeltaKey {
  int32_t path;
  int64_t delta;
  bool operator==(const DeltaKey& o) const { return path == o.path && delta == o.delta; }
};
struct DeltaHash {
  size_t operator()(const DeltaKey& k) const {
    return std::hash<int64_t>{}(k.delta * 1000003 + k.path);
  }
};

// Per (process, file): where the previous transfer ended; -1 after an open (a new sequence).
struct Cursor {
  int64_t prev_end = -1;
};

struct PathSummary {
  int64_t pairs = 0;
  bool backward = false;
  int64_t best_delta = 0;
  int64_t best_count = 0;
};

// Reorders event indices by (pid, start), keeping trace order among equals: a stable counting
// sort by pid (processes are few), then a sort of each process's run only when it is out of
// time order (traces are mostly in time order per process).
void OrderByProcessAndTime(const ProfileTrace& t, std::vector<uint32_t>* order) {
  std::map<int32_t, size_t> first;  // pid -> start of its run in the output
  for (uint32_t i : *order) ++first[t.pid[i]];
  size_t next = 0;
  for (auto& [pid, pos] : first) next += std::exchange(pos, next);
  std::vector<uint32_t> out(order->size());
  std::unordered_map<int32_t, size_t> fill(first.begin(), first.end());
  int32_t last_pid = 0;
  size_t* cursor = nullptr;
  for (uint32_t i : *order) {
    if (cursor == nullptr || t.pid[i] != last_pid) cursor = &fill[last_pid = t.pid[i]];
    out[(*cursor)++] = i;
  }
  auto by_time = [&](uint32_t a, uint32_t b) { return t.start_us[a] < t.start_us[b]; };
  for (const auto& [pid, begin] : first) {
    const auto lo = out.begin() + static_cast<std::ptrdiff_t>(begin);
    const auto hi = out.begin() + static_cast<std::ptrdiff_t>(fill[pid]);
    if (!std::is_sorted(lo, hi, by_time)) std::stable_sort(lo, hi, by_time);
  }
  *order = std::move(out);
}

}  // namespace

int64_t TransferredBytes(const ProfileTrace& t, size_t i) {
  const int64_t ret = t.ret[i];
  if (ret >= 0) return ret;
  return ret == -1 && t.size_bytes[i] > 0 ? t.size_bytes[i] : 0;
}

int64_t RequestSize(const ProfileTrace& t, size_t i) {
  if (t.size_bytes[i] >= 0) return t.size_bytes[i];
  // The ret of other calls is a descriptor, a position or 0, not a size.
  const bool transfer = t.kind[i] == OpKind::kRead || t.kind[i] == OpKind::kWrite;
  return transfer && t.ret[i] >= 0 ? t.ret[i] : -1;
}

SizeStats StatsOf(const SizeHistogram& h) {
  SizeStats s;
  std::vector<std::pair<int64_t, int64_t>> v(h.begin(), h.end());
  std::sort(v.begin(), v.end());
  for (const auto& [size, n] : v) {
    s.count += n;
    s.total += size * n;
  }
  if (s.count == 0) return s;
  s.min = v.front().first;
  s.max = v.back().first;
  s.mean = static_cast<double>(s.total) / static_cast<double>(s.count);
  // Nearest rank: the value at rank ceil(p/100 * count) (1-based) of the sorted sizes.
  auto at_rank = [&](int p) {
    const int64_t rank = std::max<int64_t>(1, (p * s.count + 99) / 100);
    int64_t seen = 0;
    for (const auto& [size, n] : v) {
      seen += n;
      if (seen >= rank) return size;
    }
    return v.back().first;
  };
  s.p25 = at_rank(25);
  s.median = at_rank(50);
  s.p75 = at_rank(75);
  return s;
}

std::unordered_map<std::string, AccessPattern> AccessPatterns(const ProfileTrace& t,
                                                              const EventFilter& filter) {
  std::vector<uint32_t> order;
  for (size_t i = 0; i < t.size(); ++i) {
    const OpKind k = t.kind[i];
    if (t.path[i] != ProfileTrace::kNoString &&
        (k == OpKind::kRead || k == OpKind::kWrite || k == OpKind::kOpen) && filter.IsIo(t, i)) {
      order.push_back(static_cast<uint32_t>(i));
    }
  }
  OrderByProcessAndTime(t, &order);
  std::unordered_map<int64_t, Cursor> cursors;  // (pid, path)
  std::unordered_map<DeltaKey, int64_t, DeltaHash> deltas;
  std::unordered_map<int32_t, PathSummary> paths;
  for (uint32_t i : order) {
    const int32_t path = t.path[i];
    const int64_t key = (static_cast<int64_t>(t.pid[i]) << 32) | static_cast<uint32_t>(path);
    Cursor& c = cursors[key];
    if (t.kind[i] == OpKind::kOpen) {
      c.prev_end = -1;
      continue;
    }
    const int64_t n = TransferredBytes(t, i);
    if (t.ret[i] < -1) continue;  // failed call
    // Unknown offsets continue where the previous transfer ended (as Darshan's offset tracking).
    const int64_t off = t.offset[i] >= 0 ? t.offset[i] : std::max<int64_t>(c.prev_end, 0);
    PathSummary& ps = paths[path];
    if (c.prev_end >= 0) {
      const int64_t delta = off - c.prev_end;
      ++ps.pairs;
      if (delta < 0) ps.backward = true;
      ++deltas[{path, delta}];
    }
    c.prev_end = off + n;
  }
  for (const auto& [k, count] : deltas) {
    PathSummary& ps = paths[k.path];
    // Most common gap; ties: 0 first, then the smaller gap (deterministic).
    const bool better = count > ps.best_count ||
                        (count == ps.best_count &&
                         (k.delta == 0 || (ps.best_delta != 0 && k.delta < ps.best_delta)));
    if (better) {
      ps.best_count = count;
      ps.best_delta = k.delta;
    }
  }
  std::unordered_map<std::string, AccessPattern> out;
  for (const auto& [path, ps] : paths) {
    AccessPattern p = AccessPattern::kRandom;
    if (ps.pairs == 0) {
      p = AccessPattern::kSequential;
    } else if (ps.best_delta != 0 && 2 * ps.best_count >= ps.pairs) {
      p = AccessPattern::kStrided;
    } else if (!ps.backward) {
      p = AccessPattern::kSequential;
    }
    out[t.String(path)] = p;
  }
  return out;
}

}  // namespace dlio::profile
