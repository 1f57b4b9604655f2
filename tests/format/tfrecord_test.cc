#include "format/tfrecord/tfrecord.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <random>
#include <thread>

#include "format/format_test_util.h"
#include "format/formats.h"
#include "format/io_util.h"
#include "format/tfrecord/crc32c.h"
#include "format/tfrecord/example_wire.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

using format_internal::Crc32c;
using format_internal::Crc32cExtend;
using format_internal::Crc32cExtendFolding;
using format_internal::Crc32cExtendHardware;
using format_internal::Crc32cExtendPortable;
using format_internal::ExampleFeature;
using format_internal::FrameTfRecord;
using format_internal::Le64;
using format_internal::MaskCrc32c;
using format_internal::SerializeExample;
using format_internal::UnmaskCrc32c;

const uint8_t* U8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

FileSpec Spec(std::vector<uint64_t> sizes, uint64_t seed = 7) {
  FileSpec spec;
  spec.seed = seed;
  spec.sample_sizes = std::move(sizes);
  return spec;
}

// Records of a file by an independent walk of the framing: (offset, payload).
std::vector<std::pair<uint64_t, std::string>> Records(const std::string& bytes) {
  std::vector<std::pair<uint64_t, std::string>> out;
  for (uint64_t pos = 0; pos + 12 <= bytes.size();) {
    const uint64_t len = Le64(U8(bytes) + pos);
    out.emplace_back(pos, bytes.substr(pos + 12, len));
    pos += 16 + len;
  }
  return out;
}

void ExpectSamples(FormatReader* r, const FileSpec& spec, std::initializer_list<uint64_t> order) {
  SampleBuffer buf;
  for (uint64_t i : order) {
    Status st = r->ReadSample(i, &buf);
    INFO("sample " << i << ": " << st.ToString());
    REQUIRE(st.ok());
    REQUIRE(BufferString(buf) == ExpectedSample(spec, i));
  }
}

std::vector<TraceEvent> PreadsSince(MemoryTracer* tracer, size_t from) {
  std::vector<TraceEvent> out;
  auto events = tracer->Events();
  for (size_t i = from; i < events.size(); ++i) {
    if (std::string(events[i].name) == "pread") out.push_back(events[i]);
  }
  return out;
}

// The whole file, read through dlio's storage (works for the memory storage too).
std::string FileBytes(Storage* storage, const std::string& path) {
  auto file = storage->Open(path, OpenMode::kRead);
  if (!file.ok()) return "";
  std::string out(*storage->FileSize(path), '\0');
  if (!(*file)->ReadExactAt(0, out.size(), out.data()).ok()) return "";
  return out;
}

// The file offsets where each record's sample bytes end, by FindSampleBytes on whole payloads.
std::vector<uint64_t> SampleEnds(const std::string& bytes) {
  std::vector<uint64_t> out;
  for (const auto& [offset, payload] : Records(bytes)) {
    format_internal::SampleSpan span;
    const char* error = nullptr;
    uint64_t at = 0;
    if (format_internal::FindSampleBytes(U8(payload), payload.size(), payload.size(), &span, &error,
                                         &at) != format_internal::ExampleScan::kFound) {
      return {};
    }
    out.push_back(offset + 12 + span.offset + span.size);
  }
  return out;
}

// Requests that follow each other: each starts where the previous one ended.
bool Consecutive(const std::vector<TraceEvent>& reads) {
  for (size_t k = 1; k < reads.size(); ++k) {
    if (reads[k].offset != reads[k - 1].offset + reads[k - 1].count) return false;
  }
  return true;
}

bool EndsAt(const std::vector<TraceEvent>& reads, uint64_t end) {
  for (const TraceEvent& e : reads) {
    if (static_cast<uint64_t>(e.offset + e.count) == end) return true;
  }
  return false;
}

TEST_CASE("CRC-32C known vectors on the portable and the hardware path",
          "[format][tfrecord][crc]") {
  struct Vector {
    std::string data;
    uint32_t crc;
  };
  std::string ascending(32, '\0'), descending(32, '\0');
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<char>(i);
    descending[i] = static_cast<char>(31 - i);
  }
  // RFC 3720 B.4 and the usual check value.
  const std::vector<Vector> vectors = {{"", 0},
                                       {"a", 0xC1D04330u},
                                       {"123456789", 0xE3069283u},
                                       {std::string(32, '\0'), 0x8A9136AAu},
                                       {std::string(32, '\xff'), 0x62A8AB43u},
                                       {ascending, 0x46DD794Eu},
                                       {descending, 0x113FDB5Cu}};
  INFO("hardware CRC available: " << format_internal::Crc32cHardwareAvailable()
                                  << ", folding: " << format_internal::Crc32cFoldingAvailable());
  for (const Vector& v : vectors) {
    INFO("length " << v.data.size());
    REQUIRE(Crc32cExtendPortable(0, U8(v.data), v.data.size()) == v.crc);
    REQUIRE(Crc32cExtendHardware(0, U8(v.data), v.data.size()) == v.crc);
    REQUIRE(Crc32cExtendFolding(0, U8(v.data), v.data.size()) == v.crc);
    REQUIRE(Crc32c(U8(v.data), v.data.size()) == v.crc);
  }
  // TensorFlow's masking: the masked CRC of an empty record is the mask delta itself.
  REQUIRE(MaskCrc32c(Crc32c(nullptr, 0)) == 0xa282ead8u);
  REQUIRE(MaskCrc32c(0xE3069283u) == (((0xE3069283u >> 15) | (0xE3069283u << 17)) + 0xa282ead8u));
  for (uint32_t c : {0u, 1u, 0xE3069283u, 0xffffffffu}) REQUIRE(UnmaskCrc32c(MaskCrc32c(c)) == c);
}

