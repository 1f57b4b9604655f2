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
  o.pid = rank;
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
  CHECK(merged->pids == std::vector<int64_t>{0, 3});
  CHECK(merged->events == 3 + 2 + 2);  // plus one process_name per rank
  CHECK(merged->truncated_lines == 0);
  const json all = json::parse(testing::ReadTextFile(dir / "all.pfw"));
  REQUIRE(all.size() == 7);
  std::set<int64_t> ids;
  std::multiset<int64_t> pids;
  for (const json& e : all) {
    ids.insert(e["id"].get<int64_t>());
    pids.insert(e["pid"].get<int64_t>());
    if (e["name"] == "pread") {
      CHECK(e["args"]["fname"] == "/data/file_" + std::to_string(e["pid"].get<int>()) + ".npz");
    }
  }
  CHECK(ids.size() == 7);
  CHECK(pids.count(0) == 4);
  CHECK(pids.count(3) == 3);

  // Gzip output holds the same events; names that carry no rank get their position.
  REQUIRE(MergeTraceFiles({dir / "all.pfw"}, dir / "again.pfw.gz").ok());
  auto renamed = MergeTraceFiles({dir / "all.pfw", dir / "trace-0.pfw"}, dir / "x.pfw");
  CHECK(renamed.status().code() == StatusCode::kInvalidArgument);  // both get pid 0
  CHECK_THAT(renamed.status().message(), Catch::Contains("pid 0"));
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
