// Darshan POSIX-module counters on the trace model (darshan-runtime/lib/darshan-posix.c,
// POSIX_RECORD_OPEN/READ/WRITE and DARSHAN_BUCKET_INC).
#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

#include "dlio/profile.h"

namespace dlio {
namespace {

// Darshan's common-value counters (darshan-runtime/lib/darshan-common.{h,c}, 3.4):
// darshan_track_common_val_counters counts at most DARSHAN_COMMON_VAL_MAX_RUNTIME_COUNT (32)
// distinct values per record, the first seen (0 included: it takes a slot); after each count
// DARSHAN_UPDATE_COMMON_VAL_COUNTERS re-sorts the four slots, value 0 never entering them.
constexpr int kMaxTrackedValues = 32;

struct CommonValues {
  std::array<int64_t, 4> val{}, cnt{};

  // DARSHAN_UPDATE_COMMON_VAL_COUNTERS for one value: slots sorted by count, then value, both
  // decreasing. `add`: the count adds to the value's slot (the shared-record reduction) instead
  // of replacing it (runtime updates pass the running frequency).
  void Update(int64_t value, int64_t count, bool add) {
    if (value == 0) return;
    int64_t total = count;
    if (add) {
      for (int i = 0; i < 4; ++i) {
        if (val[i] == value) {
          total += cnt[i];
          break;
        }
      }
    }
    std::array<int64_t, 4> tv{}, tc{};
    int n = 0, i = 0;
    for (; i < 4; ++i) {
      if (!(cnt[i] > total || (cnt[i] == total && val[i] > value))) break;
      tv[n] = val[i];
      tc[n++] = cnt[i];
    }
    if (n == 4) return;
    tv[n] = value;
    tc[n++] = total;
    for (; n != 4 && i < 4; ++i) {
      if (val[i] == value) continue;
      tv[n] = val[i];
      tc[n++] = cnt[i];
    }
    val = tv;
    cnt = tc;
  }

  std::vector<std::pair<int64_t, int64_t>> Pairs() const {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (int i = 0; i < 4; ++i) {
      if (cnt[i] > 0) out.emplace_back(val[i], cnt[i]);
    }
    return out;
  }
};

// One record's tracked values (value -> frequency) and its four slots.
struct CommonTracker {
  std::map<int64_t, int64_t> freq;
  CommonValues top;

