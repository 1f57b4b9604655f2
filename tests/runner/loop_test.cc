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

  // The registered pipeline `name`: its entry, and what it declares.
  dlio::PipelineRegistry::Entry Entry(const std::string& name) const {
    auto entry = registries.pipelines.Find(name);
    REQUIRE(entry.ok());
    return *entry;
  }
  dlio::PipelineCapabilities Declared(const std::string& name) const {
    return Entry(name).capabilities;
  }

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
    auto s = dlio::MakeStorage(dlio::StorageOptionsFor(config), registries.storages,
                               dlio::SystemClock(), tracer.get());
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

TEST_CASE("ResolvePaths leaves DLIO's s3://bucket data folders alone") {
  // DLIO's S3 configs: data_folder s3://<bucket> names the bucket itself (storage_root is the
  // same bucket), so it is not prefixed (it was "<root>/s3://<bucket>", the key "s3:/<bucket>/").
  dlio::WorkloadConfig c;
  c.storage.storage_root = "s3pytorchconnector";
  c.dataset.data_folder = "s3://s3pytorchconnector";
  c.checkpoint.checkpoint_folder = "checkpoints/unet3d";
  CHECK(dlio::ResolvePaths(c).dataset.data_folder == "s3://s3pytorchconnector");
  CHECK(dlio::ResolvePaths(c).checkpoint.checkpoint_folder ==
        "s3pytorchconnector/checkpoints/unet3d");
}

