#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

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

// Hand-written lines in strace 6.1's format. Relative paths are joined with the process's
// cwd: chdir, fchdir, inherited by a forked child, shared by a CLONE_FS thread; openat with
// AT_FDCWD or a directory fd; before any chdir the cwd is unknown and paths stay relative.
TEST_CASE("ImportStrace joins relative paths with the working directory") {
  TempDir dir;
  WriteTextFile(dir / "log.txt",
                R"(10 1.000001 openat(AT_FDCWD, "early.bin", O_RDONLY) = 3 <0.000001>
10 1.000002 chdir("/data/run") = 0 <0.000001>
10 1.000003 openat(AT_FDCWD, "a.bin", O_RDONLY) = 4 <0.000001>
10 1.000004 chdir("../other/./x") = 0 <0.000001>
10 1.000005 open("b.bin", O_RDONLY) = 5 <0.000001>
10 1.000006 chdir("/nonexistent") = -1 ENOENT (No such file or directory) <0.000001>
10 1.000007 openat(AT_FDCWD, "/data//abs.bin", O_RDONLY) = 6 <0.000001>
10 1.000008 openat(AT_FDCWD, "/data/dir", O_RDONLY|O_DIRECTORY) = 7 <0.000001>
10 1.000009 openat(7, "sub/c.bin", O_RDONLY) = 8 <0.000001>
10 1.000010 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f0) = 11 <0.000010>
11 1.000011 openat(AT_FDCWD, "child.bin", O_RDONLY) = 9 <0.000001>
11 1.000012 fchdir(7) = 0 <0.000001>
11 1.000013 stat("d.bin", 0x7ffd) = 0 <0.000001>
10 1.000014 openat(AT_FDCWD, "parent.bin", O_RDONLY) = 9 <0.000001>
10 1.000015 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, exit_signal=0, stack=0x7f, stack_size=0x7fff80}, 88) = 12 <0.000010>
12 1.000016 chdir("/t") = 0 <0.000001>
10 1.000017 openat(AT_FDCWD, "shared.bin", O_RDONLY) = 10 <0.000001>
)");
  ProfileTrace t;
  auto stats = ImportStrace(dir / "log.txt", &t);
  REQUIRE(stats.ok());
  std::vector<std::string> opened;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.kind[i] == OpKind::kOpen || t.kind[i] == OpKind::kStat) {
      opened.push_back(std::string(t.Get(i).path));
    }
  }
  CHECK(opened == std::vector<std::string>{"early.bin", "/data/run/a.bin", "/data/other/x/b.bin",
                                           "/data/abs.bin", "/data/dir", "/data/dir/sub/c.bin",
                                           "/data/other/x/child.bin", "/data/dir/d.bin",
                                           "/data/other/x/parent.bin", "/t/shared.bin"});
}

TEST_CASE("ImportStrace sums iovec lengths of readv/writev/preadv/pwritev") {
  TempDir dir;
  WriteTextFile(dir / "log.txt",
                R"(5 1.000001 openat(AT_FDCWD, "/d/v.bin", O_RDWR) = 3 <0.000001>
5 1.000002 writev(3, [{iov_base="abc", iov_len=3}, {iov_base="iov_len=99\"", iov_len=11}], 2) = 14 <0.000001>
5 1.000003 lseek(3, 0, SEEK_SET) = 0 <0.000001>
5 1.000004 readv(3, [{iov_base="abc", iov_len=4}, {iov_base="iov_len=99\"", iov_len=16}], 2) = 14 <0.000001>
5 1.000005 preadv(3, [{iov_base="bc", iov_len=2}], 1, 1) = 2 <0.000001>
5 1.000006 pwritev(3, [{iov_base="zz", iov_len=2}, {iov_base="y", iov_len=1}], 2, 100) = 3 <0.000001>
5 1.000007 readv(3, [{iov_base="", iov_len=1}, ...], 40) = 0 <0.000001>
5 1.000008 readv(3, 0x7ffd, 2) = -1 EFAULT (Bad address) <0.000001>
)");
  ProfileTrace t;
  REQUIRE(ImportStrace(dir / "log.txt", &t).ok());
  const auto ev = EventsOf(t, "/d/v.bin");
  REQUIRE(ev.size() == 8);
  CHECK(ev[1].size == 14);
  CHECK(ev[1].offset == 0);
  CHECK(ev[3].size == 20);
  CHECK(ev[3].ret == 14);
  CHECK(ev[3].offset == 0);
  CHECK(ev[4].size == 2);
  CHECK(ev[4].offset == 1);
  CHECK(ev[5].size == 3);
  CHECK(ev[5].offset == 100);
  CHECK(ev[6].size == -1);  // strace abbreviated the array
  CHECK(ev[6].offset == 14);
  CHECK(ev[7].size == -1);
  CHECK(ev[7].ret == -EFAULT);
}

