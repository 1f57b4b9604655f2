// Hostile trace files: nesting, line length, non-regular files and fork-heavy strace logs must
// end in an error naming the file (or a result) with bounded stack, memory and work.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <map>
#include <random>
#include <string>

#include "child_memory.h"
#include "dlio/profile_analysis.h"
#include "profile/import/line_reader.h"
#include "profile/import/strace_fd_table.h"
#include "test_util.h"
#include "write_gzip.h"

namespace dlio {
namespace {

using testing::RunInChild;
using testing::TempDir;
using testing::WriteGzip;
using testing::WriteTextFile;

std::string Event(int64_t ts, const std::string& args) {
  return "{\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(ts) +
         ",\"dur\":1,\"ph\":\"X\",\"args\":" + args + "}\n";
}

std::string Nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST_CASE("ImportPfw refuses JSON nested deeper than 512 levels, naming file and line") {
  TempDir dir;
  // 1,000,000 levels: a recursive walk overflows any thread's stack.
  const std::string deep = Event(1, "{\"x\":" + Nested(1000000) + "}");
  WriteTextFile(dir / "last.pfw", Event(0, "{}") + deep);  // the last line: not "cut short"
  WriteGzip(dir / "middle.pfw.gz", Event(0, "{}") + deep + Event(2, "{}"));
  for (const char* name : {"last.pfw", "middle.pfw.gz"}) {
    ProfileTrace t;
    auto r = ImportTrace(dir / name, &t);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kCorruption);
    CHECK_THAT(r.status().message(), Catch::Contains(std::string(name) + " line 2") &&
                                         Catch::Contains("nested deeper than 512"));
  }
  // As deep as allowed (the event and its args are two levels) still imports.
  WriteTextFile(dir / "ok.pfw", Event(0, "{\"x\":" + Nested(510) + ",\"fname\":\"/d/f\"}"));
  ProfileTrace t;
  auto ok = ImportTrace(dir / "ok.pfw", &t);
  REQUIRE(ok.ok());
  REQUIRE(t.size() == 1);
  CHECK(t.Get(0).path == "/d/f");
}

TEST_CASE("LineReader: a line longer than the cap fails naming file and line") {
  TempDir dir;
  WriteTextFile(dir / "t.txt", "short\n" + std::string(10000, 'x') + "\nafter\n");
  profile_internal::LineReader reader(4096);
  REQUIRE(reader.Open(dir / "t.txt").ok());
  std::string_view line;
  REQUIRE(reader.Next(&line));
  CHECK(line == "short");
  CHECK_FALSE(reader.Next(&line));
  REQUIRE_FALSE(reader.status().ok());
  CHECK_THAT(reader.status().message(),
             Catch::Contains("t.txt line 2") && Catch::Contains("longer than 4096 bytes"));
}

TEST_CASE("LineReader searches each byte once, however long the line") {
  TempDir dir;
  // 24 MiB lines read in 1 MiB blocks: searching the whole partial line after every block
  // would look at ~300 MiB per line.
  const std::string text =
      "a\n" + std::string(24 << 20, 'y') + "\nb\n" + std::string(24 << 20, 'z') + "\n";
  WriteTextFile(dir / "plain.txt", text);
  WriteGzip(dir / "text.gz", text);
  for (const char* name : {"plain.txt", "text.gz"}) {
    profile_internal::LineReader reader;
    REQUIRE(reader.Open(dir / name).ok());
    std::string_view line;
    std::vector<size_t> sizes;
    while (reader.Next(&line)) sizes.push_back(line.size());
    REQUIRE(reader.status().ok());
    CHECK(sizes == std::vector<size_t>{1, 24 << 20, 1, 24 << 20});
    CHECK(reader.bytes_scanned() <= static_cast<int64_t>(text.size()));
  }
}

// One line of 384 MiB of spaces: 384 gzip members of 1 MiB each (~400 KB on disk).
void WriteLineBomb(const std::string& path) {
  const std::string spaces(1 << 20, ' ');
  WriteGzip(path + ".member", spaces);
  const std::string member = testing::ReadTextFile(path + ".member");
  std::string bomb;
  for (int i = 0; i < 384; ++i) bomb += member;
  WriteTextFile(path, bomb);
}

TEST_CASE("ImportTrace of a gzip line bomb fails with bounded memory, naming file and line") {
  TempDir dir;
  WriteLineBomb(dir / "bomb.pfw.gz");
  const auto run = RunInChild([&] {
    ProfileTrace t;
    auto r = ImportTrace(dir / "bomb.pfw.gz", &t);
    const bool named = !r.ok() && r.status().message().find("bomb.pfw.gz line 1: longer than") !=
                                      std::string::npos;
    return named ? 0 : 1;
  });
  CHECK(run.exit_code == 0);
  // The cap (64 MiB) plus a block, with room for a sanitizer's shadow; holding the whole line
  // would take 384 MiB.
  CHECK(run.rss_growth_kib < 160 * 1024);
}

TEST_CASE("A long but legal line (8 MiB) still imports, plain and gzip") {
  TempDir dir;
  const std::string line =
      Event(5, "{\"blob\":\"" + std::string(8 << 20, 'b') + "\",\"fname\":\"/d/long\"}");
  WriteTextFile(dir / "long.pfw", line);
  WriteGzip(dir / "long.pfw.gz", line + line);
  for (const char* name : {"long.pfw", "long.pfw.gz"}) {
    ProfileTrace t;
    auto r = ImportTrace(dir / name, &t);
    REQUIRE(r.ok());
    REQUIRE(t.size() >= 1);
    CHECK(t.Get(0).path == "/d/long");
    CHECK(t.Get(0).start_us == 5);
  }
}

// Runs `import` on a path that would block a blocking open; a stuck import is freed by a writer
// after a minute, and fails the test.
Status ImportWithoutBlocking(const std::string& fifo,
                             const std::function<Status(const std::string&)>& import) {
  auto done = std::async(std::launch::async, [&] { return import(fifo); });
  if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    done.wait();
    FAIL("the import of " << fifo << " blocked on the FIFO");
  }
  return done.get();
}

