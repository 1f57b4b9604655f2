#include <catch2/catch.hpp>
#include <filesystem>
#include <utility>
#include <vector>

#include "format/format_test_util.h"
#include "format/io_util.h"
#include "format/npy_header.h"
#include "storage/file_events.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

using format_internal::BuildNpyHeader;
using format_internal::NpyHeader;
using format_internal::ParseNpyHeader;

// A version-1 header around `dict`, padded like numpy's.
std::string V1Header(const std::string& dict) {
  std::string body = dict;
  size_t total = 10 + body.size() + 1;
  body.append((total + 63) / 64 * 64 - total, ' ');
  body.push_back('\n');
  std::string h("\x93NUMPY\x01\x00", 8);
  h.push_back(static_cast<char>(body.size() & 0xff));
  h.push_back(static_cast<char>(body.size() >> 8));
  return h + body;
}

Result<NpyHeader> Parse(const std::string& h) {
  return ParseNpyHeader(reinterpret_cast<const uint8_t*>(h.data()), h.size(), "t.npy", 0);
}

TEST_CASE("npy header dicts of many dtypes parse", "[format][npy]") {
  struct Case {
    std::string descr;
    uint64_t itemsize;
  };
  for (const Case& c :
       {Case{"'<f4'", 4}, Case{"'|u1'", 1}, Case{"'<i8'", 8}, Case{"'>f8'", 8}, Case{"'|b1'", 1},
        Case{"'<c16'", 16}, Case{"'<U5'", 20}, Case{"'|S7'", 7}, Case{"'<M8[ns]'", 8},
        Case{"\"<f2\"", 2}, Case{"[('a', '<f4'), ('b', '<i8', (2,))]", 20}}) {
    INFO(c.descr);
    const std::string bytes =
        V1Header("{'descr': " + c.descr + ", 'fortran_order': False, 'shape': (6, 5, 4), }");
    auto h = Parse(bytes);
    REQUIRE(h.ok());
    REQUIRE(h->itemsize == c.itemsize);
    REQUIRE(h->num_samples() == 6);
    REQUIRE(h->sample_size() == 20 * c.itemsize);
    REQUIRE(h->data_bytes == 120 * c.itemsize);
    REQUIRE(h->data_offset == bytes.size());
    REQUIRE(h->data_offset % 64 == 0);
  }
}

TEST_CASE("npy 0-d and Fortran-order arrays are one sample", "[format][npy]") {
  auto scalar = Parse(V1Header("{'descr': '<f8', 'fortran_order': False, 'shape': (), }"));
  REQUIRE(scalar.ok());
  REQUIRE(scalar->num_samples() == 1);
  REQUIRE(scalar->sample_size() == 8);
  auto fortran = Parse(V1Header("{'shape': (3, 4), 'fortran_order': True, 'descr': '<i2'}"));
  REQUIRE(fortran.ok());
  REQUIRE(fortran->num_samples() == 1);
  REQUIRE(fortran->sample_size() == 24);
  auto one_d = Parse(V1Header("{'descr': '<i2', 'fortran_order': False, 'shape': (9,), }"));
  REQUIRE(one_d.ok());
  REQUIRE(one_d->num_samples() == 9);
  REQUIRE(one_d->sample_size() == 2);
}

TEST_CASE("npy version 2 and 3 headers parse", "[format][npy]") {
  for (char major : {'\x02', '\x03'}) {
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    std::string body = dict;
    size_t total = 12 + body.size() + 1;
    body.append((total + 63) / 64 * 64 - total, ' ');
    body.push_back('\n');
    std::string h("\x93NUMPY", 6);
    h.push_back(major);
    h.push_back('\0');
    h.push_back(static_cast<char>(body.size()));
    h.append(3, '\0');
    h += body;
    auto parsed = Parse(h);
    REQUIRE(parsed.ok());
    REQUIRE(parsed->major == major);
    REQUIRE(parsed->data_offset == h.size());
    REQUIRE(parsed->sample_size() == 12);
  }
}