TEST_CASE("CRC-32C paths agree on every length, alignment and split", "[format][tfrecord][crc]") {
  INFO("hardware CRC available: " << format_internal::Crc32cHardwareAvailable()
                                  << ", folding: " << format_internal::Crc32cFoldingAvailable());
  std::mt19937_64 rng(11);
  std::string data(300000 + 64, '\0');  // the longest length at the largest alignment fits
  for (char& c : data) c = static_cast<char>(rng());
  // Lengths around the hardware path's 3-stream block sizes (3 x 8192, 3 x 256), the folding
  // path's 256-byte blocks, and the tails.
  const std::vector<size_t> lengths = {0,     1,     7,     8,      9,     255,  256,   257,
                                       511,   512,   513,   767,    768,   769,  1000,  1023,
                                       1024,  1025,  1279,  1280,   1281,  4096, 24575, 24576,
                                       24577, 50000, 65553, 262144, 299990};
  for (size_t n : lengths) {
    for (size_t align : {0, 1, 3, 7, 61}) {
      INFO("n " << n << " align " << align);
      const uint8_t* p = U8(data) + align;
      const uint32_t portable = Crc32cExtendPortable(0, p, n);
      REQUIRE(Crc32cExtendHardware(0, p, n) == portable);
      REQUIRE(Crc32cExtendFolding(0, p, n) == portable);
      for (size_t cut : {n / 3, n / 2 + 5, n > 1100 ? n - 1100 : 0}) {
        if (cut > n) continue;
        INFO("cut " << cut);
        REQUIRE(Crc32cExtend(Crc32cExtend(0, p, cut), p + cut, n - cut) == portable);
        REQUIRE(Crc32cExtendFolding(Crc32cExtendFolding(0xdeadbeef, p, cut), p + cut, n - cut) ==
                Crc32cExtendPortable(Crc32cExtendPortable(0xdeadbeef, p, cut), p + cut, n - cut));
        REQUIRE(Crc32cExtendPortable(Crc32cExtendPortable(0, p, cut), p + cut, n - cut) ==
                portable);
      }
    }
  }
  // Special contents: all zeros and all ones over many blocks.
  for (char fill : {'\0', '\xff'}) {
    const std::string same(100000, fill);
    REQUIRE(Crc32cExtendFolding(0, U8(same), same.size()) ==
            Crc32cExtendPortable(0, U8(same), same.size()));
  }
}

TEST_CASE("tfrecord round-trips on memory and posix storage", "[format][tfrecord]") {
  TempDir tmp;
  auto memory = BoundMemoryStorage();
  auto posix = BoundPosixStorage();
  auto format = MakeFormatByName("tfrecord");
  REQUIRE(format != nullptr);
  REQUIRE(format->variable_sample_sizes());
  const FileSpec spec = Spec({0, 1, 2048, 300000, 17, 5000});
  for (auto [storage, path] : {std::pair{memory.get(), std::string("/a.tfrecord")},
                               std::pair{posix.get(), tmp / "a.tfrecord"}}) {
    INFO(storage->name());
    FormatOptions options;
    REQUIRE(format->Write(storage, path, spec, options).ok());
    REQUIRE(format->CompanionFiles(path, options) == std::vector<std::string>{path + ".idx"});
    REQUIRE(*storage->Exists(path + ".idx"));
    auto r = format->Open(storage, path, options);
    REQUIRE(r.ok());
    REQUIRE((*r)->num_samples() == 6);
    for (uint64_t i = 0; i < 6; ++i) REQUIRE((*r)->sample_size(i) == spec.sample_sizes[i]);
    ExpectSamples(r->get(), spec, {0, 1, 2, 3, 4, 5, 3, 0, 5, 1});
  }

  // The bytes on disk: independent framing walk, CRCs, the Example via the generated classes.
  const std::string bytes = ReadTextFile(tmp / "a.tfrecord");
  const auto records = Records(bytes);
  REQUIRE(records.size() == 6);
  std::string index;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& [offset, payload] = records[i];
    INFO("record " << i);
    const uint8_t* h = U8(bytes) + offset;
    REQUIRE(format_internal::Le32(h + 8) == MaskCrc32c(Crc32c(h, 8)));
    REQUIRE(format_internal::Le32(h + 12 + payload.size()) ==
            MaskCrc32c(Crc32c(U8(payload), payload.size())));
    auto features = format_internal::ParseExample(U8(payload), payload.size());
    REQUIRE(features.ok());
    REQUIRE(features->size() == 2);
    REQUIRE((*features)[0].key == "image");
    REQUIRE((*features)[0].kind == ExampleFeature::Kind::kBytes);
    REQUIRE((*features)[0].bytes == std::vector<std::string>{ExpectedSample(spec, i)});
    REQUIRE((*features)[1].key == "label");
    REQUIRE((*features)[1].kind == ExampleFeature::Kind::kInt64);
    REQUIRE((*features)[1].ints ==
            std::vector<int64_t>{format_internal::SampleLabel(spec.seed, i)});
    index += std::to_string(offset) + " " + std::to_string(payload.size() + 16) + "\n";
  }
  REQUIRE(ReadTextFile(tmp / "a.tfrecord.idx") == index);  // DALI's tfrecord2idx lines
}

TEST_CASE("tfrecord write_index=false writes no index; existing index is never clobbered",
          "[format][tfrecord]") {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("tfrecord");
  FormatOptions options;
  options.write_index = false;
  REQUIRE(format->CompanionFiles("/x.tfrecord", options).empty());
  REQUIRE(format->Write(storage.get(), "/x.tfrecord", Spec({10, 20}), options).ok());
  REQUIRE_FALSE(*storage->Exists("/x.tfrecord.idx"));
  auto r = format->Open(storage.get(), "/x.tfrecord", {});
  REQUIRE(r.ok());
  ExpectSamples(r->get(), Spec({10, 20}), {1, 0});

  {
    auto idx = storage->Open("/y.tfrecord.idx", OpenMode::kCreateNew);
    REQUIRE(idx.ok());
    REQUIRE((*idx)->WriteAt(0, "mine", 4).ok());
  }
  Status st = format->Write(storage.get(), "/y.tfrecord", Spec({10}), {});
  REQUIRE(st.code() == StatusCode::kAlreadyExists);
  REQUIRE(st.message().find("/y.tfrecord.idx") != std::string::npos);
  REQUIRE_FALSE(*storage->Exists("/y.tfrecord"));
}

