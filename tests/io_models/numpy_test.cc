// reader.io_model numpy held against numpy itself: Debian's python3 runs np.load(path)['x'] (npz)
// or np.load(path) (npy) under libdlio_preload.so (and, where strace is installed, under strace,
// which sees the read(2) calls glibc's stdio makes inside numpy.fromfile), and dlio's npz/npy
// readers open the same files and read samples of them under a MemoryTracer. The requests must be
// equal row by row, the open of each file included: opens and reads, offsets and sizes, in order.
// The read(2) calls dlio makes are counted too (/proc/thread-self/io), so a raw read that returns
// short at the end of a file costs one call, as Python's.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../format/format_test_util.h"
#include "dlio/clock.h"
#include "dlio/format.h"
#include "dlio/storage.h"
#include "format/npy_options.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::KindFilter;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::TempDir;

// Rows compared: opens, reads and lseeks; opens and reads (where the interposer sees
// numpy.fromfile's stdio calls, not the kernel's); the kernel's reads and lseeks (strace).
const KindFilter kOpensReadsSeeks{{OpKind::kOpen, OpKind::kRead, OpKind::kSeek}};
const KindFilter kOpensAndReads{{OpKind::kOpen, OpKind::kRead}};
const KindFilter kReadsAndSeeks{{OpKind::kRead, OpKind::kSeek}};

// Files numpy writes: one and several samples, stored and deflated members, small and large,
// extra members, and npy files (one with a header longer than Python's 4 KiB buffer).
const char kWriteScript[] = R"(import numpy as np, sys
d = sys.argv[1]
r = np.random.default_rng(7)
np.savez(d + '/one_small.npz', x=r.integers(0, 255, (40, 40, 1), dtype=np.uint8), y=np.zeros(1))
np.savez(d + '/multi_f4.npz', x=r.random((32, 32, 8), dtype=np.float32), y=np.arange(8))
np.savez(d + '/big.npz', x=r.integers(0, 255, (1024, 1024, 3), dtype=np.uint8), y=np.arange(3))
np.savez(d + '/first_axis.npz', y=np.arange(5), x=r.integers(0, 255, (5, 300000), dtype=np.uint8))
np.savez_compressed(d + '/deflated_random.npz',
                    x=r.integers(0, 255, (1024, 1024, 2), dtype=np.uint8), y=np.arange(2))
np.savez_compressed(d + '/deflated_text.npz',
                    x=r.integers(0, 4, (700, 700, 3), dtype=np.uint8), y=np.arange(3))
np.savez_compressed(d + '/deflated_zeros.npz', x=np.zeros((100, 100, 2)), y=np.arange(2))
np.savez_compressed(d + '/deflated_small.npz', x=r.integers(0, 9, (30, 30, 1), dtype=np.int16))
np.savez(d + '/short_tail.npz', x=r.integers(0, 255, (1024, 1024), dtype=np.uint8),
         y=np.zeros(1, np.int64))
np.save(d + '/big.npy', r.integers(0, 255, (1024, 1024, 2), dtype=np.uint8))
np.save(d + '/small.npy', r.random((10, 10), dtype=np.float32))
np.save(d + '/odd.npy', r.random((3, 5001)))
np.save(d + '/wide_header.npy', np.zeros(700, dtype=[('field_%d' % i, '<f4') for i in range(300)]))
)";

// np.load as the Python DLIO's readers call it, one sample per file.
const char kLoadScript[] = R"(import numpy as np, sys
for p in sys.argv[1:]:
    if p.endswith('.npz'):
        a = np.load(p)['x']
    else:
        a = np.load(p)
    s = a[..., 0] if a.ndim > 1 else a
)";

// What a PyTorch Dataset over the files does: np.load per sample, `argv[1]` samples per file.
const char kSequenceScript[] = R"(import numpy as np, sys
k = int(sys.argv[1])
for p in sys.argv[2:]:
    for i in range(k):
        if p.endswith('.npz'):
            a = np.load(p)['x']
        else:
            a = np.load(p)
        s = a[..., i % a.shape[-1]] if a.ndim > 1 else a
)";

