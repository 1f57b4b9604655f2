#include <catch2/catch.hpp>
#include <filesystem>

#include "format/format_test_util.h"
#include "format/formats.h"
#include "format/io_util.h"
#include "format/npy_options.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

using format_internal::Le32;

uint32_t FileLe32(const std::string& path, long offset) {
  const std::string b = ReadBytes(path, offset, 4);
  return Le32(reinterpret_cast<const uint8_t*>(b.data()));
}

FileSpec NpzSpec(uint64_t n, uint64_t size) {
  FileSpec spec;
  spec.seed = 99;
  spec.sample_sizes.assign(n, size);
  return spec;
}

TEST_CASE("npz with forced zip64 records round-trips", "[format][npz]") {
  auto storage = BoundMemoryStorage();
  auto npz = MakeFormatByName("npz");
  const FileSpec spec = NpzSpec(4, 5000);
  for (const std::string compression : {"none", "deflate"}) {
    FormatOptions options;
    options.compression = compression;
    const std::string path = "/z64-" + compression + ".npz";
    REQUIRE(format_internal::WriteNpz(storage.get(), path, spec, options, true).ok());
    auto r = npz->Open(storage.get(), path, options);
    REQUIRE(r.ok());
    REQUIRE((*r)->num_samples() == 4);
    REQUIRE((*r)->DescribeJson().find("\"zip64\":true") != std::string::npos);
    ExpectSamples(r->get(), spec, {2, 0, 3, 1});
  }
}

TEST_CASE("deflated npz streams without the cache, forward and backward", "[format][npz]") {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  auto npz = MakeFormatByName("npz");
  const FileSpec spec = NpzSpec(6, 100000);
  FormatOptions options;
  options.io_model = IoModel::kNative;  // native's inflate stream
  options.compression = "zlib";
  options.compression_level = 1;
  options.transfer_size = 65536;
  options.formats.Get<NpyOptions>().inflate_cache_bytes = 0;  // force the streaming path
  REQUIRE(npz->Write(storage.get(), "/s.npz", spec, options).ok());
  auto r = npz->Open(storage.get(), "/s.npz", options);
  REQUIRE(r.ok());
  ExpectSamples(r->get(), spec, {0, 1, 2, 5, 3, 4, 0});
  // Compressed input is read in transfer_size requests (the last one of a pass may be shorter).
  for (const TraceEvent& e : tracer.Events()) {
    if (std::string(e.name) == "pread" && e.count > 1000) REQUIRE(e.count <= 65536);
  }
  const std::string json = (*r)->DescribeJson();
  REQUIRE(json.find("\"compression\":\"deflate\"") != std::string::npos);
  REQUIRE(json.find("\"name\":\"y.npy\"") != std::string::npos);
}

TEST_CASE("deflated npz with the cache inflates the member once", "[format][npz]") {
  auto storage = BoundMemoryStorage();
  auto npz = MakeFormatByName("npz");
  const FileSpec spec = NpzSpec(5, 20000);
  FormatOptions options;
  options.io_model = IoModel::kNative;  // native's inflate cache
  options.compression = "gzip";
  options.transfer_size = 4096;
  REQUIRE(npz->Write(storage.get(), "/c.npz", spec, options).ok());
  auto r = npz->Open(storage.get(), "/c.npz", options);
  REQUIRE(r.ok());
  SampleBuffer buf;
  REQUIRE((*r)->ReadSample(4, &buf).ok());
  const IoStats after_first = storage->stats();
  ExpectSamples(r->get(), spec, {0, 1, 2, 3, 4});
  REQUIRE(storage->stats().read_ops == after_first.read_ops);  // served from the cache
}

TEST_CASE("npz rejects unknown compression names", "[format][npz]") {
  auto storage = BoundMemoryStorage();
  FormatOptions options;
  options.compression = "lz4";
  Status st = MakeFormatByName("npz")->Write(storage.get(), "/x.npz", NpzSpec(1, 10), options);
  REQUIRE(st.code() == StatusCode::kInvalidArgument);
  REQUIRE(st.message().find("compression") != std::string::npos);
}

