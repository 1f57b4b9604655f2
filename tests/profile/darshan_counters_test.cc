#include <catch2/catch.hpp>

#include "dlio/profile.h"

namespace dlio {
namespace {

// Builds a trace one call at a time, each 1 us after the previous one.
class Builder {
 public:
  Builder& Call(std::string_view name, int64_t offset = -1, int64_t bytes = -1,
                std::string_view path = "/f", int32_t pid = 1) {
    ProfileEvent e;
    e.pid = pid;
    e.tid = pid;
    e.name = name;
    e.category = "POSIX";
    e.path = path;
    e.start_us = ++now_;
    e.dur_us = 1;
    e.offset = offset;
    e.size = bytes;
    e.ret = bytes;
    e.kind = OpKindOfCall(name);
    trace_.Add(e);
    return *this;
  }
  FileCounters Only() {
    auto all = ComputeFileCounters(trace_);
    REQUIRE(all.size() == 1);
    return all[0];
  }
  ProfileTrace& trace() { return trace_; }

 private:
  ProfileTrace trace_;
  int64_t now_ = 0;
};

TEST_CASE("Darshan: 10-byte reads at 0, 10, 20 are 2 sequential and 2 consecutive") {
  Builder b;
  b.Call("open64").Call("pread", 0, 10).Call("pread", 10, 10).Call("pread", 20, 10);
  const FileCounters c = b.Only();
  CHECK(c.reads == 3);
  CHECK(c.opens == 1);
  CHECK(c.seq_reads == 2);
  CHECK(c.consec_reads == 2);
  CHECK(c.max_byte_read == 29);
  CHECK(c.bytes_read == 30);
  CHECK(c.size_read_bins[0] == 3);
  REQUIRE(c.common_access.size() == 1);
  CHECK(c.common_access[0] == std::pair<int64_t, int64_t>{10, 3});
}

TEST_CASE("Darshan: a read at 0 after a reopen is neither sequential nor consecutive") {
  Builder b;
  b.Call("open64").Call("pread", 0, 10).Call("pread", 10, 10).Call("close");
  b.Call("open64").Call("pread", 0, 10);
  const FileCounters c = b.Only();
  CHECK(c.seq_reads == 1);
  CHECK(c.consec_reads == 1);
  CHECK(c.opens == 2);
  CHECK(c.closes == 1);
}

TEST_CASE("Darshan: a gap is sequential but not consecutive, going back is neither") {
  Builder b;
  b.Call("open").Call("pread", 0, 10).Call("pread", 100, 10).Call("pread", 50, 10);
  const FileCounters c = b.Only();
  CHECK(c.seq_reads == 1);
  CHECK(c.consec_reads == 0);
  CHECK(c.max_byte_read == 109);
  // Strides: 0 (first read), 100 - 9 - 1 = 90, then 0 (backwards); Darshan never puts 0 in
  // the STRIDE slots (DARSHAN_UPDATE_COMMON_VAL_COUNTERS breaks on a zero value).
  REQUIRE(c.common_strides.size() == 1);
  CHECK(c.common_strides[0] == std::pair<int64_t, int64_t>{90, 1});
}

// darshan-common.h (3.4) DARSHAN_UPDATE_COMMON_VAL_COUNTERS: slots sorted by count, then by
// value, both decreasing; zero never enters; darshan_track_common_val_counters tracks only the
// first 32 distinct values of a record (0 among them); writes' strides count too.
TEST_CASE("Darshan: common access sizes and strides follow darshan-common exactly") {
  SECTION("ties: the larger value first; 0-byte reads never listed") {
    Builder b;
    b.Call("open");
    for (int64_t size : {10, 30, 20, 20, 10, 30, 0, 0, 0, 5}) b.Call("read", -1, size);
    const FileCounters c = b.Only();
    REQUIRE(c.common_access.size() == 4);
    CHECK(c.common_access[0] == std::pair<int64_t, int64_t>{30, 2});
    CHECK(c.common_access[1] == std::pair<int64_t, int64_t>{20, 2});
    CHECK(c.common_access[2] == std::pair<int64_t, int64_t>{10, 2});
    CHECK(c.common_access[3] == std::pair<int64_t, int64_t>{5, 1});
  }
  SECTION("only the first 32 distinct values are tracked; 0 takes a slot") {
    Builder b;
    b.Call("open").Call("read", -1, 0);  // value 0: tracked, never listed
    for (int64_t size = 1; size <= 31; ++size) b.Call("read", -1, size);
    for (int k = 0; k < 5; ++k) b.Call("read", -1, 1000);  // the 33rd value: not tracked
    b.Call("read", -1, 7).Call("read", -1, 3);
    const FileCounters c = b.Only();
    CHECK(c.reads == 1 + 31 + 5 + 2);
    REQUIRE(c.common_access.size() == 4);
    CHECK(c.common_access[0] == std::pair<int64_t, int64_t>{7, 2});
    CHECK(c.common_access[1] == std::pair<int64_t, int64_t>{3, 2});
    CHECK(c.common_access[2] == std::pair<int64_t, int64_t>{31, 1});
    CHECK(c.common_access[3] == std::pair<int64_t, int64_t>{30, 1});
  }
  SECTION("write strides count with read strides") {
    Builder b;
    // Writes at 0, 20 (stride 10), 40 (stride 10); reads at 0, 15 (stride 5).
    b.Call("open").Call("pwrite", 0, 10).Call("pwrite", 20, 10).Call("pwrite", 40, 10);
    b.Call("pread", 0, 10).Call("pread", 15, 10);
    const FileCounters c = b.Only();
    REQUIRE(c.common_strides.size() == 2);
    CHECK(c.common_strides[0] == std::pair<int64_t, int64_t>{10, 2});
    CHECK(c.common_strides[1] == std::pair<int64_t, int64_t>{5, 1});
  }
  SECTION("processes merge as the shared-record reduction adds slots") {
    Builder b;
    b.Call("open", -1, -1, "/f", 1).Call("open", -1, -1, "/f", 2);
    for (int k = 0; k < 3; ++k) b.Call("read", -1, 8, "/f", 1);
    for (int k = 0; k < 2; ++k) b.Call("read", -1, 8, "/f", 2);
    for (int k = 0; k < 4; ++k) b.Call("read", -1, 64, "/f", 2);
    const FileCounters c = b.Only();
    REQUIRE(c.common_access.size() == 2);
    CHECK(c.common_access[0] == std::pair<int64_t, int64_t>{8, 5});
    CHECK(c.common_access[1] == std::pair<int64_t, int64_t>{64, 4});
  }
}

TEST_CASE("Darshan: reads without an offset use the tracked position, seeks move it") {
  Builder b;
  b.Call("open").Call("read", -1, 10).Call("read", -1, 10);
  b.Call("lseek", -1, 100);  // ret: the new offset
  b.Call("read", -1, 10).Call("read", -1, 10);
  const FileCounters c = b.Only();
  CHECK(c.seeks == 1);
  CHECK(c.reads == 4);
  CHECK(c.max_byte_read == 119);
  CHECK(c.seq_reads == 3);     // 10, 100, 110
  CHECK(c.consec_reads == 2);  // 10, 110
}

TEST_CASE("Darshan: each process sees its events in time order, not trace order") {
  ProfileTrace t;
  for (int64_t ts : {30, 10, 20}) {
    ProfileEvent e;
    e.pid = e.tid = 1;
    e.name = "pread";
    e.path = "/f";
    e.start_us = ts;
    e.offset = (ts / 10 - 1) * 10;
    e.size = e.ret = 10;
    e.kind = OpKind::kRead;
    t.Add(e);
  }
  const auto c = ComputeFileCounters(t);
  REQUIRE(c.size() == 1);
  CHECK(c[0].consec_reads == 2);
}

TEST_CASE("Darshan: read/write switches and write counters") {
  Builder b;
  b.Call("open").Call("write", 0, 100).Call("write", 100, 100).Call("read", 0, 50);
  b.Call("write", 200, 10).Call("read", 60, 5);
  const FileCounters c = b.Only();
  CHECK(c.writes == 3);
  CHECK(c.seq_writes == 2);
  CHECK(c.consec_writes == 2);
  CHECK(c.max_byte_written == 209);
  CHECK(c.bytes_written == 210);
  CHECK(c.rw_switches == 3);
  CHECK(c.size_write_bins[0] == 3);
}

TEST_CASE("Darshan size bins: inclusive edges as DARSHAN_BUCKET_INC") {
  CHECK(DarshanSizeBin(0) == 0);
  CHECK(DarshanSizeBin(100) == 0);
  CHECK(DarshanSizeBin(101) == 1);
  CHECK(DarshanSizeBin(1024) == 1);
  CHECK(DarshanSizeBin(1025) == 2);
  CHECK(DarshanSizeBin(10240) == 2);
  CHECK(DarshanSizeBin(10241) == 3);
  CHECK(DarshanSizeBin(102400) == 3);
  CHECK(DarshanSizeBin(102401) == 4);
  CHECK(DarshanSizeBin(1048576) == 4);
  CHECK(DarshanSizeBin(1048577) == 5);
  CHECK(DarshanSizeBin(4194304) == 5);
  CHECK(DarshanSizeBin(4194305) == 6);
  CHECK(DarshanSizeBin(10485760) == 6);
  CHECK(DarshanSizeBin(10485761) == 7);
  CHECK(DarshanSizeBin(104857600) == 7);
  CHECK(DarshanSizeBin(104857601) == 8);
  CHECK(DarshanSizeBin(int64_t{1} << 30) == 8);
  CHECK(DarshanSizeBin((int64_t{1} << 30) + 1) == 9);
  CHECK(DarshanSizeBinName(0) == "0_100");
  CHECK(DarshanSizeBinName(9) == "1G_PLUS");
}

TEST_CASE("Darshan: the four most common access sizes, per-process state, stats, no path") {
  Builder b;
  b.Call("open");
  for (int64_t size : {1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5}) b.Call("read", -1, size);
  b.Call("stat").Call("stat").Call("fsync").Call("read", 0, 10, "");
  // A second process starts with fresh state: its read at 10 is sequential (10 > 0), and its
  // counters add to the same file.
  b.Call("pread", 10, 10, "/f", 2);
  const FileCounters c = b.Only();
  REQUIRE(c.common_access.size() == 4);
  CHECK(c.common_access[0] == std::pair<int64_t, int64_t>{5, 5});
  CHECK(c.common_access[1] == std::pair<int64_t, int64_t>{4, 4});
  CHECK(c.common_access[2] == std::pair<int64_t, int64_t>{3, 3});
  CHECK(c.common_access[3] == std::pair<int64_t, int64_t>{2, 2});
  CHECK(c.stats == 2);
  CHECK(c.syncs == 1);
  CHECK(c.reads == 16);
  CHECK(c.pids == std::vector<int32_t>{1, 2});
  CHECK(c.seq_reads == 14 + 1);
}

}  // namespace
}  // namespace dlio
