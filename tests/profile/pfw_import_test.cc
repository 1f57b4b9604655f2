#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dlio/profile.h"
#include "dlio/tracer.h"
#include "test_util.h"
#include "trace/pfw_codec.h"
#include "write_gzip.h"

namespace dlio {
namespace {

using testing::TempDir;
using testing::WriteGzip;
using testing::WriteTextFile;

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
  CHECK(t.ranks.at(3) == 3);  // the process name tells the rank
  CHECK(t.thread_names.at({3, 4}) == "loader");
}

TEST_CASE("pfw import: a shared-memory count below 1 or past 32 bits reads as none or capped") {
  TempDir dir;
  WriteTextFile(dir / "t.pfw",
                "[\n"
                "{\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,"
                "\"ph\":\"X\",\"args\":{\"ret\":1,\"shm\":-7}},\n"
                "{\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1,"
                "\"ph\":\"X\",\"args\":{\"ret\":1,\"shm\":99999999999}}\n]\n");
  ProfileTrace t;
  REQUIRE(ImportPfw(dir / "t.pfw", &t).ok());
  REQUIRE(t.size() == 2);
  CHECK(t.Get(0).shm_created == 0);
  CHECK(t.Get(1).shm_created == INT32_MAX);
}

// The codec both writers share (trace/pfw_codec.h), read back by the importer.
std::string Encoded(const pfw::Event& e, const char* end = pfw::kLineEnd) {
  std::string out(pfw::MaxEventBytes(std::strlen(e.name), std::strlen(e.cat), e.fname_len), '\0');
  out.resize(pfw::EncodeEvent(e, end, out.data(), out.size()));
  REQUIRE(!out.empty());
  return out;
}

std::string NameLine(const char* meta, int64_t tid, const std::string& value, const char* end) {
  std::string out(pfw::MaxEventBytes(0, 0, value.size()), '\0');
  out.resize(pfw::EncodeNameMetadata(0, meta, 9, tid, value.data(), value.size(), end, out.data(),
                                     out.size()));
  REQUIRE(!out.empty());
  return out;
}

TEST_CASE("pfw codec: an encoded event and its metadata import with every field and odd path") {
  // Quotes, backslashes, control bytes (newline, tab, 0x01, 0x1f) and UTF-8 in a file name.
  const std::string path = std::string("/d/a \"q\" \\b\n\t\x01\x1f") + "\xc3\xa9.npz";
  pfw::Event e;
  e.id = 5;
  e.name = "pread64";
  e.cat = "POSIX";
  e.pid = 9;
  e.tid = 11;
  e.ts_us = 1700000000123456;
  e.dur_us = 42;
  e.fname = path.data();
  e.fname_len = path.size();
  e.count = 4096;
  e.offset = 8192;
  e.ret = 100;
  e.epoch = 2;
  e.faults = 3;
  e.run_delay = 123456789;
  e.shm = 2;
  pfw::Event failed = e;
  failed.ret = -1;        // a failed call keeps its ret
  failed.faults = -1;     // not counted: no "minflt"
  failed.run_delay = -1;  // not read: no "rqd"
  failed.shm = 0;         // none created: no "shm"
  pfw::Event span;
  span.name = "compute";
  span.cat = "compute";
  span.pid = 9;
  span.tid = 11;
  const std::string text = "[\n" + NameLine(pfw::kProcessName, 0, "prog (rank 3)", pfw::kLineEnd) +
                           NameLine(pfw::kThreadName, 11, "w\"1\\", pfw::kLineEnd) + Encoded(e) +
                           Encoded(failed) + Encoded(span) +
                           NameLine(pfw::kProcessName, 0, "prog (rank 3)", pfw::kLastLineEnd);
  CHECK(text.find("\"ret\"", text.find("compute")) == std::string::npos);  // a span has none
  CHECK(text.find("\"shm\":2") != std::string::npos);
  CHECK(text.find("\"shm\"", text.find("\"shm\":2") + 1) == std::string::npos);  // once
  TempDir dir;
  WriteTextFile(dir / "t.pfw", text);
  ProfileTrace t;
  auto stats = ImportPfw(dir / "t.pfw", &t);
  REQUIRE(stats.ok());
  CHECK(stats->events == 3);
  CHECK(stats->truncated_lines == 0);
  REQUIRE(t.size() == 3);
  const ProfileEvent read = t.Get(0);
  CHECK(read.name == "pread64");
  CHECK(read.category == "POSIX");
  CHECK(read.pid == 9);
  CHECK(read.tid == 11);
  CHECK(read.start_us == 1700000000123456);
  CHECK(read.dur_us == 42);
  CHECK(read.path == path);
  CHECK(read.size == 4096);
  CHECK(read.offset == 8192);
  CHECK(read.ret == 100);
  CHECK(read.faults == 3);
  CHECK(read.run_delay_us == 123456789);
  CHECK(read.shm_created == 2);
  CHECK(t.Get(1).shm_created == 0);
  CHECK(t.Get(1).ret == -1);
  CHECK(t.Get(1).faults == -1);
  CHECK(t.Get(1).run_delay_us == -1);
  CHECK(t.Get(2).run_delay_us == -1);
  CHECK(t.Get(2).path.empty());
  CHECK(t.process_names.at(9) == "prog (rank 3)");
  CHECK(t.ranks.at(9) == 3);
  CHECK(t.thread_names.at({9, 11}) == "w\"1\\");
}

TEST_CASE("pfw codec: a buffer too small is reported and never written past") {
  const std::string path = "/d/\"x\"\n.bin";
  pfw::Event e;
  e.name = "write";
  e.cat = "POSIX";
  e.fname = path.data();
  e.fname_len = path.size();
  e.count = 10;
  e.ret = -28;
  const std::string whole = Encoded(e);
  const std::string meta = NameLine(pfw::kThreadName, 4, "t\x02", pfw::kLineEnd);
  constexpr char kGuard = '\x7f';
  for (size_t cap = 0; cap <= whole.size(); ++cap) {
    std::vector<char> buf(cap + 16, kGuard);
    const size_t n = pfw::EncodeEvent(e, pfw::kLineEnd, buf.data(), cap);
    CHECK(n == (cap == whole.size() ? whole.size() : 0));
    CHECK(std::string(buf.data() + cap, 16) == std::string(16, kGuard));
  }
  for (size_t cap = 0; cap < meta.size(); ++cap) {
    std::vector<char> buf(cap + 16, kGuard);
    CHECK(pfw::EncodeNameMetadata(0, pfw::kThreadName, 9, 4, "t\x02", 2, pfw::kLineEnd, buf.data(),
                                  cap) == 0);
    CHECK(pfw::EncodeSortIndexMetadata(9, 3, pfw::kLastLineEnd, buf.data(), cap / 4) == 0);
    CHECK(std::string(buf.data() + cap, 16) == std::string(16, kGuard));
  }
  CHECK(whole.size() < pfw::MaxEventBytes(5, 5, path.size()));
}

TEST_CASE("RankOfProcessName: dlio's, trace-merge's and libdlio_preload.so's process names") {
  CHECK(RankOfProcessName("dlio rank 0") == 0);
  CHECK(RankOfProcessName("dlio rank 12") == 12);
  CHECK(RankOfProcessName("dlio rank 1 worker 3") == 1);
  CHECK(RankOfProcessName("python3 (rank 2)") == 2);
  CHECK(RankOfProcessName("dlio pid 7") == -1);
  CHECK(RankOfProcessName("dlio rank x") == -1);
  CHECK(RankOfProcessName("dlio rank 2x") == -1);
  CHECK(RankOfProcessName("python3 (rank 2) x") == -1);
  CHECK(RankOfProcessName("python3 (rank )") == -1);
  CHECK(RankOfProcessName("python3") == -1);
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
  // Times beyond 2^53 us (kMaxTraceMicros) are refused: sums of them would overflow.
  WriteTextFile(dir / "far.pfw",
                "[\n{\"name\":\"read\",\"ph\":\"X\",\"ts\":1,\"dur\":2},\n"
                "{\"name\":\"read\",\"ph\":\"X\",\"ts\":9007199254740993},\n"
                "{\"name\":\"read\",\"ph\":\"X\",\"ts\":3}\n]\n");
  r = ImportPfw(dir / "far.pfw", &t);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("line 3"));
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
}