// Read system calls made by this thread so far (-1 where the kernel does not count them).
class ReadCalls {
 public:
  ReadCalls() : fd_(::open("/proc/thread-self/io", O_RDONLY)) {}
  ~ReadCalls() {
    if (fd_ >= 0) ::close(fd_);
  }
  int64_t Now() {
    char buf[512] = {};
    if (fd_ < 0 || ::pread(fd_, buf, sizeof(buf) - 1, 0) <= 0) return -1;
    const std::string s(buf);
    const size_t at = s.find("syscr: ");
    return at == std::string::npos ? -1 : std::stoll(s.substr(at + 7));
  }
  // Reads since `before` (a Now()), without Now's own; -1 when not counted.
  int64_t Since(int64_t before) {
    const int64_t now = Now();
    return before < 0 || now < 0 ? -1 : now - before - 1;
  }

 private:
  int fd_;
};

struct Files {
  std::string data;
  std::vector<std::string> names;  // relative to data
};

// numpy's files, plus dlio's own (last-axis stored and deflated npz, last-axis npy).
Files MakeFiles(const TempDir& tmp) {
  Files f;
  f.data = tmp / "data";
  std::filesystem::create_directories(f.data);
  const std::string script = tmp / "write.py";
  testing::WriteTextFile(script, kWriteScript);
  const auto run =
      testing::RunCommand("'" + testing::SystemPython() + "' '" + script + "' '" + f.data + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  auto storage = testing::BoundPosixStorage();
  FormatOptions options;
  options.formats.Get<NpyOptions>().sample_layout = SampleLayout::kLastAxis;
  FileSpec spec;
  spec.sample_sizes.assign(4, 600000);
  spec.seed = 3;
  REQUIRE(testing::MakeFormatByName("npz")
              ->Write(storage.get(), f.data + "/dlio_stored.npz", spec, options)
              .ok());
  REQUIRE(testing::MakeFormatByName("npy")
              ->Write(storage.get(), f.data + "/dlio.npy", spec, options)
              .ok());
  options.compression = "gzip";
  REQUIRE(testing::MakeFormatByName("npz")
              ->Write(storage.get(), f.data + "/dlio_deflated.npz", spec, options)
              .ok());
  for (const auto& e : std::filesystem::directory_iterator(f.data)) {
    f.names.push_back(e.path().filename().string());
  }
  std::sort(f.names.begin(), f.names.end());
  return f;
}

// dlio's requests for opening `name` with `model` and reading its samples 0 .. `samples` - 1 (in
// a fresh reader; modulo the file's sample count); `read_calls` gets the read(2) calls they cost
// (-1 where not counted).
// With `framework`, reader.client_costs framework; `bytes` (when given) gets the samples read.
std::vector<Request> DlioFileRequests(const std::string& data, const std::string& name,
                                      IoModel model, const KindFilter& filter, uint64_t samples = 1,
                                      bool keep = false, int64_t* read_calls = nullptr,
                                      bool framework = false,
                                      std::vector<uint8_t>* bytes = nullptr) {
  MemoryTracer tracer;
  auto storage = testing::BoundPosixStorage(&tracer);
  const std::string format = name.substr(name.rfind('.') + 1);
  FormatOptions options;
  options.io_model = model;
  options.read_type = keep ? ReadType::kMemory : ReadType::kOnDemand;
  options.framework_client_costs = framework;
  ReadCalls calls;
  const int64_t before = calls.Now();
  {
    auto reader =
        testing::MakeFormatByName(format)->Open(storage.get(), data + "/" + name, options);
    INFO(name << ": " << reader.status().ToString());
    REQUIRE(reader.ok());
    SampleBuffer out;
    for (uint64_t i = 0; i < samples; ++i) {
      const Status st = (*reader)->ReadSample(i % (*reader)->num_samples(), &out);
      INFO(st.ToString());
      REQUIRE(st.ok());
      if (bytes != nullptr) bytes->insert(bytes->end(), out.data(), out.data() + out.size());
    }
  }
  if (read_calls != nullptr) *read_calls = calls.Since(before);
  std::vector<Request> rows = RequestsOf(tracer, data, filter);
  for (Request& r : rows) r.tid = 0;
  return rows;
}

// The same for one sample (one np.load in Python).
std::vector<Request> DlioSampleRequests(const std::string& data, const std::string& name,
                                        IoModel model, const KindFilter& filter,
                                        int64_t* read_calls = nullptr) {
  return DlioFileRequests(data, name, model, filter, 1, false, read_calls);
}

size_t ReadRows(const std::vector<Request>& rows) {
  return static_cast<size_t>(std::count_if(
      rows.begin(), rows.end(), [](const Request& r) { return r.kind == OpKind::kRead; }));
}

bool IsNpz(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".npz") == 0;
}

