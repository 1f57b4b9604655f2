// The pytorch pipeline's own options (pipeline/pytorch_options.h): its key, parsed into its
// section of the config, and its registry entry's hook, which completes that section from the
// config and the runner's PipelineFacts; the other pipelines declare neither.
#include "pipeline/pytorch_options.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "dlio/config.h"
#include "dlio/pipeline.h"
#include "dlio/registries.h"

namespace dlio {
namespace {

TEST_CASE("reader.persistent_workers is parsed into the pytorch pipeline's own section") {
  std::vector<std::string> warnings;
  auto defaults = ParseConfig("reader: {batch_size: 2}", "a.yaml", WorkloadConfig(), &warnings);
  REQUIRE(defaults.ok());
  CHECK(defaults->reader.pipelines.Value<PytorchLoaderOptions>().persistent_workers);
  auto off =
      ParseConfig("reader: {persistent_workers: false}", "b.yaml", WorkloadConfig(), &warnings);
  REQUIRE(off.ok());
  const PytorchLoaderOptions* own = off->reader.pipelines.Find<PytorchLoaderOptions>();
  REQUIRE(own != nullptr);
  CHECK_FALSE(own->persistent_workers);
  CHECK(ConfigToJson(*off).find("\"persistent_workers\": false") != std::string::npos);
  // A copy of the config carries its own copy of the section.
  WorkloadConfig copy = *off;
  copy.reader.pipelines.Get<PytorchLoaderOptions>().persistent_workers = true;
  CHECK_FALSE(off->reader.pipelines.Value<PytorchLoaderOptions>().persistent_workers);
  auto bad =
      ParseConfig("reader: {persistent_workers: sometimes}", "c.yaml", WorkloadConfig(), &warnings);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("reader.persistent_workers") != std::string::npos);
}

TEST_CASE("the pytorch entry derives its own options from the config and the runner's facts") {
  Registries registries;
  REQUIRE(RegisterBuiltinPipelines(&registries.pipelines).ok());
  auto entry = registries.pipelines.Find("pytorch");
  REQUIRE(entry.ok());
  CHECK(entry->key_sections == std::vector<std::string>{"reader.persistent_workers"});
  REQUIRE(entry->hooks.derive_options);
  WorkloadConfig c;
  c.reader.pipelines.Get<PytorchLoaderOptions>().persistent_workers = false;
  c.dataset.record_length_bytes_resize = 4096;
  c.output.trace_gzip = true;
  PipelineFacts facts;
  facts.batch_reserve_bytes = 4 * 4096;
  facts.bounded_read_bytes = 4096;
  facts.trace_prefix = "/out/trace-1-of-2";
  PipelineOptions po;
  po.sections = c.reader.pipelines;  // as MakeLoopParts hands the config's sections on
  REQUIRE(entry->hooks.derive_options(c, facts, &po).ok());
  const PytorchLoaderOptions own = po.sections.Value<PytorchLoaderOptions>();
  CHECK_FALSE(own.persistent_workers);  // the key's value, kept
  CHECK(own.collate_limit_bytes == 4096);
  CHECK(own.reserve_batch_bytes == 16384);
  CHECK(own.bounded_read_bytes == 4096);
  CHECK(own.worker_trace_prefix == "/out/trace-1-of-2");
  CHECK(own.worker_trace_gzip);
  // The batch pipelines own no options: no key, no hook.
  for (const char* name : {"threaded", "sync", "preload"}) {
    auto other = registries.pipelines.Find(name);
    REQUIRE(other.ok());
    INFO(name);
    CHECK(other->key_sections.empty());
    CHECK_FALSE(other->hooks.derive_options);
  }
}

}  // namespace
}  // namespace dlio