TEST_CASE("tfrecord streaming reads issue transfer_size requests and read each byte once",
          "[format][tfrecord][transfer]") {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  auto format = MakeFormatByName("tfrecord");
  std::vector<uint64_t> sizes;
  for (int i = 0; i < 40; ++i) sizes.push_back(100 + 997 * (i % 7) + (i == 20 ? 20000 : 0));
  const FileSpec spec = Spec(sizes);
  REQUIRE(format->Write(storage.get(), "/s.tfrecord", spec, {}).ok());
  const uint64_t file_size = *storage->FileSize("/s.tfrecord");

  for (uint64_t transfer : {uint64_t{4096}, uint64_t{1000}, uint64_t{0}}) {
    INFO("transfer_size " << transfer);
    const uint64_t expect = transfer == 0 ? 262144 : transfer;
    FormatOptions options;
    options.transfer_size = transfer;
    auto r = format->Open(storage.get(), "/s.tfrecord", options);
    REQUIRE(r.ok());
    const size_t before = tracer.Events().size();
    const IoStats stats = storage->stats();
    ExpectSamples(r->get(), spec,
                  {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
                   20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39});
    const auto reads = PreadsSince(&tracer, before);
    REQUIRE(storage->stats().read_bytes - stats.read_bytes == file_size);  // no byte twice
    REQUIRE(reads.size() == (file_size + expect - 1) / expect);
    for (size_t k = 0; k < reads.size(); ++k) {
      REQUIRE(reads[k].offset == static_cast<int64_t>(k * expect));
      REQUIRE(reads[k].count == static_cast<int64_t>(expect));
    }
    // A second pass: record 0 is a seek, then the stream takes over again (with 256 KiB the
    // whole file is still in the buffer).
    const IoStats again = storage->stats();
    ExpectSamples(r->get(), spec,
                  {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
                   20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39});
    REQUIRE(storage->stats().read_bytes - again.read_bytes == (file_size > expect ? file_size : 0));
  }
}

TEST_CASE("tfrecord random reads read the record in transfer_size requests, then stream on",
          "[format][tfrecord][transfer]") {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  auto format = MakeFormatByName("tfrecord");
  const FileSpec spec = Spec({5000, 5000, 10000, 3000, 3000, 3000});
  REQUIRE(format->Write(storage.get(), "/r.tfrecord", spec, {}).ok());
  FormatOptions options;
  options.transfer_size = 4096;
  auto r = format->Open(storage.get(), "/r.tfrecord", options);
  REQUIRE(r.ok());
  // Record 2 alone: [offset, offset + size) in 4096-byte requests, the last one shorter.
  size_t before = tracer.Events().size();
  ExpectSamples(r->get(), spec, {2});
  auto reads = PreadsSince(&tracer, before);
  const int64_t rec2 = reads.front().offset;
  int64_t total = 0;
  for (size_t k = 0; k < reads.size(); ++k) {
    REQUIRE(reads[k].offset == rec2 + static_cast<int64_t>(k) * 4096);
    if (k + 1 < reads.size()) REQUIRE(reads[k].count == 4096);
    total += reads[k].count;
  }
  REQUIRE(reads.size() == 3);
  // Record 3 follows: the stream goes on from the end of record 2 in full 4096-byte requests.
  before = tracer.Events().size();
  ExpectSamples(r->get(), spec, {3, 4});
  reads = PreadsSince(&tracer, before);
  REQUIRE(!reads.empty());
  REQUIRE(reads.front().offset == rec2 + total);
  for (const TraceEvent& e : reads) REQUIRE(e.count == 4096);
  // Going back re-reads (a seek), and the data is still right.
  ExpectSamples(r->get(), spec, {0, 5, 1, 2});
}