TEST_CASE("Importers refuse a FIFO at once, naming it (a file or an entry of a directory)") {
  TempDir dir;
  REQUIRE(mkfifo((dir / "fifo").c_str(), 0600) == 0);
  using Importer = Result<ImportStats> (*)(const std::string&, ProfileTrace*);
  for (Importer import : {&ImportTrace, &ImportPfw, &ImportStrace, &ImportDxt}) {
    const Status s = ImportWithoutBlocking(dir / "fifo", [&](const std::string& p) {
      ProfileTrace t;
      return import(p, &t).status();
    });
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(),
               Catch::Contains(dir / "fifo") && Catch::Contains("not a regular file (a FIFO)"));
  }
  // A profile directory with a FIFO named like a trace: refused by name, not waited on.
  TempDir prof;
  WriteTextFile(prof / "a.pfw", Event(1, "{\"fname\":\"/d/a\"}"));
  REQUIRE(mkfifo((prof / "b.pfw").c_str(), 0600) == 0);
  const Status s = ImportWithoutBlocking(prof.path(), [&](const std::string& p) {
    ProfileTrace t;
    return ImportTrace(p, &t).status();
  });
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains(prof / "b.pfw") && Catch::Contains("FIFO"));
  // A device that never ends (no newline in /dev/zero) is refused as well, not read for ever.
  ProfileTrace t;
  auto zero = ImportPfw("/dev/zero", &t);
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(zero.status().message(),
             Catch::Contains("/dev/zero") && Catch::Contains("a character device"));
}

