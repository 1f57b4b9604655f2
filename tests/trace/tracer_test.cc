#include "dlio/tracer.h"

#include <zlib.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace dlio {
namespace {

using nlohmann::json;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// A line of the .pfw body parsed on its own (the trailing comma is the array separator).
json ParseLine(std::string line) {
  if (!line.empty() && line.back() == ',') line.pop_back();
  return json::parse(line);
}

std::string Gunzip(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  REQUIRE(gz != nullptr);
  std::string out;
  char buf[65536];
  int n;
  while ((n = gzread(gz, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  REQUIRE(n == 0);
  gzclose(gz);
  return out;
}

TraceEvent ReadEvent(int32_t file_id, int64_t i) {
  TraceEvent e;
  e.name = "pread";
  e.cat = "POSIX";
  e.start_us = 1000000 + i;
  e.dur_us = 3;
  e.file_id = file_id;
  e.offset = i * 4096;
  e.count = 4096;
  e.ret = 4096;
  e.epoch = 1;
  return e;
}

TEST_CASE("null tracer is disabled and accepts everything") {
  auto t = MakeNullTracer();
  CHECK_FALSE(t->enabled());
  t->Record(TraceEvent{});
  CHECK(t->Flush().ok());
}

TEST_CASE("memory tracer keeps events from many threads, sorted, with tids and file names") {
  MemoryTracer t;
  CHECK(t.enabled());
  const int32_t a = t.InternFile("/data/a.npz");
  const int32_t b = t.InternFile("/data/b.npz");
  CHECK(a != b);
  CHECK(t.InternFile("/data/a.npz") == a);
  CHECK(t.FileName(b) == "/data/b.npz");
  CHECK(t.FileName(99) == "");
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&t, k, a] {
      for (int i = 0; i < 2000; ++i) t.Record(ReadEvent(a, k * 10000 + i));
    });
  }
  for (auto& th : threads) th.join();
  const auto events = t.Events();
  REQUIRE(events.size() == 8000);
  std::set<int32_t> tids;
  for (size_t i = 0; i < events.size(); ++i) {
    tids.insert(events[i].tid);
    if (i > 0) CHECK(events[i - 1].start_us <= events[i].start_us);
  }
  CHECK(tids.size() == 4);
  CHECK(tids.count(0) == 0);
}

TEST_CASE("trace file: 4 threads, every line parses back, whole file is a JSON array") {
  testing::TempDir tmp;
  TraceFileOptions o;
  o.path = tmp / "trace-3.pfw";
  o.pid = 3;
  o.buffer_events = 64;  // forces many mid-run appends
  auto tr = MakeTraceFileTracer(o);
  REQUIRE(tr.ok());
  Tracer& t = **tr;
  const int32_t fid = t.InternFile("/data/img \"quoted\".npz");
  constexpr int kThreads = 4, kPerThread = 1000;
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&t, k, fid] {
      const std::string name = "tracer-test-" + std::to_string(k);
      pthread_setname_np(pthread_self(), name.c_str());
      for (int i = 0; i < kPerThread; ++i) t.Record(ReadEvent(fid, k * kPerThread + i));
      TraceEvent step;
      step.name = "ai.compute.step";
      step.cat = "ai";
      step.start_us = 5;
      step.dur_us = 7;
      step.step = k;
      t.Record(step);
    });
  }
  for (auto& th : threads) th.join();
  REQUIRE(t.Flush().ok());

  const std::string text = testing::ReadTextFile(o.path);
  const auto lines = Lines(text);
  REQUIRE(lines.size() >= 3);
  CHECK(lines.front() == "[");
  CHECK(lines.back() == "]");
  std::map<int64_t, int> tids;
  std::set<int64_t> ids, offsets;
  int steps = 0, meta = 0;
  std::map<int64_t, std::string> thread_names;
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    json j = ParseLine(lines[i]);
    CHECK(j["pid"] == 3);
    if (j["ph"] == "M") {
      if (j["name"] == "thread_name") {
        CHECK(thread_names.emplace(j["tid"], j["args"]["name"]).second);  // once per thread
      } else {
        CHECK(j["name"] == "process_name");
        CHECK(j["args"]["name"] == "dlio pid 3");
        ++meta;
      }
      continue;
    }
    REQUIRE(j["ph"] == "X");
    ids.insert(j["id"].get<int64_t>());
    if (j["name"] == "ai.compute.step") {
      ++steps;
      CHECK(j["cat"] == "ai");
      CHECK(j["dur"] == 7);
      CHECK(j["args"].size() == 1);  // only step applies
      continue;
    }
    ++tids[j["tid"].get<int64_t>()];
    CHECK(j["cat"] == "POSIX");
    CHECK(j["name"] == "pread");
    CHECK(j["dur"] == 3);
    CHECK(j["args"]["fname"] == "/data/img \"quoted\".npz");
    CHECK(j["args"]["count"] == 4096);
    CHECK(j["args"]["ret"] == 4096);
    CHECK(j["args"]["epoch"] == 1);
    CHECK_FALSE(j["args"].contains("step"));
    const int64_t off = j["args"]["offset"];
    CHECK(j["ts"].get<int64_t>() == 1000000 + off / 4096);
    offsets.insert(off);
  }
  CHECK(steps == kThreads);
  CHECK(meta == 1);
  REQUIRE(thread_names.size() == kThreads);  // each thread named, by its own name
  for (const auto& [tid, name] : thread_names) {
    CHECK(tids.count(tid) == 1);
    CHECK(name.rfind("tracer-test-", 0) == 0);
  }
  CHECK(offsets.size() == kThreads * kPerThread);
  CHECK(ids.size() == kThreads * kPerThread + kThreads);
  REQUIRE(tids.size() == kThreads);
  for (const auto& [tid, n] : tids) CHECK(n == kPerThread);

  json whole = json::parse(text);
  REQUIRE(whole.is_array());
  CHECK(whole.size() == kThreads * kPerThread + 2 * kThreads + 1);

  // Recording after a Flush overwrites the footer; the file stays valid.
  t.Record(ReadEvent(fid, 99999));
  REQUIRE(t.Flush().ok());
  whole = json::parse(testing::ReadTextFile(o.path));
  CHECK(whole.size() == kThreads * kPerThread + 2 * kThreads + 3);  // + main's name
  tr->reset();  // destructor closes; still valid
  whole = json::parse(testing::ReadTextFile(o.path));
  CHECK(whole.size() == kThreads * kPerThread + 2 * kThreads + 3);
}