TEST_CASE("tfrecord large records stream their sample bytes straight into the buffer",
          "[format][tfrecord][transfer][large]") {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  auto format = MakeFormatByName("tfrecord");
  // Large records (payload >= 64 KiB and >= transfer_size) among small ones, so the stream
  // passes between both.
  const FileSpec spec = Spec({300000, 70000, 65536, 100, 200000, 5000, 262144, 131072, 90000});
  REQUIRE(format->Write(storage.get(), "/l.tfrecord", spec, {}).ok());
  const std::string bytes = FileBytes(storage.get(), "/l.tfrecord");
  const uint64_t file_size = bytes.size();
  const auto records = Records(bytes);
  const auto sample_ends = SampleEnds(bytes);
  REQUIRE(sample_ends.size() == spec.sample_sizes.size());

  for (uint64_t transfer :
       {uint64_t{65536}, uint64_t{4096}, uint64_t{0}, uint64_t{1000}, uint64_t{100}}) {
    INFO("transfer_size " << transfer);
    const uint64_t most = transfer == 0 ? 262144 : transfer;
    FormatOptions options;
    options.transfer_size = transfer;
    auto r = format->Open(storage.get(), "/l.tfrecord", options);
    REQUIRE(r.ok());
    const size_t before = tracer.Events().size();
    const IoStats stats = storage->stats();
    ExpectSamples(r->get(), spec, {0, 1, 2, 3, 4, 5, 6, 7, 8});
    const auto reads = PreadsSince(&tracer, before);
    REQUIRE(storage->stats().read_bytes - stats.read_bytes == file_size);  // no byte twice
    REQUIRE(reads.front().offset == 0);
    REQUIRE(Consecutive(reads));
    REQUIRE(static_cast<uint64_t>(reads.back().offset + reads.back().count) >= file_size);
    for (const TraceEvent& e : reads) REQUIRE(static_cast<uint64_t>(e.count) <= most);
    for (size_t i = 0; i < records.size(); ++i) {
      if (records[i].second.size() < std::max<uint64_t>(65536, most)) continue;
      INFO("record " << i);
      // The sample's last request stops at its end: the sample bytes went to the buffer.
      REQUIRE(EndsAt(reads, sample_ends[i]));
    }
    if (transfer == 65536) {
      // Record 0: its head (524 bytes), its sample in 64 KiB requests (the last one shorter),
      // then its rest together with the next record's first 524 bytes.
      const uint64_t sample_begin = sample_ends[0] - 300000;
      REQUIRE(reads[0].count == 524);
      uint64_t at = 524;
      size_t k = 1;
      for (; at < sample_ends[0]; ++k) {
        REQUIRE(static_cast<uint64_t>(reads[k].count) ==
                std::min<uint64_t>(65536, sample_ends[0] - at));
        at += reads[k].count;
      }
      REQUIRE(sample_begin < 524);
      REQUIRE(static_cast<uint64_t>(reads[k].count) == records[1].first + 524 - sample_ends[0]);
    }
    // A second pass restarts the stream and reads right.
    ExpectSamples(r->get(), spec, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  }

  // 256 KiB samples with the default 256 KiB requests: after record 0's head, two requests per
  // record, the sample's (less what the previous request brought) and the rest + next head.
  const FileSpec even = Spec({262144, 262144, 262144, 262144});
  REQUIRE(format->Write(storage.get(), "/e.tfrecord", even, {}).ok());
  const auto even_ends = SampleEnds(FileBytes(storage.get(), "/e.tfrecord"));
  auto r = format->Open(storage.get(), "/e.tfrecord", {});
  REQUIRE(r.ok());
  const size_t before = tracer.Events().size();
  ExpectSamples(r->get(), even, {0, 1, 2, 3});
  const auto reads = PreadsSince(&tracer, before);
  REQUIRE(reads.size() == 1 + 2 * 4);
  REQUIRE(Consecutive(reads));
  REQUIRE(reads[0].count == 524);
  for (size_t i = 0; i < 4; ++i) {
    REQUIRE(static_cast<uint64_t>(reads[1 + 2 * i].offset + reads[1 + 2 * i].count) ==
            even_ends[i]);
    REQUIRE(reads[1 + 2 * i].count > 261000);
    REQUIRE(reads[2 + 2 * i].count < 600);
  }
}

TEST_CASE("tfrecord large records read at random: head, sample, rest, then the stream",
          "[format][tfrecord][transfer][large]") {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  auto format = MakeFormatByName("tfrecord");
  const FileSpec spec = Spec({300000, 70000, 65536, 100, 200000, 5000, 262144, 131072, 90000});
  REQUIRE(format->Write(storage.get(), "/g.tfrecord", spec, {}).ok());
  const std::string bytes = FileBytes(storage.get(), "/g.tfrecord");
  const auto records = Records(bytes);
  const auto sample_ends = SampleEnds(bytes);
  FormatOptions options;
  options.transfer_size = 65536;
  auto r = format->Open(storage.get(), "/g.tfrecord", options);
  REQUIRE(r.ok());
  // Record 4 alone: [offset, offset + 524), the sample's remaining bytes in 64 KiB requests
  // ending at its end, then the rest of the record, all consecutive.
  size_t before = tracer.Events().size();
  const IoStats stats = storage->stats();
  ExpectSamples(r->get(), spec, {4});
  auto reads = PreadsSince(&tracer, before);
  const uint64_t rec4 = records[4].first, end4 = records[5].first;
  REQUIRE(storage->stats().read_bytes - stats.read_bytes == end4 - rec4);
  REQUIRE(static_cast<uint64_t>(reads.front().offset) == rec4);
  REQUIRE(reads.front().count == 524);
  REQUIRE(Consecutive(reads));
  REQUIRE(static_cast<uint64_t>(reads.back().offset + reads.back().count) == end4);
  for (const TraceEvent& e : reads) REQUIRE(e.count <= 65536);
  REQUIRE(EndsAt(reads, sample_ends[4]));
  REQUIRE(reads.size() == 1 + (sample_ends[4] - rec4 - 524 + 65535) / 65536 + 1);
  // Record 5 follows: the stream goes on from the end of record 4.
  before = tracer.Events().size();
  ExpectSamples(r->get(), spec, {5, 6});
  reads = PreadsSince(&tracer, before);
  REQUIRE(static_cast<uint64_t>(reads.front().offset) == end4);
  REQUIRE(Consecutive(reads));
  // Any order, twice (sample sizes are cached by the first).
  ExpectSamples(r->get(), spec, {8, 0, 6, 2, 4, 1, 7, 3, 5, 0, 8, 7, 1});
  for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
    REQUIRE((*r)->sample_size(i) == spec.sample_sizes[i]);
  }
}

TEST_CASE("tfrecord large records: CRC mismatches name the record on both read paths",
          "[format][tfrecord][crc][large]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto format = MakeFormatByName("tfrecord");
  const FileSpec spec = Spec({100000, 300000, 80000});
  const std::string path = tmp / "big.tfrecord";
  REQUIRE(format->Write(storage.get(), path, spec, {}).ok());
  const std::string original = ReadTextFile(path);
  const auto records = Records(original);
  const uint64_t r1 = records[1].first, len1 = records[1].second.size(), end1 = records[2].first;
  const uint64_t sample1 = SampleEnds(original)[1] - 300000;
  struct Flip {
    const char* what;
    uint64_t at;
    bool in_sample;
  };
  const std::vector<Flip> flips = {
      {"a sample byte in the first request", sample1 + 1000, true},
      {"a sample byte deep inside", sample1 + 200000, true},
      {"the last sample byte", sample1 + 299999, true},
      {"the key \"image\" (the prefix no longer places the sample)", original.find("image", r1),
       false},
      {"the label (after the sample)", end1 - 5, false},
      {"the stored data CRC", end1 - 2, false},
  };
  const std::string expect = path + " record 1 at offset " + std::to_string(r1) +
                             ": data CRC mismatch over bytes [" + std::to_string(r1 + 12) + ", " +
                             std::to_string(r1 + 12 + len1) + ")";
  for (const Flip& f : flips) {
    INFO(f.what);
    std::filesystem::remove(path);
    std::string bytes = original;
    bytes[f.at] = static_cast<char>(bytes[f.at] ^ 0x40);
    WriteTextFile(path, bytes);
    SampleBuffer buf;
    for (uint64_t transfer : {uint64_t{0}, uint64_t{65536}, uint64_t{4096}}) {
      INFO("transfer_size " << transfer);
      FormatOptions options;
      options.transfer_size = transfer;
      // Streamed: record 0, then record 1 fails, then the stream goes on with record 2.
      auto s = format->Open(storage.get(), path, options);
      REQUIRE(s.ok());
      ExpectSamples(s->get(), spec, {0});
      Status st = (*s)->ReadSample(1, &buf);
      INFO(st.ToString());
      REQUIRE(st.code() == StatusCode::kCorruption);
      REQUIRE(st.message().find(expect) != std::string::npos);
      ExpectSamples(s->get(), spec, {2});
      // At random: record 1 first.
      auto r = format->Open(storage.get(), path, options);
      REQUIRE(r.ok());
      st = (*r)->ReadSample(1, &buf);
      INFO(st.ToString());
      REQUIRE(st.code() == StatusCode::kCorruption);
      REQUIRE(st.message().find(expect) != std::string::npos);
      // Unchecked, the flip goes through when it is in the sample.
      options.verify = false;
      auto u = format->Open(storage.get(), path, options);
      REQUIRE(u.ok());
      for (uint64_t i : {uint64_t{0}, uint64_t{1}, uint64_t{1}, uint64_t{2}}) {
        REQUIRE((*u)->ReadSample(i, &buf).ok());
        std::string want = ExpectedSample(spec, i);
        if (i == 1 && f.in_sample) want[f.at - sample1] ^= 0x40;
        REQUIRE(BufferString(buf) == want);
      }
    }
  }
}

