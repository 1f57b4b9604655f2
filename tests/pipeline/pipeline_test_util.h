// Helpers of the pipeline tests: a plan over a FakeSource, a pipeline from the builtin registry,
// and an epoch drained with every batch checked against the plan.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "dlio/pipeline.h"
#include "dlio/registries.h"
#include "pipeline/fake_source.h"

namespace dlio {
namespace testing {

// Every sample of `source` in file order, shuffled when `shuffle_seed` is not 0.
inline std::vector<SampleRef> MakePlan(const FakeSource& source, uint64_t shuffle_seed) {
  std::vector<SampleRef> plan;
  for (uint32_t f = 0; f < source.num_files(); ++f) {
    for (uint64_t i = 0; i < source.samples_per_file()[f]; ++i) plan.push_back({f, i});
  }
  if (shuffle_seed) std::shuffle(plan.begin(), plan.end(), std::mt19937_64(shuffle_seed));
  return plan;
}

inline std::unique_ptr<Pipeline> Make(const std::string& name, PipelineOptions options,
                                      DataSource* source, Tracer* tracer = nullptr,
                                      const Clock* clock = nullptr) {
  Registries registries;
  REQUIRE(RegisterBuiltinPipelines(&registries.pipelines).ok());
  auto factory = registries.pipelines.Get(name);
  REQUIRE(factory.ok());
  PipelineEnv env;
  env.source = source;
  env.tracer = tracer;
  env.clock = clock;
  options.name = name;
  auto pipeline = (*factory)(options, env);
  REQUIRE(pipeline.ok());
  return std::move(pipeline).value();
}

// Drains one epoch, checking every batch against the plan; returns the number of batches.
inline int64_t DrainAndCheck(Pipeline* pipeline, const FakeSource& source, uint64_t epoch,
                             const std::vector<SampleRef>& plan, uint64_t batch_size,
                             bool drop_last) {
  const uint64_t expected_batches =
      drop_last ? plan.size() / batch_size : (plan.size() + batch_size - 1) / batch_size;
  BatchLease lease;
  bool end = false;
  int64_t batches = 0;
  while (true) {
    Status st = pipeline->Next(&lease, &end);
    REQUIRE(st.ok());
    if (end) {
      REQUIRE_FALSE(lease);
      break;
    }
    REQUIRE(lease);
    CHECK(lease->epoch == epoch);
    REQUIRE(lease->index == batches);
    const uint64_t first = static_cast<uint64_t>(batches) * batch_size;
    const uint64_t count = std::min<uint64_t>(batch_size, plan.size() - first);
    REQUIRE(lease->samples.size() == count);
    uint64_t bytes = 0;
    for (uint64_t j = 0; j < count; ++j) {
      const Sample& s = lease->samples[j];
      INFO("batch " << batches << " position " << j);
      REQUIRE(s.ref == plan[first + j]);
      REQUIRE(source.Matches(s.ref, s.data, s.size));
      bytes += s.size;
    }
    CHECK(lease->bytes == bytes);
    CHECK(lease->read_ns >= 0);
    ++batches;
  }
  CHECK(static_cast<uint64_t>(batches) == expected_batches);
  // End of epoch is sticky until the next StartEpoch.
  REQUIRE(pipeline->Next(&lease, &end).ok());
  CHECK(end);
  return batches;
}

inline DistributionSpec Constant(double seconds) {
  DistributionSpec spec;
  spec.mean = seconds;
  return spec;
}

}  // namespace testing
}  // namespace dlio