TEST_CASE(
    "PipelineNameFor: the pytorch worker processes for io_model pytorch, or auto with a "
    "PyTorch loader") {
  auto name_for = [](std::vector<std::string> sets, bool needs_mpi = false) {
    dlio::WorkloadConfig c;
    for (const auto& s : sets) REQUIRE(dlio::ApplyOverride(&c, s).ok());
    dlio::Registries builtins;
    REQUIRE(dlio::RegisterBuiltins(&builtins).ok());
    return dlio::PipelineNameFor(c, needs_mpi,
                                 dlio::PipelineCapabilitiesFor(c, builtins.pipelines));
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

TEST_CASE("LoaderFor: asks reader.pipeline's entry whether it overlaps I/O, not its name") {
  dlio::Registries r;
  REQUIRE(dlio::RegisterBuiltins(&r).ok());
  // A user's copies of threaded: one declaring what threaded declares, one declaring nothing.
  auto threaded = r.pipelines.Find("threaded");
  REQUIRE(threaded.ok());
  auto overlapping = *threaded;
  overlapping.name = "user_overlapping";
  REQUIRE(r.pipelines.Register(overlapping).ok());
  auto plain = *threaded;
  plain.name = "user_plain";
  plain.capabilities = {};
  REQUIRE(r.pipelines.Register(plain).ok());
  dlio::WorkloadConfig c;
  c.reader.data_loader = dlio::DataLoader::kPytorch;
  auto name_for = [&](const std::string& pipeline) {
    c.reader.pipeline = pipeline;
    return dlio::PipelineNameFor(c, false, dlio::PipelineCapabilitiesFor(c, r.pipelines));
  };
  CHECK(name_for("user_overlapping") == "pytorch");
  CHECK(name_for("user_plain") == "user_plain");
  CHECK(name_for("threaded") == "pytorch");
  // A name no entry has declares nothing: the pipeline is built as named (and refused there).
  CHECK(name_for("nowhere") == "nowhere");
  CHECK_FALSE(dlio::PipelineCapabilitiesFor(c, r.pipelines).overlaps_io);
}

// What ReserveBuffersFor plans: the pipeline's own buffers (PipelineOptions) and the facts a
// pipeline with worker processes derives its own from (PipelineFacts).
struct Plan {
  uint64_t reserve_sample_bytes = 0;
  uint64_t reserve_buffers = 0;
  uint64_t reserve_batch_bytes = 0;
  uint64_t bounded_read_bytes = 0;
};

Plan PlanFor(const dlio::WorkloadConfig& c, const dlio::Format& format,
             const dlio::PipelineRegistry::Entry& pipeline, uint64_t batch, uint64_t host) {
  dlio::PipelineOptions po;
  dlio::PipelineFacts facts;
  dlio::ReserveBuffersFor(c, format, pipeline, batch, host, &po, &facts);
  return {po.reserve_sample_bytes, po.reserve_buffers, facts.batch_reserve_bytes,
          facts.bounded_read_bytes};
}

TEST_CASE("ReserveBuffersFor sizes the pipeline's buffers from the config") {
  Fixture fx;  // npz: stored samples are record_length_bytes
  dlio::WorkloadConfig c;
  c.dataset.record_length_bytes = 1 << 20;
  c.reader.prefetch_size = 2;
  c.reader.read_threads = 3;
  const uint64_t host = uint64_t{16} << 30;  // a 16 GiB host: 8 GiB for the pipelines
  auto reserve = [&](const std::string& pipeline, uint64_t batch, const dlio::Format& format) {
    return PlanFor(c, format, fx.Entry(pipeline), batch, host);
  };
  // threaded: every pooled buffer, (prefetch 2 + 3 threads + 1) x batch 4, at the record length.
  Plan po = reserve("threaded", 4, *fx.format);
  CHECK(po.reserve_sample_bytes == 1u << 20);
  CHECK(po.reserve_buffers == 24);
  CHECK(po.reserve_batch_bytes == 0);
  // With a stdev: mean + 2 stdev per sample; a pytorch batch of 4: 4 mean + 2 sqrt(4) stdev.
  c.dataset.record_length_bytes_stdev = 1000;
  po = reserve("threaded", 4, *fx.format);
  CHECK(po.reserve_sample_bytes == (1u << 20) + 2000);
  // pytorch workers read straight into their slots (client_costs none): no read buffer.
  po = reserve("pytorch", 4, *fx.format);
  CHECK(po.reserve_sample_bytes == 0);
  CHECK(po.reserve_batch_bytes == (4u << 20) + 4000);
  CHECK(po.reserve_buffers == 0);
  // framework: a read buffer per worker, and slots for the collated bytes, at most the resize
  // bytes of each sample when dataset.record_length_bytes_resize is set.
  c.reader.client_costs = dlio::ClientCosts::kFramework;
  po = reserve("pytorch", 4, *fx.format);
  CHECK(po.reserve_sample_bytes == (1u << 20) + 2000);
  CHECK(po.reserve_batch_bytes == (4u << 20) + 4000);
  c.dataset.record_length_bytes_resize = 4096;
  po = reserve("pytorch", 4, *fx.format);
  CHECK(po.reserve_sample_bytes == (1u << 20) + 2000);
  CHECK(po.reserve_batch_bytes == 4u * 4096);
  // none: the slots hold the resize bytes too (never more than the framework's batch), and the
  // worker reads each sample into its reused buffer, bounded for npz (BoundedReadBytesFor): its
  // span is mean + 4 stdev of address space, its memory the resize + 1 MiB.
  c.reader.client_costs = dlio::ClientCosts::kNone;
  po = reserve("pytorch", 4, *fx.format);
  CHECK(po.bounded_read_bytes == 4096);
  CHECK(po.reserve_sample_bytes == (1u << 20) + 4000);
  CHECK(po.reserve_batch_bytes == 4u * 4096);
  c.dataset.record_length_bytes_resize = 0;
  // A unet3d-like ring (24 buffers of 300 MiB: 7.0 GiB) is reserved whole, not capped at 1 GiB.
  c.dataset.record_length_bytes_stdev = 0;
  c.dataset.record_length_bytes = 300u << 20;
  CHECK(reserve("threaded", 4, *fx.format).reserve_buffers == 24);
  // Two accelerator threads' rings would take 14 GiB: each reserves what fits in its 4 GiB.
  c.train.accelerators_per_process = 2;
  CHECK(reserve("threaded", 4, *fx.format).reserve_buffers == 13);  // floor(4096 / 300)
  // pytorch slots beyond the budget: grown on demand instead (3 workers x 4 slots x 1.2 GiB).
  CHECK(reserve("pytorch", 4, *fx.format).reserve_batch_bytes == 0);
  CHECK(reserve("pytorch", 4, *fx.format).reserve_sample_bytes == 0);
  c.train.accelerators_per_process = 1;
  c.dataset.record_length_bytes = uint64_t{9} << 30;  // one sample is larger than the budget: none
  CHECK(reserve("threaded", 4, *fx.format).reserve_sample_bytes == 0);
  // A host whose memory is unknown (0): no bound.
  const Plan unbounded = PlanFor(c, *fx.format, fx.Entry("threaded"), 4, 0);
  CHECK(unbounded.reserve_buffers == 24);
  // Nothing for preload, nor for formats whose stored size is not the record length.
  c.dataset.record_length_bytes = 1 << 20;
  CHECK(reserve("preload", 4, *fx.format).reserve_sample_bytes == 0);
  auto jpeg = fx.registries.formats.Get("jpeg");
  REQUIRE(jpeg.ok());
  auto jpeg_format = (*jpeg)();
  REQUIRE(jpeg_format.ok());
  CHECK(reserve("threaded", 4, **jpeg_format).reserve_sample_bytes == 0);
}

TEST_CASE("BoundedReadBytesFor bounds the pytorch workers' read buffers of streaming formats") {
  Fixture fx;  // npz streams its samples
  dlio::WorkloadConfig c;
  c.dataset.record_length_bytes = 8 << 20;
  c.dataset.record_length_bytes_resize = 2 << 20;
  c.reader.read_threads = 4;
  CHECK(dlio::BoundedReadBytesFor(c, *fx.format, fx.Declared("pytorch")) == 2u << 20);
  Plan po = PlanFor(c, *fx.format, fx.Entry("pytorch"), 4, uint64_t{16} << 30);
  CHECK(po.bounded_read_bytes == 2u << 20);
  CHECK(po.reserve_sample_bytes == 8u << 20);  // the span; the memory is 2 MiB + 1 MiB
  c.dataset.record_length_bytes_stdev = 1000;  // the span: mean + 4 stdev
  po = PlanFor(c, *fx.format, fx.Entry("pytorch"), 4, uint64_t{16} << 30);
  CHECK(po.reserve_sample_bytes == (8u << 20) + 4000);
  CHECK(dlio::BoundedReadBytesFor(c, *fx.format, fx.Declared("threaded")) == 0);
  c.reader.read_threads = 0;  // no worker process
  CHECK(dlio::BoundedReadBytesFor(c, *fx.format, fx.Declared("pytorch")) == 0);
  c.reader.read_threads = 4;
  c.reader.decode = true;  // the decoder reads the whole sample back
  CHECK(dlio::BoundedReadBytesFor(c, *fx.format, fx.Declared("pytorch")) == 0);
  c.reader.decode = false;
  c.reader.client_costs = dlio::ClientCosts::kFramework;  // the framework's whole arrays
  CHECK(dlio::BoundedReadBytesFor(c, *fx.format, fx.Declared("pytorch")) == 0);
  c.reader.client_costs = dlio::ClientCosts::kNone;
  auto tfrecord = fx.registries.formats.Get("tfrecord");  // its reader reads records back
  REQUIRE(tfrecord.ok());
  auto tfrecord_format = (*tfrecord)();
  REQUIRE(tfrecord_format.ok());
  CHECK(dlio::BoundedReadBytesFor(c, **tfrecord_format, fx.Declared("pytorch")) == 0);
}

TEST_CASE("reader.thread_nice auto lowers the readers only under accelerator threads") {
  dlio::WorkloadConfig c;
  CHECK(c.reader.thread_nice == -1);  // the default is auto
  CHECK(dlio::EffectiveThreadNice(c) == 0);
  c.train.accelerators_per_process = 2;
  CHECK(dlio::EffectiveThreadNice(c) == 10);
  c.reader.thread_nice = 0;  // a value set is kept, 0 included
  CHECK(dlio::EffectiveThreadNice(c) == 0);
  c.reader.thread_nice = 19;
  c.train.accelerators_per_process = 1;
  CHECK(dlio::EffectiveThreadNice(c) == 19);
}

// dataset.record_dims / record_element_type reach the array writers: a loop over the files
// generated from the config reads samples of prod(dims) x 4 bytes.
TEST_CASE("FormatOptionsFor hands record_dims and the element type to the array writers") {
  Fixture fx;
  REQUIRE(dlio::ApplyOverride(&fx.config, "dataset.record_dims=[4, 5]").ok());
  REQUIRE(dlio::ApplyOverride(&fx.config, "dataset.record_element_type=float32").ok());
  REQUIRE(dlio::ApplyOverride(&fx.config, "dataset.data_folder=/dims").ok());
  const dlio::FormatOptions o = dlio::FormatOptionsFor(fx.config);
  CHECK(o.npy.record_dims == std::vector<uint64_t>{4, 5});
  CHECK(o.npy.element_descr == "<f4");
  CHECK(o.npy.element_size == 4);
  REQUIRE(dlio::GenerateDataset(fx.config.dataset, *fx.format, o, fx.storage.get(), {}).ok());
  auto loop = dlio::MakeLoopParts(fx.config, dlio::Split::kTrain, fx.Env());
  REQUIRE(loop.ok());
  auto list = fx.storage->List("/dims/train");  // the generator names the files
  REQUIRE(list.ok());
  REQUIRE_FALSE(list->empty());
  auto reader = fx.format->Open(fx.storage.get(), "/dims/train/" + list->front(), o);
  REQUIRE(reader.ok());
  CHECK((*reader)->sample_size(0) == 80);
}

// DLIO's dlio_sample_shuffle_test.py (test_sample_shuffle_bug): 2 files of 4 samples with
// sample_shuffle seed (seed 42, changing per epoch) plan each file's samples 0..3 exactly once.
TEST_CASE("sample_shuffle seed plans every sample of every file once (DLIO's shuffle test)") {
  Fixture fx;
  REQUIRE(dlio::ApplyOverride(&fx.config, "dataset.num_files_train=2").ok());
  REQUIRE(dlio::ApplyOverride(&fx.config, "train.seed=42").ok());
  REQUIRE(dlio::ApplyOverride(&fx.config, "dataset.data_folder=/shuffle").ok());
  REQUIRE(dlio::GenerateDataset(fx.config.dataset, *fx.format, dlio::FormatOptionsFor(fx.config),
                                fx.storage.get(), {})
              .ok());
  auto loop = dlio::MakeLoopParts(fx.config, dlio::Split::kTrain, fx.Env());
  REQUIRE(loop.ok());
  for (uint64_t epoch = 0; epoch < 2; ++epoch) {
    std::vector<dlio::SampleRef> plan;
    REQUIRE(loop->sampler->Plan({epoch, 0, 1, &loop->source->samples_per_file()}, &plan).ok());
    std::vector<std::multiset<uint64_t>> per_file(2);
    for (const auto& ref : plan) {
      REQUIRE(ref.file < 2);
      per_file[ref.file].insert(ref.index);
    }
    for (const auto& indices : per_file) CHECK(indices == std::multiset<uint64_t>{0, 1, 2, 3});
  }
}

TEST_CASE("FormatOptionsFor hands DLIO's record shape to the hdf5 writer and reader") {
  Fixture fx;
  REQUIRE(dlio::ApplyOverride(&fx.config, "dataset.record_dims=[6, 5]").ok());
  REQUIRE(dlio::ApplyOverride(&fx.config, "dataset.record_element_type=float16").ok());
  REQUIRE(dlio::ApplyOverride(&fx.config, "dataset.hdf5.num_dset_per_record=3").ok());
  const dlio::FormatOptions o = dlio::FormatOptionsFor(fx.config);
  CHECK(o.hdf5.record_dims == std::vector<uint64_t>{6, 5});
  CHECK(o.hdf5.element_type == "float16");
  CHECK(o.hdf5.num_dsets == 3);
}