  void Count(int64_t value) {
    auto it = freq.find(value);
    if (it == freq.end()) {
      if (static_cast<int>(freq.size()) >= kMaxTrackedValues) return;  // never tracked
      it = freq.emplace(value, 0).first;
    }
    top.Update(value, ++it->second, /*add=*/false);
  }
};

// Darshan's per-process runtime state of one file record.
struct RecordState {
  int64_t offset = 0;
  int64_t last_byte_read = 0;
  int64_t last_byte_written = 0;
  int last_io = 0;  // 0 none, 1 read, 2 write
  CommonTracker access, strides;
};

struct Accumulator {
  FileCounters counters;
};

void RecordRead(int64_t this_offset, int64_t ret, RecordState* st, Accumulator* acc) {
  FileCounters& c = acc->counters;
  if (this_offset > st->last_byte_read) ++c.seq_reads;
  if (this_offset == st->last_byte_read + 1) ++c.consec_reads;
  const int64_t stride =
      this_offset > 0 && this_offset > st->last_byte_read && st->last_byte_read != 0
          ? this_offset - st->last_byte_read - 1
          : 0;
  st->last_byte_read = this_offset + ret - 1;
  st->offset = this_offset + ret;
  c.max_byte_read = std::max(c.max_byte_read, this_offset + ret - 1);
  c.bytes_read += ret;
  ++c.reads;
  ++c.size_read_bins[DarshanSizeBin(ret)];
  st->access.Count(ret);
  st->strides.Count(stride);
  if (st->last_io == 2) ++c.rw_switches;
  st->last_io = 1;
}

void RecordWrite(int64_t this_offset, int64_t ret, RecordState* st, Accumulator* acc) {
  FileCounters& c = acc->counters;
  if (this_offset > st->last_byte_written) ++c.seq_writes;
  if (this_offset == st->last_byte_written + 1) ++c.consec_writes;
  const int64_t stride =
      this_offset > 0 && this_offset > st->last_byte_written && st->last_byte_written != 0
          ? this_offset - st->last_byte_written - 1
          : 0;
  st->last_byte_written = this_offset + ret - 1;
  st->offset = this_offset + ret;
  c.max_byte_written = std::max(c.max_byte_written, this_offset + ret - 1);
  c.bytes_written += ret;
  ++c.writes;
  ++c.size_write_bins[DarshanSizeBin(ret)];
  st->access.Count(ret);
  st->strides.Count(stride);
  if (st->last_io == 1) ++c.rw_switches;
  st->last_io = 2;
}

// Applies event i of the trace to its (process, file) record.
void Apply(const ProfileTrace& t, size_t i, RecordState* st, Accumulator* acc) {
  FileCounters& c = acc->counters;
  const double secs = static_cast<double>(t.dur_us[i]) / 1e6;
  // Bytes transferred: ret when known, else the requested size.
  const int64_t ret = t.ret[i] >= 0 ? t.ret[i] : t.ret[i] == -1 ? t.size_bytes[i] : -1;
  switch (t.kind[i]) {
    case OpKind::kOpen:
      if (t.ret[i] < -1) return;  // failed open
      ++c.opens;
      st->offset = st->last_byte_read = st->last_byte_written = 0;  // not last_io
      c.meta_time_s += secs;
      return;
    case OpKind::kRead:
      if (ret < 0) return;
      RecordRead(t.offset[i] >= 0 ? t.offset[i] : st->offset, ret, st, acc);
      c.read_time_s += secs;
      return;
    case OpKind::kWrite:
      if (ret < 0) return;
      RecordWrite(t.offset[i] >= 0 ? t.offset[i] : st->offset, ret, st, acc);
      c.write_time_s += secs;
      return;
    case OpKind::kSeek:
      if (t.ret[i] >= 0 || t.offset[i] >= 0) st->offset = t.ret[i] >= 0 ? t.ret[i] : t.offset[i];
      ++c.seeks;
      c.meta_time_s += secs;
      return;
    case OpKind::kClose:
      ++c.closes;
      break;
    case OpKind::kStat:
      ++c.stats;
      break;
    case OpKind::kSync:
      ++c.syncs;
      break;
    case OpKind::kMmap:
      ++c.mmaps;
      break;
    case OpKind::kMetadata:
      break;
    case OpKind::kOther:
      return;
  }
  c.meta_time_s += secs;
}

}  // namespace

int DarshanSizeBin(int64_t bytes) {
  static constexpr int64_t kUpper[] = {100,     1024,     10240,     102400,    1048576,
                                       4194304, 10485760, 104857600, 1073741824};
  for (int b = 0; b < 9; ++b) {
    if (bytes <= kUpper[b]) return b;
  }
  return 9;
}

std::string_view DarshanSizeBinName(int bin) {
  static constexpr std::string_view kNames[] = {"0_100",   "100_1K", "1K_10K", "10K_100K",
                                                "100K_1M", "1M_4M",  "4M_10M", "10M_100M",
                                                "100M_1G", "1G_PLUS"};
  return bin >= 0 && bin < 10 ? kNames[bin] : "";
}

std::vector<FileCounters> ComputeFileCounters(const ProfileTrace& t) {
  // Each process sees its calls in time order, as Darshan's wrappers would.
  std::vector<uint32_t> order(t.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return t.pid[a] != t.pid[b] ? t.pid[a] < t.pid[b] : t.start_us[a] < t.start_us[b];
  });
  std::unordered_map<int32_t, Accumulator> files;    // by path id
  std::unordered_map<int64_t, RecordState> records;  // by (pid, path id)
  for (uint32_t i : order) {
    const int32_t path = t.path[i];
    if (path == ProfileTrace::kNoString || t.kind[i] == OpKind::kOther) continue;
    Accumulator& acc = files[path];
    const int64_t key = (static_cast<int64_t>(t.pid[i]) << 32) | static_cast<uint32_t>(path);
    Apply(t, i, &records[key], &acc);
    auto& pids = acc.counters.pids;
    if (std::find(pids.begin(), pids.end(), t.pid[i]) == pids.end()) pids.push_back(t.pid[i]);
  }
  // Records of several processes merge as Darshan reduces a shared record: each record's four
  // slots added into the file's, processes in pid order.
  const std::map<int64_t, RecordState*> by_record = [&] {
    std::map<int64_t, RecordState*> m;
    for (auto& [key, st] : records) m[key] = &st;
    return m;
  }();
  std::unordered_map<int32_t, std::pair<CommonValues, CommonValues>> merged;  // by path id
  for (const auto& [key, st] : by_record) {
    auto& [access, strides] = merged[static_cast<int32_t>(key & 0xffffffff)];
    for (int i = 0; i < 4; ++i) {
      access.Update(st->access.top.val[i], st->access.top.cnt[i], /*add=*/true);
      strides.Update(st->strides.top.val[i], st->strides.top.cnt[i], /*add=*/true);
    }
  }
  std::vector<FileCounters> out;
  out.reserve(files.size());
  for (auto& [path, acc] : files) {
    acc.counters.path = t.String(path);
    acc.counters.common_access = merged[path].first.Pairs();
    acc.counters.common_strides = merged[path].second.Pairs();
    std::sort(acc.counters.pids.begin(), acc.counters.pids.end());
    out.push_back(std::move(acc.counters));
  }
  std::sort(out.begin(), out.end(),
            [](const FileCounters& a, const FileCounters& b) { return a.path < b.path; });
  return out;
}

}  // namespace dlio