// Where x.npy's bytes start in dlio's npz: its local header (30), name (5) and np.savez's zip64
// extra field (20).
constexpr long kXData = 30 + 5 + 20;

TEST_CASE("corrupt npz files are Corruption naming path and offset", "[format][npz]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto npz = MakeFormatByName("npz");
  const FileSpec spec = NpzSpec(3, 3000);
  FormatOptions options;
  options.compression = "deflate";
  const std::string path = tmp / "a.npz";
  REQUIRE(npz->Write(storage.get(), path, spec, options).ok());
  const uint64_t size = std::filesystem::file_size(path);
  const uint32_t cd_offset = FileLe32(path, -6);

  SECTION("truncated: no end record") {
    std::filesystem::resize_file(path, size - 10);
    auto r = npz->Open(storage.get(), path, options);
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    REQUIRE(r.status().message().find(path) != std::string::npos);
    REQUIRE(r.status().message().find("end-of-central-directory") != std::string::npos);
  }
  SECTION("tiny file") {
    std::filesystem::resize_file(path, 5);
    auto r = npz->Open(storage.get(), path, options);
    REQUIRE(r.status().code() == StatusCode::kCorruption);
  }
  SECTION("central directory out of range") {
    PatchBytes(path, -6, std::string("\xff\xff\xff\x7f", 4));
    auto r = npz->Open(storage.get(), path, options);
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    REQUIRE(r.status().message().find("out of range") != std::string::npos);
    REQUIRE(r.status().message().find("2147483647") != std::string::npos);
  }
  SECTION("bad central directory signature") {
    PatchBytes(path, cd_offset, "XX");
    auto r = npz->Open(storage.get(), path, options);
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    REQUIRE(r.status().message().find("offset " + std::to_string(cd_offset)) != std::string::npos);
  }
  SECTION("bad local header signature") {
    PatchBytes(path, 0, "XX");
    auto r = npz->Open(storage.get(), path, options);
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    REQUIRE(r.status().message().find("offset 0") != std::string::npos);
  }
  SECTION("CRC mismatch") {
    PatchBytes(path, cd_offset + 16, "\x01\x02\x03\x04");
    // Under numpy the open is the first np.load, which checks the CRC (zipfile's BadZipFile).
    auto loaded = npz->Open(storage.get(), path, options);
    REQUIRE(loaded.status().code() == StatusCode::kCorruption);
    CHECK(loaded.status().message().find("x.npy") != std::string::npos);
    options.io_model = IoModel::kNative;
    auto r = npz->Open(storage.get(), path, options);
    REQUIRE(r.ok());  // the CRC covers the whole member: checked when it has all been inflated
    SampleBuffer buf;
    Status st = (*r)->ReadSample(0, &buf);
    REQUIRE(st.code() == StatusCode::kCorruption);
    REQUIRE(st.message().find("CRC mismatch") != std::string::npos);
    REQUIRE(st.message().find("x.npy") != std::string::npos);
    REQUIRE(st.message().find("offset " + std::to_string(kXData)) != std::string::npos);
    FormatOptions no_verify = options;
    no_verify.verify = false;
    auto unchecked = npz->Open(storage.get(), path, no_verify);
    REQUIRE(unchecked.ok());
    REQUIRE((*unchecked)->ReadSample(0, &buf).ok());
  }
  SECTION("damaged deflate data") {
    PatchBytes(path, kXData + 200, std::string(64, '\xff'));
    auto r = npz->Open(storage.get(), path, options);
    Status st = r.ok() ? [&] {
      SampleBuffer buf;
      return (*r)->ReadSample(2, &buf);
    }()
                       : r.status();
    REQUIRE(st.code() == StatusCode::kCorruption);
    REQUIRE(st.message().find(path) != std::string::npos);
  }
}

