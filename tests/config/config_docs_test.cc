// docs/configuration.md's key reference is generated (tools/update_config_docs.sh, from `dlio-run
// list keys --markdown`): the lines between its BEGIN and END keys markers must be exactly
// ConfigKeysMarkdown(), so the document cannot drift from the code in either direction (a key
// added, removed or changed). DLIO_PRINT_CONFIG_DOCS=1 prints the rendering.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "dlio/cache.h"
#include "dlio/checkpointer.h"
#include "dlio/config.h"
#include "dlio/format.h"
#include "dlio/pipeline.h"
#include "dlio/storage.h"
#include "io_models/io_model_table.h"
#include "test_util.h"

namespace dlio {
namespace {

const char kBeginMarker[] = "<!-- BEGIN keys:";
const char kEndMarker[] = "<!-- END keys -->";

std::string ConfigDoc() {
  return testing::ReadTextFile(std::string(DLIO_SOURCE_DIR) + "/docs/configuration.md");
}

// The text between the line starting with kBeginMarker and the kEndMarker line; empty if either
// is missing.
std::string GeneratedRegion(const std::string& doc) {
  const size_t begin = doc.find(std::string("\n") + kBeginMarker);
  if (begin == std::string::npos) return "";
  const size_t from = doc.find('\n', begin + 1);
  const size_t to = doc.find(std::string("\n") + kEndMarker + "\n", from);
  if (from == std::string::npos || to == std::string::npos) return "";
  return doc.substr(from + 1, to + 1 - (from + 1));
}

TEST_CASE("docs/configuration.md's key reference is exactly the generated one") {
  const std::string reference = ConfigKeysMarkdown();
  if (std::getenv("DLIO_PRINT_CONFIG_DOCS")) std::cout << reference;
  const std::string region = GeneratedRegion(ConfigDoc());
  INFO("docs/configuration.md lacks its BEGIN/END keys markers");
  REQUIRE_FALSE(region.empty());
  // Report the first line that differs, then require the whole text.
  std::istringstream want(reference + "\n"), have(region);
  std::string w, h;
  int line = 0;
  while (true) {
    const bool more_w = static_cast<bool>(std::getline(want, w));
    const bool more_h = static_cast<bool>(std::getline(have, h));
    if (!more_w && !more_h) break;
    ++line;
    if (w == h && more_w == more_h) continue;
    INFO("line " << line << " of the key reference differs: run tools/update_config_docs.sh");
    CHECK(h == w);
    break;
  }
  CHECK(region == reference + "\n");
}

TEST_CASE("the key reference has one table per section and every used and unused key") {
  const std::string reference = ConfigKeysMarkdown();
  int used = 0, unused = 0;
  for (const ConfigKeyDoc& d : ConfigKeyDocs()) {
    INFO(d.key);
    CHECK(reference.find("| `" + d.key + "` |") != std::string::npos);
    ++(d.used ? used : unused);
  }
  CHECK(used > 150);
  CHECK(unused > 10);
  for (const char* section : {"top level", "model", "dataset", "reader", "train", "storage"}) {
    const std::string heading = std::string("\n### ") + section + "\n";
    const size_t first = reference.find(heading);
    INFO(section);
    REQUIRE(first != std::string::npos);
    CHECK(reference.find(heading, first + 1) == std::string::npos);
  }
}

// The number of key sections `entries` (a registry's List()) declare; each declared section (an
// implementation's own keys, parsed into its own options type) has keys in the table, and their
// rendered rows are in the document.
template <typename Entries>
int CheckDeclaredKeySections(const Entries& entries) {
  const std::string reference = ConfigKeysMarkdown();
  const std::string doc = ConfigDoc();
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

// Walks the storage registry (tiered's entry included).
TEST_CASE("the keys each registered storage declares are in the table and documented") {
  StorageRegistry storages("storage");
  NodeSharedStorageRegistry node_shared("node-shared storage");
  REQUIRE(RegisterBuiltinStorages(&storages).ok());
  REQUIRE(RegisterTieredStorage(&storages, &node_shared).ok());
  CHECK(CheckDeclaredKeySections(storages.List()) >= 1);  // s3: storage.storage_options.
}

// Walks the format registry.
TEST_CASE("the keys each registered format declares are in the table and documented") {
  FormatRegistry formats("format");
  REQUIRE(RegisterBuiltinFormats(&formats).ok());
  CHECK(CheckDeclaredKeySections(formats.List()) >= 2);  // parquet: dataset.parquet., pyarrow_read
}

// Walks the pipeline registry.
TEST_CASE("the keys each registered pipeline declares are in the table and documented") {
  PipelineRegistry pipelines("pipeline");
  REQUIRE(RegisterBuiltinPipelines(&pipelines).ok());
  CHECK(CheckDeclaredKeySections(pipelines.List()) >= 1);  // pytorch: reader.persistent_workers
}

// Walks the checkpointer registry.
TEST_CASE("the keys each registered checkpointer declares are in the table and documented") {
  CheckpointerRegistry checkpointers("checkpointer");
  REQUIRE(RegisterBuiltinCheckpointers(&checkpointers).ok());
  // torch_save: checkpoint.torch_; model: checkpoint.model_files
  CHECK(CheckDeclaredKeySections(checkpointers.List()) >= 2);
}

// Walks the I/O-model table, whose entries declare key sections as registry entries do.
TEST_CASE("the keys each I/O model declares are in the table and documented") {
  struct Named {
    std::string name;
    std::vector<std::string> key_sections;
  };
  std::vector<Named> models;
  for (const io_models::IoModelEntry& e : io_models::IoModelTable()) {
    models.push_back({std::string(EnumName(e.model)), e.key_sections});
  }
  CHECK(CheckDeclaredKeySections(models) >= 1);  // pyio: reader.pyio_
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
  const std::string doc = ConfigDoc();
  for (const char* heading : {"## Overrides", "## Distributions", "## Units",
                              "## DLIO compatibility", "## Validation rules"}) {
    INFO(heading);
    CHECK(doc.find(heading) != std::string::npos);
  }
}

TEST_CASE("the distribution types in the docs are the one list the parser uses") {
  const std::string doc = ConfigDoc();
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
