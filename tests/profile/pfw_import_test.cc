#include <zlib.h>

#include <catch2/catch.hpp>
#include <memory>

#include "dlio/profile.h"
#include "dlio/tracer.h"
#include "test_util.h"

namespace dlio {
namespace {

using testing::TempDir;
using testing::WriteTextFile;

void WriteGzip(const std::string& path, const std::string& text) {
  gzFile gz = gzopen(path.c_str(), "wb");
  REQUIRE(gz != nullptr);
  REQUIRE(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())) ==
          static_cast<int>(text.size()));
  REQUIRE(gzclose(gz) == Z_OK);
}

const char kTrace[] =
    "[\n"
    "{\"id\":1,\"name\":\"open64\",\"cat\":\"POSIX\",\"pid\":3,\"tid\":4,\"ts\":10,\"dur\":2,"
    "\"ph\":\"X\",\"args\":{\"fname\":\"/d/a \\\"q\\\".npz\",\"ret\":0}},\n"
    "{\"id\":2,\"name\":\"pread\",\"cat\":\"POSIX\",\"pid\":3,\"tid\":4,\"ts\":12,\"dur\":3,"
    "\"ph\":\"X\",\"args\":{\"fname\":\"/d/a \\\"q\\\".npz\",\"count\":100,\"offset\":50,"
    "\"ret\":90,\"epoch\":1}},\n"
    "{\"id\":3,\"name\":\"ai.compute.step\",\"cat\":\"ai\",\"pid\":3,\"tid\":4,\"ts\":20.7,"
    "\"dur\":1e3,\"ph\":\"X\",\"args\":{\"epoch\":1,\"step\":2,\"list\":[1,{\"a\":null}]}},\n"
    "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":3,\"tid\":4,\"args\":{\"name\":\"loader\"}},\n"
    "{\"id\":0,\"name\":\"process_name\",\"cat\":\"dlio\",\"pid\":3,\"tid\":0,\"ph\":\"M\","
    "\"args\":{\"name\":\"dlio rank 3\"}}\n"
    "]\n";

void CheckTrace(const ProfileTrace& t, const ImportStats& stats) {
  CHECK(stats.events == 3);
  CHECK(stats.metadata_events == 2);
  REQUIRE(t.size() == 3);
  const ProfileEvent read = t.Get(1);
  CHECK(read.name == "pread");
  CHECK(read.kind == OpKind::kRead);
  CHECK(read.path == "/d/a \"q\".npz");
  CHECK(read.offset == 50);
  CHECK(read.size == 100);
  CHECK(read.ret == 90);
  CHECK(read.start_us == 12);
  CHECK(read.dur_us == 3);
  CHECK(t.Get(0).kind == OpKind::kOpen);
  const ProfileEvent step = t.Get(2);
  CHECK(step.kind == OpKind::kOther);
  CHECK(step.start_us == 20);
  CHECK(step.dur_us == 1000);
  CHECK(step.offset == -1);
  CHECK(step.path.empty());
  CHECK(t.process_names.at(3) == "dlio rank 3");
  CHECK(t.thread_names.at({3, 4}) == "loader");
}

TEST_CASE("ImportPfw reads plain and gzip trace files") {
  TempDir dir;
  WriteTextFile(dir / "t.pfw", kTrace);
  WriteGzip(dir / "t.pfw.gz", kTrace);
  for (const std::string name : {"t.pfw", "t.pfw.gz"}) {
    ProfileTrace t;
    auto stats = ImportPfw(dir / name, &t);
    REQUIRE(stats.ok());
    CheckTrace(t, *stats);
  }
}

TEST_CASE("ImportPfw names file and line of a malformed event") {
  TempDir dir;
  WriteTextFile(dir / "bad.pfw",
                "[\n{\"name\":\"read\",\"ph\":\"X\",\"ts\":1},\n{\"name\":\"read\",\"ts\":}\n"
                "{\"name\":\"read\",\"ph\":\"X\",\"ts\":2}\n]\n");
  ProfileTrace t;
  auto r = ImportPfw(dir / "bad.pfw", &t);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kCorruption);
  CHECK_THAT(r.status().message(), Catch::Contains(dir / "bad.pfw") && Catch::Contains("line 3"));
  // The same line last in the file: a process killed mid-write. Skipped and counted.
  WriteTextFile(dir / "cut.pfw", "[\n{\"name\":\"read\",\"ph\":\"X\",\"ts\":1},\n{\"name\":\"re");
  auto cut = ImportPfw(dir / "cut.pfw", &t);
  REQUIRE(cut.ok());
  CHECK(cut->events == 1);
  CHECK(cut->truncated_lines == 1);
  WriteTextFile(dir / "trail.pfw", "{\"name\":\"read\"} x\n");
  r = ImportPfw(dir / "trail.pfw", &t);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("line 1"));
  r = ImportPfw(dir / "missing.pfw", &t);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("missing.pfw"));
}