std::vector<Request> OfFile(const std::vector<Request>& rows, const std::string& name) {
  std::vector<Request> out;
  for (const Request& r : rows) {
    if (r.file == name) out.push_back(r);
  }
  return out;
}

std::string LoadArgs(const TempDir& tmp, const Files& f) {
  const std::string script = tmp / "load.py";
  testing::WriteTextFile(script, kLoadScript);
  std::string args = "'" + script + "'";
  for (const std::string& n : f.names) args += " '" + f.data + "/" + n + "'";
  return args;
}

TEST_CASE("numpy model: dlio's npz reads are np.load's, request for request") {
  if (!io_model_test::PythonHas("numpy")) return;
  TempDir tmp;
  const Files f = MakeFiles(tmp);
  const ProfileTrace real = TracePythonProgram(LoadArgs(tmp, f), f.data, tmp / "prof");
  const std::vector<Request> python = RequestsOf(real, f.data, kOpensReadsSeeks);
  for (const std::string& name : f.names) {
    if (!IsNpz(name)) continue;
    const std::vector<Request> want = OfFile(python, name);
    int64_t calls = 0;
    const std::vector<Request> got =
        DlioSampleRequests(f.data, name, IoModel::kNumpy, kOpensReadsSeeks, &calls);
    INFO(name << "\nnp.load:\n" << ToString(want) << "dlio:\n" << ToString(got));
    CHECK(want.size() > 6);
    CHECK(got == want);  // the open included: it is the first np.load
    // One read(2) per row, as Python's FileIO: no second pread after a read that ends short.
    if (calls >= 0) CHECK(calls == static_cast<int64_t>(ReadRows(want)));
    // auto picks numpy for npz; native reads differently.
    CHECK(DlioSampleRequests(f.data, name, IoModel::kAuto, kOpensReadsSeeks) == want);
    CHECK_FALSE(DlioSampleRequests(f.data, name, IoModel::kNative, kOpensReadsSeeks) == want);
  }
}

TEST_CASE("numpy model: dlio's npy reads are np.load's (Python's buffer, then fromfile's fread)") {
  if (!io_model_test::PythonHas("numpy")) return;
  TempDir tmp;
  const Files f = MakeFiles(tmp);
  const ProfileTrace real = TracePythonProgram(LoadArgs(tmp, f), f.data, tmp / "prof");
  const std::vector<Request> python = RequestsOf(real, f.data, kOpensAndReads);
  for (const std::string& name : f.names) {
    if (name.compare(name.size() - 4, 4, ".npy") != 0) continue;
    // The interposer sees Python's read(2) calls, then numpy.fromfile's one fread of the data
    // (its fseeko64 calls too: the kernel's lseeks are compared in the strace test below).
    const std::vector<Request> want = OfFile(python, name);
    const std::vector<Request> got =
        DlioSampleRequests(f.data, name, IoModel::kNumpy, kOpensAndReads);
    INFO(name << "\nnp.load:\n" << ToString(want) << "dlio:\n" << ToString(got));
    REQUIRE(want.size() >= 3);
    REQUIRE(got.size() >= want.size());
    CHECK(std::equal(want.begin(), want.end() - 1, got.begin()));
    // dlio issues the read(2) calls glibc makes for that fread: from the block holding its first
    // byte to (at least) its last.
    const Request& fread = want.back();
    const int64_t block = 4096;
    int64_t at = fread.offset / block * block;
    size_t i = want.size() - 1;
    if (fread.offset != at) {  // fseek reads exactly up to the data, fseek(0, SEEK_CUR) again
      CHECK(got[i] == Request{name, OpKind::kRead, at, fread.offset - at});
      ++i;
    }
    for (; i < got.size(); ++i) {
      CHECK(got[i].offset == at);
      at += got[i].size;
    }
    CHECK(at >= fread.offset + fread.size);
  }
}

