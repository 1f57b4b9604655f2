// MakeLoopParts: the loop the runner (and the C API's loader) builds from a config.
#include "dlio/loop.h"

#include <catch2/catch.hpp>
#include <set>

#include "dlio/generator.h"
#include "dlio/registries.h"

namespace {

struct Fixture {
  dlio::Registries registries;
  std::unique_ptr<dlio::Tracer> tracer = dlio::MakeNullTracer();
  std::unique_ptr<dlio::Storage> storage;
  std::unique_ptr<dlio::Format> format;
  dlio::WorkloadConfig config;

  Fixture() {
    REQUIRE(dlio::RegisterBuiltins(&registries).ok());
    config.storage.storage_type = "memory";
    config.dataset.data_folder = "/data";
    config.dataset.num_files_train = 3;
    config.dataset.num_files_eval = 2;
    config.dataset.num_samples_per_file = 4;
    config.dataset.record_length_bytes = 100;
    config.reader.batch_size = 5;
    config.reader.batch_size_eval = 2;
    config.reader.drop_last = false;
    config.reader.sample_shuffle = dlio::ShuffleMode::kSeed;
    auto s = dlio::MakeStorage(dlio::StorageOptionsFor(config), registries, dlio::SystemClock(),
                               tracer.get());
    REQUIRE(s.ok());
    storage = std::move(*s);
    auto factory = registries.formats.Get("npz");
    REQUIRE(factory.ok());
    auto f = (*factory)();
    REQUIRE(f.ok());
    format = std::move(*f);
    REQUIRE(dlio::GenerateDataset(config.dataset, *format, dlio::FormatOptionsFor(config),
                                  storage.get(), {})
                .ok());
  }

  dlio::LoopEnv Env() {
    dlio::LoopEnv env;
    env.registries = &registries;
    env.storage = storage.get();
    env.format = format.get();
    env.tracer = tracer.get();
    return env;
  }
};

}  // namespace

TEST_CASE("MakeLoopParts builds a loop that reads every sample of the split once") {
  Fixture fx;
  for (dlio::Split split : {dlio::Split::kTrain, dlio::Split::kEval}) {
    auto loop = dlio::MakeLoopParts(fx.config, split, fx.Env());
    REQUIRE(loop.ok());
    const bool train = split == dlio::Split::kTrain;
    CHECK(std::string(loop->phase) == (train ? "train" : "eval"));
    CHECK(loop->batch_size == (train ? 5u : 2u));
    CHECK(loop->source->num_files() == (train ? 3u : 2u));
    std::vector<dlio::SampleRef> plan;
    REQUIRE(loop->sampler->Plan({0, 0, 1, &loop->source->samples_per_file()}, &plan).ok());
    REQUIRE(loop->pipeline->StartEpoch(0, plan).ok());
    std::set<dlio::SampleRef> seen;
    uint64_t batches = 0;
    for (;;) {
      dlio::BatchLease lease;
      bool end = false;
      REQUIRE(loop->pipeline->Next(&lease, &end).ok());
      if (end) break;
      ++batches;
      for (const auto& s : lease->samples) {
        CHECK(s.size == 100);
        CHECK(seen.insert(s.ref).second);
      }
    }
    CHECK(seen.size() == (train ? 12u : 8u));
    CHECK(batches == (train ? 3u : 4u));  // 12 samples in 5s, last one partial (drop_last off)
    REQUIRE(loop->pipeline->Stop().ok());
  }
}

TEST_CASE("MakeLoopParts names what is missing or wrong") {
  Fixture fx;
  dlio::LoopEnv env = fx.Env();
  env.storage = nullptr;
  auto missing = dlio::MakeLoopParts(fx.config, dlio::Split::kTrain, env);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == dlio::StatusCode::kInvalidArgument);
}

TEST_CASE("ResolvePaths prefixes relative folders with storage.storage_root") {
  dlio::WorkloadConfig c;
  c.storage.storage_root = "/mnt/fs";
  c.dataset.data_folder = "data/unet3d";
  c.checkpoint.checkpoint_folder = "/abs/ckpt";
  const dlio::WorkloadConfig r = dlio::ResolvePaths(c);
  CHECK(r.dataset.data_folder == "/mnt/fs/data/unet3d");
  CHECK(r.checkpoint.checkpoint_folder == "/abs/ckpt");
  c.storage.storage_root = "./";
  CHECK(dlio::ResolvePaths(c).dataset.data_folder == "data/unet3d");
}

TEST_CASE(
    "PipelineNameFor: the pytorch worker processes for io_model pytorch, or auto with a "
    "PyTorch loader") {
  auto name_for = [](std::vector<std::string> sets, bool needs_mpi = false) {
    dlio::WorkloadConfig c;
    for (const auto& s : sets) REQUIRE(dlio::ApplyOverride(&c, s).ok());
    return dlio::PipelineNameFor(c, needs_mpi);
  };
  CHECK(name_for({}) == "threaded");
  CHECK(name_for({"reader.data_loader=pytorch"}) == "pytorch");
  CHECK(name_for({"reader.data_loader=pytorch", "reader.pipeline=sync"}) == "sync");
  CHECK(name_for({"reader.data_loader=pytorch", "reader.io_model=native"}) == "threaded");
  CHECK(name_for({"reader.data_loader=pytorch"}, /*needs_mpi=*/true) == "threaded");
  CHECK(name_for({"reader.io_model=pytorch"}, /*needs_mpi=*/true) == "pytorch");  // refused later
  CHECK(name_for({"reader.io_model=pytorch", "reader.pipeline=sync"}) == "pytorch");
  CHECK(name_for({"reader.io_model=pytorch", "reader.read_type=memory"}) == "preload");
}