// Lines byte for byte as DFTracer's JsonLines writes them (llnl-asr/dftracer,
// src/dftracer/core/serialization/json_line.cpp at 7e9187c7: data() with and without metadata,
// metadata() with is_string; the order HH, thread_name, CM time_metric, "start" is
// DFTLogger::update_log_file in src/dftracer/core/df_logger.h). ph/type are the integers of
// TracePhaseType / TraceEventType (enumeration.h): ph 1 = complete, 4 = metadata, 2 = counter,
// 3 = aggregated; type 1 = DFTRACER, 3 = LIBC_IO.
std::string NewDfTracerTrace(std::string_view time_metric, int64_t scale) {
  auto t = [&](int64_t us) { return std::to_string(us * scale); };
  const std::string hh = "5f3ae3d6eb8fc1d4";
  std::string s;
  s += R"({"name":"HH","cat":"dftracer","type":1,"pid":4242,"tid":0,"ph":4,"args":{"hhash":")" +
       hh + R"(","name":"node17","value":")" + hh + "\"}}\n";
  s += R"({"name":"thread_name","cat":"dftracer","type":1,"pid":4242,"tid":0,"ph":4,)"
       R"("args":{"hhash":")" +
       hh + R"(","name":"4242","value":"thread_name"}})" + "\n";
  s += R"({"name":"CM","cat":"dftracer","type":1,"pid":4242,"tid":0,"ph":4,"args":{"hhash":")" +
       hh + R"(","name":"time_metric","value":")" + std::string(time_metric) + "\"}}\n";
  s += R"({"id":1,"name":"start","cat":"dftracer","type":1,"pid":4242,"tid":0,"ts":)" + t(1000) +
       R"(,"dur":0,"ph":1,"args":{"hhash":")" + hh +
       R"(","ppid":1,"date":"Mon Nov 24 08:00:00 2026","cmd_hash":"a1","exec_hash":"b2"}})" + "\n";
  s += R"({"name":"FH","cat":"dftracer","type":1,"pid":4242,"tid":4243,"ph":4,"args":{"hhash":")" +
       hh + R"(","name":"/data/train/img_1.npz","value":"9c2e41d07f13a2b8"}})" + "\n";
  s += R"({"id":2,"name":"open64","cat":"POSIX","type":3,"pid":4242,"tid":4243,"ts":)" + t(1010) +
       R"(,"dur":)" + t(4) + R"(,"ph":1,"args":{"hhash":")" + hh +
       R"(","fhash":"9c2e41d07f13a2b8","flags":0}})" + "\n";
  s += R"({"id":3,"name":"pread64","cat":"POSIX","type":3,"pid":4242,"tid":4243,"ts":)" + t(1020) +
       R"(,"dur":)" + t(30) + R"(,"ph":1,"args":{"hhash":")" + hh +
       R"(","fhash":"9c2e41d07f13a2b8","count":4096,"offset":8192,"ret":4096}})" + "\n";
  // DFTRACER_INC_METADATA off: no args at all.
  s += R"({"id":4,"name":"read","cat":"POSIX","type":3,"pid":4242,"tid":4243,"ts":)" + t(1060) +
       R"(,"dur":)" + t(2) + R"(,"ph":1})" + "\n";
  s += R"({"name":"cpu","cat":"sys","type":7,"ts":)" + t(1070) +
       R"(,"ph":2,"pid":4242,"tid":0,"args":{"hhash":")" + hh + R"(","user":12}})" + "\n";
  s += R"({"name":"read","cat":"POSIX","type":3,"ts":)" + t(1000) +
       R"(,"ph":3,"pid":4242,"tid":4243,"args":{"hhash":")" + hh + R"(","count":3}})" + "\n";
  return s;
}

