// libdlio_preload.so under real programs: every expected event, with exact offsets and sizes.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "preload_test_util.h"
#include "test_util.h"

namespace {

using dlio::preload_test::ArgOr;
using dlio::preload_test::BytesCovered;
using dlio::preload_test::ReadEvents;
using dlio::preload_test::TraceFiles;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;
using nlohmann::json;

constexpr int64_t kAnyFd = -1000;  // an open's ret: any descriptor >= 0

struct Expected {
  const char* name;
  std::string fname;
  int64_t offset;  // -1: absent
  int64_t count;   // -1: absent
  int64_t ret;
};

// Runs `args` under the interposer with traces in `out` and `data_dirs` as the filter.
dlio::testing::CommandResult RunTraced(const std::string& out, const std::string& data_dirs,
                                       const std::string& args) {
  return RunCommand("DLIO_PRELOAD_OUTPUT='" + out + "' DLIO_PRELOAD_DATA_DIRS='" + data_dirs +
                    "' LD_PRELOAD='" DLIO_PRELOAD_LIB "' '" DLIO_PRELOAD_IO_PROGRAM "' " + args);
}

// A temporary directory with out/ (for the traces) and data/ holding in.bin of `size` bytes.
struct TracedDirs {
  TempDir tmp;
  std::string out = tmp / "out";
  std::string data = tmp / "data";
  std::string in = data + "/in.bin";
  explicit TracedDirs(size_t size) {
    for (const auto& d : {out, data}) std::filesystem::create_directory(d);
    dlio::testing::WriteTextFile(in, std::string(size, 'y'));
  }
};

void CheckEvents(const std::vector<json>& events, const std::vector<Expected>& expected) {
  for (size_t i = 0; i < std::min(events.size(), expected.size()); ++i) {
    const json& e = events[i];
    const Expected& x = expected[i];
    INFO("event " << i << ": " << e.dump());
    CHECK(e.at("name") == x.name);
    CHECK(e.at("args").at("fname") == x.fname);
    CHECK(ArgOr(e, "offset") == x.offset);
    CHECK(ArgOr(e, "count") == x.count);
    if (x.ret == kAnyFd) {
      CHECK(e.at("args").at("ret").get<int64_t>() >= 0);
    } else {
      CHECK(e.at("args").at("ret").get<int64_t>() == x.ret);
    }
  }
  CHECK(events.size() == expected.size());
}

TEST_CASE("preload traces every call of a program with exact offsets and sizes") {
  TempDir tmp;
  const std::string out = tmp / "out";
  const std::string data = tmp / "data";
  const std::string other = tmp / "other";
  for (const auto& d : {out, data, other}) std::filesystem::create_directory(d);

  const auto result = RunTraced(out, data, "basic '" + data + "' '" + other + "'");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const auto files = TraceFiles(out);
  REQUIRE(files.size() == 1);
  const std::string a = data + "/a.bin";
  const std::string b = data + "/b.bin";
  const std::string c = data + "/c.bin";
  CheckEvents(ReadEvents(files[0]), {
                                        {"open", a, -1, -1, kAnyFd},
                                        {"write", a, 0, 1000, 1000},
                                        {"pwrite", a, 2000, 500, 500},
                                        {"lseek", a, 100, -1, 100},
                                        {"read", a, 100, 300, 300},
                                        {"read", a, 400, 200, 200},  // through dup
                                        {"lseek", a, 0, -1, 2500},   // through dup2, SEEK_END
                                        {"read", a, 2500, 100, 0},
                                        {"pread", a, 2000, 1000, 500},
                                        {"lseek", a, 7, -1, 7},  // through fcntl(F_DUPFD_CLOEXEC)
                                        {"write", a, 7, 3, 3},   // the shared position
                                        {"fsync", a, -1, -1, 0},
                                        {"fdatasync", a, -1, -1, 0},
                                        {"close", a, -1, -1, 0},
                                        {"close", a, -1, -1, 0},
                                        {"close", a, -1, -1, 0},
                                        {"close", a, -1, -1, 0},
                                        {"open", data, -1, -1, kAnyFd},
                                        {"openat", b, -1, -1, kAnyFd},
                                        {"write", b, 0, 42, 42},
                                        {"close", b, -1, -1, 0},
                                        {"close", data, -1, -1, 0},
                                        {"creat", c, -1, -1, kAnyFd},
                                        {"pwrite64", c, 70, 7, 7},
                                        {"close", c, -1, -1, 0},
                                        {"open", data + "/missing.bin", -1, -1, -ENOENT},
                                    });
}

TEST_CASE("preload gives a forked child its own trace, complete although it ends with _exit") {
  const TracedDirs dirs(4096);
  const std::string &out = dirs.out, &data = dirs.data, &in = dirs.in;

  const auto result = RunTraced(out, data, "fork '" + data + "'");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  int parent = 0;
  int child = 0;
  REQUIRE(std::sscanf(result.output.c_str(), "parent %d child %d", &parent, &child) == 2);
  const auto files = TraceFiles(out);
  REQUIRE(files.size() == 2);

  const auto parent_events = ReadEvents(out + "/trace-" + std::to_string(parent) + ".pfw");
  CheckEvents(parent_events, {
                                 {"open", in, -1, -1, kAnyFd},
                                 {"pread", in, 3000, 10, 10},  // on another thread
                                 {"read", in, 0, 100, 100},
                                 {"read", in, 300, 300, 300},  // after the child's 200
                                 {"close", in, -1, -1, 0},
                             });
  REQUIRE(parent_events.size() == 5);
  CHECK(parent_events[1].at("tid") != parent_events[0].at("tid"));
  for (const json& e : parent_events) CHECK(e.at("pid") == parent);

  // The child's file holds its own two reads only (its parent's buffered events stay with the
  // parent), and is closed although _exit skips atexit handlers and destructors.
  const auto child_events = ReadEvents(out + "/trace-" + std::to_string(child) + ".pfw");
  CheckEvents(child_events, {
                                {"read", in, 100, 200, 200},
                                {"pread", in, 1000, 50, 50},
                            });
  for (const json& e : child_events) {
    CHECK(e.at("pid") == child);
    CHECK(e.at("tid") == child);
  }
}

TEST_CASE("preload traces vectored I/O, stat, mmap, stdio streams and unlink") {
  TempDir tmp;
  const std::string out = tmp / "out";
  const std::string data = tmp / "data";
  for (const auto& d : {out, data}) std::filesystem::create_directory(d);

  const auto result = RunTraced(out, data, "more '" + data + "'");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const auto files = TraceFiles(out);
  REQUIRE(files.size() == 1);
  const std::string d = data + "/d.bin";
  const std::string e = data + "/e.bin";
  const auto events = ReadEvents(files[0]);
  CheckEvents(events, {
                          {"open", d, -1, -1, kAnyFd},
                          {"writev", d, 0, 300, 300},
                          {"pwritev", d, 1000, 50, 50},
                          {"lseek", d, 10, -1, 10},
                          {"readv", d, 10, 50, 50},
                          {"preadv", d, 1000, 100, 50},
                          {"fstat", d, -1, -1, 0},
                          {"mmap", d, 0, 1050, 0},
                          {"munmap", d, -1, 1050, 0},
                          {"close", d, -1, -1, 0},
                          {"stat", d, -1, -1, 0},
                          {"lstat", data + "/missing.bin", -1, -1, -ENOENT},
                          {"unlink", d, -1, -1, 0},
                          {"unlink", data + "/missing.bin", -1, -1, -ENOENT},
                          {"fopen", e, -1, -1, kAnyFd},
                          {"fwrite", e, 0, 70, 70},
                          {"fseek", e, 5, -1, 0},
                          // beneath it: the flush, then a buffer read from the block boundary
                          {"stdio.write", e, 0, 70, 70},
                          {"stdio.read", e, 0, 4096, 70},
                          {"fread", e, 5, 20, 20},         // from the buffer: nothing beneath
                          {"fread", e, 25, 100, 0},        // 45 bytes left: no whole item
                          {"stdio.read", e, 70, 4096, 0},  // the refill finds the end
                          {"fclose", e, -1, -1, 0},
                          {"remove", e, -1, -1, 0},  // one event: not also glibc's unlink
                          {"open", data, -1, -1, kAnyFd},
                          {"unlinkat", data + "/sub", -1, -1, 0},  // relative to the folder
                          {"close", data, -1, -1, 0},
                      });
  for (const json& ev : events) {
    const std::string name = ev.at("name");
    const bool stdio = name[0] == 'f' && name.rfind("fstat", 0) != 0;
    CHECK(ev.at("cat") == (name.rfind("stdio.", 0) == 0 ? "SYSCALL" : stdio ? "STDIO" : "POSIX"));
  }
}

TEST_CASE("preload never writes into a file of the program that closed the trace descriptor") {
  TempDir tmp;
  const std::string out = tmp / "out";
  const std::string data = tmp / "data";
  for (const auto& d : {out, data}) std::filesystem::create_directory(d);
  const std::string in = data + "/in.bin";
  const std::string written = data + "/out.bin";
  dlio::testing::WriteTextFile(in, std::string(100, 'y'));

  const auto result = RunTraced(out, data, "closeall '" + data + "'");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  // out.bin took the number the trace file had: it holds the program's bytes only.
  CHECK(dlio::testing::ReadTextFile(written) == "hello");
  const auto files = TraceFiles(out);
  REQUIRE(files.size() == 1);
  CheckEvents(ReadEvents(files[0]), {
                                        {"open", in, -1, -1, kAnyFd},
                                        {"read", in, 0, 10, 10},
                                        {"close", in, -1, -1, 0},
                                        {"open", written, -1, -1, kAnyFd},
                                        {"write", written, 0, 5, 5},
                                        {"close", written, -1, -1, 0},
                                    });
}

TEST_CASE("preload keeps the events before exec and traces the new image into a file of its own") {
  const TracedDirs dirs(100);
  const std::string &out = dirs.out, &data = dirs.data, &in = dirs.in;

  const std::string mode = GENERATE("exec", "execl");
  INFO(mode);
  const auto result = RunTraced(out, data, mode + " '" + data + "'");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const auto files = TraceFiles(out);
  REQUIRE(files.size() == 2);  // trace-PID.pfw, then trace-PID-1.pfw (never replaced)
  // The first image's name is the shorter one.
  const std::string first = files[0].size() < files[1].size() ? files[0] : files[1];
  const std::string second = first == files[0] ? files[1] : files[0];
  CHECK(second.substr(second.size() - 6) == "-1.pfw");
  CheckEvents(ReadEvents(first), {
                                     {"open", in, -1, -1, kAnyFd},
                                     {"pread", in, 0, 11, 11},  // left open: exec flushes it
                                 });
  CheckEvents(ReadEvents(second), {
                                      {"open", in, -1, -1, kAnyFd},
                                      {"pread", in, 22, 33, 33},
                                      {"close", in, -1, -1, 0},
                                  });
}

TEST_CASE("preload follows the file position without asking the kernel, except where it must") {
  // (Also: paths with ".", ".." and "//" are resolved before they are filtered and recorded.)
  TempDir tmp;
  const std::string out = tmp / "out";
  const std::string data = tmp / "data";
  for (const auto& d : {out, data}) std::filesystem::create_directory(d);
  const std::string in = data + "/in.bin";
  const std::string app = data + "/app.bin";
  dlio::testing::WriteTextFile(in, std::string(4096, 'y'));
  dlio::testing::WriteTextFile(app, std::string(20, 'a'));

  const auto result = RunTraced(out, data, "position '" + data + "'");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const auto files = TraceFiles(out);
  REQUIRE(files.size() == 1);
  CheckEvents(ReadEvents(files[0]), {
                                        {"open", in, -1, -1, kAnyFd},
                                        {"read", in, 0, 10, 10},
                                        {"lseek", in, 50, -1, 50},
                                        {"read", in, 50, 10, 10},
                                        {"preadv2", in, 60, 5, 5},  // offset -1: the position
                                        {"preadv2", in, 7, 5, 5},
                                        {"read", in, 65, 5, 5},
                                        {"read", in, 100, 10, 10},  // sendfile moved it by 30
                                        {"close", in, -1, -1, 0},
                                        {"open", app, -1, -1, kAnyFd},
                                        {"write", app, 20, 7, 7},  // O_APPEND: at the end
                                        {"write", app, 27, 3, 3},
                                        {"close", app, -1, -1, 0},
                                        {"open", in, -1, -1, kAnyFd},
                                        // close_range: the pipe on its number is not traced;
                                        // DATA/../escaped.bin is outside DATA
                                    });
}

TEST_CASE("preload records a path with .. after a symbolic link as the file the kernel opens") {
  // data/d/link -> data/e/x: data/d/link/../secret is data/e/secret, not data/d/secret.
  const TracedDirs dirs(10);
  const std::string &out = dirs.out, &data = dirs.data;
  std::filesystem::create_directories(data + "/d");
  std::filesystem::create_directories(data + "/e/x");
  dlio::testing::WriteTextFile(data + "/d/secret", "next to the link\n");
  dlio::testing::WriteTextFile(data + "/e/secret", "what the kernel opens\n");
  std::filesystem::create_directory_symlink(data + "/e/x", data + "/d/link");
  const auto result =
      RunCommand("DLIO_PRELOAD_OUTPUT='" + out + "' DLIO_PRELOAD_DATA_DIRS='" + data +
                 "' LD_PRELOAD='" DLIO_PRELOAD_LIB "' cat '" + data + "/d/link/../secret'");
  INFO(result.output);
  REQUIRE(result.output == "what the kernel opens\n");
  const auto files = TraceFiles(out);
  REQUIRE(files.size() == 1);
  const auto events = ReadEvents(files[0]);
  REQUIRE(!events.empty());
  for (const json& e : events) CHECK(e.at("args").at("fname") == data + "/e/secret");
}

TEST_CASE("preload traces every data read of numpy in multiprocessing workers ending in _exit") {
  TempDir tmp;
  const std::string out = tmp / "out";
  const std::string data = tmp / "data";
  for (const auto& d : {out, data}) std::filesystem::create_directory(d);
  const std::string script = tmp / "pool.py";
  dlio::testing::WriteTextFile(script, R"(import multiprocessing as mp, numpy as np, os, sys
data = sys.argv[1]
def load(i):
    return int(np.load(os.path.join(data, 'x%d.npy' % i)).sum())
if __name__ == '__main__':
    for i in range(4):
        np.save(os.path.join(data, 'x%d.npy' % i), np.arange(1000 * (i + 1), dtype=np.int64))
    pool = mp.get_context('fork').Pool(2)
    print(pool.map(load, range(4), chunksize=1))
    pool.close()
    pool.join()  # workers end with os._exit
)");
  const auto result =
      RunCommand("DLIO_PRELOAD_OUTPUT='" + out + "' DLIO_PRELOAD_DATA_DIRS='" + data +
                 "' LD_PRELOAD='" DLIO_PRELOAD_LIB "' '" + dlio::testing::SystemPython() + "' '" +
                 script + "' '" + data + "'");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const auto files = TraceFiles(out);
  // The parent (np.save) and the workers that loaded: on a busy host one worker may take all
  // four tasks before the other runs, and a process that traced nothing leaves no file.
  REQUIRE(files.size() >= 2);
  REQUIRE(files.size() <= 3);
  std::vector<json> worker_reads;
  for (const auto& f : files) {
    for (json& e : ReadEvents(f)) {
      const std::string name = e.at("name");
      if (name == "read" || name == "fread" || name == "pread64") {
        worker_reads.push_back(std::move(e));
      }
    }
  }
  for (int i = 0; i < 4; ++i) {
    const std::string file = data + "/x" + std::to_string(i) + ".npy";
    INFO(file);
    CHECK(BytesCovered(worker_reads, file) == std::filesystem::file_size(file));
  }
}

TEST_CASE("preload traces libhdf5's reads of an h5py slice at the dataset's own offset") {
  TempDir tmp;
  const std::string out = tmp / "out";
  const std::string data = tmp / "data";
  for (const auto& d : {out, data}) std::filesystem::create_directory(d);
  const std::string script = tmp / "h5.py";
  const std::string h5 = data + "/a.h5";
  dlio::testing::WriteTextFile(script, R"(import h5py, numpy as np, sys
with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('x', data=np.arange(100000, dtype=np.int64))  # contiguous
with h5py.File(sys.argv[1], 'r') as f:
    x = f['x']
    assert x[1000:2000].sum() == sum(range(1000, 2000))
    print(x.id.get_offset())
)");
  const auto result = RunCommand("DLIO_PRELOAD_OUTPUT='" + out + "' DLIO_PRELOAD_DATA_DIRS='" +
                                 data + "' LD_PRELOAD='" DLIO_PRELOAD_LIB "' '" +
                                 dlio::testing::SystemPython() + "' '" + script + "' '" + h5 + "'");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const int64_t start = std::stoll(result.output) + 1000 * 8;  // element 1000 of the dataset
  const auto files = TraceFiles(out);
  REQUIRE(files.size() == 1);
  bool covered = false;
  for (const json& e : ReadEvents(files[0])) {
    if (e.at("name") != "pread" && e.at("name") != "pread64") continue;
    CHECK(e.at("args").at("fname") == h5);
    const int64_t offset = ArgOr(e, "offset");
    covered = covered || (offset <= start && offset + ArgOr(e, "ret") >= start + 8000);
  }
  CHECK(covered);  // one request holds the whole slice
}

TEST_CASE("preload: a vfork child that closes, fails to exec and _exits leaves its parent traced") {
  const TracedDirs dirs(100);
  const std::string &out = dirs.out, &data = dirs.data, &in = dirs.in;

  const auto result = RunTraced(out, data, "vfork '" + data + "'");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const auto files = TraceFiles(out);
  REQUIRE(files.size() == 2);  // the parent's, and the child's own (its close)
  const bool first_larger =
      std::filesystem::file_size(files[0]) > std::filesystem::file_size(files[1]);
  const std::string parent = first_larger ? files[0] : files[1];
  CheckEvents(ReadEvents(first_larger ? files[1] : files[0]), {{"close", in, -1, -1, 0}});
  CheckEvents(ReadEvents(parent), {
                                      {"open", in, -1, -1, kAnyFd},
                                      {"read", in, 0, 10, 10},
                                      {"read", in, 10, 20, 20},
                                      {"close", in, -1, -1, 0},
                                  });
}

TEST_CASE("dlio-run profile runs a program under the interposer and passes its exit code on") {
  TempDir tmp;
  const std::string out = tmp / "prof";  // created by profile
  const std::string data = tmp / "data";
  const std::string other = tmp / "other";
  for (const auto& d : {data, other}) std::filesystem::create_directory(d);
  const std::string dlio_run = DLIO_BINARY_DIR "/apps/dlio-run/dlio-run";

  // A relative --data-dir is taken from the working directory.
  const auto result = RunCommand(
      "cd '" + tmp.path() + "' && '" + dlio_run + "' profile --output '" + out +
      "' --data-dir data -- '" DLIO_PRELOAD_IO_PROGRAM "' basic '" + data + "' '" + other + "'");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  // One trace, then its analysis and report (apps/dlio-run/analyze.cc) and nothing else.
  const auto files = dlio::preload_test::DirectoryFiles(out);
  REQUIRE(files.size() == 4);
  CHECK(files[0] == out + "/analysis.json");
  CHECK(files[1] == out + "/analysis.txt");
  CHECK(files[2] == out + "/report.html");
  const auto events = ReadEvents(files[3]);
  CHECK(events.size() == 26);  // as in the LD_PRELOAD test above: outside.bin is not traced
  for (const json& e : events) {
    CHECK(e.at("args").at("fname").get<std::string>().rfind(data, 0) == 0);
  }

  const auto usage = RunCommand("'" + dlio_run + "' profile --output '" + out + "' -- '" +
                                DLIO_PRELOAD_IO_PROGRAM "' no-such-mode");
  CHECK(usage.exit_code == 1);  // the program's own exit code
  const auto missing =
      RunCommand("'" + dlio_run + "' profile --output '" + out + "' -- /nonexistent/program");
  CHECK(missing.exit_code == 127);
  CHECK(missing.output.find("/nonexistent/program") != std::string::npos);
}

TEST_CASE("preload counts the page faults inside reads of 16 KiB or more, POSIX and stdio") {
  TracedDirs d(0);
  const auto result = RunTraced(d.out, d.data, "faults '" + d.data + "'");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const auto files = TraceFiles(d.out);
  REQUIRE(files.size() == 1);
  std::vector<int64_t> reads;  // each pread's "minflt", -1 when absent
  for (const json& e : ReadEvents(files[0])) {
    INFO(e.dump());
    // A buffer already touched: none of its 64 pages (a fault of the kernel's own, such as the
    // first write to a new file, may count one or two).
    if (e.at("name") == "pwrite") CHECK(ArgOr(e, "minflt") <= 2);
    if (e.at("name") == "pread") reads.push_back(ArgOr(e, "minflt"));
    if (e.at("name") == "fread") CHECK(ArgOr(e, "minflt") >= 64);  // stdio's calls too
  }
  REQUIRE(reads.size() == 9);
  for (int i = 0; i < 3; ++i) CHECK(reads[i] >= 64);  // every page of a fresh 256 KiB mapping
  for (int i = 3; i < 6; ++i) CHECK(reads[i] <= 2);   // a buffer already in place: ~0
  CHECK(reads[6] == -1);                              // 4 KiB: not counted
  CHECK(reads[7] >= 4);                               // 16 KiB, fresh: its 4 pages
  CHECK(reads[8] == -1);                              // 12 KiB: not counted
}

TEST_CASE("preload counts no page faults with DLIO_PRELOAD_NO_FAULTS") {
  TracedDirs d(0);
  const auto result = RunCommand(
      "DLIO_PRELOAD_NO_FAULTS=1 DLIO_PRELOAD_OUTPUT='" + d.out + "' DLIO_PRELOAD_DATA_DIRS='" +
      d.data + "' LD_PRELOAD='" DLIO_PRELOAD_LIB "' '" DLIO_PRELOAD_IO_PROGRAM "' faults '" +
      d.data + "'");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const auto files = TraceFiles(d.out);
  REQUIRE(files.size() == 1);
  int64_t reads = 0;
  for (const json& e : ReadEvents(files[0])) {
    INFO(e.dump());
    CHECK_FALSE(e.at("args").contains("minflt"));
    reads += e.at("name") == "pread";
  }
  CHECK(reads == 9);  // the same calls, traced
}

TEST_CASE("dlio-run fit leaves out a scratch file a preload trace saw created and unlinked") {
  // Profiled without --data-dir, as a user would: the probe folder beside the data is traced.
  TempDir tmp;
  const std::string data = tmp / "data";
  const std::string work = tmp / "work";
  for (const auto& d : {data, work}) std::filesystem::create_directory(d);
  for (int i = 0; i < 4; ++i) {
    dlio::testing::WriteTextFile(data + "/f" + std::to_string(i) + ".bin", std::string(4096, 'y'));
  }
  const std::string dlio_run = DLIO_BINARY_DIR "/apps/dlio-run/dlio-run";
  const std::string prof = tmp / "prof";
  const auto profiled =
      RunCommand("'" + dlio_run + "' profile --output '" + prof +
                 "' -- '" DLIO_PRELOAD_IO_PROGRAM "' scratch '" + data + "' '" + work + "'");
  INFO(profiled.output);
  REQUIRE(profiled.exit_code == 0);
  const auto fitted =
      RunCommand("'" + dlio_run + "' fit '" + prof + "' -o '" + tmp / "fit.yaml" + "'");
  INFO(fitted.output);
  REQUIRE(fitted.exit_code == 0);
  const std::string yaml = dlio::testing::ReadTextFile(tmp / "fit.yaml");
  INFO(yaml);
  CHECK(yaml.find(" 1 scratch files created and deleted within the run") != std::string::npos);
  CHECK(yaml.find("checkpoint: false") != std::string::npos);  // not 2 saves of 4 bytes
}

TEST_CASE("preload writes out a process killed by SIGTERM (pool workers end that way)") {
  const TracedDirs dirs(4096);
  const std::string &out = dirs.out, &data = dirs.data, &in = dirs.in;

  const auto result = RunTraced(out, data, "term '" + data + "'");
  INFO(result.output);
  REQUIRE(result.exit_code != 0);  // killed, as without the interposer
  const auto files = TraceFiles(out);
  REQUIRE(files.size() == 1);
  CheckEvents(ReadEvents(files[0]), {
                                        {"open", in, -1, -1, kAnyFd},
                                        {"read", in, 0, 64, 64},
                                    });
}

TEST_CASE("preload: the program sees its own signal dispositions, and SIGTERM still writes out") {
  // Python reads every handler at startup (signal.getsignal); it sets SIGTERM to SIG_DFL itself
  // (the tracer's handler stays, unseen), then a handler of its own and back, then dies of it.
  const TracedDirs dirs(4096);
  const std::string &out = dirs.out, &data = dirs.data, &in = dirs.in;
  const std::string script = dirs.tmp / "signals.py";
  dlio::testing::WriteTextFile(script, R"(import os, signal, sys
names = ('SIGTERM', 'SIGINT', 'SIGHUP')
print([repr(signal.getsignal(getattr(signal, n))) for n in names], flush=True)
print(repr(signal.signal(signal.SIGTERM, signal.SIG_DFL)), flush=True)
old = signal.signal(signal.SIGTERM, lambda s, f: None)
print(repr(old), signal.getsignal(signal.SIGTERM) is not old, flush=True)
print(callable(signal.signal(signal.SIGTERM, old)), repr(signal.getsignal(signal.SIGTERM)),
      flush=True)
with open(sys.argv[1], 'rb') as f:
    print(len(f.read(100)), flush=True)
    os.kill(os.getpid(), signal.SIGTERM)
)");
  std::ostringstream command;
  command << "'" << dlio::testing::SystemPython() << "' '" << script << "' '" << in
          << "'; echo exit $?";
  const std::string cmd = command.str();
  const auto plain = RunCommand(cmd);
  INFO(plain.output);
  REQUIRE(plain.output.find("exit 143") != std::string::npos);
  REQUIRE(plain.output.find("<Handlers.SIG_DFL: 0>") != std::string::npos);
  const auto traced = RunCommand("DLIO_PRELOAD_OUTPUT='" + out + "' DLIO_PRELOAD_DATA_DIRS='" +
                                 data + "' LD_PRELOAD='" DLIO_PRELOAD_LIB "' " + cmd);
  INFO(traced.output);
  CHECK(traced.output == plain.output);
  const auto files = TraceFiles(out);
  REQUIRE(files.size() == 1);
  CHECK(BytesCovered(ReadEvents(files[0]), in) == 4096);  // Python's buffered read of it all
}

TEST_CASE("dlio-run profile passes SIGTERM on to the program, then analyzes its trace") {
  TempDir tmp;
  const std::string out = tmp / "prof";
  const std::string data = tmp / "data";
  const std::string ready = tmp / "ready";
  std::filesystem::create_directory(data);
  dlio::testing::WriteTextFile(data + "/in.bin", std::string(4096, 'y'));
  const std::string dlio_run = DLIO_BINARY_DIR "/apps/dlio-run/dlio-run";
  // The program waits (up to 60 s) once it has read; dlio-run alone gets the SIGTERM.
  std::ostringstream cmd;
  cmd << "'" << dlio_run << "' profile --output '" << out << "' --data-dir '" << data << "' -- '"
      << DLIO_PRELOAD_IO_PROGRAM << "' wait '" << data << "' '" << ready << "' & pid=$!; "
      << "while [ ! -e '" << ready << "' ]; do sleep 0.05; done; kill -TERM $pid; wait $pid; "
      << "echo exit $?";
  const auto result = RunCommand(cmd.str());
  INFO(result.output);
  CHECK(result.output.find("exit 143") != std::string::npos);  // 128 + SIGTERM, the program's
  const auto files = dlio::preload_test::DirectoryFiles(out);
  REQUIRE(files.size() == 4);  // the analysis and report were written
  CHECK(files[0] == out + "/analysis.json");
  CheckEvents(ReadEvents(files[3]), {
                                        {"open", data + "/in.bin", -1, -1, kAnyFd},
                                        {"read", data + "/in.bin", 0, 64, 64},
                                    });
}

}  // namespace
