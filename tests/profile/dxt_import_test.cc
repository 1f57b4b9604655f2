#include <catch2/catch.hpp>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <string>

#include "dlio/profile.h"
#include "test_util.h"

namespace dlio {
namespace {

using testing::TempDir;
using testing::WriteTextFile;

// As darshan-dxt-parser prints it (darshan-util/darshan-dxt-logutils.c formats).
const char kOld[] =
    "# darshan log version: 3.41\n"
    "# start_time: 1700000000\n"
    "# ***************************************************\n"
    "# DXT_POSIX module data\n"
    "# ***************************************************\n"
    "\n"
    "# DXT, file_id: 16457598720760448348, file_name: /tmp/test/testFile\n"
    "# DXT, rank: 0, hostname: node1\n"
    "# DXT, write_count: 2, read_count: 1\n"
    "# DXT, mnt_pt: /, fs_type: ext4\n"
    "# Module    Rank  Wt/Rd  Segment          Offset       Length    Start(s)      End(s)\n"
    " X_POSIX       0  write        0               0       262144      0.0029      0.0032\n"
    " X_POSIX       0  write        1          262144       262144      0.0032      0.0035\n"
    " X_POSIX       0   read        0               0       262144      0.0048      0.0048\n"
    "\n"
    "# DXT, file_id: 1, file_name: /tmp/test/other\n"
    "# DXT, rank: 1, hostname: node2\n"
    "# Module    Rank  Wt/Rd  Segment          Offset       Length    Start(s)      End(s)\n"
    " X_MPIIO       1   read        0             N/A          100      1.0000      1.5000\n";

TEST_CASE("ImportDxt reads darshan-dxt-parser text") {
  TempDir dir;
  WriteTextFile(dir / "dxt.txt", kOld);
  ProfileTrace t;
  auto stats = ImportDxt(dir / "dxt.txt", &t);
  REQUIRE(stats.ok());
  REQUIRE(t.size() == 4);
  const ProfileEvent w = t.Get(1);
  CHECK(w.name == "write");
  CHECK(w.kind == OpKind::kWrite);
  CHECK(w.category == "POSIX");
  CHECK(w.path == "/tmp/test/testFile");
  CHECK(w.offset == 262144);
  CHECK(w.size == 262144);
  CHECK(w.start_us == 1700000000003200);
  CHECK(w.dur_us == 300);
  const ProfileEvent m = t.Get(3);
  CHECK(m.pid == 1);
  CHECK(m.tid == 1);
  CHECK(m.offset == -1);
  CHECK(m.path == "/tmp/test/other");
  CHECK(m.dur_us == 500000);
  CHECK(m.category == "MPIIO");
  // Each rank's pid is the rank (dlio-run fit groups the events by it).
  CHECK(t.ranks == std::map<int32_t, int32_t>{{0, 0}, {1, 1}});
}

// Rows printed with darshan-util's exact printf formats (darshan-hpc/darshan
// darshan-util/darshan-dxt-logutils.c at 06e354c9: dxt_log_print_posix_file with a Lustre
// "[OST]" column, dxt_log_print_mpiio_file; the 3.1 era's MPIIO rows had no Offset column and
// "%13lld" lengths).
std::string Row(const char* module, int64_t rank, const char* op, int seg, int64_t offset,
                int64_t length, double start, double end) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), "%8s%8" PRId64 "%7s%9d%16" PRId64 "%16" PRId64 "%12.4f%12.4f",
                module, rank, op, seg, offset, length, start, end);
  return buf;
}

