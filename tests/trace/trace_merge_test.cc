// MergeTraceFiles: per-rank traces (plain and gzip) into one Perfetto-ready file.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "dlio/tracer.h"
#include "test_util.h"

namespace dlio {
namespace {

using nlohmann::json;

// Writes a rank's trace with the real tracer: `events` I/O events on one file.
void WriteRankTrace(const std::string& path, int rank, int events) {
  TraceFileOptions o;
  o.path = path;
  o.pid = rank + 1;  // as dlio-run writes it
  o.process_name = "dlio rank " + std::to_string(rank);
  auto tracer = MakeTraceFileTracer(o);
  REQUIRE(tracer.ok());
  const int32_t f = (*tracer)->InternFile("/data/file_" + std::to_string(rank) + ".npz");
  for (int i = 0; i < events; ++i) {
    TraceEvent e;
    e.name = "pread";
    e.cat = "POSIX";
    e.start_us = 1000 + i;
    e.dur_us = 5;
    e.file_id = f;
    e.offset = i * 4096;
    e.count = 4096;
    e.ret = 4096;
    (*tracer)->Record(e);
  }
}

TEST_CASE("trace merge: ranks become processes, ids stay unique, gzip is read and written") {
  testing::TempDir dir;
  WriteRankTrace(dir / "trace-0.pfw", 0, 3);
  WriteRankTrace(dir / "trace-3.pfw.gz", 3, 2);
  auto merged = MergeTraceFiles({dir / "trace-0.pfw", dir / "trace-3.pfw.gz"}, dir / "all.pfw");
  REQUIRE(merged.ok());
  CHECK(merged->pids == std::vector<int64_t>{1, 4});  // rank + 1: no pid 0
  CHECK(merged->events == 3 + 2 + 2 + 2);  // plus one process_name and thread_name per rank
  CHECK(merged->truncated_lines == 0);
  const json all = json::parse(testing::ReadTextFile(dir / "all.pfw"));
  REQUIRE(all.size() == 9);
  std::set<int64_t> ids;
  std::multiset<int64_t> pids;
  for (const json& e : all) {
    ids.insert(e["id"].get<int64_t>());
    pids.insert(e["pid"].get<int64_t>());
    if (e["name"] == "pread") {
      CHECK(e["args"]["fname"] == "/data/file_" + std::to_string(e["pid"].get<int>() - 1) + ".npz");
    }
    if (e["name"] == "process_name") {
      CHECK(e["args"]["name"] == "dlio rank " + std::to_string(e["pid"].get<int>() - 1));
    }
  }
  CHECK(ids.size() == 9);
  CHECK(pids.count(0) == 0);
  CHECK(pids.count(1) == 5);
  CHECK(pids.count(4) == 4);

  // Gzip output holds the same events; names that carry no rank get their position.
  REQUIRE(MergeTraceFiles({dir / "all.pfw"}, dir / "again.pfw.gz").ok());
  auto renamed = MergeTraceFiles({dir / "all.pfw", dir / "trace-0.pfw"}, dir / "x.pfw");
  CHECK(renamed.status().code() == StatusCode::kInvalidArgument);  // both are rank 0: pid 1
  CHECK_THAT(renamed.status().message(), Catch::Contains("pid 1"));
}

TEST_CASE("trace merge: the rank comes from DLIO's trace-<R>-of-<N>.pfw name, and the old one") {
  testing::TempDir dir;
  WriteRankTrace(dir / "trace-2-of-4.pfw", 2, 1);
  WriteRankTrace(dir / "trace-1.pfw", 1, 1);  // dlio's name before it took DLIO's
  auto merged = MergeTraceFiles({dir / "trace-2-of-4.pfw", dir / "trace-1.pfw"}, dir / "all.pfw");
  REQUIRE(merged.ok());
  CHECK(merged->pids == std::vector<int64_t>{3, 2});  // rank + 1, not the position
}

// A libdlio_preload.so trace: the process_name header first, then `reads` reads.
std::string PreloadTrace(int64_t pid, const std::string& name, int reads) {
  const std::string p = std::to_string(pid);
  std::string text = "[\n{\"id\":0,\"name\":\"process_name\",\"cat\":\"dlio\",\"pid\":" + p +
                     ",\"tid\":0,\"ph\":\"M\",\"args\":{\"name\":\"" + name + "\"}},\n";
  for (int i = 0; i < reads; ++i) {
    text += "{\"id\":" + std::to_string(i + 1) +
            ",\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":" + p + ",\"tid\":" + p +
            ",\"ts\":" + std::to_string(100 + i) +
            ",\"dur\":1,\"ph\":\"X\",\"args\":{\"fname\":\"/d/f\",\"offset\":" +
            std::to_string(i * 10) + ",\"count\":10,\"ret\":10}},\n";
  }
  return text + "]\n";
}

TEST_CASE("trace merge: preload traces keep the pid written inside them, never pid 0") {
  testing::TempDir dir;
  // A process that exec'd (trace-<pid>.pfw, then trace-<pid>-1.pfw), listed after a forked
  // child and before a dlio rank 0 trace: index 0 or the name's "-1" must not become the pid.
  testing::WriteTextFile(dir / "trace-4242-1.pfw", PreloadTrace(4242, "python3 (rank 0)", 2));
  testing::WriteTextFile(dir / "trace-4242.pfw", PreloadTrace(4242, "sh (rank 0)", 1));
  testing::WriteTextFile(dir / "trace-77.pfw", PreloadTrace(77, "python3", 3));
  WriteRankTrace(dir / "trace-0.pfw", 0, 1);
  auto merged = MergeTraceFiles(
      {dir / "trace-4242-1.pfw", dir / "trace-4242.pfw", dir / "trace-77.pfw", dir / "trace-0.pfw"},
      dir / "all.pfw");
  REQUIRE(merged.ok());
  CHECK(merged->pids == std::vector<int64_t>{4242, 4242, 77, 1});
  const json all = json::parse(testing::ReadTextFile(dir / "all.pfw"));
  std::multiset<int64_t> reads;
  std::multiset<std::string> names;
  for (const json& e : all) {
    CHECK(e["pid"].get<int64_t>() > 0);
    if (e["name"] == "read") reads.insert(e["pid"].get<int64_t>());
    if (e["name"] == "process_name") names.insert(e["args"]["name"].get<std::string>());
  }
  CHECK(reads.count(4242) == 3);
  CHECK(reads.count(77) == 3);
  // One name per process: the preload's own (the first input's for 4242), dlio's rank name.
  CHECK(names == std::multiset<std::string>{"python3 (rank 0)", "python3", "dlio rank 0"});

  // A preload trace whose pid is a rank trace's pid is refused.
  testing::WriteTextFile(dir / "trace-5.pfw", PreloadTrace(1, "x", 1));
  auto clash = MergeTraceFiles({dir / "trace-0.pfw", dir / "trace-5.pfw"}, dir / "clash.pfw");
  CHECK(clash.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("trace merge: a cut last line is skipped, a bad line elsewhere names the file") {
  testing::TempDir dir;
  const std::string ok_line =
      R"({"id":1,"name":"pread","cat":"POSIX","pid":1,"tid":2,"ts":10,"dur":1,"ph":"X","args":{}},)";
  testing::WriteTextFile(dir / "trace-1.pfw", "[\n" + ok_line + "\n" + R"({"id":2,"name":"pre)");
  auto merged = MergeTraceFiles({dir / "trace-1.pfw"}, dir / "out.pfw");
  REQUIRE(merged.ok());
  CHECK(merged->events == 1);
  CHECK(merged->truncated_lines == 1);
  CHECK(json::parse(testing::ReadTextFile(dir / "out.pfw")).size() == 1);

  testing::WriteTextFile(dir / "trace-2.pfw",
                         "[\n" + ok_line + "\nnot json,\n" + ok_line + "\n]\n");
  auto bad = MergeTraceFiles({dir / "trace-2.pfw"}, dir / "bad.pfw");
  CHECK(bad.status().code() == StatusCode::kCorruption);
  CHECK_THAT(bad.status().message(), Catch::Contains(dir / "trace-2.pfw"));
  CHECK_THAT(bad.status().message(), Catch::Contains("line 3"));

  CHECK(MergeTraceFiles({dir / "missing.pfw"}, dir / "m.pfw").status().code() != StatusCode::kOk);
  CHECK(MergeTraceFiles({}, dir / "m.pfw").status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dlio
