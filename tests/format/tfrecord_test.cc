// tfrecord: round trips, the index, errors naming file, record and offset, threads, DescribeJson.
#include <catch2/catch.hpp>
#include <filesystem>
#include <thread>

#include "format/formats.h"
#include "format/tfrecord/tfrecord_options.h"
#include "format/tfrecord_test_util.h"

namespace dlio::testing {
namespace {

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
    options.io_model = IoModel::kNative;  // the native reader's requests
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

TEST_CASE("tfrecord write_index=false writes no index, existing index is never clobbered",
          "[format][tfrecord]") {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("tfrecord");
  FormatOptions options;
  options.io_model = IoModel::kNative;  // the native reader's requests
  options.formats.Get<TfrecordOptions>().write_index = false;
  REQUIRE(format->CompanionFiles("/x.tfrecord", options).empty());
  REQUIRE(format->Write(storage.get(), "/x.tfrecord", Spec({10, 20}), options).ok());
  REQUIRE_FALSE(*storage->Exists("/x.tfrecord.idx"));
  auto r = format->Open(storage.get(), "/x.tfrecord", NativeOptions());
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

TEST_CASE("tfrecord without an index scans the headers, use_index=false ignores one",
          "[format][tfrecord][index]") {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  auto format = MakeFormatByName("tfrecord");
  const FileSpec spec = Spec({300, 70000, 1, 4000});
  REQUIRE(format->Write(storage.get(), "/i.tfrecord", spec, {}).ok());

  auto with = format->Open(storage.get(), "/i.tfrecord", NativeOptions());
  REQUIRE(with.ok());
  REQUIRE((*with)->DescribeJson().find("\"index\":{\"path\":\"/i.tfrecord.idx\",\"found\":true,"
                                       "\"used\":true}") != std::string::npos);

  FormatOptions no_index;

  no_index.io_model = IoModel::kNative;  // the native reader's requests
  no_index.formats.Get<TfrecordOptions>().use_index = false;
  size_t before = tracer.Events().size();
  auto ignored = format->Open(storage.get(), "/i.tfrecord", no_index);
  REQUIRE(ignored.ok());
  auto reads = PreadsSince(&tracer, before);
  REQUIRE(reads.size() == 4);  // one 12-byte header read per record
  for (const TraceEvent& e : reads) REQUIRE(e.count == 12);
  REQUIRE((*ignored)->DescribeJson().find("\"found\":true,\"used\":false") != std::string::npos);
  ExpectSamples(ignored->get(), spec, {3, 1, 0, 2});

  REQUIRE(storage->Remove("/i.tfrecord.idx").ok());
  auto scanned = format->Open(storage.get(), "/i.tfrecord", NativeOptions());
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
    auto r = format->Open(storage.get(), path, NativeOptions());
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
  auto r = format->Open(storage.get(), path, NativeOptions());
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
  auto ok = format->Open(storage.get(), path, NativeOptions());
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
    auto r = format->Open(storage.get(), path, NativeOptions());
    REQUIRE(r.ok());
    ExpectSamples(r->get(), spec, {0, 2});
    Status st = (*r)->ReadSample(1, &buf);
    REQUIRE(st.code() == StatusCode::kCorruption);
    INFO(st.message());
    REQUIRE(st.message().find(path + " record 1 at offset " + std::to_string(r1) +
                              ": data CRC mismatch over bytes [" + std::to_string(r1 + 12)) !=
            std::string::npos);
    // Streaming reaches it too, and goes on after it.
    auto s = format->Open(storage.get(), path, NativeOptions());
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

    off.io_model = IoModel::kNative;  // the native reader's requests
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
    auto r = format->Open(storage.get(), path, NativeOptions());
    REQUIRE(r.ok());
    Status st = (*r)->ReadSample(1, &buf);
    REQUIRE(st.code() == StatusCode::kCorruption);
    REQUIRE(st.message().find("record 1 at offset " + std::to_string(r1) + ": length field says") !=
            std::string::npos);
    // Without the index the scan meets it on open.
    FormatOptions no_index;
    no_index.io_model = IoModel::kNative;  // the native reader's requests
    no_index.formats.Get<TfrecordOptions>().use_index = false;
    auto scan = format->Open(storage.get(), path, no_index);
    REQUIRE(scan.status().code() == StatusCode::kCorruption);
    INFO(scan.status().message());
    REQUIRE(scan.status().message().find(path + " record 1 at offset " + std::to_string(r1) +
                                         ": length CRC mismatch") != std::string::npos);
    restore();
  }
  SECTION("the stored length CRC, with and without verify") {
    flip(r1 + 9);
    auto r = format->Open(storage.get(), path, NativeOptions());
    REQUIRE(r.ok());
    Status st = (*r)->ReadSample(1, &buf);
    REQUIRE(st.code() == StatusCode::kCorruption);
    REQUIRE(st.message().find("length CRC mismatch") != std::string::npos);
    FormatOptions off;
    off.io_model = IoModel::kNative;  // the native reader's requests
    off.verify = false;
    off.formats.Get<TfrecordOptions>().use_index = false;
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
  no_index.io_model = IoModel::kNative;  // the native reader's requests
  no_index.formats.Get<TfrecordOptions>().use_index = false;

  // Open, then the file shrinks under the reader: both read paths notice.
  auto early = format->Open(storage.get(), path, NativeOptions());
  REQUIRE(early.ok());
  std::filesystem::resize_file(path, size - 3);
  SampleBuffer buf;
  REQUIRE((*early)->ReadSample(0, &buf).ok());
  REQUIRE((*early)->ReadSample(1, &buf).ok());
  Status streamed = (*early)->ReadSample(2, &buf);
  REQUIRE(streamed.code() == StatusCode::kCorruption);
  INFO(streamed.message());
  REQUIRE(streamed.message().find(path) != std::string::npos);

  auto idx = format->Open(storage.get(), path, NativeOptions());
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
    options.io_model = IoModel::kNative;  // the native reader's requests
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
TEST_CASE("tfrecord DescribeJson reports records, sizes, index, features and CRCs",
          "[format][tfrecord]") {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("tfrecord");
  REQUIRE(format->Write(storage.get(), "/d.tfrecord", Spec({10, 30, 20}), {}).ok());
  auto r = format->Open(storage.get(), "/d.tfrecord", NativeOptions());
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
  REQUIRE(*DetectBuiltinFormat(storage.get(), "/d.tfrecord") == "tfrecord");
}

}  // namespace
}  // namespace dlio::testing