// read(2) and lseek calls on files under `data` in an strace log (-e trace=openat,read,lseek,
// fcntl,close): reads at each open file description's position, lseeks at the offset asked.
std::vector<Request> StraceReads(const std::string& log, const std::string& data) {
  std::ifstream in(log);
  std::map<int, std::shared_ptr<std::pair<std::string, int64_t>>> fds;  // fd -> (file, offset)
  const std::regex open_re(R"re(^openat\(AT_FDCWD, "([^"]+)", .*\)\s+= (\d+)$)re");
  const std::regex read_re(R"re(^read\((\d+), .*, (\d+)\)\s+= (\d+)$)re");
  const std::regex seek_re(R"re(^lseek\((\d+), (-?\d+), SEEK_\w+\)\s+= (\d+)$)re");
  const std::regex dup_re(R"re(^fcntl\((\d+), F_DUPFD\w*, \d+\)\s+= (\d+)$)re");
  const std::regex close_re(R"re(^close\((\d+)\)\s+= 0$)re");
  std::vector<Request> out;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, open_re)) {
      const std::string rel = io_model_test::RelativeTo(m[1], data);
      if (!rel.empty()) {
        fds[std::stoi(m[2])] = std::make_shared<std::pair<std::string, int64_t>>(rel, 0);
      }
    } else if (std::regex_match(line, m, read_re)) {
      auto it = fds.find(std::stoi(m[1]));
      if (it == fds.end()) continue;
      out.push_back({it->second->first, OpKind::kRead, it->second->second, std::stoll(m[2])});
      it->second->second += std::stoll(m[3]);
    } else if (std::regex_match(line, m, seek_re)) {
      auto it = fds.find(std::stoi(m[1]));
      if (it == fds.end()) continue;
      const int64_t asked = std::stoll(m[2]);
      out.push_back({it->second->first, OpKind::kSeek, asked >= 0 ? asked : -1, -1});
      it->second->second = std::stoll(m[3]);
    } else if (std::regex_match(line, m, dup_re)) {  // numpy.fromfile's os.dup
      auto it = fds.find(std::stoi(m[1]));
      if (it != fds.end()) fds[std::stoi(m[2])] = it->second;
    } else if (std::regex_match(line, m, close_re)) {
      fds.erase(std::stoi(m[1]));
    }
  }
  return out;
}

TEST_CASE("numpy model: dlio's reads and lseeks are np.load's, as strace sees them") {
  if (!io_model_test::PythonHas("numpy")) return;
  if (!std::filesystem::exists("/usr/bin/strace")) return;  // the interposer tests still run
  TempDir tmp;
  const Files f = MakeFiles(tmp);
  const std::string log = tmp / "strace.log";
  const auto run = testing::RunCommand(
      "/usr/bin/strace -qq -e trace=openat,read,lseek,fcntl,close"
      " -e signal=none -o '" +
      log + "' '" + testing::SystemPython() + "' " + LoadArgs(tmp, f));
  INFO(run.output);
  if (run.exit_code != 0) return;  // strace not permitted here (no ptrace)
  const std::vector<Request> real = StraceReads(log, f.data);
  for (const std::string& name : f.names) {
    const std::vector<Request> want = OfFile(real, name);
    const std::vector<Request> got =
        DlioSampleRequests(f.data, name, IoModel::kNumpy, kReadsAndSeeks);
    INFO(name << "\nstrace:\n" << ToString(want) << "dlio:\n" << ToString(got));
    CHECK(ReadRows(want) >= 2);
    CHECK(got == want);
    int64_t calls = 0;
    DlioSampleRequests(f.data, name, IoModel::kNumpy, kReadsAndSeeks, &calls);
    if (calls >= 0) CHECK(calls == static_cast<int64_t>(ReadRows(want)));
  }
}