TEST_CASE("ImportPfw reads what dlio's own tracer writes") {
  TempDir dir;
  for (const std::string name : {"own.pfw", "own.pfw.gz"}) {
    TraceFileOptions options;
    options.path = dir / name;
    options.pid = 42;
    {
      auto tracer = MakeTraceFileTracer(options);
      REQUIRE(tracer.ok());
      const int32_t file = (*tracer)->InternFile("/data/x.npz");
      TraceEvent e;
      e.name = "pread";
      e.cat = "POSIX";
      e.start_us = 1000;
      e.dur_us = 7;
      e.tid = 5;
      e.file_id = file;
      e.offset = 4096;
      e.count = 512;
      e.ret = 512;
      (*tracer)->Record(e);
      REQUIRE((*tracer)->Flush().ok());
    }
    ProfileTrace t;
    auto stats = ImportPfw(options.path, &t);
    REQUIRE(stats.ok());
    REQUIRE(t.size() == 1);
    const ProfileEvent e = t.Get(0);
    CHECK(e.pid == 42);
    CHECK(e.tid == 5);
    CHECK(e.path == "/data/x.npz");
    CHECK(e.offset == 4096);
    CHECK(e.size == 512);
    CHECK(e.ret == 512);
    CHECK(t.process_names.count(42) == 1);
  }
}

TEST_CASE("ImportPfw resolves DFTracer file hashes from FH metadata events") {
  TempDir dir;
  WriteTextFile(dir / "df.pfw",
                "[\n"
                "{\"id\":1,\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":9,\"tid\":9,\"ts\":5,"
                "\"dur\":2,\"ph\":\"X\",\"args\":{\"hhash\":\"h1\",\"fhash\":\"f1\",\"size\":1024,"
                "\"ret\":1024,\"level\":1}}\n"
                "{\"id\":2,\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":9,\"tid\":9,\"ts\":8,"
                "\"dur\":2,\"ph\":\"X\",\"args\":{\"fhash\":77,\"size\":10}}\n"
                "{\"id\":3,\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":9,\"tid\":9,\"ts\":9,"
                "\"dur\":2,\"ph\":\"X\",\"args\":{\"fhash\":\"nope\"}}\n"
                "{\"id\":4,\"name\":\"FH\",\"cat\":\"dftracer\",\"pid\":9,\"tid\":9,\"ph\":\"M\","
                "\"args\":{\"name\":\"/data/a.npz\",\"value\":\"f1\"}}\n"
                "{\"id\":5,\"name\":\"FH\",\"cat\":\"dftracer\",\"pid\":9,\"tid\":9,\"ph\":\"M\","
                "\"args\":{\"name\":\"/data/b.npz\",\"value\":77}}\n"
                "{\"id\":6,\"name\":\"PR\",\"cat\":\"dftracer\",\"pid\":9,\"tid\":9,\"ph\":\"M\","
                "\"args\":{\"name\":\"core_affinity\",\"value\":[0,1]}}\n"
                "]\n");
  ProfileTrace t;
  auto stats = ImportPfw(dir / "df.pfw", &t);
  REQUIRE(stats.ok());
  REQUIRE(t.size() == 3);
  CHECK(t.Get(0).path == "/data/a.npz");
  CHECK(t.Get(0).size == 1024);
  CHECK(t.Get(1).path == "/data/b.npz");
  CHECK(t.Get(2).path == "fhash:nope");
  CHECK(stats->metadata_events == 3);

  WriteTextFile(dir / "int.pfw", "{\"name\":\"read\",\"ph\":1}\n");
  auto r = ImportPfw(dir / "int.pfw", &t);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kUnimplemented);
  CHECK_THAT(r.status().message(), Catch::Contains("int.pfw line 1"));
}

}  // namespace
}  // namespace dlio
