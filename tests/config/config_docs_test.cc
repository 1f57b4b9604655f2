// docs/configuration.md must list every key exactly as the table renders it, so the document
// cannot drift from the code. To refresh it, run this test with DLIO_PRINT_CONFIG_DOCS=1 and
// paste the printed reference into the document.
#include "config/config_docs.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "dlio/config.h"
#include "test_util.h"

namespace dlio {
namespace {

TEST_CASE("docs/configuration.md contains every rendered key row") {
  const std::string reference = config_internal::ConfigReferenceMarkdown();
  if (std::getenv("DLIO_PRINT_CONFIG_DOCS")) std::cout << reference;
  const std::string doc =
      testing::ReadTextFile(std::string(DLIO_SOURCE_DIR) + "/docs/configuration.md");
  REQUIRE_FALSE(doc.empty());
  std::istringstream lines(reference);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    INFO("missing from docs/configuration.md: " << line);
    CHECK(doc.find(line) != std::string::npos);
    ++rows;
  }
  CHECK(rows > static_cast<int>(ConfigKeyDocs().size()));
}

TEST_CASE("every key has a type, a default and a description") {
  for (const ConfigKeyDoc& d : ConfigKeyDocs()) {
    INFO(d.key);
    CHECK_FALSE(d.type.empty());
    CHECK_FALSE(d.default_value.empty());
    CHECK_FALSE(d.description.empty());
    CHECK(d.description.find('|') == std::string::npos);  // would break the markdown table
  }
}

TEST_CASE("docs cover overrides, distributions and units") {
  const std::string doc =
      testing::ReadTextFile(std::string(DLIO_SOURCE_DIR) + "/docs/configuration.md");
  for (const char* heading : {"## Overrides", "## Distributions", "## Units",
                              "## DLIO compatibility", "## Validation rules"}) {
    INFO(heading);
    CHECK(doc.find(heading) != std::string::npos);
  }
}

TEST_CASE("the distribution types in the docs are the one list the parser uses") {
  const std::string doc =
      testing::ReadTextFile(std::string(DLIO_SOURCE_DIR) + "/docs/configuration.md");
  CHECK(doc.find("`T` one of " + EnumNameList<DistributionSpec::Type>() + " |") !=
        std::string::npos);
  for (std::string_view name : EnumNames<DistributionSpec::Type>::kNames) {
    auto parsed = ParseConfig("train: {computation_time: {type: " + std::string(name) +
                                  ", mean: 1, "
                                  "stdev: 1}}",
                              "t.yaml");
    INFO(name);
    REQUIRE(parsed.ok());
    CHECK(DistributionTypeName(parsed->train.computation_time.type) == name);
  }
}

}  // namespace
}  // namespace dlio
