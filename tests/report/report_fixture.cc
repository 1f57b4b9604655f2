#include "report/report_fixture.h"

#include <algorithm>
#include <set>

namespace dlio::testing {

void AddTransfer(ProfileTrace* trace, int32_t pid, int32_t tid, OpKind kind,
                 const std::string& path, int64_t start_us, int64_t dur_us, int64_t offset,
                 int64_t size) {
  ProfileEvent e;
  e.pid = pid;
  e.tid = tid;
  e.name = kind == OpKind::kRead ? "pread64" : "pwrite64";
  e.category = "POSIX";
  e.path = path;
  e.start_us = start_us;
  e.dur_us = dur_us;
  e.offset = offset;
  e.size = size;
  e.ret = size;
  e.kind = kind;
  trace->Add(e);
}

void AddApp(ProfileTrace* trace, int32_t pid, int32_t tid, const std::string& name,
            int64_t start_us, int64_t dur_us) {
  ProfileEvent e;
  e.pid = pid;
  e.tid = tid;
  e.name = name;
  e.category = "ai";
  e.start_us = start_us;
  e.dur_us = dur_us;
  e.kind = OpKind::kOther;
  trace->Add(e);
}

TraceAnalysis HandAnalysis(const ProfileTrace& trace) {
  TraceAnalysis a;
  a.events = static_cast<int64_t>(trace.size());
  if (trace.size() == 0) return a;
  a.start_us = *std::min_element(trace.start_us.begin(), trace.start_us.end());
  a.end_us = a.start_us;
  std::set<int32_t> pids;
  std::set<std::pair<int32_t, int32_t>> threads;
  for (size_t i = 0; i < trace.size(); ++i) {
    a.end_us = std::max(a.end_us, trace.start_us[i] + trace.dur_us[i]);
    pids.insert(trace.pid[i]);
    threads.insert({trace.pid[i], trace.tid[i]});
    if (trace.kind[i] == OpKind::kOther) {
      a.has_app_events = true;
      continue;
    }
    a.io_time_s += trace.dur_us[i] / 1e6;
    if (trace.kind[i] == OpKind::kRead) a.bytes_read += trace.size_bytes[i];
    if (trace.kind[i] == OpKind::kWrite) a.bytes_written += trace.size_bytes[i];
  }
  a.job_time_s = (a.end_us - a.start_us) / 1e6;
  a.io_wall_time_s = a.io_time_s;
  a.unoverlapped_io_time_s = a.io_time_s;
  a.processes = static_cast<int64_t>(pids.size());
  a.threads = static_cast<int64_t>(threads.size());
  for (auto& c : ComputeFileCounters(trace)) {
    FileAnalysis f;
    f.counters = std::move(c);
    f.pattern = AccessPattern::kSequential;
    a.files_detail.push_back(std::move(f));
  }
  a.files = static_cast<int64_t>(a.files_detail.size());
  a.timeline_bucket_us = std::max<int64_t>(1, (a.end_us - a.start_us + 9) / 10);
  a.timeline.resize(10);
  for (int b = 0; b < 10; ++b) a.timeline[b].start_us = a.start_us + b * a.timeline_bucket_us;
  for (size_t i = 0; i < trace.size(); ++i) {
    const auto b = std::min<int64_t>(9, (trace.start_us[i] - a.start_us) / a.timeline_bucket_us);
    auto& bucket = a.timeline[b];
    if (trace.kind[i] == OpKind::kRead) {
      ++bucket.read_ops;
      bucket.bytes_read += static_cast<double>(trace.size_bytes[i]);
    } else if (trace.kind[i] == OpKind::kWrite) {
      ++bucket.write_ops;
      bucket.bytes_written += static_cast<double>(trace.size_bytes[i]);
    } else if (trace.kind[i] != OpKind::kOther) {
      ++bucket.metadata_ops;
    }
  }
  FunctionStats f;
  f.name = "pread64";
  f.kind = OpKind::kRead;
  f.count = 1;
  a.functions.push_back(f);
  return a;
}

ProfileTrace SmallTrace() {
  ProfileTrace t;
  for (int i = 0; i < 20; ++i) {
    AddTransfer(&t, 100, 100, OpKind::kRead, "/data/a.npz", 1'000'000 + i * 50'000, 2'000, i * 4096,
                4096);
    AddApp(&t, 100, 100, "ai.compute.step", 1'000'000 + i * 50'000 + 2'000, 40'000);
    AddTransfer(&t, 200, 201, OpKind::kRead, "/data/b.npz", 1'000'000 + i * 40'000, 1'000,
                (i * 7919 % 20) * 1'048'576, 200);
  }
  AddTransfer(&t, 200, 201, OpKind::kWrite, "/data/out.bin", 1'900'000, 5'000, 0, 2'000'000);
  t.process_names[100] = "python3";
  return t;
}

}  // namespace dlio::testing
