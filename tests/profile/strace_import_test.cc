#include <catch2/catch.hpp>
#include <cstdlib>

#include "dlio/profile.h"
#include "test_util.h"

namespace dlio {
namespace {

using testing::TempDir;
using testing::WriteTextFile;

// Lines of a real `strace -f -ttt -T -o log ./prog data.bin` (noise calls removed) of this C
// program: write 100+50 bytes; reopen; read 10, 10; lseek 50; read 20; dup; fork, the child
// reads 5 through the dup (shared offset: at 70) and _exits; the parent reads 5 (at 75); a
// thread opens the file again and preads 7 at 3.
const char kRealLog[] =
    R"(505   1795502550.158070 execve("./prog", ["./prog", "/tmp/st/data.bin"], 0x7ffd00c8d780 /* 37 vars */) = 0 <0.000294>
505   1795502550.161740 openat(AT_FDCWD, "/tmp/st/data.bin", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3 <0.000082>
505   1795502550.161885 write(3, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"..., 100) = 100 <0.000075>
505   1795502550.162026 write(3, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"..., 50) = 50 <0.000047>
505   1795502550.162133 close(3)        = 0 <0.000044>
505   1795502550.162231 openat(AT_FDCWD, "/tmp/st/data.bin", O_RDONLY) = 3 <0.000045>
505   1795502550.162334 read(3, "\0\0\0\0\0\0\0\0\0\0", 10) = 10 <0.000043>
505   1795502550.162433 read(3, "\0\0\0\0\0\0\0\0\0\0", 10) = 10 <0.000042>
505   1795502550.162532 lseek(3, 50, SEEK_SET) = 50 <0.000042>
505   1795502550.162630 read(3, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 20) = 20 <0.000042>
505   1795502550.162728 dup(3)          = 4 <0.000041>
505   1795502550.162827 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f86cf435a10) = 506 <0.000141>
505   1795502550.163072 wait4(506,  <unfinished ...>
506   1795502550.163163 read(4, "\0\0\0\0\0", 5) = 5 <0.000043>
506   1795502550.163284 exit_group(0)   = ?
506   1795502550.163440 +++ exited with 0 +++
505   1795502550.163479 <... wait4 resumed>NULL, 0, NULL) = 506 <0.000395>
505   1795502550.163537 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=506, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---
505   1795502550.163594 read(3, "\0\0\0\0\0", 5) = 5 <0.000043>
505   1795502550.164523 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, child_tid=0x7f86cf434990, parent_tid=0x7f86cf434990, exit_signal=0, stack=0x7f86cec34000, stack_size=0x7fff80, tls=0x7f86cf4346c0} => {parent_tid=[507]}, 88) = 507 <0.000105>
507   1795502550.164961 openat(AT_FDCWD, "/tmp/st/data.bin", O_RDONLY) = 5 <0.000045>
507   1795502550.165066 pread64(5, "\0\0\0\0\0\0\0", 7, 3) = 7 <0.000044>
507   1795502550.165167 close(5)        = 0 <0.000043>
507   1795502550.165468 exit(0)         = ?
507   1795502550.165590 +++ exited with 0 +++
505   1795502550.165615 close(3)        = 0 <0.000043>
505   1795502550.165712 close(4)        = 0 <0.000042>
505   1795502550.165810 exit_group(0)   = ?
505   1795502550.166029 +++ exited with 0 +++
)";

std::vector<ProfileEvent> EventsOf(const ProfileTrace& t, std::string_view path) {
  std::vector<ProfileEvent> out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.Get(i).path == path) out.push_back(t.Get(i));
  }
  return out;
}

TEST_CASE("ImportStrace follows fds across dup, lseek, fork and threads (real strace log)") {
  TempDir dir;
  WriteTextFile(dir / "log.txt", kRealLog);
  ProfileTrace t;
  auto stats = ImportStrace(dir / "log.txt", &t);
  REQUIRE(stats.ok());
  const auto ev = EventsOf(t, "/tmp/st/data.bin");
  REQUIRE(ev.size() == 16);
  struct Want {
    const char* name;
    int32_t pid, tid;
    int64_t offset, size, ret;
  };
  const Want want[] = {
      {"openat", 505, 505, -1, -1, 3},  {"write", 505, 505, 0, 100, 100},
      {"write", 505, 505, 100, 50, 50}, {"close", 505, 505, -1, -1, 0},
      {"openat", 505, 505, -1, -1, 3},  {"read", 505, 505, 0, 10, 10},
      {"read", 505, 505, 10, 10, 10},   {"lseek", 505, 505, 50, -1, 50},
      {"read", 505, 505, 50, 20, 20},   {"read", 506, 506, 70, 5, 5},
      {"read", 505, 505, 75, 5, 5},     {"openat", 505, 507, -1, -1, 5},
      {"pread64", 505, 507, 3, 7, 7},   {"close", 505, 507, -1, -1, 0},
      {"close", 505, 505, -1, -1, 0},   {"close", 505, 505, -1, -1, 0},
  };
  for (size_t i = 0; i < ev.size(); ++i) {
    INFO("event " << i << " " << ev[i].name);
    CHECK(ev[i].name == want[i].name);
    CHECK(ev[i].pid == want[i].pid);
    CHECK(ev[i].tid == want[i].tid);
    CHECK(ev[i].offset == want[i].offset);
    CHECK(ev[i].size == want[i].size);
    CHECK(ev[i].ret == want[i].ret);
  }
  CHECK(ev[5].start_us == 1795502550162334);
  CHECK(ev[5].dur_us == 43);
  CHECK(ev[5].category == "strace");
}