// O_APPEND writes go to the file's end, which a log does not show: offset -1, and the position
// stays unknown until a seek. ret: -errno for every errno name glibc knows; EPERM (1) and
// unknown names leave -1, the model's "unknown".
TEST_CASE("ImportStrace: O_APPEND writes have no offset, errno names") {
  TempDir dir;
  WriteTextFile(
      dir / "log.txt",
      R"(5 1.000001 openat(AT_FDCWD, "/d/log.txt", O_WRONLY|O_CREAT|O_APPEND, 0644) = 3 <0.000001>
5 1.000002 write(3, "hello", 5) = 5 <0.000001>
5 1.000003 pwrite64(3, "x", 1, 0) = 1 <0.000001>
5 1.000004 write(3, "again", 5) = 5 <0.000001>
5 1.000005 lseek(3, 0, SEEK_CUR) = 11 <0.000001>
5 1.000006 fcntl(3, F_SETFL, O_WRONLY) = 0 <0.000001>
5 1.000007 write(3, "ab", 2) = 2 <0.000001>
5 1.000008 openat(AT_FDCWD, "/d/x", O_RDONLY) = -1 ENODATA (No data available) <0.000001>
5 1.000009 openat(AT_FDCWD, "/d/y", O_RDONLY|O_NOATIME) = -1 EPERM (Operation not permitted) <0.000001>
5 1.000010 openat(AT_FDCWD, "/d/z", O_RDONLY) = -1 EWEIRD (Made up) <0.000001>
)");
  ProfileTrace t;
  REQUIRE(ImportStrace(dir / "log.txt", &t).ok());
  const auto ev = EventsOf(t, "/d/log.txt");
  REQUIRE(ev.size() == 6);  // fcntl has no path in the model
  CHECK(ev[1].offset == -1);
  CHECK(ev[2].offset == -1);  // Linux appends a pwrite on an O_APPEND fd too
  CHECK(ev[3].offset == -1);
  CHECK(ev[4].offset == 11);
  CHECK(ev[5].offset == 11);  // O_APPEND cleared by F_SETFL: the tracked position again
  CHECK(EventsOf(t, "/d/x")[0].ret == -ENODATA);
  CHECK(EventsOf(t, "/d/y")[0].ret == -1);
  CHECK(EventsOf(t, "/d/z")[0].ret == -1);
}

