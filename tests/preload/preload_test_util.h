// Reading the traces libdlio_preload.so writes, shared by the tests of tests/preload.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "test_util.h"

namespace dlio::preload_test {

using nlohmann::json;

// The files in `dir`, sorted.
inline std::vector<std::string> DirectoryFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The traces in `dir` (trace-*.pfw; `dlio-run profile` also leaves its analysis and report).
inline std::vector<std::string> TraceFiles(const std::string& dir) {
  std::vector<std::string> traces;
  for (const auto& f : DirectoryFiles(dir)) {
    if (std::filesystem::path(f).filename().string().rfind("trace-", 0) == 0) traces.push_back(f);
  }
  return traces;
}

// The whole file must be one JSON array (closed by the footer) naming its process; returns its
// complete events in recording (id) order.
inline std::vector<json> ReadEvents(const std::string& path) {
  const std::string text = dlio::testing::ReadTextFile(path);
  INFO(path << ":\n" << text.substr(0, 20000));
  json all;
  REQUIRE_NOTHROW(all = json::parse(text));
  REQUIRE(all.is_array());
  std::vector<json> events;
  bool process_named = false;
  for (const json& e : all) {
    REQUIRE(e.at("pid").get<int64_t>() > 0);
    if (e.at("ph") == "M") {
      if (e.at("name") == "process_name") process_named = true;
      continue;
    }
    REQUIRE(e.at("ph") == "X");
    REQUIRE(e.at("tid").get<int64_t>() > 0);
    REQUIRE(e.at("ts").get<int64_t>() > 0);
    REQUIRE(e.at("dur").get<int64_t>() >= 0);
    events.push_back(e);
  }
  CHECK(process_named);
  std::sort(events.begin(), events.end(),
            [](const json& a, const json& b) { return a.at("id") < b.at("id"); });
  return events;
}

// The process_name metadata of a trace file ("" when absent).
inline std::string ProcessName(const std::string& path) {
  const json all = json::parse(dlio::testing::ReadTextFile(path));
  for (const json& e : all) {
    if (e.at("ph") == "M" && e.at("name") == "process_name") return e.at("args").at("name");
  }
  return "";
}

// args[key], or -1 when absent.
inline int64_t ArgOr(const json& e, const char* key) {
  const json& args = e.at("args");
  return args.contains(key) ? args.at(key).get<int64_t>() : -1;
}

// The union of [offset, offset + ret) of the data events (those with a count) on `fname`, as
// sorted disjoint spans.
inline std::vector<std::pair<int64_t, int64_t>> Spans(const std::vector<json>& events,
                                                      const std::string& fname) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const json& e : events) {
    const int64_t ret = ArgOr(e, "ret");
    if (e.at("args").at("fname") == fname && ArgOr(e, "count") >= 0 && ret > 0) {
      spans.emplace_back(ArgOr(e, "offset"), ArgOr(e, "offset") + ret);
    }
  }
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (const auto& s : spans) {
    if (!merged.empty() && s.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, s.second);
    } else {
      merged.push_back(s);
    }
  }
  return merged;
}

// How many bytes of `fname` the data events read or wrote (each byte once).
inline uint64_t BytesCovered(const std::vector<json>& events, const std::string& fname) {
  uint64_t covered = 0;
  for (const auto& [b, e] : Spans(events, fname)) covered += static_cast<uint64_t>(e - b);
  return covered;
}

// Whether [begin, end) lies inside one span.
inline bool Covers(const std::vector<std::pair<int64_t, int64_t>>& spans, int64_t begin,
                   int64_t end) {
  for (const auto& [b, e] : spans) {
    if (b <= begin && end <= e) return true;
  }
  return begin == end;
}

}  // namespace dlio::preload_test
