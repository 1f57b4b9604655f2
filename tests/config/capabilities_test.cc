// Capabilities instead of names: ValidateCapabilities asks the registered storage and format what
// they can do, so user-registered implementations are judged as built-in ones; backends report
// the capabilities their registry entries declare.
#include <catch2/catch.hpp>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/capabilities_test_util.h"
#include "dlio/config.h"
#include "dlio/loop.h"
#include "dlio/registries.h"
#include "storage/mpiio_options.h"

namespace dlio {
namespace {

using capabilities_test::Builtins;
using capabilities_test::RegisterUserFormat;

// A config that satisfies every storage.mpiio_collective rule among keys
// (WorkloadConfig::Validate).
WorkloadConfig CollectiveConfig(const std::string& storage, const std::string& format) {
  WorkloadConfig c;
  for (const std::string& o :
       std::vector<std::string>{"storage.mpiio_collective=true", "reader.pipeline=sync",
                                "reader.read_threads=1", "dataset.num_files_train=1",
                                "storage.storage_type=" + storage, "dataset.format=" + format}) {
    REQUIRE(ApplyOverride(&c, o).ok());
  }
  REQUIRE(c.Validate().ok());
  return c;
}

FormatCapabilities Collective() {
  FormatCapabilities c;
  c.collective_reads = true;
  return c;
}

TEST_CASE("capabilities: the built-in storages and formats that read collectively are accepted") {
  const auto registries = Builtins();
  const Registries& r = *registries;
  CHECK(ValidateCapabilities(CollectiveConfig("mpiio", "npz"), r).ok());
  CHECK(ValidateCapabilities(CollectiveConfig("mpiio", "indexed_binary"), r).ok());
  WorkloadConfig slow = CollectiveConfig("slow", "npy");
  REQUIRE(ApplyOverride(&slow, "storage.slow_inner=mpiio").ok());
  CHECK(ValidateCapabilities(slow, r).ok());  // slow declares what it wraps

  REQUIRE(ApplyOverride(&slow, "storage.slow_inner=posix").ok());
  Status s = ValidateCapabilities(slow, r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("storage.mpiio_collective: true needs a "
                                          "storage.storage_type that reads collectively (mpiio)"));
  CHECK_THAT(s.message(), Catch::Contains("got 'slow'"));

  s = ValidateCapabilities(CollectiveConfig("posix", "npz"), r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("got 'posix'"));

  s = ValidateCapabilities(CollectiveConfig("mpiio", "synthetic"), r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("storage.mpiio_collective"));
  CHECK_THAT(s.message(), Catch::Contains("dataset.format"));
  CHECK_THAT(s.message(), Catch::Contains("indexed_binary, mmap_indexed_binary, npy, npz"));
  CHECK_THAT(s.message(), Catch::Contains("got 'synthetic'"));

  // Off, nothing is asked.
  WorkloadConfig off = CollectiveConfig("posix", "synthetic");
  off.storage.backends.Get<MpiioOptions>().collective = false;
  CHECK(ValidateCapabilities(off, r).ok());
}

TEST_CASE("capabilities: hdf5 reads collectively only without its per-sample metadata file") {
  const auto registries = Builtins();
  const Registries& r = *registries;
  auto hdf5 = r.formats.Get("hdf5");
  REQUIRE(hdf5.ok());
  auto format = (*hdf5)();
  if (!format.ok()) return;  // built without HDF5: nothing to ask
  CHECK((*format)->capabilities().per_sample_metadata_file);
  WorkloadConfig c = CollectiveConfig("mpiio", "hdf5");
  CHECK(ValidateCapabilities(c, r).ok());
  REQUIRE(ApplyOverride(&c, "dataset.metadata_file=true").ok());
  const Status s = ValidateCapabilities(c, r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(),
             Catch::Contains("with dataset.format hdf5 needs dataset.metadata_file: false"));
}

TEST_CASE("capabilities: a user format is accepted for collective reads when it declares them") {
  const auto registries = Builtins();
  Registries& r = *registries;
  REQUIRE(RegisterUserFormat(registries.get(), "user_collective", Collective()).ok());
  REQUIRE(RegisterUserFormat(registries.get(), "user_plain", {}).ok());
  CHECK(ValidateCapabilities(CollectiveConfig("mpiio", "user_collective"), r).ok());
  const Status s = ValidateCapabilities(CollectiveConfig("mpiio", "user_plain"), r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("dataset.format"));
  CHECK_THAT(s.message(), Catch::Contains("got 'user_plain'"));
  CHECK_THAT(s.message(), Catch::Contains("user_collective"));  // named among those that would do
}

TEST_CASE("capabilities: a user storage is accepted for collective reads when it declares them") {
  const auto registries = Builtins();
  Registries& r = *registries;
  auto memory = [](const StorageOptions&,
                   const StorageBuildEnv&) -> Result<std::unique_ptr<Storage>> {
    return NewMemoryStorage();
  };
  REQUIRE(r.storages
              .Register({"user_collective", "a user's storage", "", memory,
                         [](const StorageOptions&, const StorageRegistry&) {
                           return StorageCapabilities{.collective_reads = true};
                         }})
              .ok());
  REQUIRE(r.storages.Register({"user_plain", "a user's storage", "", memory}).ok());
  CHECK(ValidateCapabilities(CollectiveConfig("user_collective", "npy"), r).ok());
  const Status s = ValidateCapabilities(CollectiveConfig("user_plain", "npy"), r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("storage.storage_type"));
  CHECK_THAT(s.message(), Catch::Contains("mpiio, user_collective"));
  CHECK_THAT(s.message(), Catch::Contains("got 'user_plain'"));
  // An unknown storage declares nothing (MakeStorage names it as unknown later).
  CHECK_FALSE(ValidateCapabilities(CollectiveConfig("nonesuch", "npy"), r).ok());
}

TEST_CASE("capabilities: a built storage reports what its registry entry declares") {
  const auto registries = Builtins();
  const Registries& r = *registries;
  for (const char* name : {"posix", "stdio", "memory", "slow"}) {
    CAPTURE(name);
    StorageOptions options;
    options.name = name;
    auto declared = StorageCapabilitiesFor(options, r.storages);
    REQUIRE(declared.ok());
    auto storage = MakeStorage(options, r.storages, SystemClock(), nullptr);
    REQUIRE(storage.ok());
    const StorageCapabilities built = (*storage)->capabilities();
    CHECK(built.host_files == declared->host_files);
    CHECK(built.shared_write == declared->shared_write);
    CHECK(built.collective_reads == declared->collective_reads);
    CHECK(built.needs_mpi == declared->needs_mpi);
    CHECK(built.in_process_memory == declared->in_process_memory);
  }
  StorageOptions posix;
  CHECK(StorageCapabilitiesFor(posix, r.storages)->shared_write);
  StorageOptions slow;
  slow.name = "slow";  // over posix: its files, but no shared writes that bypass its latency
  CHECK(StorageCapabilitiesFor(slow, r.storages)->host_files);
  CHECK_FALSE(StorageCapabilitiesFor(slow, r.storages)->shared_write);
  StorageOptions memory;
  memory.name = "memory";
  CHECK_FALSE(StorageCapabilitiesFor(memory, r.storages)->host_files);
  CHECK(StorageCapabilitiesFor(memory, r.storages)->in_process_memory);
  StorageOptions mpiio;
  mpiio.name = "mpiio";  // declared without building it (needs MPI)
  CHECK(StorageCapabilitiesFor(mpiio, r.storages)->needs_mpi);
  CHECK(StorageCapabilitiesFor(mpiio, r.storages)->collective_reads);
  mpiio.name = "nonesuch";
  CHECK(StorageCapabilitiesFor(mpiio, r.storages).status().code() == StatusCode::kNotFound);
}

// What validating a config of `overrides` says: the rules among keys (WorkloadConfig::Validate),
// else the registered backends' capabilities; "" when both hold.
std::string ValidationMessage(const Registries& registries,
                              std::initializer_list<const char*> overrides) {
  WorkloadConfig c;
  for (const char* o : overrides) REQUIRE(ApplyOverride(&c, o).ok());
  const Status keys = c.Validate();
  return keys.ok() ? ValidateCapabilities(c, registries).message() : keys.message();
}

TEST_CASE("capabilities: hdf5's root attributes and the h5py model's reading them") {
  const auto registries = Builtins();
  // The items, parsed by the hdf5 format's own hook.
  auto validate = [&](std::initializer_list<const char*> overrides) {
    return ValidationMessage(*registries, overrides);
  };
  const char* hdf5 = "dataset.format=hdf5";
  CHECK(validate({hdf5, "dataset.hdf5_root_attributes=@max:scalar:fp64,@ids:3:int32"}).empty());
  CHECK(validate({hdf5, "dataset.hdf5_root_attributes=kspace:3"}) ==
        "dataset.hdf5_root_attributes: 'kspace:3:fp32' is not an attribute of the root: give "
        "'@name:shape:dtype' items (e.g. '@max:scalar:fp64')");
  CHECK(validate({hdf5, "dataset.hdf5_root_attributes=g@x:scalar:fp64"}) ==
        "dataset.hdf5_root_attributes: 'g@x:scalar:fp64' is not an attribute of the root: give "
        "'@name:shape:dtype' items (e.g. '@max:scalar:fp64')");
  CHECK_THAT(validate({hdf5, "dataset.hdf5_root_attributes=@x:scalar:fp128"}),
             Catch::StartsWith("dataset.hdf5_root_attributes: '@x:scalar:fp128': dtype 'fp128'"));
  CHECK_THAT(validate({hdf5, "dataset.hdf5_root_attributes=@x:scalar:fp64,@x:2:int8"}),
             Catch::Contains("attribute 'x'") && Catch::Contains("given twice"));
  // Read by the h5py model's hdf5 readers only.
  CHECK(validate({hdf5, "reader.h5py_read_attributes=true"}).empty());
  CHECK(validate({hdf5, "reader.h5py_read_attributes=true", "reader.io_model=h5py"}).empty());
  CHECK(validate({"reader.h5py_read_attributes=true"}) ==
        "reader.h5py_read_attributes applies to dataset.format 'hdf5' only, got 'npz'");
  CHECK(validate({hdf5, "reader.h5py_read_attributes=true", "reader.io_model=native"}) ==
        "reader.h5py_read_attributes applies to reader.io_model h5py (hdf5's default under auto); "
        "reader.io_model is native");
}

TEST_CASE("capabilities: the order of a lookup table's read beside its sample") {
  const auto registries = Builtins();
  auto validate = [&](std::initializer_list<const char*> overrides) {
    return ValidationMessage(*registries, overrides);
  };
  const char* hdf5 = "dataset.format=hdf5";
  const char* labels = "reader.hdf5_lookup_dataset=/labels";
  CHECK(validate({hdf5, labels, "reader.hdf5_lookup_order=after"}).empty());
  CHECK(validate({hdf5, labels, "reader.hdf5_lookup_order=before"}).empty());
  CHECK(validate({hdf5, "dataset.hdf5_sample_groups=sample_", "reader.hdf5_lookup_order=before"})
            .empty());
  CHECK(validate({hdf5, "reader.hdf5_lookup_order=after"}) ==
        "reader.hdf5_lookup_order 'after' orders the read of a lookup table's row beside its "
        "sample, but none is read: set reader.hdf5_lookup_dataset (or dataset.hdf5_sample_groups, "
        "whose files may hold one)");
  CHECK(validate({"reader.hdf5_lookup_order=after"}) ==
        "reader.hdf5_lookup_order applies to dataset.format 'hdf5' only, got 'npz'");
  WorkloadConfig c;
  const Status bad = ApplyOverride(&c, "reader.hdf5_lookup_order=last");
  CHECK_THAT(bad.message(), Catch::Contains("reader.hdf5_lookup_order") &&
                                Catch::Contains("last") && Catch::Contains("after"));
}

TEST_CASE("capabilities: the format, storage and pipeline named check the keys they read") {
  const auto registries = Builtins();
  const Registries& r = *registries;
  auto validate = [&](std::initializer_list<const char*> overrides) {
    WorkloadConfig c;
    for (const char* o : overrides) REQUIRE(ApplyOverride(&c, o).ok());
    REQUIRE(c.Validate().ok());  // the rules among keys hold: what fails is asked of the backend
    return ValidateCapabilities(c, r).message();
  };
  CHECK(validate({}).empty());
  CHECK(validate({"dataset.hdf5_lookup_rows=4"}) ==
        "dataset.hdf5_lookup_rows applies to dataset.format 'hdf5' only, got 'npz'");
  CHECK(validate({"dataset.format=hdf5", "dataset.hdf5_lookup_rows=4"}).empty());
  // hdf5's root attributes: written by its writers only, and items that are root attributes.
  const char* attrs = "dataset.hdf5_root_attributes=@acquisition:scalar:str9, @max:scalar:fp64";
  CHECK(validate({attrs}) ==
        "dataset.hdf5_root_attributes applies to dataset.format 'hdf5' only, got 'npz'");
  CHECK(validate({"dataset.format=hdf5", attrs}).empty());
  // webdataset's member extensions: its own key, spelled as extensions.
  CHECK(validate({"dataset.webdataset_members=bin"}) ==
        "dataset.webdataset_members applies to dataset.format 'webdataset' only, got 'npz'");
  const char* wds = "dataset.format=webdataset";
  CHECK(validate({wds, "dataset.webdataset_members=bin"}).empty());
  CHECK(validate({wds, "dataset.webdataset_members=jpg,seg.png,cls"}).empty());
  CHECK(validate({wds, "dataset.webdataset_members=jpg,,cls"}) ==
        "dataset.webdataset_members: \"\" in \"jpg,,cls\" is not an extension (1 to 64 letters, "
        "digits, '_', '-' or '.', comma-separated)");
  CHECK_THAT(validate({wds, "dataset.webdataset_members=a/b"}),
             Catch::StartsWith("dataset.webdataset_members: \"a/b\""));
  CHECK(validate({wds, "dataset.webdataset_members=jpg,cls,jpg"}) ==
        "dataset.webdataset_members: \"jpg\" is named twice in \"jpg,cls,jpg\" (a sample's "
        "members need distinct names)");
  CHECK_THAT(validate({wds, "dataset.webdataset_members=a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q"}),
             Catch::Contains("17 extensions") && Catch::Contains("at most 16"));
  // npz's members per np.load: names, read by the numpy model.
  CHECK(validate({"reader.npz_members=x, y"}).empty());
  CHECK(validate({"reader.npz_members=x,,y"}) == "reader.npz_members: name 2 of \"x,,y\" is empty");
  CHECK(validate({"reader.npz_members=x,y", "reader.io_model=native"}) ==
        "reader.npz_members applies to reader.io_model numpy (npz's default under auto); "
        "reader.io_model is native");
  CHECK_THAT(validate({"dataset.format=npy", "reader.npz_members=x"}),
             Catch::StartsWith("reader.npz_members applies to dataset.format 'npz'"));
  // Chunks of a chosen compression ratio: hdf5's, gzip without shuffle, whole-sample chunks.
  CHECK_THAT(validate({"dataset.format=npy", "dataset.compression_ratio=4"}),
             Catch::StartsWith("dataset.compression_ratio applies to dataset.format 'hdf5"));
  CHECK(validate({"dataset.compression_ratio=4"}) ==
        "dataset.compression_ratio needs dataset.compression gzip (is none): npz members are "
        "deflated to the chosen length");
  CHECK(validate({"dataset.compression_ratio=4", "dataset.compression=gzip"}).empty());
  const char* hdf5 = "dataset.format=hdf5";
  CHECK(validate({hdf5, "dataset.compression_ratio_stdev=0.5"}) ==
        "dataset.compression_ratio needs dataset.compression gzip (is none): its chunks are "
        "zlib streams");
  const char* gzip = "dataset.compression=gzip";
  CHECK_THAT(validate({hdf5, gzip, "dataset.compression_ratio=4"}),
             Catch::StartsWith("dataset.compression_ratio needs dataset.enable_chunking"));
  CHECK_THAT(validate({hdf5, gzip, "dataset.compression_ratio=4", "dataset.enable_chunking=true",
                       "dataset.chunk_size=1024"}),
             Catch::StartsWith("dataset.compression_ratio needs dataset.enable_chunking"));
  CHECK_THAT(validate({hdf5, gzip, "dataset.compression_ratio=4", "dataset.hdf5_shuffle=true",
                       "dataset.enable_chunking=true", "dataset.chunk_samples=1"}),
             Catch::StartsWith("dataset.compression_ratio with dataset.hdf5_shuffle"));
  CHECK_THAT(validate({hdf5, gzip, "dataset.compression_ratio=4", "dataset.enable_chunking=true",
                       "dataset.chunk_samples=1", "dataset.record_length_bytes_stdev=100"}),
             Catch::StartsWith("dataset.compression_ratio needs samples of one size"));
  CHECK(validate({hdf5, gzip, "dataset.compression_ratio=4", "dataset.enable_chunking=true",
                  "dataset.chunk_samples=1"})
            .empty());
  CHECK_THAT(validate({"reader.read_type=memory", "reader.pipeline=threaded"}),
             Catch::StartsWith("reader.read_type 'memory' requires reader.pipeline 'preload', "
                               "got 'threaded'"));
  CHECK(validate({"reader.read_type=memory", "reader.pipeline=preload"}).empty());
  CHECK(validate({"reader.pipeline=preload", "dataset.num_files_train=16777217"}) ==
        "dataset.num_files_train and dataset.num_files_eval must be <= 16777216 with "
        "reader.pipeline 'preload'");
  CHECK(validate({"storage.storage_type=slow", "storage.slow_inner=''"}) ==
        "storage.slow_inner must not be empty when storage.storage_type is 'slow'");
  CHECK(validate({"storage.storage_type=tiered", "storage.tiered_source=tiered"}) ==
        "storage.tiered_source must name another storage when storage.storage_type is 'tiered', "
        "got 'tiered'");
  // One image per file: refused at config time, not when the generator meets it.
  for (const char* format : {"jpeg", "png"}) {
    CAPTURE(format);
    auto images = ParseConfig(
        std::string("dataset: {format: ") + format + ", num_samples_per_file: 2}", "img.yaml");
    REQUIRE(images.ok());
    REQUIRE(images->Validate().ok());
    CHECK(
        ValidateCapabilities(*images, r).message().find("dataset.num_samples_per_file must be 1") ==
        0);
  }
  // hdf5 splits record_dims[0] across /records_0..N-1: N > 1 needs them (DLIO fails without).
  if (!(*r.formats.Get("hdf5"))().ok()) return;  // built without HDF5
  for (const char* yaml : {"dataset: {format: hdf5, hdf5: {num_dset_per_record: 2}}",
                           "dataset: {format: hdf5, record_dims: [4], metadata_file: true, "
                           "hdf5: {num_dset_per_record: 2}}"}) {
    CAPTURE(yaml);
    auto split = ParseConfig(yaml, "n.yaml");
    REQUIRE(split.ok());
    REQUIRE(split->Validate().ok());
    CHECK(ValidateCapabilities(*split, r).message().find("dataset.hdf5.num_dset_per_record > 1") ==
          0);
  }
}

// DLIO's record shapes for images: jpeg and png hold uint8 pixels whatever record_element_type
// says, which their formats declare (FormatCapabilities::uint8_records); parsing alone counts the
// element type, having no registries.
TEST_CASE("capabilities: records of a format declaring uint8_records are one byte per element") {
  const auto registries = Builtins();
  Registries& r = *registries;
  WorkloadConfig c;
  REQUIRE(ApplyOverride(&c, "++workload.dataset.record_dims=[4, 5]").ok());
  REQUIRE(ApplyOverride(&c, "++workload.dataset.record_element_type=float32").ok());
  // The record size parsing gives for `format`, and the one a run's config has (RunConfigFor:
  // RunWorkload, PreflightRun and the C API's loader make theirs so).
  auto sizes = [&r](WorkloadConfig config, const std::string& format) {
    REQUIRE(ApplyOverride(&config, "dataset.format=" + format).ok());
    auto run = RunConfigFor(config, 1, r);
    REQUIRE(run.ok());
    return std::make_pair(config.dataset.record_length_bytes, run->dataset.record_length_bytes);
  };
  using Sizes = std::pair<uint64_t, uint64_t>;
  CHECK(sizes(c, "npz") == Sizes{80, 80});  // float32 elements
  CHECK(sizes(c, "png") == Sizes{80, 20});  // images are uint8 pixels
  CHECK(sizes(c, "jpeg") == Sizes{80, 20});
  CHECK(sizes(c, "nonesuch") == Sizes{80, 80});  // an unknown format declares nothing
  // A user's format that declares the same is counted the same, one that does not by the type.
  FormatCapabilities pixels;
  pixels.uint8_records = true;
  REQUIRE(RegisterUserFormat(&r, "user_pixels", pixels).ok());
  REQUIRE(RegisterUserFormat(&r, "user_plain", {}).ok());
  CHECK(sizes(c, "user_pixels") == Sizes{80, 20});
  CHECK(sizes(c, "user_plain") == Sizes{80, 80});
  // Applied twice, the same; without record_dims the record length is the config's.
  REQUIRE(ApplyOverride(&c, "dataset.format=png").ok());
  REQUIRE(ApplyFormatRecordShapes(&c, r).ok());
  REQUIRE(ApplyFormatRecordShapes(&c, r).ok());
  CHECK(c.dataset.record_length_bytes == 20);
  WorkloadConfig plain;
  REQUIRE(ApplyOverride(&plain, "dataset.record_length_bytes=4096").ok());
  CHECK(sizes(plain, "png") == Sizes{4096, 4096});
  // A shape set in code, not parsed, is checked as parsing checks it.
  WorkloadConfig zero;
  zero.dataset.format = "png";
  zero.dataset.record_dims = {4, 0};
  CHECK(ApplyFormatRecordShapes(&zero, r).message() ==
        "dataset.record_dims: every dimension must be >= 1, got 0");
}

TEST_CASE("capabilities: collective reads need a pipeline that reads on the loop's thread") {
  const auto registries = Builtins();
  Registries& r = *registries;
  WorkloadConfig c = CollectiveConfig("mpiio", "npz");
  REQUIRE(ApplyOverride(&c, "reader.pipeline=threaded").ok());
  REQUIRE(c.Validate().ok());
  Status s = ValidateCapabilities(c, r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("storage.mpiio_collective"));
  CHECK_THAT(s.message(), Catch::Contains("needs reader.pipeline 'sync'"));
  // A user pipeline is judged by what it declares, not by its name.
  auto none = [](const PipelineOptions&, const PipelineEnv&) -> Result<std::unique_ptr<Pipeline>> {
    return Status::Unimplemented("user pipeline");
  };
  REQUIRE(r.pipelines
              .Register({"user_inline", "a user's pipeline", "", none,
                         PipelineCapabilities{.reads_on_loop_thread = true}})
              .ok());
  c.reader.pipeline = "user_inline";  // the config's key accepts the built-in names only
  CHECK(ValidateCapabilities(c, r).ok());
  c.reader.read_type = ReadType::kMemory;  // (the key's override also picks preload)
  s = ValidateCapabilities(c, r);
  CHECK_THAT(s.message(), Catch::StartsWith("reader.read_type 'memory' requires reader.pipeline "
                                            "'preload', got 'user_inline'"));
}

TEST_CASE("capabilities: pipelines, checkpointers and the tiered storage declare what they do") {
  const auto registries = Builtins();
  const Registries& r = *registries;
  auto pipeline = [&](const char* name) {
    auto entry = r.pipelines.Find(name);
    REQUIRE(entry.ok());
    return entry->capabilities;
  };
  CHECK(pipeline("preload").holds_dataset);
  CHECK(pipeline("pytorch").worker_processes);
  CHECK(pipeline("sync").reads_on_loop_thread);
  const PipelineCapabilities threaded = pipeline("threaded");
  CHECK_FALSE(threaded.holds_dataset);
  CHECK_FALSE(threaded.worker_processes);
  CHECK_FALSE(threaded.reads_on_loop_thread);
  // Only the transformer layouts log a transformer plan: dlio_benchmark when it has layers.
  CheckpointOptions layers;
  layers.transformer.num_layers = 4;
  CheckpointOptions flat;
  flat.transformer.num_layers = 0;
  auto writes_layers = [&](const char* name, const CheckpointOptions& o) {
    auto entry = r.checkpointers.Find(name);
    REQUIRE(entry.ok());
    const auto& declared = entry->capabilities.writes_transformer_layers;
    return declared && declared(o);
  };
  CHECK(writes_layers("transformer", flat));
  CHECK(writes_layers("dlio_benchmark", layers));
  CHECK_FALSE(writes_layers("dlio_benchmark", flat));
  for (const char* name : {"paper", "model", "torch_save"}) {
    CAPTURE(name);
    CHECK_FALSE(writes_layers(name, layers));
  }
  // What the preflight sizes and which cadence the runner follows: declared, not named.
  auto declared = [&](const char* name) {
    auto entry = r.checkpointers.Find(name);
    REQUIRE(entry.ok());
    return entry->capabilities;
  };
  CheckpointOptions model;
  model.model_size_bytes = 10;
  model.world = 4;
  model.rank = 1;  // 10 bytes over 4 ranks: 3, 3, 2, 2
  REQUIRE(declared("model").rank_bytes);
  CHECK(*declared("model").rank_bytes(model) == 3);
  CHECK(declared("transformer").size_keys == "model.transformer.*, model.num_layers");
  CHECK(declared("dlio_benchmark").dlio_cadence);
  for (const char* name : {"paper", "model", "transformer", "torch_save"}) {
    CAPTURE(name);
    CHECK_FALSE(declared(name).dlio_cadence);
  }
  for (const char* name : {"paper", "torch_save"}) {
    CAPTURE(name);
    CHECK_FALSE(declared(name).rank_bytes);  // not sized by the preflight
  }
  // The tiered storage's cache may be shared by a node's ranks; the storages it wraps have none.
  StorageOptions tiered;
  tiered.name = "tiered";
  CHECK(StorageCapabilitiesFor(tiered, r.storages)->node_shared_cache);
  StorageOptions posix;
  CHECK_FALSE(StorageCapabilitiesFor(posix, r.storages)->node_shared_cache);
}

}  // namespace
}  // namespace dlio