// A live strace of Python: chdir, then relative opens (O_APPEND write, writev, readv, preadv;
// glibc 2.36 makes preadv the preadv2 system call).
TEST_CASE("ImportStrace on a live strace of cwd, O_APPEND and vectored I/O") {
  if (std::system("strace -o /dev/null true >/dev/null 2>&1") != 0) {
    WARN("strace is missing or cannot trace here; skipped");
    return;
  }
  TempDir dir;
  const std::string script =
      "import os\n"
      "os.chdir('" +
      dir.path() +
      "')\n"
      "fd = os.open('v.bin', os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)\n"
      "os.write(fd, b'12345')\n"
      "os.writev(fd, [b'a' * 10, b'b' * 20])\n"
      "os.close(fd)\n"
      "fd = os.open('v.bin', os.O_RDONLY)\n"
      "os.readv(fd, [bytearray(4), bytearray(6)])\n"
      "os.preadv(fd, [bytearray(3)], 7)\n"
      "os.read(fd, 2)\n"
      "os.close(fd)\n";
  WriteTextFile(dir / "prog.py", script);
  const std::string cmd = "cd / && strace -f -ttt -T -o " + (dir / "log") + " " +
                          testing::SystemPython() + " " + (dir / "prog.py");
  REQUIRE(std::system(cmd.c_str()) == 0);
  ProfileTrace t;
  REQUIRE(ImportStrace(dir / "log", &t).ok());
  std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>> io;  // call, offset, size, ret
  for (const auto& e : EventsOf(t, dir / "v.bin")) {
    if (e.kind == OpKind::kRead || e.kind == OpKind::kWrite) {
      io.emplace_back(std::string(e.name), e.offset, e.size, e.ret);
    }
  }
  using Row = std::tuple<std::string, int64_t, int64_t, int64_t>;
  CHECK(io == std::vector<Row>{{"write", -1, 5, 5},
                               {"writev", -1, 30, 30},
                               {"readv", 0, 10, 10},
                               {"preadv2", 7, 3, 3},  // glibc calls preadv2
                               {"read", 10, 2, 2}});
}

TEST_CASE("ImportStrace: ranks from the environments strace -v prints, kept by forked children") {
  TempDir dir;
  WriteTextFile(
      dir / "log.txt",
      R"(700   1795502550.100000 execve("/usr/bin/python3", ["python3", "loop.py"], ["SHELL=/bin/bash", "OMPI_COMM_WORLD_RANK=1", "PMI_RANK=7"]) = 0 <0.000294>
700   1795502550.100500 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f86cf435a10) = 701 <0.000141>
701   1795502550.100700 openat(AT_FDCWD, "/d/a.npz", O_RDONLY) = 3 <0.000045>
700   1795502550.100800 openat(AT_FDCWD, "/d/b.npz", O_RDONLY) = 3 <0.000045>
702   1795502550.100900 execve("/usr/bin/python3", ["python3"], 0x7ffd00c8d780 /* 37 vars */) = 0 <0.000294>
702   1795502550.101000 openat(AT_FDCWD, "/d/c.npz", O_RDONLY) = 3 <0.000045>
703   1795502550.101100 execve("/usr/bin/python3", ["python3"], ["PMIX_RANK=2", "OMPI_COMM_WORLD_RANK=x"]) = 0 <0.000294>
703   1795502550.101200 openat(AT_FDCWD, "/d/d.npz", O_RDONLY) = 3 <0.000045>
)");
  ProfileTrace t;
  REQUIRE(ImportStrace(dir / "log.txt", &t).ok());
  // Open MPI's variable first; the fork keeps it; no -v, no rank; a value that is no number is
  // passed over for the next variable.
  CHECK(t.ranks == std::map<int32_t, int32_t>{{700, 1}, {701, 1}, {703, 2}});
}

TEST_CASE("ImportStrace on a live strace -v of processes given launcher ranks") {
  TempDir dir;
  const std::string log = dir / "log.txt";
  const auto run = testing::RunCommand(
      "cd '" + dir.path() + "' && strace -f -v -ttt -T -o '" + log +
      "' sh -c 'OMPI_COMM_WORLD_RANK=0 cat /dev/null; OMPI_COMM_WORLD_RANK=1 cat /dev/null' 2>&1");
  INFO(run.output);
  if (run.exit_code == 127 || run.output.find("not found") != std::string::npos) {
    WARN("strace is not installed: the live test did not run");
    return;
  }
  REQUIRE(run.exit_code == 0);
  ProfileTrace t;
  REQUIRE(ImportStrace(log, &t).ok());
  std::vector<int32_t> ranks;
  for (const auto& [pid, rank] : t.ranks) ranks.push_back(rank);
  std::sort(ranks.begin(), ranks.end());
  CHECK(ranks == std::vector<int32_t>{0, 1});
}

}  // namespace
}  // namespace dlio