TEST_CASE("tfrecord large records in a file cut short are errors naming the record",
          "[format][tfrecord][large]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto format = MakeFormatByName("tfrecord");
  const FileSpec spec = Spec({100000, 100000, 100000});
  const std::string path = tmp / "cut.tfrecord";
  REQUIRE(format->Write(storage.get(), path, spec, {}).ok());
  const uint64_t r2 = Records(ReadTextFile(path))[2].first;
  FormatOptions options;
  options.transfer_size = 65536;  // the records are large: at least 64 KiB and transfer_size
  auto streamed = format->Open(storage.get(), path, options);
  auto random = format->Open(storage.get(), path, options);
  REQUIRE(streamed.ok());
  REQUIRE(random.ok());
  std::filesystem::resize_file(path, r2 + 50000);  // inside record 2's sample
  const std::string expect = path + " record 2 at offset " + std::to_string(r2) +
                             ": truncated: the file ends at " + std::to_string(r2 + 50000);
  ExpectSamples(streamed->get(), spec, {0, 1});
  SampleBuffer buf;
  Status st = (*streamed)->ReadSample(2, &buf);
  INFO(st.ToString());
  REQUIRE(st.code() == StatusCode::kCorruption);
  REQUIRE(st.message().find(expect) != std::string::npos);
  st = (*random)->ReadSample(2, &buf);
  INFO(st.ToString());
  REQUIRE(st.code() == StatusCode::kCorruption);
  REQUIRE(st.message().find(expect) != std::string::npos);
  ExpectSamples(random->get(), spec, {1, 0});
}

TEST_CASE("tfrecord without an index scans the headers; use_index=false ignores one",
          "[format][tfrecord][index]") {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  auto format = MakeFormatByName("tfrecord");
  const FileSpec spec = Spec({300, 70000, 1, 4000});
  REQUIRE(format->Write(storage.get(), "/i.tfrecord", spec, {}).ok());

  auto with = format->Open(storage.get(), "/i.tfrecord", {});
  REQUIRE(with.ok());
  REQUIRE((*with)->DescribeJson().find("\"index\":{\"path\":\"/i.tfrecord.idx\",\"found\":true,"
                                       "\"used\":true}") != std::string::npos);

  FormatOptions no_index;
  no_index.use_index = false;
  size_t before = tracer.Events().size();
  auto ignored = format->Open(storage.get(), "/i.tfrecord", no_index);
  REQUIRE(ignored.ok());
  auto reads = PreadsSince(&tracer, before);
  REQUIRE(reads.size() == 4);  // one 12-byte header read per record
  for (const TraceEvent& e : reads) REQUIRE(e.count == 12);
  REQUIRE((*ignored)->DescribeJson().find("\"found\":true,\"used\":false") != std::string::npos);
  ExpectSamples(ignored->get(), spec, {3, 1, 0, 2});

  REQUIRE(storage->Remove("/i.tfrecord.idx").ok());
  auto scanned = format->Open(storage.get(), "/i.tfrecord", {});
  REQUIRE(scanned.ok());
  REQUIRE((*scanned)->num_samples() == 4);
  REQUIRE((*scanned)->sample_size(1) == 70000);
  REQUIRE((*scanned)->DescribeJson().find("\"found\":false,\"used\":false") != std::string::npos);
  ExpectSamples(scanned->get(), spec, {2, 0, 3, 1});
}

TEST_CASE("tfrecord rejects a bad index naming the .idx and the line",
          "[format][tfrecord][index]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto format = MakeFormatByName("tfrecord");
  const FileSpec spec = Spec({100, 200, 300});
  const std::string path = tmp / "c.tfrecord";
  REQUIRE(format->Write(storage.get(), path, spec, {}).ok());
  const std::string good = ReadTextFile(path + ".idx");
  const auto records = Records(ReadTextFile(path));
  const uint64_t r1 = records[1].first, r2 = records[2].first;
  const uint64_t size = *storage->FileSize(path);
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      {"0 " + std::to_string(r1) + "\nbanana\n", "line 2: expected"},
      {"0 " + std::to_string(r1) + "\n" + std::to_string(r1 + 1) + " 5\n",
       "line 2: record at offset"},
      {"0 " + std::to_string(r1) + "\n" + std::to_string(r1) + " 8\n", "less than the 16 bytes"},
      {"0 " + std::to_string(r1) + "\n" + std::to_string(r1) + " " + std::to_string(size) + "\n",
       "line 2: record [" + std::to_string(r1)},
      {"0 " + std::to_string(r1) + "\n", "after line 1: the index covers"},
      {"0 " + std::to_string(r1) + " 9\n", "line 1: expected"},
      {"0 -1\n", "line 1: expected"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    std::filesystem::remove(path + ".idx");
    WriteTextFile(path + ".idx", c.text);
    auto r = format->Open(storage.get(), path, {});
    REQUIRE(r.status().code() == StatusCode::kCorruption);
    INFO(r.status().message());
    REQUIRE(r.status().message().find(path + ".idx") != std::string::npos);
    REQUIRE(r.status().message().find(c.expect) != std::string::npos);
  }
  // An index that tiles the file but disagrees with a record's length field.
  std::filesystem::remove(path + ".idx");
  WriteTextFile(path + ".idx", "0 " + std::to_string(r1 + 3) + "\n" + std::to_string(r1 + 3) + " " +
                                   std::to_string(r2 - r1 - 3) + "\n" + std::to_string(r2) + " " +
                                   std::to_string(size - r2) + "\n");
  auto r = format->Open(storage.get(), path, {});
  REQUIRE(r.ok());
  SampleBuffer buf;
  Status st = (*r)->ReadSample(0, &buf);
  REQUIRE(st.code() == StatusCode::kCorruption);
  INFO(st.message());
  REQUIRE(st.message().find("record 0 at offset 0: length field says") != std::string::npos);
  REQUIRE(st.message().find(std::to_string(r1 - 16) + " bytes but the index " + path +
                            ".idx says " + std::to_string(r1 + 3 - 16)) != std::string::npos);
  ExpectSamples(r->get(), spec, {2});
  // With blank lines and CRLF, DALI-style text still parses.
  std::filesystem::remove(path + ".idx");
  std::string crlf;
  for (char ch : good) crlf += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
  WriteTextFile(path + ".idx", crlf + "\n\n");
  auto ok = format->Open(storage.get(), path, {});
  REQUIRE(ok.ok());
  ExpectSamples(ok->get(), spec, {1, 2, 0});
}

