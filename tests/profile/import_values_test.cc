// Values no real trace holds (ids beyond 32 bits, negative durations, offsets and sizes past
// 2^53, ranks that wrap): each importer drops or corrects the event with a warning naming file
// and line, and imports the valid lines unchanged.
#include <catch2/catch.hpp>
#include <string>

#include "dlio/profile_analysis.h"
#include "dlio/profile_compare.h"
#include "test_util.h"

namespace dlio {
namespace {

using testing::TempDir;
using testing::WriteTextFile;

std::string Pfw(const std::string& pid, const std::string& dur, const std::string& offset,
                const std::string& count = "4096") {
  return "{\"name\":\"pread64\",\"cat\":\"POSIX\",\"pid\":" + pid + ",\"tid\":" + pid +
         ",\"ts\":100,\"dur\":" + dur +
         ",\"ph\":\"X\",\"args\":{\"fname\":\"/d/f\",\"count\":" + count + ",\"offset\":" + offset +
         ",\"ret\":" + count + "}}\n";
}

const std::string kGood = Pfw("5", "20", "0");

// The warnings of `stats` as one string, and a check that the one of `line` is there.
bool Warns(const ImportStats& stats, const std::string& file_line, const std::string& what) {
  for (const auto& w : stats.warnings) {
    if (w.find(file_line) != std::string::npos && w.find(what) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("ImportPfw: a negative duration is taken as 0, with a warning naming the line") {
  TempDir dir;
  WriteTextFile(dir / "t.pfw", kGood + Pfw("5", "-20", "4096"));
  ProfileTrace t;
  auto stats = ImportPfw(dir / "t.pfw", &t);
  REQUIRE(stats.ok());
  REQUIRE(t.size() == 2);
  CHECK(t.Get(0).dur_us == 20);
  CHECK(t.Get(1).dur_us == 0);
  CHECK(t.Get(1).offset == 4096);
  CHECK(stats->bad_values == 1);
  CHECK(Warns(*stats, "t.pfw line 2", "negative duration -20"));
  // A trace compared with itself is alike, whatever its durations were.
  CHECK(CompareTraces(t, t).similarity == Approx(1.0));
}

TEST_CASE("ImportPfw: a pid beyond 32 bits is dropped, not merged with a small one") {
  TempDir dir;
  // 2^32 + 5 truncates to 5.
  WriteTextFile(dir / "t.pfw", kGood + Pfw("4294967301", "20", "0") +
                                   "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":4294967301,"
                                   "\"args\":{\"name\":\"x (rank 9)\"}}\n");
  ProfileTrace t;
  auto stats = ImportPfw(dir / "t.pfw", &t);
  REQUIRE(stats.ok());
  REQUIRE(t.size() == 1);
  CHECK(t.Get(0).pid == 5);
  CHECK(t.process_names.empty());
  CHECK(t.ranks.empty());
  CHECK(stats->bad_values == 2);
  CHECK(Warns(*stats, "t.pfw line 2", "pid 4294967301 is outside"));
  CHECK(Warns(*stats, "t.pfw line 3", "pid 4294967301"));
}

TEST_CASE("ImportPfw: offsets and sizes past 2^53 bytes are dropped (offset + size fits)") {
  TempDir dir;
  WriteTextFile(dir / "t.pfw", Pfw("5", "20", "9223372036854775000") + kGood +
                                   Pfw("5", "20", "0", "9007199254740993") + Pfw("5", "20", "-7"));
  ProfileTrace t;
  auto stats = ImportPfw(dir / "t.pfw", &t);
  REQUIRE(stats.ok());
  REQUIRE(t.size() == 1);
  CHECK(t.Get(0).offset == 0);
  CHECK(t.Get(0).size == 4096);
  CHECK(stats->bad_values == 3);
  CHECK(Warns(*stats, "t.pfw line 1", "offset 9223372036854775000"));
  CHECK(Warns(*stats, "t.pfw line 3", "size 9007199254740993"));
  CHECK(Warns(*stats, "t.pfw line 4", "offset -7"));
}

TEST_CASE("Importers keep the first warnings and count the others") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 100; ++i) text += Pfw("5", "-1", "0");
  WriteTextFile(dir / "t.pfw", text + kGood);
  ProfileTrace t;
  auto stats = ImportPfw(dir / "t.pfw", &t);
  REQUIRE(stats.ok());
  CHECK(t.size() == 101);
  CHECK(stats->bad_values == 100);
  REQUIRE(stats->warnings.size() == kMaxImportWarnings);
  CHECK(Warns(*stats, "t.pfw line 8:", "negative duration"));
}

const char kDxtHeader[] =
    "# DXT, file_id: 1, file_name: /d/f\n"
    "# Module    Rank  Wt/Rd  Segment          Offset       Length    Start(s)      End(s)\n";

TEST_CASE("ImportDxt: ranks that wrap are dropped, an end before the start is a 0 duration") {
  TempDir dir;
  WriteTextFile(dir / "d.txt", std::string(kDxtHeader) +
                                   " X_POSIX  1 read 0 0 100 0.0010 0.0020\n"
                                   " X_POSIX  4294967297 read 1 100 100 0.0030 0.0040\n"
                                   " X_POSIX  -3 read 2 200 100 0.0050 0.0060\n"
                                   " X_POSIX  1 read 3 300 100 0.0080 0.0070\n");
  ProfileTrace t;
  auto stats = ImportDxt(dir / "d.txt", &t);
  REQUIRE(stats.ok());
  REQUIRE(t.size() == 2);
  CHECK(t.Get(0).pid == 1);
  CHECK(t.Get(0).dur_us == 1000);
  CHECK(t.Get(1).pid == 1);
  CHECK(t.Get(1).offset == 300);
  CHECK(t.Get(1).dur_us == 0);
  CHECK(t.ranks == std::map<int32_t, int32_t>{{1, 1}});
  CHECK(stats->bad_values == 3);
  CHECK(Warns(*stats, "d.txt line 4", "rank 4294967297 is outside [0,"));
  CHECK(Warns(*stats, "d.txt line 5", "rank -3 is outside [0,"));
  CHECK(Warns(*stats, "d.txt line 6", "negative duration -1000"));
}

TEST_CASE("ImportDxt: thread ids beyond 31 bits stay distinct") {
  TempDir dir;
  WriteTextFile(dir / "d.txt",
                "# DXT, file_id: 5, file_name: /d/f\n"
                "# Module Rank Pthread-ID Wt/Rd Segment Offset Length Start(s) End(s)\n"
                " X_POSIX 3 140737354053440 read 0 0 10 0.1 0.2\n"
                " X_POSIX 3 140737345660736 read 1 10 10 0.1 0.2\n"
                " X_POSIX 3 140737354053440 read 2 20 10 0.1 0.2\n"
                " X_POSIX 3 12 read 3 30 10 0.1 0.2\n");
  ProfileTrace t;
  auto stats = ImportDxt(dir / "d.txt", &t);
  REQUIRE(stats.ok());
  REQUIRE(t.size() == 4);
  CHECK(t.Get(0).tid == -1);
  CHECK(t.Get(1).tid == -2);
  CHECK(t.Get(2).tid == -1);
  CHECK(t.Get(3).tid == 12);
  CHECK(stats->bad_values == 0);
}

TEST_CASE("ImportStrace: pids beyond 32 bits are dropped, offsets never pass 2^53") {
  TempDir dir;
  WriteTextFile(
      dir / "s.txt",
      "5 1795502550.000001 openat(AT_FDCWD, \"/d/s\", O_RDONLY) = 3 <0.000001>\n"
      "4294967301 1795502550.000002 read(3, \"\"..., 10) = 10 <0.000001>\n"
      "5 1795502550.000003 read(3, \"\"..., 10) = 10 <0.000001>\n"
      "5 1795502550.000004 clone(child_stack=NULL, flags=SIGCHLD) = 4294967302 <0.000001>\n"
      "5 1795502550.000005 lseek(3, 9007199254740990, SEEK_SET) = 9007199254740990 <0.000001>\n"
      "5 1795502550.000006 read(3, \"\"..., 10) = 10 <0.000001>\n"
      "5 1795502550.000007 read(3, \"\"..., 10) = 10 <0.000001>\n"
      "5 1795502550.000008 mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 3, 0x8000000000000000) = "
      "0x7f0000000000 <0.000001>\n");
  ProfileTrace t;
  auto stats = ImportStrace(dir / "s.txt", &t);
  REQUIRE(stats.ok());
  std::vector<int64_t> read_offsets;
  for (size_t i = 0; i < t.size(); ++i) {
    const ProfileEvent e = t.Get(i);
    CHECK(e.pid == 5);
    if (e.kind == OpKind::kRead) read_offsets.push_back(e.offset);
    if (e.kind == OpKind::kMmap) CHECK(e.offset == -1);  // the hex offset does not wrap
  }
  // The read of pid 2^32+5 is not pid 5's: the position it would have moved stays at 0. After
  // the seek to 2^53 - 2 a read ends past 2^53: the position is unknown from then on (-1).
  CHECK(read_offsets == std::vector<int64_t>{0, 9007199254740990, -1});
  CHECK(Warns(*stats, "s.txt line 2", "pid 4294967301 is outside"));
  CHECK(Warns(*stats, "s.txt line 4", "child pid 4294967302 is outside"));
}

TEST_CASE("ImportTrace refuses a trace whose durations add up past 2^62") {
  TempDir dir;
  std::string text;
  // 600 events of 2^53 us each: 600 * 2^53 > 2^62 (each is legal alone).
  for (int i = 0; i < 600; ++i) text += Pfw("5", "9007199254740992", "0");
  WriteTextFile(dir / "t.pfw", text);
  ProfileTrace t;
  auto r = ImportTrace(dir / "t.pfw", &t);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("t.pfw") && Catch::Contains("2^62"));
}

}  // namespace
}  // namespace dlio
