// The kernel level of a trace: the SYSCALL requests dlio's tracer records beneath stdio calls are
// imported apart from the events, carried through WithoutRuntimeIo, and scored by compare in
// place of the stdio reads when both runs have them.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "dlio/profile_analysis.h"
#include "dlio/profile_compare.h"
#include "dlio/profile_fit.h"
#include "test_util.h"

namespace dlio {
namespace {

using testing::TempDir;
using testing::WriteTextFile;

std::string Event(int id, const std::string& name, const std::string& cat, int64_t ts,
                  const std::string& file, int64_t offset, int64_t count, int64_t ret) {
  return "{\"id\":" + std::to_string(id) + ",\"name\":\"" + name + "\",\"cat\":\"" + cat +
         "\",\"pid\":7,\"tid\":7,\"ts\":" + std::to_string(ts) +
         ",\"dur\":10,\"ph\":\"X\",\"args\":{\"fname\":\"" + file +
         "\",\"count\":" + std::to_string(count) + ",\"offset\":" + std::to_string(offset) +
         ",\"ret\":" + std::to_string(ret) + "}},\n";
}

// np.load of an 8 MiB + 128-byte .npy as the tracer records it: Python's 4 KiB header read,
// numpy's fseek (beneath it the 128-byte exact read) and its one fread of the array (beneath it
// the direct read of whole 4 KiB blocks and the fill for the tail); `kernel` false leaves the
// SYSCALL requests out, as traces before 2026-11-30 have them.
std::string NpyLoad(const std::string& file, int64_t ts, bool kernel) {
  std::string s = Event(1, "read", "POSIX", ts, file, 0, 4096, 4096);
  s += Event(2, "fseeko64", "STDIO", ts + 20, file, 128, -1, 0);
  if (kernel) s += Event(3, "stdio.read", "SYSCALL", ts + 20, file, 0, 128, 128);
  s += Event(4, "fread", "STDIO", ts + 40, file, 128, 8388608, 8388608);
  if (kernel) {
    s += Event(5, "stdio.read", "SYSCALL", ts + 40, file, 128, 8384512, 8384512);
    s += Event(6, "stdio.read", "SYSCALL", ts + 48, file, 8384640, 4096, 4096);
  }
  return s;
}

ProfileTrace Import(const TempDir& tmp, const std::string& name, const std::string& events) {
  const std::string path = tmp / name;
  WriteTextFile(path, "[\n" + events + "]\n");
  ProfileTrace t;
  REQUIRE(ImportTrace(path, &t).ok());
  return t;
}

// The same requests as POSIX preads (an emulation reading what the kernel saw).
ProfileTrace Preads(const TempDir& tmp, const std::string& file) {
  std::string s = Event(1, "pread64", "POSIX", 100, file, 0, 4096, 4096);
  s += Event(2, "pread64", "POSIX", 120, file, 0, 128, 128);
  s += Event(3, "pread64", "POSIX", 140, file, 128, 8384512, 8384512);
  s += Event(4, "pread64", "POSIX", 148, file, 8384640, 4096, 4096);
  return Import(tmp, "preads.pfw", s);
}

TEST_CASE("compare level: SYSCALL requests are imported apart from the events") {
  TempDir tmp;
  const std::string path = tmp / "t.pfw";
  WriteTextFile(path, "[\n" + NpyLoad("/d/a.npy", 100, true) + "]\n");
  ProfileTrace t;
  const auto stats = ImportTrace(path, &t);
  REQUIRE(stats.ok());
  CHECK(stats->events == 3);  // read, fseeko64, fread
  CHECK(stats->stdio_kernel == 3);
  REQUIRE(t.stdio_kernel.size() == 3);
  const StdioKernelRequest& r = t.stdio_kernel[1];
  CHECK(t.String(r.path) == "/d/a.npy");
  CHECK((r.pid == 7 && r.tid == 7 && r.start_us == 140 && r.dur_us == 10));
  CHECK((r.offset == 128 && r.size == 8384512 && r.ret == 8384512 && !r.write));
  for (size_t i = 0; i < t.size(); ++i) CHECK(t.String(t.category[i]) != "SYSCALL");
}

TEST_CASE("compare level: a trace has the kernel level unless it has stdio data calls alone") {
  TempDir tmp;
  CHECK(HasKernelLevel(Import(tmp, "new.pfw", NpyLoad("/d/a.npy", 100, true))));
  CHECK_FALSE(HasKernelLevel(Import(tmp, "old.pfw", NpyLoad("/d/a.npy", 100, false))));
  CHECK(HasKernelLevel(Preads(tmp, "/d/a.npy")));
  const ProfileTrace k =
      WithKernelRequests(Import(tmp, "new2.pfw", NpyLoad("/d/a.npy", 100, true)));
  // read, fseeko64 and the three requests; the fread is replaced
  REQUIRE(k.size() == 5);
  int reads = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    CHECK(k.String(k.name[i]) != "fread");
    if (k.String(k.category[i]) == "SYSCALL") {
      CHECK(k.kind[i] == OpKind::kRead);
      ++reads;
    }
  }
  CHECK(reads == 3);
}

TEST_CASE("compare level: np.load against preads of the same requests, at each level") {
  TempDir tmp;
  const ProfileTrace emulation = Preads(tmp, "/d/a.npy");
  const TraceComparison now =
      CompareTraces(Import(tmp, "new.pfw", NpyLoad("/d/a.npy", 100, true)), emulation);
  CHECK(now.level == "kernel");
  CHECK(now.request_size_ks.d == 0);
  CHECK(now.reads_a == 4);
  CHECK(now.levels_a == std::vector<std::string>{"POSIX", "SYSCALL"});
  // An older trace of the same run: its one fread against the emulation's three reads.
  const TraceComparison before =
      CompareTraces(Import(tmp, "old.pfw", NpyLoad("/d/a.npy", 100, false)), emulation);
  CHECK(before.level == "call");
  CHECK(before.reads_a == 2);
  CHECK(before.request_size_ks.d == Approx(0.5));
  CHECK(before.levels_a == std::vector<std::string>{"POSIX", "STDIO"});
  CHECK(ComparisonText(now).find("\nlevel: kernel (") != std::string::npos);
  CHECK(ComparisonText(before).find("\nlevel: call (") != std::string::npos);
  CHECK(nlohmann::json::parse(ComparisonJson(now)).at("level") == "kernel");
}

TEST_CASE("compare level: the runtime's I/O loses its kernel requests as its events") {
  TempDir tmp;
  const ProfileTrace t = Import(
      tmp, "t.pfw",
      NpyLoad("/d/a.npy", 100, true) + NpyLoad("/usr/lib/python3/dist-packages/x.npy", 500, true));
  RuntimeIoLeftOut left;
  const auto ignore = ParseFitIgnorePaths("default");
  REQUIRE(ignore.ok());
  const ProfileTrace kept = WithoutRuntimeIo(t, *ignore, true, &left);
  REQUIRE(kept.stdio_kernel.size() == 3);
  for (const StdioKernelRequest& r : kept.stdio_kernel) CHECK(kept.String(r.path) == "/d/a.npy");
  CHECK(left.events == 3);
}

}  // namespace
}  // namespace dlio