TEST_CASE("tfrecord CRC mismatches are errors naming file, record and offset",
          "[format][tfrecord][crc]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto format = MakeFormatByName("tfrecord");
  const FileSpec spec = Spec({1000, 2000, 3000});
  const std::string path = tmp / "e.tfrecord";
  REQUIRE(format->Write(storage.get(), path, spec, {}).ok());
  const std::string original = ReadTextFile(path);
  const auto records = Records(original);
  const uint64_t r1 = records[1].first;
  auto restore = [&] {
    std::filesystem::remove(path);
    WriteTextFile(path, original);
  };
  auto flip = [&](uint64_t at) {
    const std::string b = ReadBytes(path, static_cast<long>(at), 1);
    PatchBytes(path, static_cast<long>(at), std::string(1, static_cast<char>(b[0] ^ 0x40)));
  };
  SampleBuffer buf;

  SECTION("a data byte") {
    flip(r1 + 12 + 500);  // inside the image bytes
    auto r = format->Open(storage.get(), path, {});
    REQUIRE(r.ok());
    ExpectSamples(r->get(), spec, {0, 2});
    Status st = (*r)->ReadSample(1, &buf);
    REQUIRE(st.code() == StatusCode::kCorruption);
    INFO(st.message());
    REQUIRE(st.message().find(path + " record 1 at offset " + std::to_string(r1) +
                              ": data CRC mismatch over bytes [" + std::to_string(r1 + 12)) !=
            std::string::npos);
    // Streaming reaches it too, and goes on after it.
    auto s = format->Open(storage.get(), path, {});
    REQUIRE((*s)->ReadSample(0, &buf).ok());
    st = (*s)->ReadSample(1, &buf);
    REQUIRE(st.code() == StatusCode::kCorruption);
    REQUIRE(st.message().find(path + " record 1 at offset " + std::to_string(r1) +
                              ": data CRC mismatch over bytes [" + std::to_string(r1 + 12)) !=
            std::string::npos);
    ExpectSamples(s->get(), spec, {2});
    const std::string json = (*s)->DescribeJson();
    REQUIRE(json.find("\"crc_check\":{\"ok\":false,\"records_checked\":1,") != std::string::npos);
    // ...and lists it as a problem, so `dlio-run inspect` exits 1.
    REQUIRE(json.find("\"problems\":[\"Corruption: " + path + " record 1") != std::string::npos);

    FormatOptions off;
    off.verify = false;
    auto unchecked = format->Open(storage.get(), path, off);
    REQUIRE(unchecked.ok());
    REQUIRE((*unchecked)->ReadSample(1, &buf).ok());
    std::string expect = ExpectedSample(spec, 1);
    const std::string got = BufferString(buf);
    REQUIRE(got.size() == expect.size());
    REQUIRE(got != expect);  // the flipped byte went through unchecked
    restore();
  }
  SECTION("a length byte") {
    flip(r1 + 1);
    // The index and the length field disagree.
    auto r = format->Open(storage.get(), path, {});
    REQUIRE(r.ok());
    Status st = (*r)->ReadSample(1, &buf);
    REQUIRE(st.code() == StatusCode::kCorruption);
    REQUIRE(st.message().find("record 1 at offset " + std::to_string(r1) + ": length field says") !=
            std::string::npos);
    // Without the index the scan meets it on open.
    FormatOptions no_index;
    no_index.use_index = false;
    auto scan = format->Open(storage.get(), path, no_index);
    REQUIRE(scan.status().code() == StatusCode::kCorruption);
    INFO(scan.status().message());
    REQUIRE(scan.status().message().find(path + " record 1 at offset " + std::to_string(r1) +
                                         ": length CRC mismatch") != std::string::npos);
    restore();
  }
  SECTION("the stored length CRC, with and without verify") {
    flip(r1 + 9);
    auto r = format->Open(storage.get(), path, {});
    REQUIRE(r.ok());
    Status st = (*r)->ReadSample(1, &buf);
    REQUIRE(st.code() == StatusCode::kCorruption);
    REQUIRE(st.message().find("length CRC mismatch") != std::string::npos);
    FormatOptions off;
    off.verify = false;
    off.use_index = false;
    auto unchecked = format->Open(storage.get(), path, off);
    REQUIRE(unchecked.ok());
    ExpectSamples(unchecked->get(), spec, {1, 0, 2});
    restore();
  }
}

