// webdataset: round trips under both request models, the tarfile model's requests, reads out of
// stream order, pax headers, and the errors bad shards get.
#include <catch2/catch.hpp>

#include "format/tfrecord_test_util.h"
#include "format/webdataset/tar_header.h"
#include "format/webdataset/tar_stream.h"
#include "format/webdataset/webdataset_options.h"
#include "format/webdataset_test_util.h"

namespace dlio::testing {
namespace {

namespace tar = format_internal::tar;

std::unique_ptr<FormatReader> OpenWds(Storage* storage, const std::string& path, IoModel model,
                                      uint64_t expected = 0, bool python_file = true) {
  FormatOptions o;
  o.io_model = model;
  o.samples_per_file = expected;
  o.formats.Get<WebdatasetOptions>().tarfile_open =
      python_file ? TarfileOpen::kFileObject : TarfileOpen::kPath;
  auto r = MakeFormatByName("webdataset")->Open(storage, path, o);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(*r);
}

void ExpectWds(FormatReader* r, const FileSpec& spec, const std::vector<uint64_t>& order) {
  SampleBuffer buf;
  for (uint64_t i : order) {
    const Status st = r->ReadSample(i, &buf);
    INFO("sample " << i << ": " << st.ToString());
    REQUIRE(st.ok());
    REQUIRE(BufferString(buf) == WdsSample(spec, i));
  }
}

TEST_CASE("webdataset shards round-trip under native and tarfile", "[format][webdataset]") {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("webdataset");
  REQUIRE(format != nullptr);
  CHECK(format->extension() == "tar");
  CHECK(ResolveIoModel(IoModel::kAuto, format->capabilities()) == IoModel::kTarfile);
  CHECK(format->capabilities().shard_streams);
  const FileSpec spec = WdsSpec({0, 1, 511, 512, 513, 30000, 10240, 7});
  REQUIRE(format->Write(storage.get(), "/s.tar", spec, {}).ok());
  const uint64_t size = *storage->FileSize("/s.tar");
  CHECK(size % tar::kRecord == 0);
  for (IoModel model : {IoModel::kNative, IoModel::kTarfile}) {
    for (uint64_t expected : {uint64_t{0}, uint64_t{8}}) {
      INFO("model " << EnumName(model) << " expected " << expected);
      auto r = OpenWds(storage.get(), "/s.tar", model, expected);
      REQUIRE(r->num_samples() == 8);
      ExpectWds(r.get(), spec, {0, 1, 2, 3, 4, 5, 6, 7});
      CHECK(r->sample_size(5) == WdsSample(spec, 5).size());
    }
  }
  // The writer refuses to overwrite.
  CHECK(format->Write(storage.get(), "/s.tar", spec, {}).code() == StatusCode::kAlreadyExists);
}

TEST_CASE("webdataset's tarfile model reads 10240-byte records front to back",
          "[format][webdataset][io_model]") {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  const FileSpec spec = WdsSpec({3000, 70000, 12, 40000, 5000});
  REQUIRE(MakeFormatByName("webdataset")->Write(storage.get(), "/s.tar", spec, {}).ok());
  const uint64_t size = *storage->FileSize("/s.tar");
  auto r = OpenWds(storage.get(), "/s.tar", IoModel::kTarfile, 5, /*python_file=*/false);
  const size_t before = tracer.Events().size();
  ExpectWds(r.get(), spec, {0, 1, 2, 3, 4});
  const auto reads = PreadsSince(&tracer, before);
  // The last sample's end is known only from the next header: the zero block, in the last record.
  REQUIRE(reads.size() == size / tar::kRecord);
  for (size_t k = 0; k < reads.size(); ++k) {
    CHECK(reads[k].offset == static_cast<int64_t>(k * tar::kRecord));
    CHECK(reads[k].count == static_cast<int64_t>(tar::kRecord));
  }
}

TEST_CASE("webdataset's tarfile model through Python's file object splits records as CPython does",
          "[format][webdataset][io_model]") {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  const FileSpec spec = WdsSpec({3000, 70000, 12, 40000, 5000});
  REQUIRE(MakeFormatByName("webdataset")->Write(storage.get(), "/s.tar", spec, {}).ok());
  const uint64_t size = *storage->FileSize("/s.tar");
  auto r = OpenWds(storage.get(), "/s.tar", IoModel::kTarfile, 5);
  const size_t before = tracer.Events().size();
  ExpectWds(r.get(), spec, {0, 1, 2, 3, 4});
  const auto reads = PreadsSince(&tracer, before);
  // _StreamProxy's read(512) fills the 4 KiB buffer; each read(10240) then takes what is buffered,
  // reads whole buffers straight (4096 or 8192) and fills the buffer once for the rest: every
  // 20480 bytes, requests of 4096, 4096, 8192 and 4096 (hand-computed from bufferedio.c).
  const std::vector<std::pair<int64_t, int64_t>> want = {
      {0, 4096},     {4096, 4096},  {8192, 4096},  {12288, 8192},
      {20480, 4096}, {24576, 4096}, {28672, 4096}, {32768, 8192}};
  REQUIRE(reads.size() > want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    CHECK(reads[k].offset == want[k].first);
    CHECK(reads[k].count == want[k].second);
  }
  // One forward stream: each request where the previous one's bytes ended (the last ones short
  // at the end of the file, the very last finding it).
  for (size_t k = 1; k < reads.size(); ++k) {
    CHECK(reads[k].offset > reads[k - 1].offset);
    CHECK(reads[k].offset <= reads[k - 1].offset + reads[k - 1].count);
  }
  CHECK(static_cast<uint64_t>(reads.back().offset) <= size);
}

// A shard written from `spec`, read whole under native with transfer_size 32768: the requests of
// the reads (not the open's), and the file's size.
std::vector<TraceEvent> NativeWdsPreads(const FileSpec& spec, uint64_t* file_size) {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  REQUIRE(MakeFormatByName("webdataset")->Write(storage.get(), "/s.tar", spec, {}).ok());
  *file_size = WdsFileBytes(storage.get(), "/s.tar").size();
  FormatOptions o;
  o.io_model = IoModel::kNative;
  o.transfer_size = 32768;
  o.samples_per_file = spec.sample_sizes.size();
  auto r = MakeFormatByName("webdataset")->Open(storage.get(), "/s.tar", o);
  REQUIRE(r.ok());
  const size_t before = tracer.Events().size();
  std::vector<uint64_t> all(spec.sample_sizes.size());
  for (uint64_t i = 0; i < all.size(); ++i) all[i] = i;
  ExpectWds(r->get(), spec, all);
  return PreadsSince(&tracer, before);
}

TEST_CASE("webdataset's native reads land large members straight in the sample",
          "[format][webdataset][transfer]") {
  uint64_t size = 0;
  const auto reads = NativeWdsPreads(WdsSpec({100000, 10}), &size);
  // A 16 KiB fill (the stream has seen no member yet) with the header and the data's first 15872
  // bytes; the other 84128 bytes (>= 64 KiB) straight into the sample in transfer_size requests;
  // then one 16 KiB fill from the data's end (padding, the .cls member, sample 1 and the end
  // blocks).
  const std::vector<std::pair<int64_t, int64_t>> want = {
      {0, 16384}, {16384, 32768}, {49152, 32768}, {81920, 18592}, {100512, 16384}};
  REQUIRE(reads.size() == want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    CHECK(reads[k].offset == want[k].first);
    CHECK(reads[k].count == want[k].second);
  }
}

TEST_CASE(
    "webdataset's native reads on posix take a large member's last piece and the next fill in one",
    "[format][webdataset][transfer]") {
  // Two samples of a 100000-byte member and a 10-byte one, transfer_size 131072. Sample 0: the
  // first 16 KiB fill, then its member's other 84128 bytes and the next 16 KiB fill in one
  // request (File::ReadTwoAt: one preadv); sample 1 (its first 14496 bytes in that fill): its
  // other 85504 bytes and the next fill, of which 2400 bytes are left in the file. On the memory
  // storage, which has no vectored read, the same bytes in five requests, as before.
  TempDir tmp;
  const FileSpec spec = WdsSpec({100000, 100000});
  for (bool posix : {true, false}) {
    INFO("posix " << posix);
    MemoryTracer tracer;
    auto storage = posix ? BoundPosixStorage(&tracer) : BoundMemoryStorage(&tracer);
    const std::string path = posix ? tmp / "s.tar" : "/s.tar";
    REQUIRE(MakeFormatByName("webdataset")->Write(storage.get(), path, spec, {}).ok());
    REQUIRE(*storage->FileSize(path) == 204800);
    FormatOptions o;
    o.io_model = IoModel::kNative;
    o.transfer_size = 131072;
    o.samples_per_file = 2;
    auto r = MakeFormatByName("webdataset")->Open(storage.get(), path, o);
    REQUIRE(r.ok());
    const size_t before = tracer.Events().size();
    ExpectWds(r->get(), spec, {0, 1});
    const auto reads = PreadsSince(&tracer, before);
    const std::vector<std::pair<int64_t, int64_t>> want =
        posix ? std::vector<std::pair<int64_t, int64_t>>{{0, 16384},
                                                         {16384, 100512},
                                                         {116896, 101888}}
              : std::vector<std::pair<int64_t, int64_t>>{
                    {0, 16384}, {16384, 84128}, {100512, 16384}, {116896, 85504}, {202400, 16384}};
    REQUIRE(reads.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      INFO("request " << k);
      CHECK(reads[k].offset == want[k].first);
      CHECK(reads[k].count == want[k].second);
    }
  }
}

TEST_CASE("webdataset's native reads of small members fill transfer_size after the first 16 KiB",
          "[format][webdataset][transfer]") {
  // 40 samples of 2560 bytes in the shard (a header, 1000 bytes padded to 1024, a header and the
  // .cls label padded to 512): no member of 64 KiB or more.
  uint64_t size = 0;
  const auto reads = NativeWdsPreads(WdsSpec(std::vector<uint64_t>(40, 1000)), &size);
  REQUIRE(size >= 40 * 2560);
  // The first fill knows no member's size: 16 KiB. Its members are small, so every later fill is
  // a transfer_size request where the previous one ended, up to the one that reaches the
  // end-of-archive block at 40 x 2560 (the last asks past the file's end and gets what is left).
  REQUIRE(reads.size() == 4);
  CHECK(reads[0].offset == 0);
  CHECK(reads[0].count == 16384);
  for (size_t k = 1; k < reads.size(); ++k) {
    INFO("request " << k);
    CHECK(reads[k].offset == reads[k - 1].offset + reads[k - 1].count);
    CHECK(reads[k].count == 32768);
  }
  CHECK(reads.back().offset < static_cast<int64_t>(size));
}

TEST_CASE("webdataset reads out of stream order", "[format][webdataset]") {
  auto storage = BoundMemoryStorage();
  std::vector<uint64_t> sizes;
  for (int i = 0; i < 30; ++i) sizes.push_back(100 + 777 * (i % 5));
  const FileSpec spec = WdsSpec(sizes);
  REQUIRE(MakeFormatByName("webdataset")->Write(storage.get(), "/s.tar", spec, {}).ok());
  auto r = OpenWds(storage.get(), "/s.tar", IoModel::kTarfile, 30);
  // 3 then 1 (stashed), 20 (reads on past 8), 5 (restart at its header), 29 then 0.
  ExpectWds(r.get(), spec, {3, 1, 2, 0, 20, 5, 6, 29, 0, 28});
  SampleBuffer buf;
  CHECK(r->ReadSample(30, &buf).code() == StatusCode::kOutOfRange);
}

TEST_CASE("webdataset groups members by key and reads pax and GNU long names",
          "[format][webdataset]") {
  auto storage = BoundMemoryStorage();
  const tar::MemberMeta meta;
  const std::string long_dir = std::string(150, 'd') + "/";
  std::string t;
  auto add = [&](const std::string& name, const std::string& data) {
    tar::AppendMemberHeader(&t, name, data.size(), meta);
    t += data;
    t.append(tar::PadToBlock(data.size()) - data.size(), '\0');
  };
  add(long_dir + "a.input.jpg", "AAAA");
  add(long_dir + "a.output.cls", "7");
  add("README", "no key: skipped");
  add("b.jpg", std::string(600, 'b'));
  add("b.json", "{}");
  add("c.txt", "c");
  t.append(2 * tar::kBlock, '\0');
  WdsWriteBytes(storage.get(), "/m.tar", t);
  auto r = OpenWds(storage.get(), "/m.tar", IoModel::kNative);
  REQUIRE(r->num_samples() == 3);
  SampleBuffer buf;
  REQUIRE(r->ReadSample(0, &buf).ok());
  CHECK(BufferString(buf) == "AAAA7");
  REQUIRE(r->ReadSample(1, &buf).ok());
  CHECK(BufferString(buf) == std::string(600, 'b') + "{}");
  REQUIRE(r->ReadSample(2, &buf).ok());
  CHECK(BufferString(buf) == "c");
  CHECK(r->DescribeJson().find("\"members_per_sample\":2") != std::string::npos);
}

TEST_CASE("tar headers: pax records for long names and sizes past 8 GiB - 1",
          "[format][webdataset]") {
  std::string h;
  const uint64_t big = uint64_t{1} << 33;
  tar::AppendMemberHeader(&h, std::string(120, 'n') + ".jpg", big, {});
  REQUIRE(h.size() == 3 * tar::kBlock);  // pax header, its records, the ustar header
  const auto* b = reinterpret_cast<const uint8_t*>(h.data());
  auto pax_header = tar::ParseHeader(b, "/x", 0);
  REQUIRE(pax_header.ok());
  CHECK(pax_header->type == 'x');
  CHECK(pax_header->name == "././@PaxHeader");
  tar::PaxOverride pax;
  REQUIRE(tar::ParsePax(h.substr(512, pax_header->size), "/x", 0, &pax).ok());
  CHECK(pax.path == std::string(120, 'n') + ".jpg");
  CHECK(pax.size == big);
  CHECK(h.substr(512, pax_header->size).find("19 size=8589934592\n") != std::string::npos);
  auto member = tar::ParseHeader(b + 1024, "/x", 1024);
  REQUIRE(member.ok());
  CHECK(member->size == 0);  // the size lives in the pax record, as tarfile writes it
}

TEST_CASE("tar headers: several extended headers before one member: the first one's values win",
          "[format][webdataset]") {
  tar::Header x, long_name, global, too_big;
  x.type = 'x';
  long_name.type = 'L';
  global.type = 'g';
  too_big.type = 'x';
  too_big.size = tar::kMaxExtendedBytes + 1;
  const std::string records = "17 path=from-pax\n10 size=7\n";
  SECTION("an 'L' name, then pax records: the 'L' name, the pax size") {
    tar::PaxOverride out;
    REQUIRE(tar::ApplyExtended(long_name, std::string("from-L\0\0", 8), "/t", 0, &out).ok());
    REQUIRE(tar::ApplyExtended(x, records, "/t", 512, &out).ok());
    CHECK(out.path == "from-L");
    CHECK((out.has_size && out.size == 7));
  }
  SECTION("pax records, then an 'L' name and a global header: the pax path") {
    tar::PaxOverride out;
    REQUIRE(tar::ApplyExtended(x, records, "/t", 0, &out).ok());
    REQUIRE(tar::ApplyExtended(long_name, "from-L", "/t", 512, &out).ok());
    REQUIRE(tar::ApplyExtended(global, "15 path=global\n", "/t", 1024, &out).ok());
    CHECK(out.path == "from-pax");
  }
  SECTION("a malformed record and an oversized payload name the file and offset") {
    tar::PaxOverride out;
    const Status bad = tar::ApplyExtended(x, "99 path=x\n", "/t", 1536, &out);
    CHECK(bad.code() == StatusCode::kCorruption);
    CHECK_THAT(bad.message(), Catch::Contains("/t: tar header at offset 1536"));
    const Status big = tar::CheckExtendedSize(too_big, uint64_t{1} << 30, "/t", 2048);
    CHECK_THAT(big.message(), Catch::Contains("/t: tar header at offset 2048: extended header of"));
    CHECK(tar::CheckExtendedSize(x, 0, "/t", 0).ok());  // a 0-byte payload always fits
    x.size = 600;
    CHECK(!tar::CheckExtendedSize(x, 599, "/t", 0).ok());  // past the file's end
  }
}

// The shard with one byte changed at `at` (or cut to `cut` bytes) must fail naming file+offset.
void ExpectCorrupt(const std::string& bytes, const std::string& fragment) {
  auto storage = BoundMemoryStorage();
  WdsWriteBytes(storage.get(), "/bad.tar", bytes);
  FormatOptions o;
  auto r = MakeFormatByName("webdataset")->Open(storage.get(), "/bad.tar", o);
  Status st = r.status();
  if (r.ok()) {  // trusted count: the error comes from the read
    SampleBuffer buf;
    st = (*r)->ReadSample(0, &buf);
  }
  INFO(st.ToString());
  REQUIRE(st.code() == StatusCode::kCorruption);
  CHECK(st.message().find("/bad.tar") != std::string::npos);
  CHECK(st.message().find(fragment) != std::string::npos);
}

TEST_CASE("webdataset names the file and offset of bad headers", "[format][webdataset]") {
  auto storage = BoundMemoryStorage();
  const FileSpec spec = WdsSpec({1000, 2000});
  REQUIRE(MakeFormatByName("webdataset")->Write(storage.get(), "/s.tar", spec, {}).ok());
  const std::string good = WdsFileBytes(storage.get(), "/s.tar");
  // Sample 0: .jpg header at 0, data 1024; .cls header at 1536; sample 1's .jpg header at 2560.
  std::string bad = good;
  bad[2560 + 3] ^= 1;  // a name byte: the checksum no longer matches
  ExpectCorrupt(bad, "tar header at offset 2560: checksum");
  bad = good;
  bad[2560 + 124] = '9';  // size field: not octal (checksum fixed below)
  {
    uint64_t sum = 0;
    for (size_t i = 0; i < 512; ++i) sum += (i >= 148 && i < 156) ? 32 : uint8_t(bad[2560 + i]);
    char field[8];
    std::snprintf(field, sizeof field, "%06llo", static_cast<unsigned long long>(sum));
    bad.replace(2560 + 148, 6, field, 6);
  }
  ExpectCorrupt(bad, "offset 2560: size is not octal");
  ExpectCorrupt(good.substr(0, 2560 + 100), "truncated tar header at offset 2560");
  ExpectCorrupt(good.substr(0, 2560 + 512 + 100), "offset 2560: member size 2000 runs past");
  // An absurd size: base-256, 2^62.
  bad = good;
  std::string hdr;
  tar::AppendMemberHeader(&hdr, "sample000001.jpg", 2000, {});
  hdr[124] = static_cast<char>(0x80);
  hdr.replace(125, 11, std::string(11, '\0'));
  hdr[128] = 0x40;
  {
    uint64_t sum = 0;
    for (size_t i = 0; i < 512; ++i) sum += (i >= 148 && i < 156) ? 32 : uint8_t(hdr[i]);
    char field[8];
    std::snprintf(field, sizeof field, "%06llo", static_cast<unsigned long long>(sum));
    hdr.replace(148, 6, field, 6);
  }
  bad.replace(2560, 512, hdr);
  ExpectCorrupt(bad, "offset 2560: member size 4611686018427387904 runs past the end");
}

TEST_CASE("webdataset: a shard with fewer samples than expected fails naming it",
          "[format][webdataset]") {
  auto storage = BoundMemoryStorage();
  const FileSpec spec = WdsSpec({10, 20});
  REQUIRE(MakeFormatByName("webdataset")->Write(storage.get(), "/s.tar", spec, {}).ok());
  auto r = OpenWds(storage.get(), "/s.tar", IoModel::kTarfile, 3);
  SampleBuffer buf;
  const Status st = r->ReadSample(2, &buf);
  CHECK(st.code() == StatusCode::kCorruption);
  CHECK(st.message().find("/s.tar: the archive ends at offset 4608 after 2 samples, but 3") !=
        std::string::npos);
  // The failure leaves the reader usable: the good samples read, the missing one fails again.
  ExpectWds(r.get(), spec, {1, 0, 1});
  CHECK(r->ReadSample(2, &buf).message() == st.message());
}

}  // namespace
}  // namespace dlio::testing
