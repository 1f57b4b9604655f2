// AnalyzeTrace: one pass over the trace's columns for totals, per-process and per-function
// figures and interval lists; then unions, Darshan counters, access patterns and the timeline.
#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <unordered_set>

#include "dlio/units.h"
#include "profile/analysis/analysis_internal.h"

namespace dlio {

using profile::Interval;

bool ComputeClassifier::Names(int32_t id) {
  static constexpr std::string_view kWord = "compute";
  if (id < 0) return false;
  if (id >= static_cast<int32_t>(known_.size())) known_.resize(static_cast<size_t>(id) + 1, -1);
  int8_t& known = known_[static_cast<size_t>(id)];
  if (known < 0) {
    const std::string& s = trace_.String(id);
    auto lower_eq = [](char a, char b) {
      return std::tolower(static_cast<unsigned char>(a)) == static_cast<unsigned char>(b);
    };
    known = std::search(s.begin(), s.end(), kWord.begin(), kWord.end(), lower_eq) != s.end();
  }
  return known == 1;
}

bool ComputeClassifier::IsCompute(size_t i) {
  return trace_.kind[i] == OpKind::kOther && (Names(trace_.name[i]) || Names(trace_.category[i]));
}

std::string_view AccessPatternName(AccessPattern p) {
  switch (p) {
    case AccessPattern::kNone:
      return "none";
    case AccessPattern::kSequential:
      return "sequential";
    case AccessPattern::kStrided:
      return "strided";
    case AccessPattern::kRandom:
      return "random";
  }
  return "none";
}

namespace {

double Seconds(int64_t us) { return static_cast<double>(us) / 1e6; }

struct ProcessState {
  ProcessAnalysis out;
  std::unordered_set<int32_t> tids;
  std::vector<Interval> io, compute;
  int64_t io_us = 0;
};

struct FunctionState {
  FunctionStats out;
  int64_t dur_us = 0;
  profile::SizeHistogram sizes;
};

// Everything the single pass over the events collects.
struct Pass {
  std::unordered_map<int32_t, ProcessState> processes;
  std::unordered_map<int32_t, FunctionState> functions;  // by name id
  std::vector<Interval> reads, writes, app, compute;
  profile::SizeHistogram read_sizes, write_sizes;
  int64_t io_us = 0, data_us = 0, meta_us = 0;
  int64_t threads = 0;
};

profile::EventFilter MakeFilter(const ProfileTrace& t) {
  profile::EventFilter f;
  std::unordered_set<int32_t> seen;  // distinct categories (few)
  int32_t last = ProfileTrace::kNoString - 1;
  for (int32_t c : t.category) {
    if (c != last) seen.insert(last = c);
  }
  bool posix = false;
  for (int32_t c : seen) {
    const std::string& s = t.String(c);
    if (s == kDxtPosixCategory) posix = true;
    if (s == kDxtMpiioCategory) f.mpiio_category = c;
  }
  f.posix_only = posix && f.mpiio_category >= 0;
  return f;
}

// The pass over every event.
void Collect(const ProfileTrace& t, const profile::EventFilter& filter, TraceAnalysis* a, Pass* p) {
  ComputeClassifier compute(t);
  std::unordered_set<int64_t> threads;
  ProcessState* proc = nullptr;
  int32_t proc_pid = 0;
  int64_t last_thread = -1;
  a->start_us = t.size() > 0 ? t.start_us[0] : 0;
  a->end_us = a->start_us;
  for (size_t i = 0; i < t.size(); ++i) {
    const int64_t s = t.start_us[i];
    const int64_t dur = std::max<int64_t>(t.dur_us[i], 0);
    a->start_us = std::min(a->start_us, s);
    a->end_us = std::max(a->end_us, s + dur);
    if (proc == nullptr || proc_pid != t.pid[i]) {
      proc_pid = t.pid[i];
      proc = &p->processes[proc_pid];
      proc->out.pid = proc_pid;
    }
    ++proc->out.events;
    const int64_t thread = (static_cast<int64_t>(t.pid[i]) << 32) | static_cast<uint32_t>(t.tid[i]);
    if (thread != last_thread && threads.insert(last_thread = thread).second) {
      proc->tids.insert(t.tid[i]);
    }
    const OpKind k = t.kind[i];
    if (k == OpKind::kOther) {
      p->app.push_back({s, s + dur});
      if (compute.IsCompute(i)) {
        p->compute.push_back({s, s + dur});
        proc->compute.push_back({s, s + dur});
      }
    }
    if (k != OpKind::kOther && !filter.IsIo(t, i)) {
      ++a->ignored_mpiio_events;
      continue;
    }
    FunctionState& fn = p->functions[t.name[i]];
    ++fn.out.count;
    fn.dur_us += dur;
    if (fn.out.count == 1) {
      fn.out.name = t.String(t.name[i]);
      fn.out.category = t.String(t.category[i]);
      fn.out.kind = k;
    }
    const int64_t req = profile::RequestSize(t, i);
    if (req >= 0) ++fn.sizes[req];
    if (k == OpKind::kOther) continue;
    p->io_us += dur;
    proc->io_us += dur;
    proc->io.push_back({s, s + dur});
    if (k == OpKind::kRead || k == OpKind::kWrite) {
      ++a->data_ops;
      p->data_us += dur;
      const int64_t bytes = profile::TransferredBytes(t, i);
      const bool read = k == OpKind::kRead;
      (read ? a->bytes_read : a->bytes_written) += bytes;
      (read ? proc->out.bytes_read : proc->out.bytes_written) += bytes;
      (read ? p->reads : p->writes).push_back({s, s + dur});
      if (req >= 0) ++(read ? p->read_sizes : p->write_sizes)[req];
    } else {
      ++a->metadata_ops;
      p->meta_us += dur;
    }
  }
  a->threads = static_cast<int64_t>(threads.size());
}

// Per-process unions; returns the union of every process's I/O and compute intervals.
void FinishProcesses(const ProfileTrace& t, Pass* p, TraceAnalysis* a,
                     std::vector<Interval>* io_union) {
  for (auto& [pid, st] : p->processes) {
    profile::MergeIntervals(&st.io);
    profile::MergeIntervals(&st.compute);
    st.out.threads = static_cast<int64_t>(st.tids.size());
    st.out.io_time_s = Seconds(st.io_us);
    st.out.unoverlapped_io_time_s = Seconds(profile::MeasureDifference(st.io, st.compute));
    auto name = t.process_names.find(pid);
    if (name != t.process_names.end()) st.out.name = name->second;
    a->process_detail.push_back(std::move(st.out));
  }
  std::sort(a->process_detail.begin(), a->process_detail.end(),
            [](const ProcessAnalysis& x, const ProcessAnalysis& y) { return x.pid < y.pid; });
  std::vector<std::vector<Interval>> lists;
  lists.reserve(p->processes.size());
  for (auto& [pid, st] : p->processes) lists.push_back(std::move(st.io));
  *io_union = profile::UnionOfAll(std::move(lists));
  a->processes = static_cast<int64_t>(a->process_detail.size());
}

void FinishFunctions(Pass* p, TraceAnalysis* a) {
  for (auto& [id, fn] : p->functions) {
    fn.out.time_s = Seconds(fn.dur_us);
    fn.out.size = profile::StatsOf(fn.sizes);
    a->functions.push_back(std::move(fn.out));
  }
  std::sort(a->functions.begin(), a->functions.end(),
            [](const FunctionStats& x, const FunctionStats& y) { return x.name < y.name; });
}

double Bandwidth(int64_t bytes, std::vector<Interval>* intervals) {
  profile::MergeIntervals(intervals);
  const int64_t us = profile::Measure(*intervals);
  return us > 0 ? static_cast<double>(bytes) / kMiB / Seconds(us) : 0.0;
}

// Darshan counters on the events counted as I/O (a copy without MPI-IO rows when both layers).
void FillFiles(const ProfileTrace& t, const profile::EventFilter& filter, TraceAnalysis* a) {
  std::vector<FileCounters> counters;
  if (filter.posix_only) {
    ProfileTrace posix;
    posix.Reserve(t.size());
    for (size_t i = 0; i < t.size(); ++i) {
      if (filter.IsIo(t, i)) posix.Add(t.Get(i));
    }
    counters = ComputeFileCounters(posix);
  } else {
    counters = ComputeFileCounters(t);
  }
  const auto patterns = profile::AccessPatterns(t, filter);
  a->files_detail.reserve(counters.size());
  for (auto& c : counters) {
    FileAnalysis f;
    auto it = patterns.find(c.path);
    if (it != patterns.end()) f.pattern = it->second;
    f.counters = std::move(c);
    a->files_detail.push_back(std::move(f));
  }
  a->files = static_cast<int64_t>(a->files_detail.size());
}

}  // namespace

TraceAnalysis AnalyzeTrace(const ProfileTrace& trace, const AnalysisOptions& options) {
  TraceAnalysis a;
  a.events = static_cast<int64_t>(trace.size());
  const profile::EventFilter filter = MakeFilter(trace);
  a.dxt_posix_only = filter.posix_only;
  Pass p;
  Collect(trace, filter, &a, &p);
  a.job_time_s = Seconds(a.end_us - a.start_us);
  a.io_time_s = Seconds(p.io_us);
  a.data_time_s = Seconds(p.data_us);
  a.metadata_time_s = Seconds(p.meta_us);
  std::vector<Interval> io_union;
  FinishProcesses(trace, &p, &a, &io_union);
  profile::MergeIntervals(&p.compute);
  profile::MergeIntervals(&p.app);
  a.io_wall_time_s = Seconds(profile::Measure(io_union));
  a.unoverlapped_io_time_s = Seconds(profile::MeasureDifference(io_union, p.compute));
  a.compute_time_s = Seconds(profile::Measure(p.compute));
  a.app_time_s = Seconds(profile::Measure(p.app));
  a.has_app_events = !p.app.empty();
  a.read_bandwidth_mib_s = Bandwidth(a.bytes_read, &p.reads);
  a.write_bandwidth_mib_s = Bandwidth(a.bytes_written, &p.writes);
  a.read_sizes = profile::StatsOf(p.read_sizes);
  a.write_sizes = profile::StatsOf(p.write_sizes);
  FinishFunctions(&p, &a);
  FillFiles(trace, filter, &a);
  if (trace.size() > 0) {
    a.timeline_bucket_us =
        profile::ChooseBucketWidth(a.end_us - a.start_us, options.timeline_bucket_us);
    a.timeline =
        profile::BuildTimeline(trace, filter, a.start_us, a.end_us, a.timeline_bucket_us, io_union);
  }
  return a;
}

}  // namespace dlio