void CheckNewDfTracer(const ProfileTrace& t, const ImportStats& stats) {
  CHECK(stats.events == 4);
  CHECK(stats.metadata_events == 4);
  CHECK(stats.skipped == 2);  // the counter and the aggregated record
  REQUIRE(t.size() == 4);
  CHECK(t.Get(0).name == "start");
  CHECK(t.Get(0).kind == OpKind::kOther);
  const ProfileEvent open = t.Get(1);
  CHECK(open.kind == OpKind::kOpen);
  CHECK(open.path == "/data/train/img_1.npz");
  const ProfileEvent read = t.Get(2);
  CHECK(read.kind == OpKind::kRead);
  CHECK(read.pid == 4242);
  CHECK(read.tid == 4243);
  CHECK(read.category == "POSIX");
  CHECK(read.path == "/data/train/img_1.npz");
  CHECK(read.start_us == 1020);
  CHECK(read.dur_us == 30);
  CHECK(read.size == 4096);
  CHECK(read.offset == 8192);
  CHECK(read.ret == 4096);
  CHECK(t.Get(3).path.empty());
  CHECK(t.Get(3).size == -1);
  CHECK(t.thread_names.at({4242, 0}) == "4242");
}

TEST_CASE("ImportPfw reads DFTracer's integer-ph form, plain and gzip, in every time unit") {
  TempDir dir;
  const std::pair<std::string_view, int64_t> metrics[] = {{"US", 1}, {"NS", 1000}};
  for (const auto& [metric, scale] : metrics) {
    const std::string text = NewDfTracerTrace(metric, scale);
    WriteTextFile(dir / "new.pfw", text);
    WriteGzip(dir / "new.pfw.gz", text);
    for (const std::string name : {"new.pfw", "new.pfw.gz"}) {
      ProfileTrace t;
      auto stats = ImportPfw(dir / name, &t);
      REQUIRE(stats.ok());
      CheckNewDfTracer(t, *stats);
    }
  }
  // Seconds: whole-second values scale up to µs.
  WriteTextFile(dir / "sec.pfw",
                "{\"name\":\"CM\",\"cat\":\"dftracer\",\"type\":1,\"pid\":1,\"tid\":0,\"ph\":4,"
                "\"args\":{\"hhash\":\"h\",\"name\":\"time_metric\",\"value\":\"SEC\"}}\n"
                "{\"id\":1,\"name\":\"read\",\"cat\":\"POSIX\",\"type\":3,\"pid\":1,\"tid\":1,"
                "\"ts\":7,\"dur\":2,\"ph\":1}\n");
  ProfileTrace t;
  REQUIRE(ImportPfw(dir / "sec.pfw", &t).ok());
  REQUIRE(t.size() == 1);
  CHECK(t.Get(0).start_us == 7000000);
  CHECK(t.Get(0).dur_us == 2000000);
  WriteTextFile(
      dir / "bad_metric.pfw",
      "{\"name\":\"CM\",\"ph\":4,\"args\":{\"name\":\"time_metric\",\"value\":\"PS\"}}\n");
  auto r = ImportPfw(dir / "bad_metric.pfw", &t);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("bad_metric.pfw") && Catch::Contains("PS"));
}