TEST_CASE("bad npy headers are Corruption naming file and offset", "[format][npy]") {
  auto garbage = Parse(V1Header("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}"));
  REQUIRE(garbage.status().code() == StatusCode::kCorruption);
  REQUIRE(garbage.status().message().find("t.npy") != std::string::npos);
  REQUIRE(garbage.status().message().find("offset 10") != std::string::npos);
  REQUIRE(garbage.status().message().find("unparseable") != std::string::npos);

  auto missing = Parse(V1Header("{'descr': '<f4', 'shape': (2,)}"));
  REQUIRE(missing.status().code() == StatusCode::kCorruption);

  auto bad_dtype = Parse(V1Header("{'descr': '<q9', 'fortran_order': False, 'shape': (2,)}"));
  REQUIRE(bad_dtype.status().code() == StatusCode::kCorruption);
  auto object = Parse(V1Header("{'descr': '|O', 'fortran_order': False, 'shape': (2,)}"));
  REQUIRE(object.status().code() == StatusCode::kUnimplemented);

  std::string magic = V1Header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}");
  magic[1] = 'X';
  auto bad_magic = Parse(magic);
  REQUIRE(bad_magic.status().code() == StatusCode::kCorruption);
  REQUIRE(bad_magic.status().message().find("magic") != std::string::npos);

  auto truncated = Parse(std::string("\x93NUMPY\x01\x00\x40\x00{'de", 14));
  REQUIRE(truncated.status().code() == StatusCode::kCorruption);
  REQUIRE(truncated.status().message().find("truncated") != std::string::npos);
}

TEST_CASE("BuildNpyHeader pads the data to a multiple of 64", "[format][npy]") {
  for (uint64_t n : {0ull, 1ull, 12345678901ull}) {
    const std::string h = BuildNpyHeader("|u1", {n, 77});
    REQUIRE(h.size() % 64 == 0);
    REQUIRE(h.back() == '\n');
    auto parsed = Parse(h);
    REQUIRE(parsed.ok());
    REQUIRE(parsed->shape == std::vector<uint64_t>{n, 77});
  }
  const std::string one = BuildNpyHeader("<i8", {5});
  REQUIRE(one.find("'shape': (5,)") != std::string::npos);
}