// Per file under `data` in an strace log (-f, trace=openat, close and the stat calls): how many
// opens, and how many stat calls name the file or a descriptor open on it.
struct FileSyscalls {
  int opens = 0;
  int stats = 0;
};
std::map<std::string, FileSyscalls> StraceFileSyscalls(const std::string& log,
                                                       const std::string& data) {
  std::ifstream in(log);
  std::map<int, std::string> fds;  // per process would be exact; each traced load closes its fd
  const std::regex open_re(R"re(^(?:\d+ +)?openat\(AT_FDCWD, "([^"]+)", .*\)\s+= (\d+)$)re");
  const std::regex path_re(
      R"re(^(?:\d+ +)?(?:newfstatat|stat|lstat|statx)\(AT_FDCWD, "([^"]+)".*)re");
  const std::regex fd_re(R"re(^(?:\d+ +)?(?:newfstatat|fstat|statx)\((\d+), .*)re");
  const std::regex close_re(R"re(^(?:\d+ +)?close\((\d+)\).*)re");
  const std::regex dup_re(R"re(^(?:\d+ +)?fcntl\((\d+), F_DUPFD\w*, \d+\)\s+= (\d+)$)re");
  std::map<std::string, FileSyscalls> out;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, open_re)) {
      const std::string rel = io_model_test::RelativeTo(m[1], data);
      if (!rel.empty()) {
        ++out[rel].opens;
        fds[std::stoi(m[2])] = rel;
      } else {
        fds.erase(std::stoi(m[2]));
      }
    } else if (std::regex_match(line, m, path_re)) {
      const std::string rel = io_model_test::RelativeTo(m[1], data);
      if (!rel.empty()) ++out[rel].stats;
    } else if (std::regex_match(line, m, fd_re)) {
      auto it = fds.find(std::stoi(m[1]));
      if (it != fds.end()) ++out[it->second].stats;
    } else if (std::regex_match(line, m, close_re)) {
      fds.erase(std::stoi(m[1]));
    } else if (std::regex_match(line, m, dup_re)) {  // numpy.fromfile's os.dup
      auto it = fds.find(std::stoi(m[1]));
      if (it != fds.end()) fds[std::stoi(m[2])] = it->second;
    }
  }
  return out;
}

// Run by the test below under strace: one sample of each file in DLIO_NUMPY_STRACE_FILES
// (space-separated names under DLIO_NUMPY_STRACE_DATA) through the numpy model.
TEST_CASE("numpy model: strace child (run by the next test)", "[.strace_child]") {
  const char* data = std::getenv("DLIO_NUMPY_STRACE_DATA");
  const char* names = std::getenv("DLIO_NUMPY_STRACE_FILES");
  REQUIRE(data != nullptr);
  REQUIRE(names != nullptr);
  auto storage = NewPosixStorage(StorageOptions{});
  FormatOptions options;
  options.io_model = IoModel::kNumpy;
  std::istringstream in(names);
  for (std::string name; in >> name;) {  // nothing else touches the files (no path lookups)
    auto reader = testing::MakeFormatByName(name.substr(name.rfind('.') + 1))
                      ->Open(storage.get(), std::string(data) + "/" + name, options);
    REQUIRE(reader.ok());
    SampleBuffer out;
    REQUIRE((*reader)->ReadSample(0, &out).ok());
  }
}

TEST_CASE("numpy model: a load stats its file no more often than np.load does, as strace sees it") {
  if (!io_model_test::PythonHas("numpy")) return;
  if (!std::filesystem::exists("/usr/bin/strace")) return;
  TempDir tmp;
  const Files f = MakeFiles(tmp);
  const std::string trace =
      "-f -qq -e trace=openat,close,fcntl,newfstatat,fstat,stat,lstat,statx -e signal=none";
  const std::string real_log = tmp / "python.log";
  const auto real = testing::RunCommand(testing::StraceCommand(
      trace + " -o '" + real_log + "' '" + testing::SystemPython() + "' " + LoadArgs(tmp, f)));
  INFO(real.output);
  if (real.exit_code != 0) return;  // strace not permitted here (no ptrace)
  std::string names;
  for (const std::string& n : f.names) names += n + " ";
  const std::string dlio_log = tmp / "dlio.log";
  const auto dlio = testing::RunCommand(
      "DLIO_NUMPY_STRACE_DATA='" + f.data + "' DLIO_NUMPY_STRACE_FILES='" + names + "' " +
      testing::StraceCommand(trace + " -o '" + dlio_log + "' '" +
                             std::filesystem::read_symlink("/proc/self/exe").string() +
                             "' '[.strace_child]'"));
  INFO(dlio.output);
  REQUIRE(dlio.exit_code == 0);
  const auto want = StraceFileSyscalls(real_log, f.data);
  const auto got = StraceFileSyscalls(dlio_log, f.data);
  for (const std::string& name : f.names) {
    const FileSyscalls w = want.count(name) ? want.at(name) : FileSyscalls{};
    const FileSyscalls g = got.count(name) ? got.at(name) : FileSyscalls{};
    INFO(name << ": np.load " << w.opens << " opens, " << w.stats << " stats; dlio " << g.opens
              << " opens, " << g.stats << " stats");
    CHECK(w.opens >= 1);
    CHECK(g.opens == w.opens);
    CHECK(g.stats <= w.stats);  // no stat of dlio's own (the open's fstat is np.load's too)
  }
}

