#include <catch2/catch.hpp>

#include "dlio/profile_analysis.h"
#include "profile/analysis_test_util.h"

namespace dlio {
namespace {

using testing::AddEvent;

const FileAnalysis* FindFile(const TraceAnalysis& a, const std::string& path) {
  for (const auto& f : a.files_detail) {
    if (f.counters.path == path) return &f;
  }
  return nullptr;
}

const FunctionStats* FindFunction(const TraceAnalysis& a, const std::string& name) {
  for (const auto& f : a.functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// pid 1: thread 1 reads [0,10), thread 2 reads [5,20), thread 1 computes [8,35);
// pid 2: thread 3 writes [30,40); an application event (not compute) [50,60).
ProfileTrace TwoProcesses() {
  ProfileTrace t;
  AddEvent(&t, 1, 1, "pread64", 0, 10, "/d/a", 0, 100, 100);
  AddEvent(&t, 1, 2, "pread64", 5, 15, "/d/a", 100, 200, 150);
  AddEvent(&t, 1, 1, "ai.compute.step", 8, 27);
  AddEvent(&t, 2, 3, "pwrite64", 30, 10, "/d/b", 0, 50, 50);
  AddEvent(&t, 2, 3, "ai.data.item", 50, 10);
  t.process_names[1] = "reader";
  return t;
}

TEST_CASE("AnalyzeTrace: I/O time, wall time and unoverlapped I/O from interval unions") {
  const TraceAnalysis a = AnalyzeTrace(TwoProcesses());
  CHECK(a.events == 5);
  CHECK(a.start_us == 0);
  CHECK(a.end_us == 60);
  CHECK(a.job_time_s == Approx(60e-6));
  CHECK(a.io_time_s == Approx(35e-6));       // 10 + 15 + 10
  CHECK(a.io_wall_time_s == Approx(30e-6));  // [0,20) + [30,40) across threads and processes
  CHECK(a.compute_time_s == Approx(27e-6));
  CHECK(a.app_time_s == Approx(37e-6));  // compute [8,35) + [50,60)
  CHECK(a.has_app_events);
  CHECK(a.unoverlapped_io_time_s == Approx(13e-6));  // [0,8) + [35,40)
  CHECK(a.bytes_read == 250);
  CHECK(a.bytes_written == 50);
  CHECK(a.read_bandwidth_mib_s == Approx(250.0 / (1 << 20) / 20e-6));
  CHECK(a.write_bandwidth_mib_s == Approx(50.0 / (1 << 20) / 10e-6));
  CHECK(a.files == 2);
  CHECK(a.processes == 2);
  CHECK(a.threads == 3);
  CHECK(a.data_ops == 3);
  CHECK(a.metadata_ops == 0);
  CHECK(a.data_time_s == Approx(35e-6));
  REQUIRE(a.process_detail.size() == 2);
  const ProcessAnalysis& p1 = a.process_detail[0];
  CHECK(p1.pid == 1);
  CHECK(p1.name == "reader");
  CHECK(p1.threads == 2);
  CHECK(p1.events == 3);
  CHECK(p1.io_time_s == Approx(25e-6));
  CHECK(p1.unoverlapped_io_time_s == Approx(8e-6));  // [0,20) minus its compute [8,35)
  CHECK(p1.bytes_read == 250);
  const ProcessAnalysis& p2 = a.process_detail[1];
  CHECK(p2.threads == 1);
  CHECK(p2.unoverlapped_io_time_s == Approx(10e-6));  // pid 1's compute does not hide pid 2's I/O
  CHECK(p2.bytes_written == 50);
}

TEST_CASE("AnalyzeTrace without application events: unoverlapped I/O is the I/O wall time") {
  ProfileTrace t;
  AddEvent(&t, 7, 7, "open64", 0, 2, "/d/x", -1, -1, 3);
  AddEvent(&t, 7, 7, "read", 2, 4, "/d/x", 0, 10, 10);
  AddEvent(&t, 7, 8, "stat", 3, 5, "/d/x");
  const TraceAnalysis a = AnalyzeTrace(t);
  CHECK_FALSE(a.has_app_events);
  CHECK(a.compute_time_s == 0);
  CHECK(a.io_wall_time_s == Approx(8e-6));
  CHECK(a.unoverlapped_io_time_s == Approx(8e-6));
  CHECK(a.metadata_ops == 2);
  CHECK(a.metadata_time_s == Approx(7e-6));
  CHECK(a.data_ops == 1);
}

TEST_CASE("AnalyzeTrace: the timeline counts an op in every bucket it spans") {
  ProfileTrace t;
  AddEvent(&t, 1, 1, "open", 0, 1, "/d/a", -1, -1, 3);
  AddEvent(&t, 1, 1, "read", 5, 20, "/d/a", 0, 100, 100);  // buckets 0, 1, 2
  AddEvent(&t, 1, 1, "write", 30, 0, "/d/b", 0, 8, 8);     // zero duration: bucket 3
  AnalysisOptions options;
  options.timeline_bucket_us = 10;
  const TraceAnalysis a = AnalyzeTrace(t, options);
  CHECK(a.timeline_bucket_us == 10);
  REQUIRE(a.timeline.size() == 3);  // [0, 30): the write at 30 ends the trace
  CHECK(a.timeline[0].start_us == 0);
  CHECK(a.timeline[0].metadata_ops == 1);
  for (int b = 0; b < 3; ++b) CHECK(a.timeline[b].read_ops == 1);
  CHECK(a.timeline[0].bytes_read == Approx(25));
  CHECK(a.timeline[1].bytes_read == Approx(50));
  CHECK(a.timeline[2].bytes_read == Approx(25));
  CHECK(a.timeline[0].io_busy_s == Approx(6e-6));  // [0,1) + [5,10)
  CHECK(a.timeline[1].io_busy_s == Approx(10e-6));
  CHECK(a.timeline[2].io_busy_s == Approx(5e-6));
  CHECK(a.timeline[2].write_ops == 1);  // clamped into the last bucket
  CHECK(a.timeline[2].bytes_written == Approx(8));
}

TEST_CASE("AnalyzeTrace picks a 1-2-5 bucket width for about 100 buckets") {
  ProfileTrace t;
  AddEvent(&t, 1, 1, "read", 1000, 10, "/d/a", 0, 1, 1);
  AddEvent(&t, 1, 1, "read", 1000 + 33000 - 10, 10, "/d/a", 1, 1, 1);  // span 33 ms
  const TraceAnalysis a = AnalyzeTrace(t);
  CHECK(a.timeline_bucket_us == 500);  // 330 -> 500
  CHECK(a.timeline.size() == 66);
  CHECK(a.timeline.front().start_us == 1000);
}

TEST_CASE("AnalyzeTrace: nearest-rank percentiles of request sizes") {
  ProfileTrace t;
  // Sizes 10, 9, ..., 1 (out of order); one read with an unknown request size uses its ret.
  for (int i = 10; i >= 1; --i) AddEvent(&t, 1, 1, "pread64", 100 - i, 1, "/d/a", i, i, i);
  AddEvent(&t, 1, 1, "read", 200, 1, "/d/b", 0, -1, 1000);
  const TraceAnalysis a = AnalyzeTrace(t);
  const FunctionStats* f = FindFunction(a, "pread64");
  REQUIRE(f != nullptr);
  CHECK(f->count == 10);
  CHECK(f->kind == OpKind::kRead);
  CHECK(f->category == "POSIX");
  CHECK(f->size.count == 10);
  CHECK(f->size.min == 1);
  CHECK(f->size.p25 == 3);     // rank ceil(2.5) = 3
  CHECK(f->size.median == 5);  // rank 5
  CHECK(f->size.p75 == 8);     // rank ceil(7.5) = 8
  CHECK(f->size.max == 10);
  CHECK(f->size.mean == Approx(5.5));
  CHECK(f->size.total == 55);
  CHECK(a.read_sizes.count == 11);
  CHECK(a.read_sizes.max == 1000);
  CHECK(a.read_sizes.median == 6);  // rank 6 of 1..10, 1000
  CHECK(a.write_sizes.count == 0);
}

TEST_CASE("AnalyzeTrace: access pattern per file") {
  ProfileTrace t;
  auto read = [&](int pid, const char* path, int64_t ts, int64_t off, int64_t n) {
    AddEvent(&t, pid, pid, "pread64", ts, 1, path, off, n, n);
  };
  read(1, "/seq", 0, 0, 10);
  read(1, "/seq", 1, 10, 10);
  read(1, "/seq", 2, 20, 10);
  read(1, "/strided", 0, 0, 10);  // gaps of 10
  read(1, "/strided", 1, 20, 10);
  read(1, "/strided", 2, 40, 10);
  read(1, "/strided", 3, 60, 10);
  read(1, "/random", 0, 50, 10);
  read(1, "/random", 1, 0, 10);
  read(1, "/random", 2, 30, 10);
  read(1, "/random", 3, 10, 10);
  read(1, "/gaps", 0, 0, 10);  // forward with varying gaps: sequential, as Darshan counts it
  read(1, "/gaps", 1, 15, 10);
  read(1, "/gaps", 2, 40, 10);
  read(1, "/gaps", 3, 100, 10);
  AddEvent(&t, 1, 1, "open", 10, 1, "/reopen", -1, -1, 3);
  read(1, "/reopen", 11, 0, 10);
  read(1, "/reopen", 12, 10, 10);
  AddEvent(&t, 1, 1, "open", 13, 1, "/reopen", -1, -1, 3);  // a new sequence: not backward
  read(1, "/reopen", 14, 0, 10);
  read(2, "/reopen", 15, 5, 10);  // another process: its own sequence
  AddEvent(&t, 1, 1, "stat", 20, 1, "/meta-only");
  const TraceAnalysis a = AnalyzeTrace(t);
  auto pattern = [&](const char* path) {
    const FileAnalysis* f = FindFile(a, path);
    REQUIRE(f != nullptr);
    return f->pattern;
  };
  CHECK(pattern("/seq") == AccessPattern::kSequential);
  CHECK(pattern("/strided") == AccessPattern::kStrided);
  CHECK(pattern("/random") == AccessPattern::kRandom);
  CHECK(pattern("/gaps") == AccessPattern::kSequential);
  CHECK(pattern("/reopen") == AccessPattern::kSequential);
  CHECK(pattern("/meta-only") == AccessPattern::kNone);
  CHECK(a.files == 6);
  CHECK(a.processes == 2);
  CHECK(a.threads == 2);
  CHECK(AccessPatternName(AccessPattern::kStrided) == "strided");
  // The Darshan counters come along: 2 sequential and 2 consecutive reads on /seq.
  CHECK(FindFile(a, "/seq")->counters.seq_reads == 2);
  CHECK(FindFile(a, "/seq")->counters.consec_reads == 2);
}

TEST_CASE("AnalyzeTrace counts only the POSIX rows of a DXT trace with both layers") {
  ProfileTrace t;
  ProfileEvent e;
  e.pid = e.tid = 0;
  e.path = "/f";
  e.kind = OpKind::kRead;
  e.name = "read";
  e.category = "X_POSIX";
  e.start_us = 10;
  e.dur_us = 5;
  e.offset = 0;
  e.size = 100;
  t.Add(e);
  e.category = "X_MPIIO";
  e.start_us = 9;
  e.dur_us = 7;
  t.Add(e);
  TraceAnalysis a = AnalyzeTrace(t);
  CHECK(a.dxt_posix_only);
  CHECK(a.ignored_mpiio_events == 1);
  CHECK(a.bytes_read == 100);
  CHECK(a.data_ops == 1);
  CHECK(a.io_time_s == Approx(5e-6));
  REQUIRE(a.files_detail.size() == 1);
  CHECK(a.files_detail[0].counters.reads == 1);
  CHECK_THAT(AnalysisText(a), Catch::Contains("POSIX rows only"));
  // MPI-IO rows alone are the only record of the I/O: counted.
  ProfileTrace mpiio;
  e.category = "X_MPIIO";
  mpiio.Add(e);
  a = AnalyzeTrace(mpiio);
  CHECK_FALSE(a.dxt_posix_only);
  CHECK(a.bytes_read == 100);
}

TEST_CASE("AnalyzeTrace of an empty trace is all zero") {
  const TraceAnalysis a = AnalyzeTrace(ProfileTrace{});
  CHECK(a.events == 0);
  CHECK(a.job_time_s == 0);
  CHECK(a.timeline.empty());
  CHECK_FALSE(AnalysisText(a).empty());
  CHECK_THAT(AnalysisJson(a), Catch::Contains("\"events\": 0"));
}

}  // namespace
}  // namespace dlio