TEST_CASE("tfrecord truncated files are errors naming the record and offset",
          "[format][tfrecord]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto format = MakeFormatByName("tfrecord");
  const FileSpec spec = Spec({1000, 2000, 3000});
  const std::string path = tmp / "t.tfrecord";
  REQUIRE(format->Write(storage.get(), path, spec, {}).ok());
  const auto records = Records(ReadTextFile(path));
  const uint64_t size = *storage->FileSize(path), r2 = records[2].first;
  FormatOptions no_index;
  no_index.use_index = false;

  // Open, then the file shrinks under the reader: both read paths notice.
  auto early = format->Open(storage.get(), path, {});
  REQUIRE(early.ok());
  std::filesystem::resize_file(path, size - 3);
  SampleBuffer buf;
  REQUIRE((*early)->ReadSample(0, &buf).ok());
  REQUIRE((*early)->ReadSample(1, &buf).ok());
  Status streamed = (*early)->ReadSample(2, &buf);
  REQUIRE(streamed.code() == StatusCode::kCorruption);
  INFO(streamed.message());
  REQUIRE(streamed.message().find(path) != std::string::npos);

  auto idx = format->Open(storage.get(), path, {});
  REQUIRE(idx.status().code() == StatusCode::kCorruption);
  REQUIRE(idx.status().message().find(".idx line 3") != std::string::npos);
  auto scan = format->Open(storage.get(), path, no_index);
  REQUIRE(scan.status().code() == StatusCode::kCorruption);
  INFO(scan.status().message());
  REQUIRE(scan.status().message().find(path + " record 2 at offset " + std::to_string(r2) +
                                       ": truncated") != std::string::npos);
  std::filesystem::resize_file(path, r2 + 5);
  auto header = format->Open(storage.get(), path, no_index);
  REQUIRE(header.status().code() == StatusCode::kCorruption);
  REQUIRE(header.status().message().find("record 2 at offset " + std::to_string(r2) +
                                         ": truncated header") != std::string::npos);
}

TEST_CASE("tfrecord ReadSample from 4 threads returns the right bytes", "[format][tfrecord]") {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("tfrecord");
  std::vector<uint64_t> sizes;
  // Every fifth record is large (its sample read straight into the caller's buffer).
  for (int i = 0; i < 200; ++i) sizes.push_back(50 + (i * 7919) % 9000 + (i % 5 == 0 ? 70000 : 0));
  const FileSpec spec = Spec(sizes, 3);
  REQUIRE(format->Write(storage.get(), "/m.tfrecord", spec, {}).ok());
  std::vector<std::string> expected;
  for (uint64_t i = 0; i < sizes.size(); ++i) expected.push_back(ExpectedSample(spec, i));
  for (uint64_t transfer : {uint64_t{777}, uint64_t{65536}}) {
    FormatOptions options;
    options.transfer_size = transfer;
    auto r = format->Open(storage.get(), "/m.tfrecord", options);
    REQUIRE(r.ok());
    std::atomic<uint64_t> cursor{0};
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        SampleBuffer buf;
        std::mt19937 rng(t);
        // Three passes: a shared sequential order (a pipeline's read threads), then random.
        for (uint64_t s; (s = cursor.fetch_add(1)) < 3 * sizes.size();) {
          const uint64_t i = s < 2 * sizes.size() ? s % sizes.size() : rng() % sizes.size();
          if (!(*r)->ReadSample(i, &buf).ok() || BufferString(buf) != expected[i]) ++failures;
        }
      });
    }
    for (auto& th : threads) th.join();
    REQUIRE(failures.load() == 0);
  }
}

// A payload built by hand, so field order and oddities are ours to choose.
std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  return out + static_cast<char>(v);
}
std::string Field(int field, const std::string& bytes) {
  return Varint(static_cast<uint64_t>(field) << 3 | 2) + Varint(bytes.size()) + bytes;
}
std::string BytesFeature(const std::string& value) { return Field(1, Field(1, value)); }

TEST_CASE("tfrecord sample rule: 'image' first, else the first bytes feature",
          "[format][tfrecord][example]") {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("tfrecord");
  ExampleFeature id{"a_id", ExampleFeature::Kind::kInt64, {}, {}, {42}};
  ExampleFeature score{"b_score", ExampleFeature::Kind::kFloat, {}, {0.5f, 2.0f}, {}};
  ExampleFeature img{"img_raw", ExampleFeature::Kind::kBytes, {std::string(3000, 'x')}, {}, {}};
  ExampleFeature mask{"mask", ExampleFeature::Kind::kBytes, {"m"}, {}, {}};
  ExampleFeature early{"aaa", ExampleFeature::Kind::kBytes, {std::string(2000, 'a')}, {}, {}};
  ExampleFeature image{"image", ExampleFeature::Kind::kBytes, {"IMG", "second"}, {}, {}};
  ExampleFeature empty{"image", ExampleFeature::Kind::kBytes, {}, {}, {}};
  // Value before key, an unknown varint field in Example and in the map entry.
  const std::string odd =
      Varint(5 << 3) + Varint(99) +
      Field(1, Field(1, Varint(3 << 3) + Varint(1) + Field(2, BytesFeature("VALUE")) +
                            Field(1, "image")));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {SerializeExample({id, score, img, mask}), std::string(3000, 'x')},
      {SerializeExample({early, image}), "IMG"},
      {SerializeExample({empty, mask}), "m"},
      {odd, "VALUE"},
  };
  std::string file;
  for (const auto& c : cases) file += FrameTfRecord(c.first);
  for (const std::string& bad : {SerializeExample({id, score}), std::string("\x0a\x10zz")}) {
    file += FrameTfRecord(bad);
  }
  {
    auto f = storage->Open("/foreign.tfrecord", OpenMode::kCreateNew);
    REQUIRE(f.ok());
    REQUIRE((*f)->WriteAt(0, file.data(), file.size()).ok());
  }
  auto r = format->Open(storage.get(), "/foreign.tfrecord", {});
  REQUIRE(r.ok());
  REQUIRE((*r)->num_samples() == cases.size() + 2);
  SampleBuffer buf;
  for (size_t i = 0; i < cases.size(); ++i) {  // streamed
    INFO("record " << i);
    Status st = (*r)->ReadSample(i, &buf);
    INFO(st.ToString());
    REQUIRE(st.ok());
    REQUIRE(BufferString(buf) == cases[i].second);
  }
  for (size_t i = cases.size(); i-- > 0;) {  // random access
    INFO("record " << i);
    REQUIRE((*r)->sample_size(i) == cases[i].second.size());
    Status st = (*r)->ReadSample(i, &buf);
    INFO(st.ToString());
    REQUIRE(st.ok());
    REQUIRE(BufferString(buf) == cases[i].second);
  }
  Status none = (*r)->ReadSample(cases.size(), &buf);
  REQUIRE(none.code() == StatusCode::kCorruption);
  REQUIRE(none.message().find("record 4 at offset") != std::string::npos);
  REQUIRE(none.message().find("no bytes_list feature") != std::string::npos);
  Status garbage = (*r)->ReadSample(cases.size() + 1, &buf);
  REQUIRE(garbage.code() == StatusCode::kCorruption);
  INFO(garbage.message());
  REQUIRE(garbage.message().find("runs past its message") != std::string::npos);
  REQUIRE((*r)->sample_size(cases.size() + 1) == 0);
  const std::string json = (*r)->DescribeJson();
  REQUIRE(json.find("{\"key\":\"img_raw\",\"kind\":\"bytes_list\",\"values\":1}") !=
          std::string::npos);
  REQUIRE(json.find("\"crc_check\":{\"ok\":false,\"records_checked\":4,") != std::string::npos);
}