TEST_CASE("numpy model: a file opened and read per sample costs np.load per sample, no more") {
  if (!io_model_test::PythonHas("numpy")) return;
  TempDir tmp;
  const Files f = MakeFiles(tmp);
  const std::string script = tmp / "sequence.py";
  testing::WriteTextFile(script, kSequenceScript);
  std::string args = "'" + script + "' 2";
  for (const std::string& n : f.names) args += " '" + f.data + "/" + n + "'";
  const ProfileTrace real = TracePythonProgram(args, f.data, tmp / "prof");
  const std::vector<Request> python = RequestsOf(real, f.data, kOpensReadsSeeks);
  for (const std::string& name : f.names) {
    const std::vector<Request> want = OfFile(python, name);
    int64_t calls = 0;
    const std::vector<Request> got =
        DlioFileRequests(f.data, name, IoModel::kNumpy, kOpensReadsSeeks, 2, false, &calls);
    INFO(name << "\n2 x np.load:\n"
              << ToString(want) << "dlio (open, samples 0 and 1):\n"
              << ToString(got));
    REQUIRE(std::count_if(want.begin(), want.end(),
                          [](const Request& r) { return r.kind == OpKind::kOpen; }) == 2);
    if (IsNpz(name)) {
      CHECK(got == want);
      if (calls >= 0) CHECK(calls == static_cast<int64_t>(ReadRows(want)));
    } else {  // the interposer sees fromfile's fread as one row (see the npy case above): the
              // opens and np.load's magic reads must still match, one per load
      auto loads = [](const std::vector<Request>& rows) {
        std::vector<Request> out;
        for (size_t i = 0; i < rows.size(); ++i) {
          if (rows[i].kind == OpKind::kOpen) out.push_back(rows[i]);
          if (i > 0 && rows[i - 1].kind == OpKind::kOpen) out.push_back(rows[i]);
        }
        return out;
      };
      CHECK(loads(got) == loads(want));
    }
  }
}

TEST_CASE("numpy model: with keep_arrays, opening and reading every sample is one np.load") {
  if (!io_model_test::PythonHas("numpy")) return;
  TempDir tmp;
  const Files f = MakeFiles(tmp);
  const ProfileTrace real = TracePythonProgram(LoadArgs(tmp, f), f.data, tmp / "prof");
  const std::vector<Request> python = RequestsOf(real, f.data, kOpensReadsSeeks);
  for (const std::string& name : f.names) {
    if (!IsNpz(name)) continue;
    const std::vector<Request> want = OfFile(python, name);
    MemoryTracer probe;
    auto storage = testing::BoundPosixStorage(&probe);
    FormatOptions options;
    auto reader =
        testing::MakeFormatByName("npz")->Open(storage.get(), f.data + "/" + name, options);
    REQUIRE(reader.ok());
    const uint64_t n = std::min<uint64_t>((*reader)->num_samples(), 3);
    const std::vector<Request> got =
        DlioFileRequests(f.data, name, IoModel::kNumpy, kOpensReadsSeeks, n, /*keep=*/true);
    INFO(name << "\nnp.load:\n" << ToString(want) << "dlio:\n" << ToString(got));
    CHECK(got == want);
  }
}

