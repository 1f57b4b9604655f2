// The file requests of a run as a list, so a test can hold dlio's I/O model of a framework
// against the real library request by request: the real program runs under libdlio_preload.so
// (TracePythonProgram), dlio's reader under a MemoryTracer (RequestsOf(MemoryTracer)), and both
// become the same Request rows. Shared by the tests of tests/io_models.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "dlio/profile.h"
#include "dlio/profile_analysis.h"
#include "dlio/profile_fit.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"
#include "test_util.h"

namespace dlio::io_model_test {

// One call on a file: what it did (OpKind: kRead, kOpen, kClose, kSeek, kStat, kMmap, ...),
// where and how much. Two requests are equal when file, kind, offset and size are.
struct Request {
  std::string file;  // path relative to the data folder the run was given
  OpKind kind = OpKind::kOther;
  int64_t offset = -1;  // -1: unknown or does not apply
  int64_t size = -1;    // bytes requested; -1: does not apply
  int32_t pid = 0;      // the process (not compared)
  int32_t tid = 0;      // the thread (not compared)
  bool operator==(const Request& o) const {
    return file == o.file && kind == o.kind && offset == o.offset && size == o.size;
  }
};

inline std::string ToString(const Request& r) {
  std::ostringstream s;
  s << OpKindName(r.kind) << ' ' << r.file;
  if (r.offset != -1 || r.size != -1) s << " @" << r.offset << " +" << r.size;
  return s.str();
}

inline std::string ToString(const std::vector<Request>& rs) {
  std::string out;
  for (const Request& r : rs) out += ToString(r) + "\n";
  return out;
}

// `rs` without the calls of `kind`.
inline std::vector<Request> Without(std::vector<Request> rs, OpKind kind) {
  rs.erase(std::remove_if(rs.begin(), rs.end(), [&](const Request& r) { return r.kind == kind; }),
           rs.end());
  return rs;
}

// Which kinds of call a comparison keeps.
struct KindFilter {
  std::vector<OpKind> kinds{OpKind::kRead};
  bool Keeps(OpKind k) const { return std::find(kinds.begin(), kinds.end(), k) != kinds.end(); }
};

// `path` relative to `dir` when it lies under it, else "".
inline std::string RelativeTo(const std::string& path, const std::string& dir) {
  const std::string base = std::filesystem::weakly_canonical(dir).string();
  const std::string p = std::filesystem::weakly_canonical(path).string();
  if (p.size() <= base.size() + 1 || p.compare(0, base.size(), base) != 0 || p[base.size()] != '/')
    return "";
  return p.substr(base.size() + 1);
}

// The requests on files under `data_dir` of an imported trace, ordered by (start time, then
// recording order); a read's size is what was requested.
inline std::vector<Request> RequestsOf(const ProfileTrace& trace, const std::string& data_dir,
                                       const KindFilter& filter = {}) {
  std::vector<size_t> order(trace.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return trace.start_us[a] < trace.start_us[b]; });
  std::vector<Request> out;
  for (size_t i : order) {
    const ProfileEvent e = trace.Get(i);
    if (e.path.empty() || !filter.Keeps(e.kind)) continue;
    const std::string rel = RelativeTo(std::string(e.path), data_dir);
    if (rel.empty()) continue;
    out.push_back({rel, e.kind, e.offset, e.size, e.pid, e.tid});
  }
  return out;
}

// The same for what dlio's storage recorded into a MemoryTracer.
inline std::vector<Request> RequestsOf(const MemoryTracer& tracer, const std::string& data_dir,
                                       const KindFilter& filter = {}) {
  std::vector<Request> out;
  for (const TraceEvent& e : tracer.Events()) {
    if (e.file_id < 0) continue;
    const OpKind kind = OpKindOfCall(e.name);
    if (!filter.Keeps(kind)) continue;
    const std::string rel = RelativeTo(tracer.FileName(e.file_id), data_dir);
    if (rel.empty()) continue;
    out.push_back({rel, kind, e.offset, e.count, 0, e.tid});
  }
  return out;
}

// Runs `python_args` (a script and its arguments, shell-quoted by the caller) with Debian's
// python3 under libdlio_preload.so, tracing the files under `data_dir` into `out_dir`, and
// returns the imported trace. Fails the test when the program fails.
inline ProfileTrace TracePythonProgram(const std::string& python_args, const std::string& data_dir,
                                       const std::string& out_dir) {
  std::filesystem::create_directories(out_dir);
  const std::string cmd = "LD_PRELOAD='" DLIO_PRELOAD_LIB "' DLIO_PRELOAD_DATA_DIRS='" + data_dir +
                          "' DLIO_PRELOAD_OUTPUT='" + out_dir + "' '" +
                          dlio::testing::SystemPython() + "' " + python_args;
  const auto run = dlio::testing::RunCommand(cmd);
  INFO(cmd << "\n" << run.output);
  REQUIRE(run.exit_code == 0);
  ProfileTrace trace;
  const auto imported = ImportTrace(out_dir, &trace);
  INFO(imported.status().ToString());
  REQUIRE(imported.ok());
  return trace;
}

// Whether Debian's python3 imports `module` (tests of a model skip when it cannot).
inline bool PythonHas(const std::string& module) {
  return dlio::testing::RunCommand("'" + dlio::testing::SystemPython() + "' -c 'import " + module +
                                   "'")
             .exit_code == 0;
}

// The events of `trace` on `dir`/`file` alone (a fit of one file's writes).
inline ProfileTrace EventsOfFile(const ProfileTrace& trace, const std::string& dir,
                                 const std::string& file) {
  ProfileTrace one;
  for (size_t i = 0; i < trace.size(); ++i) {
    const ProfileEvent e = trace.Get(i);
    if (RelativeTo(std::string(e.path), dir) == file) one.Add(e);
  }
  return one;
}

// FitOptions::read_file through `storage` (a fit that reads traced files back).
inline FileRangeRead ReadThrough(Storage* storage) {
  return [storage](const std::string& path, uint64_t offset, uint64_t n) -> Result<std::string> {
    DLIO_ASSIGN_OR_RETURN(auto f, storage->Open(path, OpenMode::kRead));
    std::string out(n, '\0');
    DLIO_RETURN_NOT_OK(f->ReadExactAt(offset, n, out.data()));
    return out;
  };
}

// A temporary folder holding DIR/data, DIR/make.py and DIR/read.py, after `python3 make.py
// DIR/data` wrote the files a test reads (the h5py tests' fixtures).
// The requests from the second open on.
inline std::vector<Request> AfterFirstOpen(const std::vector<Request>& rs) {
  auto second = rs.begin();
  for (int opens = 0; second != rs.end(); ++second) {
    if (second->kind == OpKind::kOpen && ++opens == 2) break;
  }
  return {second, rs.end()};
}

struct MadeData {
  testing::TempDir tmp;
  std::string data = tmp / "data";
  MadeData(const char* make_script, const char* read_script) {
    std::filesystem::create_directories(data);
    testing::WriteTextFile(tmp / "make.py", make_script);
    testing::WriteTextFile(tmp / "read.py", read_script);
    const auto made = testing::RunCommand("'" + testing::SystemPython() + "' '" +
                                          std::string(tmp / "make.py") + "' '" + data + "'");
    INFO(made.output);
    REQUIRE(made.exit_code == 0);
  }
};

}  // namespace dlio::io_model_test
