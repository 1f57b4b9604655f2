// tfrecord: which bytes of a tf.train.Example are the sample (foreign Examples included).
#include <catch2/catch.hpp>

#include "format/tfrecord_test_util.h"

namespace dlio::testing {
namespace {

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
  auto r = format->Open(storage.get(), "/foreign.tfrecord", NativeOptions());
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
      options.io_model = IoModel::kNative;  // the native reader's requests
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

}  // namespace
}  // namespace dlio::testing