TEST_CASE("numpy model: client_costs none issues framework's requests, for the same bytes") {
  // reader.client_costs none reads into reused buffers with no bytes objects, copies or CRC;
  // what reaches the storage must not change: opens, reads, offsets and sizes, in order, and
  // the read(2) calls they cost, for stored and deflated members, npy files, one sample or
  // every sample of a file, with and without keep_arrays.
  if (!io_model_test::PythonHas("numpy")) return;
  TempDir tmp;
  const Files f = MakeFiles(tmp);
  const KindFilter all{{OpKind::kOpen, OpKind::kRead, OpKind::kClose, OpKind::kStat}};
  for (const std::string& name : f.names) {
    for (const bool keep : {false, true}) {
      for (const uint64_t samples : {uint64_t{1}, uint64_t{3}}) {
        int64_t none_calls = 0, framework_calls = 0;
        std::vector<uint8_t> none_bytes, framework_bytes;
        const std::vector<Request> none =
            DlioFileRequests(f.data, name, IoModel::kNumpy, all, samples, keep, &none_calls,
                             /*framework=*/false, &none_bytes);
        const std::vector<Request> framework =
            DlioFileRequests(f.data, name, IoModel::kNumpy, all, samples, keep, &framework_calls,
                             /*framework=*/true, &framework_bytes);
        INFO(name << " keep " << keep << " samples " << samples << "\nframework:\n"
                  << ToString(framework) << "none:\n"
                  << ToString(none));
        CHECK(framework.size() > 3);
        CHECK(none == framework);
        CHECK(none_calls == framework_calls);
        CHECK(none_bytes == framework_bytes);
      }
    }
  }
}

TEST_CASE("numpy model: inspect still describes the file, and errors name it") {
  TempDir tmp;
  auto storage = testing::BoundPosixStorage();
  FileSpec spec;
  spec.sample_sizes.assign(3, 1000);
  FormatOptions options;
  const std::string path = tmp / "a.npz";
  REQUIRE(testing::MakeFormatByName("npz")->Write(storage.get(), path, spec, options).ok());
  auto reader = testing::MakeFormatByName("npz")->Open(storage.get(), path, options);
  REQUIRE(reader.ok());
  CHECK((*reader)->num_samples() == 3);
  const std::string json = (*reader)->DescribeJson();
  CHECK(json.find("\"sample_member\":\"x.npy\"") != std::string::npos);
  testing::WriteTextFile(tmp / "bad.npz", "PK\x03\x04 not really a zip");
  auto bad = testing::MakeFormatByName("npz")->Open(storage.get(), tmp / "bad.npz", options);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find(tmp / "bad.npz") != std::string::npos);
  // A header that claims a terabyte over a short file: Corruption naming it, nothing allocated.
  std::string dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (1099511627776,), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string npy = std::string("\x93NUMPY\x01\x00", 8);
  npy += static_cast<char>(dict.size() & 0xff);
  npy += static_cast<char>(dict.size() >> 8);
  npy += dict + "some data";
  testing::WriteTextFile(tmp / "huge.npy", npy);
  auto huge = testing::MakeFormatByName("npy")->Open(storage.get(), tmp / "huge.npy", options);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().code() == StatusCode::kCorruption);
  CHECK(huge.status().message().find(tmp / "huge.npy") != std::string::npos);
}

TEST_CASE("numpy model: a sample buffer that keeps np.load's array holds it until the next load") {
  // A loop that drops the array once it has the sample frees it at once (the default); code that
  // keeps it (`x = np.load(path)['x']` until x is rebound, a DataLoader worker until the collate,
  // which takes them with TakeHeld) frees it later: where they are freed decides whether the
  // next large read lands in fresh pages.
  if (!io_model_test::PythonHas("numpy")) return;
  TempDir tmp;
  const Files f = MakeFiles(tmp);
  const auto npz = std::find_if(f.names.begin(), f.names.end(), IsNpz);
  REQUIRE(npz != f.names.end());
  auto storage = NewPosixStorage({});
  FormatOptions options;
  options.io_model = IoModel::kNumpy;
  options.framework_client_costs = true;  // without it no array is held: it is reused
  auto reader = testing::MakeFormatByName("npz")->Open(storage.get(), f.data + "/" + *npz, options);
  REQUIRE(reader.ok());
  SampleBuffer dropped;  // by default the array is freed once the sample is out of it
  REQUIRE((*reader)->ReadSample(0, &dropped).ok());
  CHECK(dropped.TakeHeld() == nullptr);
  SampleBuffer out;
  out.KeepHeld(true);
  REQUIRE((*reader)->ReadSample(0, &out).ok());
  std::shared_ptr<const void> first = out.TakeHeld();
  REQUIRE(first != nullptr);
  CHECK(out.TakeHeld() == nullptr);
  const std::weak_ptr<const void> watched = first;
  out.Hold(std::move(first));
  REQUIRE((*reader)->ReadSample(0, &out).ok());  // a new np.load
  CHECK(watched.expired());
  CHECK(out.TakeHeld() != nullptr);
}

}  // namespace
}  // namespace dlio
