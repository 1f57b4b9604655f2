// tfrecord read patterns: the requests the reader makes while streaming, at random, and for
// large records, and its errors on large records.
#include <catch2/catch.hpp>
#include <filesystem>

#include "format/tfrecord_test_util.h"

namespace dlio::testing {
namespace {

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
    options.io_model = IoModel::kNative;  // the native reader's requests
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
  options.io_model = IoModel::kNative;  // the native reader's requests
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
    options.io_model = IoModel::kNative;  // the native reader's requests
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
  auto r = format->Open(storage.get(), "/e.tfrecord", NativeOptions());
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
  options.io_model = IoModel::kNative;  // the native reader's requests
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
      options.io_model = IoModel::kNative;  // the native reader's requests
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
  options.io_model = IoModel::kNative;  // the native reader's requests
  options.transfer_size = 65536;        // the records are large: at least 64 KiB and transfer_size
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

}  // namespace
}  // namespace dlio::testing
