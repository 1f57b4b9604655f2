// The preflight check: runs that cannot work on a host are refused by key before anything is
// generated (issue 9, defect 6). CheckRunFits is given made-up hosts; MeasureHostResources and
// RunWorkload are run on this one.
#include "dlio/preflight.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "dlio/loop.h"
#include "dlio/registries.h"
#include "dlio/runner.h"
#include "storage/slow_options.h"
#include "test_util.h"

namespace dlio {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

WorkloadConfig Tiny() {
  WorkloadConfig c;
  c.workflow.generate_data = true;
  c.workflow.train = true;
  c.dataset.num_files_train = 8;
  c.dataset.num_samples_per_file = 4;
  c.dataset.record_length_bytes = 1024;
  c.reader.batch_size = 2;
  return c;
}

HostResources Host(uint64_t memory) {
  HostResources h;
  h.memory_bytes = memory;
  return h;
}

// The built-in registries, built once for the whole test program: a host carrying their
// pipelines (HostResources::pipelines) keeps a pointer to them.
const Registries& Builtins() {
  static Registries builtins;
  static const bool registered = RegisterBuiltins(&builtins).ok();
  REQUIRE(registered);
  return builtins;
}

// What reader.pipeline's built-in entry declares for `c`, as a run asks its registries.
PipelineCapabilities BuiltinPipeline(const WorkloadConfig& c) {
  return PipelineCapabilitiesFor(c, Builtins().pipelines);
}

// `host` with the built-in pipelines, as MeasureHostResources fills them for a run.
HostResources WithBuiltinPipeline(const WorkloadConfig& c, HostResources host = {}) {
  host.pipeline = BuiltinPipeline(c);
  host.pipelines = &Builtins().pipelines;
  return host;
}

bool Has(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST_CASE("preflight: a small run fits a small host") {
  CHECK(CheckRunFits(Tiny(), 1, Host(kGiB)).ok());
  CHECK(CheckRunFits(Tiny(), 4, Host(kGiB)).ok());
  CHECK(CheckRunFits(WorkloadConfig(), 1, Host(kGiB)).ok());
}

TEST_CASE("preflight: huge counts are refused by key, however large") {
  WorkloadConfig files = Tiny();
  files.dataset.num_files_train = 100'000'000;  // 1e8: the file list alone is ~27 GiB
  Status st = CheckRunFits(files, 1, Host(16 * kGiB));
  CHECK(st.code() == StatusCode::kResourceExhausted);
  CHECK(st.message().find("dataset.num_files_train: the run needs at least") == 0);
  CHECK(Has(st, "of it for the file list, but the host has 16.0 GiB"));

  WorkloadConfig samples = Tiny();
  samples.dataset.num_samples_per_file = 1'000'000'000'000;  // 1e12, inside the key's range
  st = CheckRunFits(samples, 1, Host(1024 * kGiB));
  CHECK(st.code() == StatusCode::kResourceExhausted);
  CHECK(st.message().find("dataset.num_files_train x dataset.num_samples_per_file:") == 0);
  CHECK(Has(st, "for the sample plan"));

  // The largest values the table accepts saturate instead of wrapping around.
  WorkloadConfig most = Tiny();
  most.dataset.num_files_train = uint64_t{1} << 32;
  most.dataset.num_samples_per_file = uint64_t{1} << 40;
  most.reader.batch_size = 1;
  const RunFootprint f = EstimateRunFootprint(most, 1);
  CHECK(f.memory_bytes == UINT64_MAX);
  CHECK(CheckRunFits(most, 1, Host(UINT64_MAX - 1)).code() == StatusCode::kResourceExhausted);

  WorkloadConfig buffers = Tiny();
  buffers.reader.prefetch_size = 1 << 20;
  buffers.reader.batch_size = 1 << 10;
  buffers.dataset.num_files_train = 1 << 12;
  st = CheckRunFits(buffers, 1, Host(64 * kGiB));
  CHECK(st.message().find("(reader.prefetch_size + reader.read_threads + 1) x reader.batch_size x "
                          "dataset.record_length_bytes:") == 0);

  WorkloadConfig preload = Tiny();
  preload.reader.read_type = ReadType::kMemory;
  preload.reader.pipeline = "preload";
  preload.dataset.record_length_bytes = 64 * kGiB;
  st = CheckRunFits(preload, 1, Host(64 * kGiB));
  CHECK(st.message().find("reader.pipeline preload:") == 0);
}

TEST_CASE("preflight: the ranks on one host share its memory") {
  WorkloadConfig c = Tiny();
  c.dataset.num_files_train = 4'000'000;  // ~1.6 GiB per rank
  HostResources host = Host(4 * kGiB);
  CHECK(CheckRunFits(c, 8, host).ok());
  host.ranks_on_host = 8;
  Status st = CheckRunFits(c, 8, host);
  CHECK(st.code() == StatusCode::kResourceExhausted);
  CHECK(Has(st, "per rank x 8 ranks on this host"));
  host.memory_bytes = 0;  // unknown: not checked
  CHECK(CheckRunFits(c, 8, host).ok());
}

TEST_CASE("preflight: pytorch workers hold batches of the resized samples, not the ring") {
  // unet3d_h100 (146.6 MB samples, 2 MiB resize, batch 7, 4 read threads) at 4 ranks on a
  // 23.5 GiB host: the threaded ring's (2 + 4 + 1) x 7 samples would need 6.7 GiB per rank; the
  // workers (prefetch factor ceil(2 / 4) = 1: 2 slots each) hold 4 x (2 x 7 x 2 MiB + one
  // 146.6 MB read buffer) = 0.66 GiB, which fits, as it does for the Python DLIO.
  WorkloadConfig c = Tiny();
  c.workflow.generate_data = false;
  c.dataset.num_files_train = 168;
  c.dataset.num_samples_per_file = 1;
  c.dataset.record_length_bytes = 146'600'628;
  c.dataset.record_length_bytes_resize = 2'097'152;
  c.reader.batch_size = 7;
  c.reader.read_threads = 4;
  c.reader.data_loader = DataLoader::kPytorch;
  HostResources host = WithBuiltinPipeline(c, Host(23 * kGiB + kGiB / 2));
  host.ranks_on_host = 4;
  CHECK(CheckRunFits(c, 4, host).ok());
  const RunFootprint f = EstimateRunFootprint(c, 4, WithBuiltinPipeline(c));
  CHECK(f.memory_bytes < 3 * kGiB / 4);
  CHECK(f.memory_bytes > 4 * (14 * 2'097'152 + 146'600'628));
  // npz streams its samples: each worker's read buffer is bounded to the resize + 1 MiB.
  HostResources streaming = WithBuiltinPipeline(c);
  streaming.streaming_format = true;
  const RunFootprint bounded = EstimateRunFootprint(c, 4, streaming);
  CHECK(f.memory_bytes - bounded.memory_bytes == 4 * (146'600'628 - 2'097'152 - (1 << 20)));
  // Without a resize the slots hold whole samples: 4 x 2 x 7 x 146.6 MB = 7.6 GiB per rank,
  // refused under the pytorch workers' key.
  c.dataset.record_length_bytes_resize = 0;
  const Status st = CheckRunFits(c, 4, host);
  CHECK(st.code() == StatusCode::kResourceExhausted);
  CHECK(st.message().find("reader.read_threads x ((prefetch factor + 1) x reader.batch_size x "
                          "dataset.record_length_bytes_resize + dataset.record_length_bytes):") ==
        0);
  // The dlio loader's ring keeps its own formula.
  c.reader.data_loader = DataLoader::kDlio;
  CHECK(
      CheckRunFits(c, 4, host).message().find("(reader.prefetch_size + reader.read_threads + 1)") ==
      0);
}

TEST_CASE("preflight: the workers are counted wherever the runner picks the pytorch pipeline") {
  // The preflight asks the runner's own choice (LoaderFor, PipelineNameFor): io_model pytorch
  // runs the workers under reader.pipeline sync too, which a restated name test missed.
  WorkloadConfig c = Tiny();
  c.reader.read_threads = 4;
  const std::string workers = "reader.read_threads x ((prefetch factor + 1)";
  auto batch_keys = [](const WorkloadConfig& config, const HostResources& host = {}) {
    for (const FootprintItem& item :
         EstimateRunFootprint(config, 1, WithBuiltinPipeline(config, host)).memory) {
      if (item.what == "batch buffers") return item.keys;
    }
    return std::string();
  };
  for (const char* pipeline : {"threaded", "sync"}) {
    CAPTURE(pipeline);
    c.reader.pipeline = pipeline;
    c.reader.io_model = IoModel::kPytorch;
    CHECK(PipelineNameFor(c, false, BuiltinPipeline(c)) == "pytorch");
    CHECK(batch_keys(c).find(workers) == 0);
    // auto with the pytorch loader: workers under threaded only (sync stays sync).
    c.reader.io_model = IoModel::kAuto;
    c.reader.data_loader = DataLoader::kPytorch;
    const bool picked = PipelineNameFor(c, false, BuiltinPipeline(c)) == "pytorch";
    CHECK(picked == (std::string(pipeline) == "threaded"));
    CHECK((batch_keys(c).find(workers) == 0) == picked);
  }
  // Over a storage that needs MPI auto runs the threaded loader (the workers could not use it).
  c.reader.pipeline = "threaded";
  HostResources mpi;
  mpi.storage_needs_mpi = true;
  CHECK(PipelineNameFor(c, true, BuiltinPipeline(c)) == "threaded");
  CHECK(batch_keys(c, mpi).find(workers) == std::string::npos);
  // No worker process: the loader reads in the main process, through the ring.
  c.reader.pipeline = "threaded";
  c.reader.read_threads = 0;
  CHECK(batch_keys(c).find(workers) == std::string::npos);
}

TEST_CASE("preflight: an epoch without a step is refused, naming the batch size") {
  WorkloadConfig c = Tiny();  // 32 samples
  c.reader.batch_size = 33;
  Status st = CheckRunFits(c, 1, Host(kGiB));
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(st.message() ==
        "a training epoch would have no step: a rank gets 32 samples "
        "(dataset.num_files_train x dataset.num_samples_per_file), fewer than reader.batch_size "
        "33 (reader.drop_last drops a partial batch)");
  c.reader.drop_last = false;
  CHECK(CheckRunFits(c, 1, Host(kGiB)).ok());

  c = Tiny();
  c.reader.batch_size = 9;  // 32 samples over 4 ranks: 8 each
  CHECK(Has(CheckRunFits(c, 4, Host(kGiB)),
            "a rank gets 8 samples (dataset.num_files_train x "
            "dataset.num_samples_per_file / 4 ranks)"));
  c.reader.sharding = Sharding::kNone;  // every rank reads all 32
  CHECK(CheckRunFits(c, 4, Host(kGiB)).ok());

  c = Tiny();
  c.workflow.evaluation = true;
  c.dataset.num_files_eval = 1;
  c.reader.batch_size_eval = 5;
  CHECK(Has(CheckRunFits(c, 1, Host(kGiB)), "fewer than reader.batch_size_eval 5"));
}

TEST_CASE("preflight: a generation must fit the free space, counting only missing files") {
  WorkloadConfig c = Tiny();
  c.dataset.num_files_train = 1000;
  c.dataset.num_samples_per_file = 1;
  c.dataset.record_length_bytes = 1 << 20;  // 1000 files of 1 MiB
  HostResources host = Host(64 * kGiB);
  host.data_free_bytes = 500 << 20;
  Status st = CheckRunFits(c, 1, host);
  CHECK(st.code() == StatusCode::kResourceExhausted);
  CHECK(st.message() ==
        "dataset.num_files_train x dataset.num_samples_per_file x dataset.record_length_bytes: "
        "generating 1000 missing files of 1.0 MiB needs 1000.0 MiB, but the file system of "
        "dataset.data_folder './data' has 500.0 MiB free (nothing was generated)");
  host.train_files_present = 600;
  CHECK(CheckRunFits(c, 1, host).ok());
  host.train_files_present = 0;
  c.workflow.generate_data = false;  // nothing is written
  CHECK(CheckRunFits(c, 1, host).ok());
}

// `host` carrying the checkpoint of `c` as the built-in checkpointers declare it for `world` ranks
// (CheckpointPlanFor over RegisterBuiltins, as a run asks its registries).
HostResources WithBuiltinPlan(const WorkloadConfig& c, int world, HostResources host = {}) {
  Registries builtins;
  REQUIRE(RegisterBuiltins(&builtins).ok());
  host.checkpoint = CheckpointPlanFor(c, world, builtins);
  return host;
}

TEST_CASE("preflight: the run's checkpoints must fit the checkpoint folder") {
  WorkloadConfig c = Tiny();
  c.workflow.generate_data = false;
  c.workflow.checkpoint = true;
  c.train.epochs = 2;
  c.checkpoint.checkpoint_after_epoch = 1;
  c.checkpoint.model_size_bytes = 100 * kGiB;
  const RunFootprint f = EstimateRunFootprint(c, 1, WithBuiltinPlan(c, 1));
  CHECK(f.checkpoints == 2);
  CHECK(f.checkpoint_bytes == 100 * kGiB);
  HostResources host = WithBuiltinPlan(c, 1, Host(64 * kGiB));
  host.checkpoint_free_bytes = 150 * kGiB;
  Status st = CheckRunFits(c, 1, host);
  CHECK(st.code() == StatusCode::kResourceExhausted);
  CHECK(Has(st, "2 checkpoints of 100.0 GiB need 200.0 GiB"));
  c.checkpoint.size_divisor = 10;
  CHECK(CheckRunFits(c, 1, host).ok());
}

// The tests below ask of registry entries: a checkpointer registered under a new name that
// declares a built-in's plan (its CheckpointerCapabilities) is sized and counted as that built-in.
void AddUserCheckpointers(Registries* r) {
  REQUIRE(RegisterBuiltins(r).ok());
  auto entry = [r](const char* name) {
    auto e = r->checkpointers.Find(name);
    REQUIRE(e.ok());
    return *e;
  };
  for (const char* name : {"model", "transformer", "dlio_benchmark"}) {
    auto copy = entry(name);
    copy.name = std::string("user_") + name;
    REQUIRE(r->checkpointers.Register(copy).ok());
  }
  auto silent = entry("model");  // a user's checkpointer that declares nothing
  silent.name = "user_silent";
  silent.capabilities = {};
  REQUIRE(r->checkpointers.Register(silent).ok());
}

// A training run of 4 ranks, 4 steps per epoch each, 3 epochs, a checkpoint every 3 steps:
// 3 checkpoints when each epoch's steps count afresh (DLIO's cadence), 12 / 3 = 4 across epochs.
WorkloadConfig CheckpointingRun(const std::string& type) {
  WorkloadConfig c = Tiny();
  c.workflow.generate_data = false;
  c.workflow.checkpoint = true;
  c.train.epochs = 3;
  c.checkpoint.steps_between_checkpoints = 3;
  c.checkpoint.type = type;
  c.framework = "pytorch";  // dlio_benchmark's .pt files
  c.checkpoint.model_size_bytes = 10 * kGiB;
  c.model.num_layers = 4;
  c.model.transformer.vocab_size = 1000;
  c.model.transformer.hidden_size = 64;
  c.model.transformer.ffn_hidden_size = 256;
  return c;
}

RunFootprint FootprintWith(const WorkloadConfig& c, const Registries& r, HostResources host = {}) {
  host.checkpoint = CheckpointPlanFor(c, 4, r);
  return EstimateRunFootprint(c, 4, host);
}

TEST_CASE("preflight: a checkpointer's plan and cadence are asked of its entry, not its name") {
  Registries r;
  AddUserCheckpointers(&r);
  for (const char* name : {"model", "transformer", "dlio_benchmark"}) {
    CAPTURE(name);
    const WorkloadConfig builtin = CheckpointingRun(name);
    const WorkloadConfig user = CheckpointingRun(std::string("user_") + name);
    const RunFootprint expected = EstimateRunFootprint(builtin, 4, WithBuiltinPlan(builtin, 4));
    CHECK(expected.checkpoint_bytes > 0);
    const RunFootprint f = FootprintWith(user, r);
    CHECK(f.checkpoint_bytes == expected.checkpoint_bytes);
    CHECK(f.checkpoints == expected.checkpoints);
    CHECK(f.checkpoint_keys == expected.checkpoint_keys);
    CHECK(FootprintWith(builtin, r).checkpoint_bytes == expected.checkpoint_bytes);
  }
  const WorkloadConfig model = CheckpointingRun("model");
  CHECK(EstimateRunFootprint(model, 4, WithBuiltinPlan(model, 4)).checkpoint_bytes == 10 * kGiB);
  CHECK(EstimateRunFootprint(model, 4, WithBuiltinPlan(model, 4)).checkpoints == 4);
  CHECK(FootprintWith(CheckpointingRun("user_dlio_benchmark"), r).checkpoints == 3);

  // Too little room: refused naming the keys the entry declares, whatever its name.
  HostResources host;
  host.checkpoint_free_bytes = 1024;
  const WorkloadConfig layers = CheckpointingRun("user_transformer");
  host.checkpoint = CheckpointPlanFor(layers, 4, r);
  const Status st = CheckRunFits(layers, 4, host);
  CHECK(st.code() == StatusCode::kResourceExhausted);
  CHECK(st.message().find("model.transformer.*, model.num_layers: 4 checkpoints of") == 0);
  const WorkloadConfig builtin = CheckpointingRun("transformer");
  CHECK(CheckRunFits(builtin, 4, WithBuiltinPlan(builtin, 4, host)).message() == st.message());
}

TEST_CASE(
    "preflight: a checkpointer that declares no plan is not sized and counts the run's steps") {
  Registries r;
  AddUserCheckpointers(&r);
  const WorkloadConfig c = CheckpointingRun("user_silent");
  const CheckpointPlan plan = CheckpointPlanFor(c, 4, r);
  CHECK(plan.bytes == 0);
  CHECK(plan.size_keys.empty());
  CHECK_FALSE(plan.dlio_cadence);
  HostResources host;
  host.checkpoint_free_bytes = 1024;  // no room, but nothing is sized: no disk check
  const RunFootprint f = FootprintWith(c, r, host);
  CHECK(f.checkpoint_bytes == 0);
  CHECK(f.checkpoints == 4);
  host.checkpoint = plan;
  CHECK(CheckRunFits(c, 4, host).ok());
  // Nor is a name that is not registered (building it names the problem).
  CHECK(CheckpointPlanFor(CheckpointingRun("nowhere"), 4, r).bytes == 0);
}

TEST_CASE("preflight: a layout that does not fit the world is refused by the entry's plan") {
  testing::TempDir dir;
  Registries r;
  AddUserCheckpointers(&r);
  RunEnv env;
  env.registries = &r;
  env.write_outputs = false;
  WorkloadConfig c = CheckpointingRun("transformer");
  c.dataset.data_folder = dir / "data";
  c.checkpoint.checkpoint_folder = dir / "ckpt";
  c.model.parallelism.tensor = 2;  // one rank is not a multiple of tensor x pipeline = 2
  const Status builtin = PreflightRun(c, env);
  CHECK(builtin.code() == StatusCode::kInvalidArgument);
  CHECK(Has(builtin, "ranks are not a multiple of model.parallelism.tensor"));
  c.checkpoint.type = "user_transformer";
  CHECK(PreflightRun(c, env).message() == builtin.message());
  c.checkpoint.type = "user_silent";  // declares no plan: nothing to refuse before the run
  CHECK(PreflightRun(c, env).ok());
}

TEST_CASE("preflight: MeasureHostResources measures this host") {
  testing::TempDir dir;
  Registries registries;
  REQUIRE(RegisterBuiltins(&registries).ok());
  auto format = (*registries.formats.Get("npz"))();
  REQUIRE(format.ok());
  WorkloadConfig c = Tiny();
  c.dataset.data_folder = dir / "not/yet/there";
  auto h = MeasureHostResources(c, format->get(), nullptr, registries);
  REQUIRE(h.ok());
  CHECK(h->memory_bytes > 0);
  CHECK(h->ranks_on_host == 1);
  CHECK(h->data_free_bytes > 0);
  CHECK(h->data_free_bytes != kUnknownBytes);
  CHECK(h->checkpoint_free_bytes == kUnknownBytes);  // no checkpoints

  // A dataset larger than any disk: the files already there are counted, by name.
  c.dataset.data_folder = dir.path();
  c.dataset.num_files_train = 1000;
  c.dataset.record_length_bytes = uint64_t{1} << 40;
  std::filesystem::create_directories(dir / "train");
  for (const char* name :
       {"img_000_of_1000.npz", "img_999_of_1000.npz", "other.npz", "img_001_of_100.npz"}) {
    testing::WriteTextFile(dir / "train" + "/" + name, "x");
  }
  h = MeasureHostResources(c, format->get(), nullptr, registries);
  REQUIRE(h.ok());
  CHECK(h->train_files_present == 2);

  c.dataset.compression = "gzip";  // compressed files may be smaller: not checked
  CHECK(MeasureHostResources(c, format->get(), nullptr, registries)->data_free_bytes ==
        kUnknownBytes);
  c.dataset.compression = "none";
  c.storage.storage_type = "memory";  // not on a file system: not checked
  CHECK(MeasureHostResources(c, format->get(), nullptr, registries)->data_free_bytes ==
        kUnknownBytes);

  // Asked of the storage, not of its name: a user's storage declaring host_files is measured.
  auto memory = [](const StorageOptions&,
                   const StorageBuildEnv&) -> Result<std::unique_ptr<Storage>> {
    return NewMemoryStorage();
  };
  REQUIRE(registries.storages
              .Register({"user_files", "a user's storage", "", memory,
                         [](const StorageOptions&, const StorageRegistry&) {
                           return StorageCapabilities{.host_files = true};
                         }})
              .ok());
  REQUIRE(registries.storages.Register({"user_elsewhere", "a user's storage", "", memory}).ok());
  c.storage.storage_type = "user_files";
  CHECK(MeasureHostResources(c, format->get(), nullptr, registries)->data_free_bytes !=
        kUnknownBytes);
  c.storage.storage_type = "user_elsewhere";
  CHECK(MeasureHostResources(c, format->get(), nullptr, registries)->data_free_bytes ==
        kUnknownBytes);
}

TEST_CASE("preflight: a dataset in a storage that keeps files in memory counts as memory") {
  WorkloadConfig c = Tiny();
  c.dataset.num_files_train = 64;
  c.dataset.record_length_bytes = 4 << 20;  // 64 files x 4 samples x 4 MiB = 1 GiB
  HostResources host = Host(512 << 20);
  CHECK(CheckRunFits(c, 1, host).ok());  // on disk: the dataset is not the rank's memory
  host.dataset_in_memory = true;
  const Status st = CheckRunFits(c, 1, host);
  CHECK(st.code() == StatusCode::kResourceExhausted);
  CHECK(Has(st, "of it for the dataset in memory storage"));
  CHECK(st.message().find("storage.storage_type (in memory): dataset.num_files_*") == 0);
  CHECK(CheckRunFits(c, 4, host).ok());  // each of 4 ranks keeps a quarter

  // MeasureHostResources asks the storage's capabilities, not its name.
  auto registries = std::make_unique<Registries>();
  REQUIRE(RegisterBuiltins(registries.get()).ok());
  auto measured = [&](const std::string& type, const std::string& inner = "") {
    c.storage.storage_type = type;
    c.storage.backends.Get<SlowOptions>().inner = inner;
    return MeasureHostResources(c, nullptr, nullptr, *registries)->dataset_in_memory;
  };
  CHECK(measured("memory"));
  CHECK(measured("slow", "memory"));
  CHECK_FALSE(measured("posix"));
  CHECK_FALSE(measured("slow", "posix"));
  auto make = [](const StorageOptions&,
                 const StorageBuildEnv&) -> Result<std::unique_ptr<Storage>> {
    return NewMemoryStorage();
  };
  REQUIRE(registries->storages
              .Register({"user_ram", "a user's storage", "", make,
                         [](const StorageOptions&, const StorageRegistry&) {
                           return StorageCapabilities{.in_process_memory = true};
                         }})
              .ok());
  CHECK(measured("user_ram"));
}

TEST_CASE("preflight: RunWorkload refuses before generating anything") {
  testing::TempDir dir;
  WorkloadConfig c = Tiny();
  c.dataset.data_folder = dir / "data";
  c.output.folder = dir / "out";
  c.workflow.train = false;  // generate only: the disk check, not the memory one, must refuse
  c.dataset.num_files_train = 1000;
  c.dataset.record_length_bytes = uint64_t{1} << 40;  // 4000 TiB to write
  RunEnv env;
  env.write_outputs = false;
  auto report = RunWorkload(c, env);
  REQUIRE_FALSE(report.ok());
  CHECK(report.status().code() == StatusCode::kResourceExhausted);
  CHECK(Has(report.status(), "dataset.record_length_bytes: generating 1000 missing files"));
  CHECK_FALSE(std::filesystem::exists(dir / "data"));
  CHECK(PreflightRun(c, env).code() == StatusCode::kResourceExhausted);
  c.dataset.record_length_bytes = 1024;
  CHECK(PreflightRun(c, env).ok());
}

}  // namespace
}  // namespace dlio
