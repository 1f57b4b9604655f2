// reader.io_model and the keys of each request model are accepted only where the format (and
// its capabilities) declare them; ResolveIoModel maps auto and pytorch to the format's default.
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "config/capabilities_test_util.h"
#include "dlio/config.h"
#include "dlio/loop.h"
#include "dlio/registries.h"

namespace dlio {
namespace {

using capabilities_test::Builtins;
using capabilities_test::RegisterUserFormat;

FormatCapabilities Models(std::vector<IoModel> models) {
  FormatCapabilities c;
  c.io_models = std::move(models);
  return c;
}

WorkloadConfig IoModelConfig(const std::string& format, const std::string& model) {
  WorkloadConfig c;
  REQUIRE(ApplyOverride(&c, "dataset.format=" + format).ok());
  REQUIRE(ApplyOverride(&c, "reader.io_model=" + model).ok());
  return c;
}

TEST_CASE("capabilities: reader.io_model is accepted only where the format declares it") {
  const auto registries = Builtins();
  Registries& r = *registries;
  REQUIRE(RegisterUserFormat(registries.get(), "user_numpy", Models({IoModel::kNumpy})).ok());
  REQUIRE(RegisterUserFormat(registries.get(), "user_plain", {}).ok());
  CHECK(ValidateCapabilities(IoModelConfig("user_numpy", "numpy"), r).ok());
  // auto and native apply to every format.
  CHECK(ValidateCapabilities(IoModelConfig("user_plain", "auto"), r).ok());
  CHECK(ValidateCapabilities(IoModelConfig("user_plain", "native"), r).ok());
  const Status s = ValidateCapabilities(IoModelConfig("user_plain", "numpy"), r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("reader.io_model 'numpy'"));
  CHECK_THAT(s.message(), Catch::Contains("dataset.format 'user_plain'"));
  CHECK_THAT(s.message(), Catch::Contains("user_numpy"));  // named among those that would do
}

TEST_CASE(
    "capabilities: reader.io_model mmap needs a format that declares it and a storage that "
    "maps files") {
  const auto registries = Builtins();
  const Registries& r = *registries;
  CHECK(ValidateCapabilities(IoModelConfig("mmap_indexed_binary", "mmap"), r).ok());
  CHECK(ValidateCapabilities(IoModelConfig("indexed_binary", "mmap"), r).ok());
  Status s = ValidateCapabilities(IoModelConfig("npz", "mmap"), r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("formats with that model: indexed_binary, "
                                          "mmap_indexed_binary"));
  WorkloadConfig memory = IoModelConfig("mmap_indexed_binary", "mmap");
  REQUIRE(ApplyOverride(&memory, "storage.storage_type=memory").ok());
  s = ValidateCapabilities(memory, r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("reader.io_model 'mmap' needs a storage.storage_type "
                                          "that maps files (posix), got 'memory'"));
  // auto reads natively where the storage cannot map (docs/io_models.md), so it passes.
  CHECK(ValidateCapabilities(IoModelConfig("mmap_indexed_binary", "auto"), r).ok());
  WorkloadConfig slow = IoModelConfig("indexed_binary", "mmap");
  REQUIRE(ApplyOverride(&slow, "storage.storage_type=slow").ok());
  CHECK_FALSE(ValidateCapabilities(slow, r).ok());  // page faults would bypass its latency
}

TEST_CASE("capabilities: reader.mmap_head_bytes applies under io_model mmap of raw files") {
  const auto registries = Builtins();
  const Registries& r = *registries;
  WorkloadConfig raw = IoModelConfig("raw", "mmap");
  REQUIRE(ApplyOverride(&raw, "reader.mmap_head_bytes=4096").ok());
  CHECK(ValidateCapabilities(raw, r).ok());
  // npy's mmap reader reads numpy's own header: the key would be ignored there.
  WorkloadConfig npy = IoModelConfig("npy", "mmap");
  REQUIRE(ApplyOverride(&npy, "reader.mmap_head_bytes=4096").ok());
  Status s = ValidateCapabilities(npy, r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("reader.mmap_head_bytes applies to dataset.format "
                                          "'raw' only") &&
                              Catch::Contains("got 'npy'"));
  // raw's default reads with native, which maps nothing.
  WorkloadConfig native = IoModelConfig("raw", "auto");
  REQUIRE(ApplyOverride(&native, "reader.mmap_head_bytes=128").ok());
  s = ValidateCapabilities(native, r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("reader.mmap_head_bytes is read by reader.io_model mmap "
                                          "only, but dataset.format 'raw' reads with 'native'"));
}

TEST_CASE("capabilities: io_model pyio reads a raw file of several samples as records") {
  const auto registries = Builtins();
  const Registries& r = *registries;
  WorkloadConfig c = IoModelConfig("raw", "pyio");
  REQUIRE(ApplyOverride(&c, "dataset.num_samples_per_file=1000").ok());
  CHECK(ValidateCapabilities(c, r).ok());
  REQUIRE(ApplyOverride(&c, "reader.pyio_call=readinto").ok());
  CHECK(ValidateCapabilities(c, r).ok());
  // npy's pyio reader reads a file whole: records are refused, naming the formats that read them.
  WorkloadConfig npy = IoModelConfig("npy", "pyio");
  REQUIRE(ApplyOverride(&npy, "dataset.num_samples_per_file=4").ok());
  Status s = ValidateCapabilities(npy, r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("dataset.num_samples_per_file must be 1, got 4") &&
                              Catch::Contains("files of records: dataset.format 'raw'"));
  // A whole-file load's keys and read1 say nothing of a record: refused by name.
  for (const std::string key :
       {"pyio_head_bytes=128", "pyio_read_size=8192", "pyio_crop_bytes=64", "pyio_end_reads=1"}) {
    WorkloadConfig bad = c;
    REQUIRE(ApplyOverride(&bad, "reader." + key).ok());
    s = ValidateCapabilities(bad, r);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains("reader." + key.substr(0, key.find('='))) &&
                                Catch::Contains("describes a whole-file load"));
  }
  REQUIRE(ApplyOverride(&c, "reader.pyio_call=read1").ok());
  CHECK_THAT(ValidateCapabilities(c, r).message(),
             Catch::Contains("reader.pyio_call read1 is for chunked loops"));
}

TEST_CASE("capabilities: reader.pyio_* apply under io_model pyio, whose files hold one sample") {
  const auto registries = Builtins();
  const Registries& r = *registries;
  WorkloadConfig c = IoModelConfig("npy", "pyio");
  REQUIRE(ApplyOverride(&c, "dataset.num_samples_per_file=1").ok());
  REQUIRE(ApplyOverride(&c, "reader.pyio_read_size=65536").ok());
  CHECK(ValidateCapabilities(c, r).ok());
  REQUIRE(ApplyOverride(&c, "dataset.num_samples_per_file=4").ok());
  Status s = ValidateCapabilities(c, r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("dataset.num_samples_per_file must be 1, got 4"));
  WorkloadConfig numpy = IoModelConfig("npy", "numpy");
  REQUIRE(ApplyOverride(&numpy, "reader.pyio_call=readinto").ok());
  s = ValidateCapabilities(numpy, r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("reader.pyio_call is read by reader.io_model pyio "
                                          "only, but dataset.format 'npy' reads with 'numpy'"));
  CHECK_FALSE(ValidateCapabilities(IoModelConfig("csv", "pyio"), r).ok());
  // A tail follows the body, read in one call or in chunks of read or readinto; after read1's
  // chunks (which do not know where the tail begins) it is refused, both keys named.
  REQUIRE(ApplyOverride(&c, "dataset.num_samples_per_file=1").ok());
  REQUIRE(ApplyOverride(&c, "reader.pyio_tail_bytes=92").ok());
  CHECK(ValidateCapabilities(c, r).ok());
  REQUIRE(ApplyOverride(&c, "reader.pyio_call=read1").ok());
  s = ValidateCapabilities(c, r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(),
             Catch::Contains("reader.pyio_tail_bytes") &&
                 Catch::Contains("needs reader.pyio_call read or readinto, got read1"));
  REQUIRE(ApplyOverride(&c, "reader.pyio_call=read").ok());
  REQUIRE(ApplyOverride(&c, "reader.pyio_read_size=0").ok());
  CHECK(ValidateCapabilities(c, r).ok());
  REQUIRE(ApplyOverride(&c, "reader.pyio_tail_read_size=64").ok());
  CHECK(ValidateCapabilities(c, r).ok());
  // The tail's calls without a tail are refused, both keys named.
  REQUIRE(ApplyOverride(&c, "reader.pyio_tail_bytes=0").ok());
  s = ValidateCapabilities(c, r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(),
             Catch::Contains("reader.pyio_tail_read_size needs reader.pyio_tail_bytes > 0") &&
                 Catch::Contains("got pyio_tail_read_size 64 and pyio_tail_bytes 0"));
  REQUIRE(ApplyOverride(&c, "reader.pyio_tail_read_size=0").ok());
  // read1 reads chunks of a size: none given is refused.
  REQUIRE(ApplyOverride(&c, "reader.pyio_call=read1").ok());
  CHECK_THAT(ValidateCapabilities(c, r).message(),
             Catch::Contains("reader.pyio_call read1 needs reader.pyio_read_size > 0"));
  REQUIRE(ApplyOverride(&c, "reader.pyio_read_size=8192").ok());
  CHECK(ValidateCapabilities(c, r).ok());
  WorkloadConfig tail_elsewhere = IoModelConfig("npy", "numpy");
  REQUIRE(ApplyOverride(&tail_elsewhere, "reader.pyio_tail_bytes=92").ok());
  CHECK_THAT(ValidateCapabilities(tail_elsewhere, r).message(),
             Catch::Contains("reader.pyio_tail_bytes is read by reader.io_model pyio only"));
  WorkloadConfig tail_calls_elsewhere = IoModelConfig("npy", "numpy");
  REQUIRE(ApplyOverride(&tail_calls_elsewhere, "reader.pyio_tail_read_size=64").ok());
  CHECK_THAT(ValidateCapabilities(tail_calls_elsewhere, r).message(),
             Catch::Contains("reader.pyio_tail_read_size is read by reader.io_model pyio only"));
}

TEST_CASE("capabilities: reader.io_model pytorch (worker processes) with any format, not MPI-IO") {
  const auto registries = Builtins();
  const Registries& r = *registries;
  CHECK(ValidateCapabilities(IoModelConfig("npz", "pytorch"), r).ok());
  CHECK(ValidateCapabilities(IoModelConfig("hdf5", "pytorch"), r).ok());
  WorkloadConfig c = IoModelConfig("npz", "pytorch");
  REQUIRE(ApplyOverride(&c, "storage.storage_type=mpiio").ok());
  const Status s = ValidateCapabilities(c, r);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("storage.storage_type 'mpiio'") &&
                              Catch::Contains("must not call MPI"));
}