// Older DFTracer writers (PerfettoChromeWriterBase) put the array's "," before every event but
// the first: ",{...}". Lines as write_metadata_json_to_buffer / write_event_json_to_buffer print
// them.
TEST_CASE("ImportPfw reads DFTracer's leading-comma lines") {
  TempDir dir;
  WriteTextFile(
      dir / "comma.pfw",
      "[\n"
      "{\"id\":1,\"name\":\"FH\",\"cat\":\"dftracer\",\"pid\":7,\"tid\":7,\"ph\":\"M\","
      "\"args\":{\"hhash\":\"h\",\"name\":\"/d/x\",\"value\":\"f9\"}}\n"
      ",{\"id\":2,\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":7,\"tid\":7,\"ts\":100,\"dur\":3,"
      "\"ph\":\"X\",\"args\":{\"hhash\":\"h\",\"fhash\":\"f9\",\"count\":10,\"ret\":10}}\n");
  ProfileTrace t;
  auto stats = ImportPfw(dir / "comma.pfw", &t);
  REQUIRE(stats.ok());
  REQUIRE(t.size() == 1);
  CHECK(t.Get(0).path == "/d/x");
  CHECK(t.Get(0).size == 10);
}

// One DFTracer version (JsonLines::metadata, non-string branch) prints "pid":%dq: its
// core_affinity record is not JSON. It names no I/O: skipped and counted, the rest imported.
TEST_CASE("ImportPfw skips DFTracer's malformed non-string metadata records") {
  TempDir dir;
  WriteTextFile(
      dir / "pr.pfw",
      "[\n"
      "{\"id\":1,\"name\":\"PR\",\"cat\":\"dftracer\",\"pid\":42q,\"tid\":0,\"ph\":\"M\","
      "\"args\":{\"hhash\":\"h\",\"name\":\"core_affinity\",\"value\":[0,1]}}\n"
      "{\"id\":2,\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":42,\"tid\":42,\"ts\":1,\"dur\":1,"
      "\"ph\":\"X\",\"args\":{\"hhash\":\"h\",\"count\":8,\"ret\":8}}\n");
  ProfileTrace t;
  auto stats = ImportPfw(dir / "pr.pfw", &t);
  REQUIRE(stats.ok());
  CHECK(stats->malformed_metadata == 1);
  CHECK(stats->events == 1);
  // A malformed I/O event still fails.
  WriteTextFile(dir / "bad.pfw",
                "{\"id\":2,\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":42q,\"ph\":\"X\"}\n"
                "{\"id\":3,\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":42,\"ph\":\"X\"}\n");
  auto r = ImportPfw(dir / "bad.pfw", &t);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("bad.pfw line 1"));
}

// DFTracer compresses each flushed block as its own gzip member; the file is their
// concatenation. Every member must be read, not only the first.
TEST_CASE("ImportPfw reads every member of a multi-member gzip file") {
  TempDir dir;
  std::string all;
  for (int m = 0; m < 3; ++m) {
    std::string text;
    for (int i = 0; i < 1000; ++i) {
      text += "{\"id\":" + std::to_string(m * 1000 + i) +
              ",\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":1,\"tid\":1,\"ts\":" +
              std::to_string(m * 1000 + i) + ",\"dur\":1,\"ph\":\"X\"}\n";
    }
    std::string member = dir / "m.gz";
    member += std::to_string(m);
    WriteGzip(member, text);
    all += testing::ReadTextFile(member);
  }
  WriteTextFile(dir / "multi.pfw.gz", all);
  ProfileTrace t;
  auto stats = ImportPfw(dir / "multi.pfw.gz", &t);
  REQUIRE(stats.ok());
  CHECK(stats->events == 3000);
  REQUIRE(t.size() == 3000);
  CHECK(t.start_us.back() == 2999);
}

}  // namespace
}  // namespace dlio
