// mmap_indexed_binary and the mmap model of indexed_binary: indexed_binary's layout read through
// File::Map (docs/io_models.md "mmap"), and what happens where that is impossible.
#include <catch2/catch.hpp>
#include <filesystem>

#include "format/format_test_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

std::string Le64Bytes(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

// Names of the calls a MemoryTracer saw on files, in order.
std::vector<std::string> CallNames(const MemoryTracer& tracer) {
  std::vector<std::string> names;
  for (const TraceEvent& e : tracer.Events()) {
    if (e.file_id >= 0) names.push_back(e.name);
  }
  return names;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST_CASE("mmap_indexed_binary writes indexed_binary's three files and reads them mapped",
          "[format][mmap]") {
  TempDir tmp;
  MemoryTracer tracer;
  auto storage = BoundPosixStorage(&tracer);
  auto fmt = MakeFormatByName("mmap_indexed_binary");
  REQUIRE(fmt != nullptr);
  CHECK(fmt->extension() == "mmap_indexed_binary");
  REQUIRE(fmt->capabilities().io_models == std::vector<IoModel>{IoModel::kMmap});
  FileSpec spec;
  spec.seed = 7;
  spec.sample_sizes = {5, 0, 70001, 11, 4096};
  const std::string path = tmp / "img_1_of_1.mmap_indexed_binary";
  REQUIRE(fmt->Write(storage.get(), path, spec, {}).ok());
  // The same bytes indexed_binary writes (DLIO writes both formats with one generator).
  const std::string other = tmp / "img_1_of_1.indexed_binary";
  REQUIRE(MakeFormatByName("indexed_binary")->Write(storage.get(), other, spec, {}).ok());
  for (const char* suffix : {"", ".off.idx", ".sz.idx"}) {
    CHECK(ReadTextFile(path + suffix) == ReadTextFile(other + suffix));
  }
  REQUIRE(ReadTextFile(path + ".sz.idx") ==
          Le64Bytes(5) + Le64Bytes(0) + Le64Bytes(70001) + Le64Bytes(11) + Le64Bytes(4096));

  for (IoModel model : {IoModel::kAuto, IoModel::kMmap, IoModel::kNative}) {
    INFO("io_model " << EnumName(model));
    MemoryTracer t;
    auto s = BoundPosixStorage(&t);
    FormatOptions options;
    options.io_model = model;
    {
      auto r = fmt->Open(s.get(), path, options);
      REQUIRE(r.ok());
      REQUIRE((*r)->num_samples() == 5);
      ExpectSamples(r->get(), spec, {4, 2, 0, 1, 3, 2});
      CHECK_THAT((*r)->DescribeJson(), Catch::Contains("\"format\":\"mmap_indexed_binary\""));
    }
    const auto calls = CallNames(t);
    // native preads; the mmap model maps the three files and reads none.
    CHECK(Has(calls, "pread") == (model == IoModel::kNative));
    CHECK(Has(calls, "mmap") == (model != IoModel::kNative));
    CHECK(Has(calls, "munmap") == (model != IoModel::kNative));
    CHECK(Has(calls, "mmap.touched") == (model != IoModel::kNative));
  }
  auto detected = DetectBuiltinFormat(storage.get(), path);
  REQUIRE(detected.ok());
  CHECK(*detected == "mmap_indexed_binary");
}

TEST_CASE("indexed_binary reads natively by default and mapped on request", "[format][mmap]") {
  TempDir tmp;
  auto fmt = MakeFormatByName("indexed_binary");
  REQUIRE(fmt->capabilities().io_models ==
          (std::vector<IoModel>{IoModel::kNative, IoModel::kMmap}));
  CHECK(ResolveIoModel(IoModel::kAuto, fmt->capabilities()) == IoModel::kNative);
  FileSpec spec;
  spec.sample_sizes = {100, 3000, 17};
  const std::string path = tmp / "d.indexed_binary";
  {
    auto s = BoundPosixStorage();
    REQUIRE(fmt->Write(s.get(), path, spec, {}).ok());
  }
  for (IoModel model : {IoModel::kAuto, IoModel::kMmap}) {
    MemoryTracer t;
    auto s = BoundPosixStorage(&t);
    FormatOptions options;
    options.io_model = model;
    {
      auto r = fmt->Open(s.get(), path, options);
      REQUIRE(r.ok());
      ExpectSamples(r->get(), spec, {2, 0, 1});
    }
    CHECK(Has(CallNames(t), "mmap") == (model == IoModel::kMmap));
    CHECK(Has(CallNames(t), "pread") == (model != IoModel::kMmap));
  }
}

TEST_CASE("the mmap model's touched ranges cover the samples read", "[format][mmap]") {
  TempDir tmp;
  auto fmt = MakeFormatByName("mmap_indexed_binary");
  FileSpec spec;
  spec.sample_sizes = std::vector<uint64_t>(64, 20000);  // 1.28 MB
  const std::string path = tmp / "d.mmap_indexed_binary";
  {
    auto s = BoundPosixStorage();
    REQUIRE(fmt->Write(s.get(), path, spec, {}).ok());
  }
  MemoryTracer t;
  auto s = BoundPosixStorage(&t);
  {
    auto r = fmt->Open(s.get(), path, {});
    REQUIRE(r.ok());
    ExpectSamples(r->get(), spec, {3, 40});
  }
  std::vector<std::pair<int64_t, int64_t>> touched;  // of the data file
  for (const TraceEvent& e : t.Events()) {
    if (std::string(e.name) == "mmap.touched" && t.FileName(e.file_id) == path) {
      touched.emplace_back(e.offset, e.offset + e.count);
    }
  }
  auto covered = [&](int64_t at) {
    for (const auto& [b, e] : touched) {
      if (b <= at && at < e) return true;
    }
    return false;
  };
  REQUIRE(!touched.empty());
  for (int64_t sample : {3, 40}) {
    for (int64_t at = sample * 20000; at < (sample + 1) * 20000; at += 512) CHECK(covered(at));
  }
  // Nothing is touched far from what was read (fault-around maps at most a 2 MiB block).
  CHECK_FALSE(covered(1279999));
}

TEST_CASE("mmap_indexed_binary errors name the file", "[format][mmap]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto fmt = MakeFormatByName("mmap_indexed_binary");
  const std::string path = tmp / "d.mmap_indexed_binary";
  WriteTextFile(path, "abcdefghij");
  FormatOptions mmap;
  mmap.io_model = IoModel::kMmap;

  SECTION("truncated offset index") {
    WriteTextFile(path + ".off.idx", Le64Bytes(0) + "abc");
    WriteTextFile(path + ".sz.idx", Le64Bytes(4));
    auto r = fmt->Open(storage.get(), path, mmap);
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK_THAT(r.status().message(), Catch::Contains(path + ".off.idx"));
    CHECK_THAT(r.status().message(), Catch::Contains("not a multiple of 8"));
  }
  SECTION("data file shorter than the index says") {
    WriteTextFile(path + ".off.idx", Le64Bytes(0) + Le64Bytes(6));
    WriteTextFile(path + ".sz.idx", Le64Bytes(6) + Le64Bytes(5));
    auto r = fmt->Open(storage.get(), path, mmap);
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK_THAT(r.status().message(), Catch::Contains(path + ".off.idx entry 1"));
    CHECK_THAT(r.status().message(), Catch::Contains("ends past " + path + " (10 bytes)"));
  }
  SECTION("indexes of different lengths") {
    WriteTextFile(path + ".off.idx", Le64Bytes(0) + Le64Bytes(6));
    WriteTextFile(path + ".sz.idx", Le64Bytes(6));
    auto r = fmt->Open(storage.get(), path, mmap);
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK_THAT(r.status().message(), Catch::Contains(path + ".sz.idx has 1"));
  }
  SECTION("a missing index") {
    WriteTextFile(path + ".off.idx", Le64Bytes(0));
    auto r = fmt->Open(storage.get(), path, mmap);
    REQUIRE(!r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains(path + ".sz.idx"));
  }
}

TEST_CASE("storages that cannot map refuse the mmap model, naming themselves", "[format][mmap]") {
  auto storage = BoundMemoryStorage();
  CHECK_FALSE(storage->capabilities().map_files);
  CHECK(NewPosixStorage({})->capabilities().map_files);
  auto fmt = MakeFormatByName("mmap_indexed_binary");
  FileSpec spec;
  spec.sample_sizes = {10, 20};
  REQUIRE(fmt->Write(storage.get(), "/d.mmap_indexed_binary", spec, {}).ok());
  FormatOptions mmap;
  mmap.io_model = IoModel::kMmap;
  auto refused = fmt->Open(storage.get(), "/d.mmap_indexed_binary", mmap);
  REQUIRE(refused.status().code() == StatusCode::kUnimplemented);
  CHECK_THAT(refused.status().message(), Catch::Contains("the memory storage cannot map files"));
  CHECK_THAT(refused.status().message(), Catch::Contains("/d.mmap_indexed_binary"));
  // auto reads natively there (documented): the format's default where the storage allows it.
  auto native = fmt->Open(storage.get(), "/d.mmap_indexed_binary", {});
  REQUIRE(native.ok());
  ExpectSamples(native->get(), spec, {1, 0});
}

}  // namespace
}  // namespace dlio::testing