TEST_CASE("corrupt npy files are rejected at open with path and offset", "[format][npy]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto npy = MakeFormatByName("npy");
  FileSpec spec;
  spec.sample_sizes = {1000, 1000, 1000};
  const std::string path = tmp / "a.npy";
  REQUIRE(npy->Write(storage.get(), path, spec, {}).ok());
  const std::string good = ReadTextFile(path);
  REQUIRE(good.size() == 128 + 3000);

  SECTION("truncated data") {
    std::filesystem::resize_file(path, good.size() - 10);
    auto r = npy->Open(storage.get(), path, {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    REQUIRE(r.status().message().find(path) != std::string::npos);
    REQUIRE(r.status().message().find("offset 128") != std::string::npos);
    REQUIRE(r.status().message().find("2990") != std::string::npos);
  }
  SECTION("truncated header") {
    std::filesystem::resize_file(path, 60);
    auto r = npy->Open(storage.get(), path, {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    REQUIRE(r.status().message().find("truncated") != std::string::npos);
  }
  SECTION("bad magic") {
    PatchBytes(path, 0, "XX");
    auto r = npy->Open(storage.get(), path, {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    REQUIRE(r.status().message().find("magic at offset 0") != std::string::npos);
  }
  SECTION("unparseable dict") {
    PatchBytes(path, 10, "[");
    auto r = npy->Open(storage.get(), path, {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    REQUIRE(r.status().message().find("unparseable") != std::string::npos);
  }
  SECTION("empty file") {
    std::filesystem::resize_file(path, 0);
    auto r = npy->Open(storage.get(), path, {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
  }
}

TEST_CASE("deeply nested npy headers are Corruption, not a stack overflow", "[format][npy]") {
  // 100,000 nested '(' crashed the recursive parser (inspect and training).
  const std::string deep =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(100000, '(') +
      std::string(100000, ')') + "}";
  std::string body = deep;
  size_t total = 12 + body.size() + 1;
  body.append((total + 63) / 64 * 64 - total, ' ');
  body.push_back('\n');
  std::string h("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>((body.size() >> (8 * i)) & 0xff));
  h += body;
  auto parsed = Parse(h);
  REQUIRE(parsed.status().code() == StatusCode::kCorruption);
  CHECK(parsed.status().message().find("t.npy") != std::string::npos);
  CHECK(parsed.status().message().find("offset 12") != std::string::npos);  // the dict's
  CHECK(parsed.status().message().find("nesting deeper than 64") != std::string::npos);
  CHECK(parsed.status().message().find("header byte 113") != std::string::npos);

  // Through a file, as inspect and training open it.
  auto storage = BoundMemoryStorage();
  {
    auto f = storage->Open("/deep.npy", OpenMode::kCreateNew);
    REQUIRE(f.ok());
    REQUIRE((*f)->WriteAt(0, h.data(), h.size()).ok());
  }
  auto r = MakeFormatByName("npy")->Open(storage.get(), "/deep.npy", {});
  REQUIRE(r.status().code() == StatusCode::kCorruption);
  CHECK(r.status().message().find("/deep.npy") != std::string::npos);

  // Nesting within the bound still parses (a structured dtype inside lists and tuples).
  auto nested =
      Parse(V1Header("{'descr': [('a', [('b', [('c', '<i2', (2, 3))])])], 'fortran_order': False, "
                     "'shape': (4,), }"));
  REQUIRE(nested.ok());
  CHECK(nested->itemsize == 12);
}

TEST_CASE("npy header lengths and shapes are checked against bounds and stored bytes",
          "[format][npy]") {
  auto storage = BoundMemoryStorage();
  auto npy = MakeFormatByName("npy");
  auto put = [&](const std::string& path, const std::string& bytes) {
    auto f = storage->Open(path, OpenMode::kCreateNew);
    REQUIRE(f.ok());
    REQUIRE((*f)->WriteAt(0, bytes.data(), bytes.size()).ok());
  };
  SECTION("a version-2 header claiming 4 GiB") {
    std::string h("\x93NUMPY\x02\x00\xf0\xff\xff\xff{}", 14);
    auto parsed = Parse(h);
    REQUIRE(parsed.status().code() == StatusCode::kCorruption);
    CHECK(parsed.status().message().find("at most 1048576") != std::string::npos);
  }
  SECTION("dtype sizes that would wrap around") {
    auto big = Parse(
        V1Header("{'descr': '<V99999999999999999999999', 'fortran_order': False, 'shape': (2,)}"));
    REQUIRE(big.status().code() == StatusCode::kCorruption);
    CHECK(big.status().message().find("is too large") != std::string::npos);
    auto sum =
        Parse(V1Header("{'descr': [('a', '<V1099511627776'), ('b', '<V1099511627776'), "
                       "('c', '<V1099511627776', (16777215,))], 'fortran_order': False, "
                       "'shape': (2,)}"));
    REQUIRE(sum.status().code() == StatusCode::kCorruption);
    CHECK(sum.status().message().find("overflows") != std::string::npos);
  }
  SECTION("(2^60, 0): a valid header whose 0-byte samples outnumber the file's bytes") {
    // numpy writes this without complaint; describing it visited 2^60 samples (inspect hung).
    put("/huge.npy", BuildNpyHeader("<f4", {uint64_t{1} << 60, 0}));
    auto r = npy->Open(storage.get(), "/huge.npy", {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK(r.status().message().find("/huge.npy") != std::string::npos);
    CHECK(r.status().message().find("1152921504606846976 samples of 0 bytes") != std::string::npos);
  }
  SECTION("a slice that overflows 64 bits behind a zero dimension") {
    put("/wide.npy", BuildNpyHeader("<f8", {0, uint64_t{1} << 40, uint64_t{1} << 40}));
    auto r = npy->Open(storage.get(), "/wide.npy", {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK(r.status().message().find("overflows 64 bits") != std::string::npos);
  }
  SECTION("a few 0-byte samples are fine, and describe in O(1)") {
    put("/empty_rows.npy", BuildNpyHeader("<f4", {5, 0}));
    auto r = npy->Open(storage.get(), "/empty_rows.npy", {});
    REQUIRE(r.ok());
    CHECK((*r)->num_samples() == 5);
    SampleBuffer buf;
    REQUIRE((*r)->ReadSample(4, &buf).ok());
    CHECK(buf.size() == 0);
    CHECK((*r)->DescribeJson().find("\"sample_sizes\":[0,0,0,0,0]") != std::string::npos);
  }
  SECTION("a shape claiming more bytes than stored") {
    put("/short.npy", BuildNpyHeader("<f8", {uint64_t{1} << 40, 4}) + std::string(64, 'x'));
    auto r = npy->Open(storage.get(), "/short.npy", {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    CHECK(r.status().message().find("but the file holds 64") != std::string::npos);
  }
}

TEST_CASE("npy writer refuses unequal sample sizes", "[format][npy]") {
  auto storage = BoundMemoryStorage();
  FileSpec spec;
  spec.sample_sizes = {10, 11};
  Status st = MakeFormatByName("npy")->Write(storage.get(), "/x.npy", spec, {});
  REQUIRE(st.code() == StatusCode::kInvalidArgument);
  REQUIRE(st.message().find("sample 1") != std::string::npos);
  REQUIRE(!*storage->Exists("/x.npy"));
}

// (offset, count) of each traced pwrite, in order.
std::vector<std::pair<uint64_t, uint64_t>> Writes(const MemoryTracer& tracer) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const TraceEvent& e : EventsNamed(tracer, "pwrite")) out.emplace_back(e.offset, e.count);
  return out;
}

TEST_CASE("ChunkAlignedWriter ends every write but the last on a chunk multiple of the file",
          "[format][npy]") {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  auto f = storage->Open("/w.bin", OpenMode::kWrite);
  REQUIRE(f.ok());
  std::vector<uint8_t> stream(44);
  for (size_t i = 0; i < stream.size(); ++i) stream[i] = static_cast<uint8_t>(i + 1);
  format_internal::ChunkAlignedWriter w(f->get(), 10, 16);
  size_t at = 0;
  for (size_t piece : {5, 20, 16, 3}) {  // pieces that straddle, end on and stop short of 16s
    REQUIRE(w.Write(stream.data() + at, piece).ok());
    at += piece;
  }
  REQUIRE(w.Flush().ok());
  REQUIRE(w.Flush().ok());  // nothing held: no write
  CHECK(w.end() == 54);
  REQUIRE((*f)->Close().ok());
  using W = std::pair<uint64_t, uint64_t>;
  CHECK(Writes(tracer) == std::vector<W>{{10, 6}, {16, 16}, {32, 16}, {48, 6}});
  auto r = storage->Open("/w.bin", OpenMode::kRead);
  REQUIRE(r.ok());
  std::vector<uint8_t> back(stream.size());
  auto got = (*r)->ReadAt(10, back.size(), back.data());
  REQUIRE(got.ok());
  CHECK(*got == back.size());
  CHECK(back == stream);
}

TEST_CASE("npy writer: the header and the data in writes ending on 4 MiB multiples of the file",
          "[format][npy]") {
  // np.save writes the header, then the data in one call; in 4 MiB pieces from the header's end
  // the page cache would hold small folios after each piece, and the header written alone leaves
  // them at the first pages (docs/fidelity.md).
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  FileSpec spec;
  spec.seed = 3;
  spec.sample_sizes.assign(2048, 8192);  // 16 MiB of rows behind a 128-byte header
  REQUIRE(MakeFormatByName("npy")->Write(storage.get(), "/rows.npy", spec, {}).ok());
  constexpr uint64_t kMiB4 = 4u << 20;
  using W = std::pair<uint64_t, uint64_t>;
  CHECK(Writes(tracer) ==
        std::vector<W>{
            {0, kMiB4}, {kMiB4, kMiB4}, {2 * kMiB4, kMiB4}, {3 * kMiB4, kMiB4}, {4 * kMiB4, 128}});
  auto r = MakeFormatByName("npy")->Open(storage.get(), "/rows.npy", {});
  REQUIRE(r.ok());
  ExpectSamples(r->get(), spec, {0, 511, 512, 2047});
}

TEST_CASE("sample content is deterministic and seed-dependent", "[format][content]") {
  uint8_t a[100], b[100], c[100];
  format_internal::FillSampleBytes(7, 3, 0, a, 100);
  format_internal::FillSampleBytes(7, 3, 0, b, 100);
  format_internal::FillSampleBytes(8, 3, 0, c, 100);
  REQUIRE(std::equal(a, a + 100, b));
  REQUIRE(!std::equal(a, a + 100, c));
  // Any sub-range regenerates the same bytes.
  uint8_t part[37];
  format_internal::FillSampleBytes(7, 3, 13, part, 37);
  REQUIRE(std::equal(part, part + 37, a + 13));
}

}  // namespace
}  // namespace dlio::testing
