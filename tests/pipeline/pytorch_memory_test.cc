// The pytorch pipeline's memory plan (pipeline/pytorch_memory.cc), asked through its registry
// entry's hooks as the runner asks them: PipelineHooks::plan_memory (what ReserveBuffersFor
// reserves) and estimate_memory (what the preflight counts). Expectations computed by hand.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "dlio/config.h"
#include "dlio/pipeline.h"
#include "dlio/registries.h"

namespace dlio {
namespace {

PipelineHooks PytorchHooks() {
  Registries registries;
  REQUIRE(RegisterBuiltinPipelines(&registries.pipelines).ok());
  auto entry = registries.pipelines.Find("pytorch");
  REQUIRE(entry.ok());
  REQUIRE(entry->hooks.plan_memory);
  REQUIRE(entry->hooks.estimate_memory);
  return entry->hooks;
}

TEST_CASE("the pytorch entry plans its workers' slots and read buffers within the budget") {
  const PipelineHooks hooks = PytorchHooks();
  WorkloadConfig c;
  c.dataset.record_length_bytes = 1 << 20;
  c.dataset.record_length_bytes_stdev = 1000;
  c.reader.read_threads = 3;
  c.reader.prefetch_size = 2;  // prefetch factor ceil(2 / 3) = 1: 2 slots per worker
  c.reader.client_costs = ClientCosts::kFramework;
  PipelineOptions po;
  MemoryPlanFacts facts;
  facts.batch_size = 4;
  facts.sample_bytes = (1 << 20) + 2000;  // mean + 2 stdev, as the runner hands it
  // framework: a slot holds 4 x 1 MiB + 2 sqrt(4) x 1000, a worker reads into its own buffer of
  // a sample; all of it: 3 x (2 x 4198304 + 1050576) = 28341552 bytes.
  facts.budget_bytes = 28341552;
  PipelineMemoryPlan plan = hooks.plan_memory(c, po, facts);
  CHECK(plan.planned);
  CHECK(plan.batch_reserve_bytes == 4198304);
  CHECK(plan.reserve_sample_bytes == 1050576);
  // One byte less of budget: still its own plan, but nothing reserved (grown on demand).
  facts.budget_bytes = 28341551;
  plan = hooks.plan_memory(c, po, facts);
  CHECK(plan.planned);
  CHECK(plan.batch_reserve_bytes == 0);
  CHECK(plan.reserve_sample_bytes == 0);
  facts.budget_bytes = 1e18;

  // none, the consumer reads the bytes: the worker reads straight into the slot, no read buffer.
  c.reader.client_costs = ClientCosts::kNone;
  po.deliver_sample_bytes = true;
  plan = hooks.plan_memory(c, po, facts);
  CHECK(plan.batch_reserve_bytes == 4198304);
  CHECK(plan.reserve_sample_bytes == 0);
  // A resize smaller than a sample: slots of 4 x 4096, and a read buffer of a sample.
  c.dataset.record_length_bytes_resize = 4096;
  plan = hooks.plan_memory(c, po, facts);
  CHECK(plan.batch_reserve_bytes == 16384);
  CHECK(plan.reserve_sample_bytes == 1050576);
  // Bounded (a streaming format): the read buffer spans mean + 4 stdev.
  facts.bounded_read_bytes = 4096;
  plan = hooks.plan_memory(c, po, facts);
  CHECK(plan.batch_reserve_bytes == 16384);
  CHECK(plan.reserve_sample_bytes == (1 << 20) + 4000);
  // Nothing collated: no slot bytes, every sample read into the worker's own buffer.
  po.deliver_sample_bytes = false;
  plan = hooks.plan_memory(c, po, facts);
  CHECK(plan.batch_reserve_bytes == 0);
  CHECK(plan.reserve_sample_bytes == (1 << 20) + 4000);
  // Nothing collated and no bound: a streamed sample goes through a ring spanning mean +
  // 4 stdev; one read back needs a buffer of a whole sample; so does a decoded one.
  facts.bounded_read_bytes = 0;
  c.dataset.record_length_bytes_resize = 0;
  po.samples_stream = true;
  CHECK(hooks.plan_memory(c, po, facts).reserve_sample_bytes == (1 << 20) + 4000);
  c.reader.decode = true;
  CHECK(hooks.plan_memory(c, po, facts).reserve_sample_bytes == 1050576);
  c.reader.decode = false;
  po.samples_stream = false;
  CHECK(hooks.plan_memory(c, po, facts).reserve_sample_bytes == 1050576);
  // No worker process: the runner's pool, not a plan of its own.
  c.reader.read_threads = 0;
  CHECK_FALSE(hooks.plan_memory(c, po, facts).planned);
}

TEST_CASE("the pytorch entry counts its workers' batches for the preflight") {
  const PipelineHooks hooks = PytorchHooks();
  const std::string whole =
      "reader.read_threads x ((prefetch factor + 1) x reader.batch_size x "
      "dataset.record_length_bytes_resize + dataset.record_length_bytes)";
  const std::string bounded =
      "reader.read_threads x ((prefetch factor + 1) x reader.batch_size x "
      "dataset.record_length_bytes_resize + dataset.record_length_bytes_resize + 1 MiB)";
  // unet3d_h100: 4 workers, prefetch factor ceil(2 / 4) = 1 (2 slots), batches of 7 samples
  // of 146600628 bytes resized to 2 MiB, 128 bytes of bookkeeping a buffered sample.
  WorkloadConfig c;
  c.dataset.record_length_bytes = 146600628;
  c.dataset.record_length_bytes_resize = 2097152;
  c.reader.read_threads = 4;
  c.reader.prefetch_size = 2;
  MemoryPlanFacts facts;
  facts.batch_size = 7;
  facts.bytes_per_buffered_sample = 128;
  // 4 x (2 x 7 x (2097152 + 128) + 146600628): the resize is smaller, so a sample is read whole.
  PipelineFootprint f = hooks.estimate_memory(c, facts);
  CHECK(f.counted);
  CHECK(f.bytes == 703850192);
  CHECK(f.keys == whole);
  // Bounded: the read buffer holds the resize + 1 MiB: 4 x (29361920 + 2097152 + 1048576).
  facts.bounded_read_bytes = 2097152;
  f = hooks.estimate_memory(c, facts);
  CHECK(f.bytes == 130030592);
  CHECK(f.keys == bounded);
  // No resize, no framework costs: slots of whole samples and no read buffer. prefetch 0 is
  // torch's default factor 2 (3 slots): 2 workers x 3 x 2 x (1000 + 128) = 13536.
  c.dataset.record_length_bytes = 1000;
  c.dataset.record_length_bytes_resize = 0;
  c.reader.read_threads = 2;
  c.reader.prefetch_size = 0;
  facts.batch_size = 2;
  facts.bounded_read_bytes = 0;
  CHECK(hooks.estimate_memory(c, facts).bytes == 13536);
  // Absurd sizes saturate rather than wrap.
  c.dataset.record_length_bytes = uint64_t{1} << 62;
  c.reader.read_threads = 1024;
  CHECK(hooks.estimate_memory(c, facts).bytes == UINT64_MAX);
  // No worker process: not counted (the preflight counts the runner's pool).
  c.reader.read_threads = 0;
  CHECK_FALSE(hooks.estimate_memory(c, facts).counted);
}

TEST_CASE("only the pytorch entry plans its own memory") {
  Registries registries;
  REQUIRE(RegisterBuiltinPipelines(&registries.pipelines).ok());
  for (const char* name : {"threaded", "sync", "preload"}) {
    auto entry = registries.pipelines.Find(name);
    REQUIRE(entry.ok());
    INFO(name);
    CHECK_FALSE(entry->hooks.plan_memory);
    CHECK_FALSE(entry->hooks.estimate_memory);
  }
}

}  // namespace
}  // namespace dlio
