// reader.io_model numpy held against numpy under strace, which sees the read(2) and lseek calls
// glibc's stdio makes inside numpy.fromfile and the stat calls of a load: dlio's loads of the
// files numpy_test.cc uses make the same reads and lseeks, row by row, and no more opens or
// stats. Skipped where strace is missing or not permitted (no ptrace).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dlio/format.h"
#include "dlio/storage.h"
#include "numpy_test_util.h"

namespace dlio::numpy_test {
namespace {

using io_model_test::ToString;

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

}  // namespace
}  // namespace dlio::numpy_test
