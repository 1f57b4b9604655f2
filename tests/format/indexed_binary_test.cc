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

TEST_CASE("indexed_binary writes DLIO's three files", "[format][indexed_binary]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto fmt = MakeFormatByName("indexed_binary");
  FileSpec spec;
  spec.sample_sizes = {5, 0, 11};
  const std::string path = tmp / "img_1_of_1.indexed_binary";
  REQUIRE(fmt->Write(storage.get(), path, spec, {}).ok());
  REQUIRE(ReadTextFile(path).size() == 16);
  REQUIRE(ReadTextFile(path + ".off.idx") == Le64Bytes(0) + Le64Bytes(5) + Le64Bytes(5));
  REQUIRE(ReadTextFile(path + ".sz.idx") == Le64Bytes(5) + Le64Bytes(0) + Le64Bytes(11));
  // The indexes are its companions: removed with it, found by inspect.
  for (const char* name : {"indexed_binary", "mmap_indexed_binary"}) {
    CHECK(MakeFormatByName(name)->CompanionFiles(path, {}) ==
          std::vector<std::string>{path + ".off.idx", path + ".sz.idx"});
  }
}

TEST_CASE("indexed_binary reads out-of-order index entries", "[format][indexed_binary]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto fmt = MakeFormatByName("indexed_binary");
  const std::string path = tmp / "d.indexed_binary";
  WriteTextFile(path, "abcdefghij");
  WriteTextFile(path + ".off.idx", Le64Bytes(6) + Le64Bytes(0) + Le64Bytes(2));
  WriteTextFile(path + ".sz.idx", Le64Bytes(4) + Le64Bytes(3) + Le64Bytes(5));
  auto r = fmt->Open(storage.get(), path, {});
  REQUIRE(r.ok());
  SampleBuffer buf;
  REQUIRE((*r)->ReadSample(0, &buf).ok());
  REQUIRE(BufferString(buf) == "ghij");
  REQUIRE((*r)->ReadSample(1, &buf).ok());
  REQUIRE(BufferString(buf) == "abc");
  REQUIRE((*r)->ReadSample(2, &buf).ok());
  REQUIRE(BufferString(buf) == "cdefg");  // overlapping entries are allowed
}

TEST_CASE("bad indexed_binary indexes are Corruption naming the index and entry",
          "[format][indexed_binary]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto fmt = MakeFormatByName("indexed_binary");
  FileSpec spec;
  spec.sample_sizes = {100, 200, 300};
  const std::string path = tmp / "d.indexed_binary";
  REQUIRE(fmt->Write(storage.get(), path, spec, {}).ok());

  SECTION("entry past the data file") {
    PatchBytes(path + ".off.idx", 16, Le64Bytes(400));
    auto r = fmt->Open(storage.get(), path, {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    REQUIRE(r.status().message().find(path + ".off.idx entry 2") != std::string::npos);
    REQUIRE(r.status().message().find("offset 400") != std::string::npos);
  }
  SECTION("truncated size index") {
    std::filesystem::resize_file(path + ".sz.idx", 20);
    auto r = fmt->Open(storage.get(), path, {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    REQUIRE(r.status().message().find(".sz.idx") != std::string::npos);
    REQUIRE(r.status().message().find("offset 16") != std::string::npos);
  }
  SECTION("entry counts differ") {
    std::filesystem::resize_file(path + ".sz.idx", 16);
    auto r = fmt->Open(storage.get(), path, {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
  }
  SECTION("truncated data file") {
    std::filesystem::resize_file(path, 599);
    auto r = fmt->Open(storage.get(), path, {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    REQUIRE(r.status().message().find("entry 2") != std::string::npos);
  }
  SECTION("missing index") {
    std::filesystem::remove(path + ".off.idx");
    auto r = fmt->Open(storage.get(), path, {});
    REQUIRE(!r.ok());
    REQUIRE(r.status().message().find(".off.idx") != std::string::npos);
  }
  SECTION("refuses to overwrite an existing index") {
    std::filesystem::remove(path);
    Status st = fmt->Write(storage.get(), path, spec, {});
    REQUIRE(st.code() == StatusCode::kAlreadyExists);
    REQUIRE(!std::filesystem::exists(path));  // nothing half-created
  }
}

}  // namespace
}  // namespace dlio::testing
