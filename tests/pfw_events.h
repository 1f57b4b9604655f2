// The events of a .pfw trace as dlio writes it: "[" then one JSON object per line, each but the
// last followed by a comma, then "]".
#pragma once

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace dlio::testing {

// Every event of the trace at `path`, in file order; REQUIREs that each line parses.
inline std::vector<nlohmann::json> ReadPfwEvents(const std::string& path) {
  std::vector<nlohmann::json> events;
  std::istringstream lines(ReadTextFile(path));
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == ',') line.pop_back();
    if (line.empty() || line[0] != '{') continue;
    auto e = nlohmann::json::parse(line, nullptr, false);
    INFO(path << ": " << line);
    REQUIRE(!e.is_discarded());
    events.push_back(std::move(e));
  }
  return events;
}

}  // namespace dlio::testing