TEST_CASE("ImportDxt reads every row type darshan-dxt-parser prints") {
  TempDir dir;
  std::string text =
      "# start_time: 1700000000.250000000\n"
      "\n# DXT, file_id: 42, file_name: /lustre/a\n"
      "# DXT, rank: 2, hostname: n1\n"
      "# DXT, write_count: 1, read_count: 1\n"
      "# DXT, mnt_pt: /lustre, fs_type: lustre\n"
      "# DXT, Lustre stripe_size: 1048576, Lustre stripe_count: 2\n"
      "# DXT, Lustre OST obdidx: 7 9\n"
      "# Module    Rank  Wt/Rd  Segment          Offset       Length    Start(s)      End(s)  "
      "[OST]\n";
  text += Row("X_POSIX", 2, "write", 0, 0, 2097152, 0.5, 0.75) + "  [  7]  [  9]\n";
  text += Row("X_POSIX", 2, "read", 0, 1048576, 10, 1.0, 1.0001) + "  [  9]\n";
  text +=
      "\n# DXT, file_id: 42, file_name: /lustre/a\n"
      "# DXT, rank: 2, hostname: n1\n"
      "# Module    Rank  Wt/Rd  Segment          Offset       Length    Start(s)      End(s)\n";
  text += Row("X_MPIIO", 2, "write", 0, 0, 2097152, 0.4, 0.8) + "\n";
  char old[128];
  std::snprintf(old, sizeof(old), "%8s%8d%7s%9lld%13lld%12.4f%12.4f\n", "X_MPIIO", 3, "read", 0LL,
                4096LL, 2.0, 2.5);
  text +=
      "\n# DXLT, file_id: 43, file_name: /lustre/b\n"
      "# DXLT, rank: 3, write_count: 0, read_count: 1\n"
      "# Module    Rank  Wt/Rd  Segment       Length    Start(s)      End(s)\n";
  text += old;
  WriteTextFile(dir / "dxt.txt", text);
  ProfileTrace t;
  auto stats = ImportDxt(dir / "dxt.txt", &t);
  REQUIRE(stats.ok());
  REQUIRE(t.size() == 4);
  const ProfileEvent w = t.Get(0);
  CHECK(w.category == "POSIX");
  CHECK(w.kind == OpKind::kWrite);
  CHECK(w.pid == 2);
  CHECK(w.size == 2097152);
  CHECK(w.start_us == 1700000000750000);
  CHECK(w.dur_us == 250000);
  CHECK(t.Get(1).offset == 1048576);
  CHECK(t.Get(1).size == 10);
  CHECK(t.Get(2).category == "MPIIO");
  CHECK(t.Get(2).path == "/lustre/a");
  const ProfileEvent m = t.Get(3);
  CHECK(m.category == "MPIIO");
  CHECK(m.kind == OpKind::kRead);
  CHECK(m.path == "/lustre/b");
  CHECK(m.offset == -1);
  CHECK(m.size == 4096);
  CHECK(m.pid == 3);
  CHECK(m.start_us == 1700000002250000);
}

TEST_CASE("ImportDxt takes the thread column when the header has one") {
  TempDir dir;
  WriteTextFile(dir / "dxt.txt",
                "# DXT, file_id: 5, file_name: /d/f\n"
                "# Module    Rank  Pthread-ID  Wt/Rd  Segment   Offset   Length  Start(s)  End(s)\n"
                " X_POSIX       3  140001  read     0      4096     4096   0.5000   0.5001\n");
  ProfileTrace t;
  auto stats = ImportDxt(dir / "dxt.txt", &t);
  REQUIRE(stats.ok());
  REQUIRE(t.size() == 1);
  CHECK(t.Get(0).pid == 3);
  CHECK(t.Get(0).tid == 140001);
  CHECK(t.Get(0).offset == 4096);
  CHECK(t.Get(0).start_us == 500000);
}

TEST_CASE("ImportDxt names file and line of a bad row") {
  TempDir dir;
  WriteTextFile(dir / "a.txt", " X_POSIX 0 read 0 0 1 0.1 0.2\n");
  ProfileTrace t;
  auto r = ImportDxt(dir / "a.txt", &t);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("a.txt line 1"));
  WriteTextFile(dir / "b.txt",
                "# Module    Rank  Wt/Rd  Segment          Offset       Length    Start(s)      "
                "End(s)\n X_POSIX 0 read 0 zero 1 0.1 0.2\n");
  r = ImportDxt(dir / "b.txt", &t);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("b.txt line 2") && Catch::Contains("offset"));
}

}  // namespace
}  // namespace dlio