TEST_CASE(
    "capabilities: reader.loader pytorch_workers with any model but not MPI-IO, threads not "
    "with io_model pytorch") {
  const auto registries = Builtins();
  const Registries& r = *registries;
  WorkloadConfig c = IoModelConfig("webdataset", "tarfile_index");
  REQUIRE(ApplyOverride(&c, "reader.loader=pytorch_workers").ok());
  CHECK(ValidateCapabilities(c, r).ok());
  REQUIRE(ApplyOverride(&c, "storage.storage_type=mpiio").ok());
  const Status mpi = ValidateCapabilities(c, r);
  CHECK(mpi.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(mpi.message(), Catch::StartsWith("reader.loader 'pytorch_workers' forks") &&
                                Catch::Contains("storage.storage_type 'mpiio'"));
  WorkloadConfig threads = IoModelConfig("npz", "pytorch");
  REQUIRE(ApplyOverride(&threads, "reader.loader=threads").ok());
  const Status both = ValidateCapabilities(threads, r);
  CHECK(both.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(both.message(), Catch::Contains("reader.loader is 'threads'"));
  CHECK(!ApplyOverride(&threads, "reader.loader=processes").ok());
}

TEST_CASE("capabilities: csv declares pandas (its default), other formats refuse it") {
  const auto registries = Builtins();
  CHECK(ValidateCapabilities(IoModelConfig("csv", "pandas"), *registries).ok());
  CHECK(ValidateCapabilities(IoModelConfig("csv", "native"), *registries).ok());
  const Status s = ValidateCapabilities(IoModelConfig("npz", "pandas"), *registries);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("csv"));
  auto csv = (*registries->formats.Get("csv"))();
  REQUIRE(csv.ok());
  CHECK(ResolveIoModel(IoModel::kAuto, (*csv)->capabilities()) == IoModel::kPandas);
}

TEST_CASE("capabilities: ResolveIoModel maps auto and pytorch to the format's default") {
  CHECK(ResolveIoModel(IoModel::kAuto, {}) == IoModel::kNative);
  CHECK(ResolveIoModel(IoModel::kPytorch, {}) == IoModel::kNative);
  const FormatCapabilities numpy = Models({IoModel::kNumpy, IoModel::kMmap});
  CHECK(ResolveIoModel(IoModel::kAuto, numpy) == IoModel::kNumpy);
  CHECK(ResolveIoModel(IoModel::kPytorch, numpy) == IoModel::kNumpy);
  CHECK(ResolveIoModel(IoModel::kMmap, numpy) == IoModel::kMmap);
  CHECK(ResolveIoModel(IoModel::kNative, numpy) == IoModel::kNative);
}

}  // namespace
}  // namespace dlio