TEST_CASE("tfrecord large foreign records: sample past the prefix, big features after it",
          "[format][tfrecord][example][large]") {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("tfrecord");
  const std::string big_image(100000, 'I'), big_other(100000, 'z'), a70k(70000, 'a');
  // The prefix cannot place the sample: "image" comes after a 2000-byte feature, or there is
  // no "image" and the whole map must be seen. Or it can, and a big feature follows the sample.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {SerializeExample({{"aaa", ExampleFeature::Kind::kBytes, {std::string(2000, 'a')}, {}, {}},
                         {"image", ExampleFeature::Kind::kBytes, {big_image}, {}, {}}}),
       big_image},
      {SerializeExample({{"a_big", ExampleFeature::Kind::kBytes, {a70k}, {}, {}},
                         {"b", ExampleFeature::Kind::kBytes, {"b"}, {}, {}}}),
       a70k},
      {SerializeExample({{"image", ExampleFeature::Kind::kBytes, {"small"}, {}, {}},
                         {"zzz", ExampleFeature::Kind::kBytes, {big_other}, {}, {}}}),
       "small"},
      {SerializeExample({{"image", ExampleFeature::Kind::kBytes, {big_image}, {}, {}},
                         {"zzz", ExampleFeature::Kind::kBytes, {big_other}, {}, {}}}),
       big_image},
  };
  std::string file;
  for (const auto& c : cases) file += FrameTfRecord(c.first);
  {
    auto f = storage->Open("/fl.tfrecord", OpenMode::kCreateNew);
    REQUIRE(f.ok());
    REQUIRE((*f)->WriteAt(0, file.data(), file.size()).ok());
  }
  for (uint64_t transfer : {uint64_t{0}, uint64_t{4096}, uint64_t{65536}}) {
    for (bool verify : {true, false}) {
      INFO("transfer_size " << transfer << " verify " << verify);
      FormatOptions options;
      options.transfer_size = transfer;
      options.verify = verify;
      auto r = format->Open(storage.get(), "/fl.tfrecord", options);
      REQUIRE(r.ok());
      SampleBuffer buf;
      for (size_t i : {0, 1, 2, 3, 3, 1, 2, 0}) {  // streamed, then at random
        INFO("record " << i);
        Status st = (*r)->ReadSample(i, &buf);
        INFO(st.ToString());
        REQUIRE(st.ok());
        REQUIRE(BufferString(buf) == cases[i].second);
        REQUIRE((*r)->sample_size(i) == cases[i].second.size());
      }
    }
  }
}

TEST_CASE("FindSampleBytes answers from a prefix when it can", "[format][tfrecord][example]") {
  const std::string ours =
      SerializeExample({{"image", ExampleFeature::Kind::kBytes, {std::string(100000, 'z')}, {}, {}},
                        {"label", ExampleFeature::Kind::kInt64, {}, {}, {7}}});
  format_internal::SampleSpan span;
  const char* error = nullptr;
  uint64_t at = 0;
  REQUIRE(format_internal::FindSampleBytes(U8(ours), 64, ours.size(), &span, &error, &at) ==
          format_internal::ExampleScan::kFound);
  REQUIRE(span.size == 100000);
  REQUIRE(ours.substr(span.offset, 3) == "zzz");
  const std::string foreign =
      SerializeExample({{"a", ExampleFeature::Kind::kBytes, {std::string(1000, 'a')}, {}, {}},
                        {"b", ExampleFeature::Kind::kBytes, {"b"}, {}, {}}});
  REQUIRE(format_internal::FindSampleBytes(U8(foreign), 64, foreign.size(), &span, &error, &at) ==
          format_internal::ExampleScan::kNeedMore);
  REQUIRE(format_internal::FindSampleBytes(U8(foreign), foreign.size(), foreign.size(), &span,
                                           &error, &at) == format_internal::ExampleScan::kFound);
  REQUIRE(span.size == 1000);
  // Every truncation of a valid payload is an error, never a read past the end.
  for (size_t n = 0; n < 40; ++n) {
    const auto r = format_internal::FindSampleBytes(U8(ours), n, n, &span, &error, &at);
    REQUIRE(r == format_internal::ExampleScan::kError);
    REQUIRE(at <= n);
  }
}

TEST_CASE("tfrecord DescribeJson reports records, sizes, index, features and CRCs",
          "[format][tfrecord]") {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("tfrecord");
  REQUIRE(format->Write(storage.get(), "/d.tfrecord", Spec({10, 30, 20}), {}).ok());
  auto r = format->Open(storage.get(), "/d.tfrecord", {});
  REQUIRE(r.ok());
  const std::string json = (*r)->DescribeJson();
  INFO(json);
  for (const std::string part :
       {"\"format\":\"tfrecord\"", "\"num_records\":3", "\"num_samples\":3",
        "\"sample_size\":{\"min\":10,\"max\":30,\"mean\":20.0}", "\"sample_sizes\":[10,30,20]",
        "\"found\":true,\"used\":true", "{\"key\":\"image\",\"kind\":\"bytes_list\",\"values\":1}",
        "{\"key\":\"label\",\"kind\":\"int64_list\",\"values\":1}",
        "\"crc_check\":{\"ok\":true,\"records_checked\":3}"}) {
    REQUIRE(json.find(part) != std::string::npos);
  }
  REQUIRE(*DetectFormat(storage.get(), "/d.tfrecord") == "tfrecord");
}

}  // namespace
}  // namespace dlio::testing
