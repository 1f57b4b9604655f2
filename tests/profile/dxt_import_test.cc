#include <catch2/catch.hpp>

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
  CHECK(w.category == "X_POSIX");
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