TEST_CASE("ImportStrace joins unfinished and resumed calls and reads [pid N] prefixes") {
  TempDir dir;
  WriteTextFile(
      dir / "log.txt",
      "[pid 10] 100.000001 openat(AT_FDCWD, \"/d/x\", O_RDONLY|O_CLOEXEC) = 4 <0.000010>\n"
      "[pid 10] 100.000020 read(4,  <unfinished ...>\n"
      "[pid 11] 100.000021 stat(\"/d/y\", {st_mode=S_IFREG|0644, ...}) = 0 <0.000002>\n"
      "[pid 10] 100.000500 <... read resumed>\"ab\\\"c\\n\"..., 4096) = 4096 <0.000480>\n"
      "[pid 10] 100.000600 read(4, \"\", 4096) = 0 <0.000001>\n"
      "[pid 10] 100.000700 openat(AT_FDCWD, \"/d/none\", O_RDONLY) = -1 ENOENT (No such "
      "file or directory) <0.000003>\n"
      "[pid 10] 100.000800 execve(\"/bin/true\", [\"true\"], 0x1 /* 2 vars */) = 0 "
      "<0.000100>\n"
      "[pid 10] 100.000900 read(4, \"\", 1) = -1 EBADF (Bad file descriptor) <0.000001>\n"
      "[pid 10] 100.001000 +++ exited with 0 +++\n");
  ProfileTrace t;
  auto stats = ImportStrace(dir / "log.txt", &t);
  REQUIRE(stats.ok());
  const auto reads = EventsOf(t, "/d/x");
  REQUIRE(reads.size() == 3);  // open and two reads; after execve fd 4 (O_CLOEXEC) is gone
  CHECK(reads[1].start_us == 100000020);
  CHECK(reads[1].dur_us == 480);
  CHECK(reads[1].offset == 0);
  CHECK(reads[1].ret == 4096);
  CHECK(reads[2].offset == 4096);
  const auto stat = EventsOf(t, "/d/y");
  REQUIRE(stat.size() == 1);
  CHECK(stat[0].kind == OpKind::kStat);
  CHECK(stat[0].pid == 11);
  const auto none = EventsOf(t, "/d/none");
  REQUIRE(none.size() == 1);
  CHECK(none[0].ret == -2);  // -ENOENT
  const auto last = t.Get(t.size() - 1);
  CHECK(last.name == "read");
  CHECK(last.path.empty());
}

TEST_CASE(
    "ImportStrace takes the path of an fd decorated by strace -y when it has no table entry") {
  TempDir dir;
  WriteTextFile(dir / "log.txt",
                "7 5.000000 read(3</data/a b.npz>, \"xy\", 2) = 2 <0.000001>\n"
                "7 5.000010 openat(AT_FDCWD</root>, \"/data/c\", O_RDONLY) = 4</data/c> "
                "<0.000001>\n"
                "7 5.000020 pread64(4</data/c>, \"z\", 1, 9) = 1 <0.000001>\n");
  ProfileTrace t;
  auto stats = ImportStrace(dir / "log.txt", &t);
  REQUIRE(stats.ok());
  REQUIRE(t.size() == 3);
  CHECK(t.Get(0).path == "/data/a b.npz");
  CHECK(t.Get(0).ret == 2);
  CHECK(t.Get(1).path == "/data/c");
  CHECK(t.Get(1).ret == 4);
  CHECK(t.Get(2).path == "/data/c");
  CHECK(t.Get(2).offset == 9);
}

TEST_CASE("ImportStrace names file and line of a line it cannot parse") {
  TempDir dir;
  WriteTextFile(dir / "log.txt", "1 1.000001 close(3) = 0 <0.000001>\n1 garbage here\n");
  ProfileTrace t;
  auto r = ImportStrace(dir / "log.txt", &t);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("log.txt line 2"));
  WriteTextFile(dir / "log2.txt", "1 1.000001 read(3, \"x\", 1 <0.000001>\n");
  r = ImportStrace(dir / "log2.txt", &t);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("line 1"));
}

// A live strace of dd (opens the input, dup2s it to fd 0, lseeks past skip=2 blocks, reads 3
// blocks of 10) under /bin/sh (vfork/clone): the reads land at 20, 30, 40.
TEST_CASE("ImportStrace on a live strace of dd") {
  if (std::system("strace -o /dev/null true >/dev/null 2>&1") != 0) {
    WARN("strace is missing or cannot trace here; skipped");
    return;
  }
  TempDir dir;
  WriteTextFile(dir / "in.bin", std::string(1000, 'x'));
  const std::string cmd = "strace -f -ttt -T -o " + (dir / "log") +
                          " /bin/sh -c 'dd if=" + (dir / "in.bin") +
                          " of=/dev/null bs=10 count=3 skip=2 2>/dev/null; true'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  ProfileTrace t;
  auto stats = ImportStrace(dir / "log", &t);
  REQUIRE(stats.ok());
  std::vector<int64_t> offsets;
  for (const auto& e : EventsOf(t, dir / "in.bin")) {
    if (e.kind == OpKind::kRead) {
      offsets.push_back(e.offset);
      CHECK(e.ret == 10);
      CHECK(e.pid != t.pid[0]);  // dd runs in the shell's child
    }
  }
  CHECK(offsets == std::vector<int64_t>{20, 30, 40});
}

}  // namespace
}  // namespace dlio