TEST_CASE("FdTable: a persistent map, copies are independent values") {
  using profile_internal::Description;
  using profile_internal::FdEntry;
  using profile_internal::FdTable;
  std::mt19937 rng(7);
  std::map<int64_t, int> want;
  FdTable table;
  std::vector<std::pair<FdTable, std::map<int64_t, int>>> snapshots;
  auto entry = [](int v) {
    auto d = std::make_shared<Description>();
    d->path = std::to_string(v);
    return FdEntry{d, v % 3 == 0};
  };
  for (int op = 0; op < 5000; ++op) {
    const int64_t fd = static_cast<int64_t>(rng() % 300);
    if (rng() % 3 == 0) {
      table.Erase(fd);
      want.erase(fd);
    } else {
      table.Set(fd, entry(op));
      want[fd] = op;
    }
    if (op % 500 == 0) snapshots.emplace_back(table, want);
    if (op == 4000) {
      table.EraseCloexec();
      std::erase_if(want, [](const auto& kv) { return kv.second % 3 == 0; });
    }
  }
  snapshots.emplace_back(table, want);
  for (const auto& [snap, expected] : snapshots) {
    for (int64_t fd = 0; fd < 300; ++fd) {
      const FdEntry* e = snap.Find(fd);
      const auto it = expected.find(fd);
      REQUIRE((e != nullptr) == (it != expected.end()));
      if (e != nullptr) CHECK(e->desc->path == std::to_string(it->second));
    }
  }
}

// A process holding `fds` files forks `children` times; each child opens a file of its own and
// reads through an inherited fd and through its own.
std::string ForkHeavyLog(int fds, int children) {
  std::string log;
  auto line = [&](int pid, const std::string& call) {
    log += std::to_string(pid) + "   1795502550.000001 " + call + " <0.000001>\n";
  };
  for (int i = 0; i < fds; ++i) {
    line(100, "openat(AT_FDCWD, \"/d/f" + std::to_string(i) +
                  "\", O_RDONLY) = " + std::to_string(3 + i));
  }
  for (int c = 0; c < children; ++c) {
    const int pid = 1000 + c;
    line(100, "clone(child_stack=NULL, flags=SIGCHLD) = " + std::to_string(pid));
    line(pid, "openat(AT_FDCWD, \"/d/own\", O_RDONLY) = " + std::to_string(3 + fds));
    line(pid, "read(3, \"\"..., 10) = 10");
    line(pid, "read(" + std::to_string(3 + fds) + ", \"\"..., 7) = 7");
  }
  return log;
}

TEST_CASE("ImportStrace of thousands of forks of a process holding many fds: linear memory") {
  TempDir dir;
  constexpr int kFds = 2000, kChildren = 2000;
  WriteTextFile(dir / "forks.txt", ForkHeavyLog(kFds, kChildren));
  const auto run = RunInChild([&] {
    ProfileTrace t;
    const int64_t nodes = profile_internal::FdTable::nodes_made();
    auto r = ImportStrace(dir / "forks.txt", &t);
    if (!r.ok() || t.size() != static_cast<size_t>(kFds + 3 * kChildren)) return 1;
    // Each line changes a table at most once, copying one path of the tree (depth ~16).
    const int64_t lines = kFds + 4 * kChildren;
    return profile_internal::FdTable::nodes_made() - nodes <= 40 * lines ? 0 : 2;
  });
  CHECK(run.exit_code == 0);
  // Copying the parent's table per fork held 4 M entries (~250 MB).
  CHECK(run.rss_growth_kib < 96 * 1024);

  // The semantics: inherited fds share the open file description (and its offset).
  ProfileTrace t;
  REQUIRE(ImportStrace(dir / "forks.txt", &t).ok());
  int inherited = 0, own = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const ProfileEvent e = t.Get(i);
    if (e.kind != OpKind::kRead) continue;
    if (e.path == "/d/f0") {
      CHECK(e.offset == 10 * inherited);  // one description, advanced by every child in turn
      ++inherited;
    } else {
      CHECK(e.path == "/d/own");
      CHECK(e.offset == 0);  // each child's own open
      ++own;
    }
  }
  CHECK(inherited == kChildren);
  CHECK(own == kChildren);
}

}  // namespace
}  // namespace dlio