TEST_CASE("stored npz member size disagreeing with its npy shape is Corruption", "[format][npz]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto npz = MakeFormatByName("npz");
  const std::string path = tmp / "b.npz";
  REQUIRE(npz->Write(storage.get(), path, NpzSpec(3, 100), {}).ok());
  // Claim 4 samples in x.npy's header: 400 bytes of data, but the member holds 300.
  const std::string head = ReadBytes(path, kXData, 128);
  const size_t at = head.find("(3, 100)");
  REQUIRE(at != std::string::npos);
  PatchBytes(path, kXData + static_cast<long>(at) + 1, "4");
  auto r = npz->Open(storage.get(), path, {});
  REQUIRE(r.status().code() == StatusCode::kCorruption);
  REQUIRE(r.status().message().find("x.npy") != std::string::npos);
  REQUIRE(r.status().message().find("400") != std::string::npos);
}

TEST_CASE("a deflated member claiming more than deflate can expand to is Corruption",
          "[format][npz]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto npz = MakeFormatByName("npz");
  FormatOptions options;
  options.compression = "deflate";
  const std::string path = tmp / "bomb.npz";
  REQUIRE(npz->Write(storage.get(), path, NpzSpec(2, 1000), options).ok());
  const uint32_t cd_offset = FileLe32(path, -6);
  // x.npy's uncompressed size in the central directory: ~4 GiB from ~2 KB of deflate data. The
  // header's shape could then claim ~4 GiB of 1-byte samples for the sampler to plan.
  PatchBytes(path, cd_offset + 24, std::string("\xf0\xff\xff\xff", 4));
  auto r = npz->Open(storage.get(), path, options);
  REQUIRE(r.status().code() == StatusCode::kCorruption);
  CHECK(r.status().message().find("x.npy") != std::string::npos);
  CHECK(r.status().message().find("4294967280 uncompressed bytes") != std::string::npos);
  CHECK(r.status().message().find("1032:1") != std::string::npos);
}

TEST_CASE("unreadable npz labels are a problem for inspect, not an error", "[format][npz]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto npz = MakeFormatByName("npz");
  const std::string path = tmp / "y.npz";
  const FileSpec spec = NpzSpec(3, 100);
  REQUIRE(npz->Write(storage.get(), path, spec, {}).ok());
  const std::string bytes = ReadTextFile(path);
  const size_t y_local = bytes.find("PK\x03\x04", 4);  // the second member's local header
  REQUIRE(y_local != std::string::npos);
  PatchBytes(path, static_cast<long>(y_local), "XX");
  auto r = npz->Open(storage.get(), path, {});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  const std::string json = (*r)->DescribeJson();
  CHECK(json.find("\"problems\":[\"labels (y.npy) unreadable: Corruption: " + path) !=
        std::string::npos);
  CHECK(json.find("\"layout_basis\":\"sample_layout\"") != std::string::npos);
  ExpectSamples(r->get(), spec, {2, 0, 1});
}

TEST_CASE("zip64 offsets near 2^64 are Corruption, not wrapped-around reads", "[format][npz]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto npz = MakeFormatByName("npz");
  const std::string path = tmp / "z.npz";
  REQUIRE(format_internal::WriteNpz(storage.get(), path, NpzSpec(2, 100), {}, true).ok());
  const std::string bytes = ReadTextFile(path);
  const std::string huge("\xf0\xff\xff\xff\xff\xff\xff\xff", 8);
  SECTION("the zip64 end locator's record offset") {
    const size_t locator = bytes.find("PK\x06\x07");
    REQUIRE(locator != std::string::npos);
    PatchBytes(path, static_cast<long>(locator + 8), huge);
    // np.load ignores a zip64 locator that points nowhere (zipfile's _EndRecData64): native's
    // check.
    FormatOptions native;
    native.io_model = IoModel::kNative;
    auto r = npz->Open(storage.get(), path, native);
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK(r.status().message().find("zip64 end record offset 18446744073709551600 out of range") !=
          std::string::npos);
  }
  SECTION("a member's local header offset in its zip64 extra") {
    const size_t entry = bytes.find("PK\x01\x02");  // x.npy's central directory entry
    REQUIRE(entry != std::string::npos);
    PatchBytes(path, static_cast<long>(entry + 46 + 5 + 4 + 16), huge);
    auto r = npz->Open(storage.get(), path, {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK(r.status().message().find("lies past the central directory") != std::string::npos);
  }
}

}  // namespace
}  // namespace dlio::testing
