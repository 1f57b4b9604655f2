// docs/configuration.md must list every key exactly as the table renders it, so the document
// cannot drift from the code. To refresh it, run this test with DLIO_PRINT_CONFIG_DOCS=1 and
// paste the printed reference into the document.
#include "config/config_docs.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "dlio/cache.h"
#include "dlio/config.h"
#include "dlio/pipeline.h"
#include "dlio/storage.h"
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

// Checks that each of `entries`' declared key sections (its own keys, parsed into its own options
// type) has keys in the table and that their rendered rows are in the document; returns how many
// sections were declared.
template <typename Entries>
int CheckDeclaredSections(const Entries& entries) {
  const std::string reference = config_internal::ConfigReferenceMarkdown();
  const std::string doc =
      testing::ReadTextFile(std::string(DLIO_SOURCE_DIR) + "/docs/configuration.md");
  int sections = 0;
  for (const auto& entry : entries) {
    for (const std::string& section : entry.key_sections) {
      ++sections;
      int keys = 0;
      for (const ConfigKeyDoc& d : ConfigKeyDocs()) {
        if (!d.used || d.key.compare(0, section.size(), section) != 0) continue;
        ++keys;
        const size_t at = reference.find("| `" + d.key + "` |");
        INFO(entry.name << ": " << d.key);
        REQUIRE(at != std::string::npos);
        CHECK(doc.find(reference.substr(at, reference.find('\n', at) - at)) != std::string::npos);
      }
      INFO(entry.name << " declares " << section);
      CHECK(keys > 0);
    }
  }
  return sections;
}

// Walks the storage registry.
TEST_CASE("the keys each registered storage declares are in the table and documented") {
  StorageRegistry storages("storage");
  NodeSharedStorageRegistry node_shared("node-shared storage");
  REQUIRE(RegisterBuiltinStorages(&storages).ok());
  REQUIRE(RegisterTieredStorage(&storages, &node_shared).ok());
  CHECK(CheckDeclaredSections(storages.List()) >= 1);  // s3: storage.storage_options.
}

// Walks the pipeline registry.
TEST_CASE("the keys each registered pipeline declares are in the table and documented") {
  PipelineRegistry pipelines("pipeline");
  REQUIRE(RegisterBuiltinPipelines(&pipelines).ok());
  CHECK(CheckDeclaredSections(pipelines.List()) >= 1);  // pytorch: reader.persistent_workers
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
