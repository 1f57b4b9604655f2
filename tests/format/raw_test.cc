// raw: flat files of sample bytes (docs/formats.md "raw"): the bytes and requests each reader
// makes, files no writer of ours made, and the errors.
#include <catch2/catch.hpp>

#include "format/format_test_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

struct Request {
  std::string name;
  int64_t offset, count;
  bool operator==(const Request& o) const {
    return name == o.name && offset == o.offset && count == o.count;
  }
};

// The reads and mappings a MemoryTracer saw on files, in order.
std::vector<Request> Requests(const MemoryTracer& tracer) {
  std::vector<Request> out;
  for (const TraceEvent& e : tracer.Events()) {
    const std::string name = e.name;
    if (e.file_id >= 0 && (name == "pread" || name == "read" || name == "mmap")) {
      out.push_back({name, e.offset, e.count});
    }
  }
  return out;
}

FormatOptions Samples(uint64_t n, IoModel model = IoModel::kAuto) {
  FormatOptions o;
  o.samples_per_file = n;
  o.io_model = model;
  o.transfer_size = 300;
  return o;
}

TEST_CASE("raw writes the samples' bytes and nothing else, and reads each at i x size",
          "[format][raw]") {
  TempDir tmp;
  auto fmt = MakeFormatByName("raw");
  REQUIRE(fmt != nullptr);
  CHECK(fmt->extension() == "raw");
  FileSpec spec;
  spec.seed = 3;
  spec.sample_sizes = {1000, 1000, 1000};
  const std::string path = tmp / "img_0_of_1.raw";
  auto storage = BoundPosixStorage();
  REQUIRE(fmt->Write(storage.get(), path, spec, {}).ok());
  CHECK(ReadTextFile(path) ==
        ExpectedSample(spec, 0) + ExpectedSample(spec, 1) + ExpectedSample(spec, 2));

  MemoryTracer tracer;
  auto traced = BoundPosixStorage(&tracer);
  {
    auto r = fmt->Open(traced.get(), path, Samples(3));
    REQUIRE(r.ok());
    REQUIRE((*r)->num_samples() == 3);
    CHECK((*r)->sample_size(2) == 1000);
    ExpectSamples(r->get(), spec, {2});
    CHECK_THAT((*r)->DescribeJson(), Catch::Contains("\"num_samples\":3"));
  }
  // Sample 2 is [2000, 3000) in transfer_size requests; nothing else is read (no header).
  CHECK(Requests(tracer) == std::vector<Request>{{"pread", 2000, 300},
                                                 {"pread", 2300, 300},
                                                 {"pread", 2600, 300},
                                                 {"pread", 2900, 100}});
}

TEST_CASE("raw reads files no writer of ours made: the whole file is one sample by default",
          "[format][raw]") {
  TempDir tmp;
  const std::string path = tmp / "shard-00000.bin";
  std::string bytes(5000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + 1);
  WriteTextFile(path, bytes);
  auto fmt = MakeFormatByName("raw");
  auto storage = BoundPosixStorage();
  auto detected = DetectBuiltinFormat(storage.get(), path);
  REQUIRE(detected.ok());
  CHECK(*detected == "raw");
  for (IoModel model : {IoModel::kNative, IoModel::kPyio, IoModel::kMmap}) {
    INFO("io_model " << EnumName(model));
    MemoryTracer tracer;
    auto traced = BoundPosixStorage(&tracer);
    auto r = fmt->Open(traced.get(), path, Samples(0, model));
    REQUIRE(r.ok());
    REQUIRE((*r)->num_samples() == 1);
    SampleBuffer buf;
    REQUIRE((*r)->ReadSample(0, &buf).ok());
    CHECK(BufferString(buf) == bytes);
    const std::vector<Request> requests = Requests(tracer);
    REQUIRE_FALSE(requests.empty());
    // native: 300-byte requests; mmap: a mapping and no read; pyio: Python's f.read().
    CHECK((requests.front().name == "mmap") == (model == IoModel::kMmap));
    if (model == IoModel::kNative) CHECK(requests.size() == 17);
  }
  // Two samples of 2500 bytes: the second is the file's second half.
  auto halves = fmt->Open(storage.get(), path, Samples(2));
  REQUIRE(halves.ok());
  SampleBuffer buf;
  REQUIRE((*halves)->ReadSample(1, &buf).ok());
  CHECK(BufferString(buf) == bytes.substr(2500));
}

TEST_CASE("raw refuses files its samples do not tile, under every model", "[format][raw]") {
  TempDir tmp;
  const std::string path = tmp / "odd.dat";
  WriteTextFile(path, std::string(1001, 'x'));
  auto fmt = MakeFormatByName("raw");
  auto storage = BoundPosixStorage();
  // pyio reads several samples as records (f.seek and one call each): the same check.
  for (IoModel model : {IoModel::kNative, IoModel::kMmap, IoModel::kPyio}) {
    auto r = fmt->Open(storage.get(), path, Samples(4, model));
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK_THAT(r.status().message(), Catch::Contains(path));
    CHECK_THAT(r.status().message(), Catch::Contains("1 bytes left over at offset 1000"));
    CHECK_THAT(r.status().message(), Catch::Contains("dataset.num_samples_per_file"));
  }
  // A writer asked for samples of different sizes cannot place them without an index.
  FileSpec uneven;
  uneven.sample_sizes = {10, 11};
  Status st = fmt->Write(storage.get(), tmp / "uneven.raw", uneven, {});
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK_FALSE(storage->Exists(tmp / "uneven.raw").value());
}

}  // namespace
}  // namespace dlio::testing