TEST_CASE("trace file: .gz output decompresses to the same lines") {
  testing::TempDir tmp;
  std::string texts[2];
  const std::string paths[2] = {tmp / "t.pfw", tmp / "t.pfw.gz"};
  for (int k = 0; k < 2; ++k) {
    TraceFileOptions o;
    o.path = paths[k];
    o.buffer_events = 100;
    auto tr = MakeTraceFileTracer(o);
    REQUIRE(tr.ok());
    const int32_t fid = (*tr)->InternFile("/x/y.bin");
    for (int i = 0; i < 1000; ++i) {
      TraceEvent e = ReadEvent(fid, i);
      e.tid = 77;  // same tid in both files
      (*tr)->Record(e);
    }
    REQUIRE((*tr)->Flush().ok());
    tr->reset();
    texts[k] = k == 0 ? testing::ReadTextFile(paths[k]) : Gunzip(paths[k]);
  }
  CHECK(texts[0] == texts[1]);
  CHECK(Lines(texts[1]).size() == 1000 + 4);  // [, thread name, events, process name, ]
  CHECK(json::parse(texts[1]).size() == 1000 + 2);
  CHECK(testing::ReadTextFile(paths[1]).substr(0, 2) == "\x1f\x8b");  // really gzip
}

// libdlio_preload.so writes every call's ret, a failure's included; this tracer once dropped a
// ret of -1 (a failed storage call), so a failed open looked like an event that is not a call.
TEST_CASE("trace file: ret is written for every call, a failure's -1 included, never for a span") {
  testing::TempDir tmp;
  TraceFileOptions o;
  o.path = tmp / "t.pfw";
  auto tr = MakeTraceFileTracer(o);
  REQUIRE(tr.ok());
  TraceEvent failed;
  failed.name = "open";
  failed.cat = "POSIX";
  failed.file_id = (*tr)->InternFile("/missing");
  failed.ret = -1;
  TraceEvent eio = failed;
  eio.ret = -5;
  TraceEvent span;  // ret left at kNoRet
  span.name = "compute";
  span.cat = "compute";
  span.step = 1;
  for (const TraceEvent& e : {failed, eio, span}) (*tr)->Record(e);
  tr->reset();
  const json whole = json::parse(testing::ReadTextFile(o.path));
  std::vector<json> args;  // one thread's events, in the order recorded
  for (const json& e : whole) {
    if (e["ph"] == "X") args.push_back(e["args"]);
  }
  REQUIRE(args.size() == 3);
  CHECK(args[0].value("ret", 0) == -1);
  CHECK(args[1].value("ret", 0) == -5);
  CHECK_FALSE(args[2].contains("ret"));
}

TEST_CASE("trace file: bad path and options are reported") {
  TraceFileOptions o;
  o.path = "/nonexistent-dir-dlio/trace.pfw";
  auto tr = MakeTraceFileTracer(o);
  CHECK_FALSE(tr.ok());
  CHECK_THAT(tr.status().message(), Catch::Contains("/nonexistent-dir-dlio/trace.pfw"));
  testing::TempDir tmp;
  o.path = tmp / "t.pfw";
  o.buffer_events = 0;
  CHECK(MakeTraceFileTracer(o).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("trace file: two tracers on the same threads keep their events apart") {
  testing::TempDir tmp;
  TraceFileOptions o1, o2;
  o1.path = tmp / "a.pfw";
  o2.path = tmp / "b.pfw";
  o1.buffer_events = o2.buffer_events = 8;
  {
    auto a = MakeTraceFileTracer(o1);
    auto b = MakeTraceFileTracer(o2);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    for (int i = 0; i < 30; ++i) {
      (*a)->Record(ReadEvent(-1, i));
      if (i % 3 == 0) (*b)->Record(ReadEvent(-1, i));
    }
  }
  // Events, the thread's name and the process's name.
  CHECK(json::parse(testing::ReadTextFile(o1.path)).size() == 32);
  CHECK(json::parse(testing::ReadTextFile(o2.path)).size() == 12);
}

}  // namespace
}  // namespace dlio
