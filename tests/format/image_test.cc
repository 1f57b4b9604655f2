#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>

#include "format/format_test_util.h"
#include "format/image/image_options.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

// The pixels our writers encode for a one-sample spec (a side x side grayscale image).
std::string ExpectedPixels(uint64_t seed, uint32_t side) {
  std::string s(uint64_t{side} * side, '\0');
  format_internal::FillSampleBytes(seed, 0, 0, reinterpret_cast<uint8_t*>(s.data()), s.size());
  return s;
}

FileSpec OneImage(uint64_t seed, uint64_t record_length) {
  FileSpec spec;
  spec.seed = seed;
  spec.sample_sizes = {record_length};
  return spec;
}

double MeanAbsError(const std::string& a, const std::string& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sum += std::abs(static_cast<int>(static_cast<uint8_t>(a[i])) -
                    static_cast<int>(static_cast<uint8_t>(b[i])));
  }
  return a.empty() ? 0 : sum / a.size();
}

std::string ReadAll(Storage* storage, const std::string& path) {
  auto file = storage->Open(path, OpenMode::kRead);
  REQUIRE(file.ok());
  std::string s(static_cast<size_t>((*file)->Size().value()), '\0');
  REQUIRE((*file)->ReadExactAt(0, s.size(), s.data()).ok());
  return s;
}

void PutImageFile(Storage* storage, const std::string& path, const std::string& bytes) {
  auto file = storage->Open(path, OpenMode::kCreateNew);
  REQUIRE(file.ok());
  REQUIRE((*file)->WriteAt(0, bytes.data(), bytes.size()).ok());
  REQUIRE((*file)->Close().ok());
}

Status DecodeBytes(const Format& f, const std::string& bytes, SampleBuffer* out) {
  return f.Decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), out);
}

TEST_CASE("png and jpeg images round-trip on memory and posix storage", "[format][image]") {
  TempDir tmp;
  auto memory = BoundMemoryStorage();
  auto posix = BoundPosixStorage();
  for (Storage* storage : {memory.get(), posix.get()}) {
    for (const std::string name : {"png", "jpeg"}) {
      INFO(name << " on " << storage->name());
      auto format = MakeFormatByName(name);
      REQUIRE(format->has_decoder());
      REQUIRE_FALSE(format->exact_sample_sizes());
      const std::string path =
          (storage == posix.get() ? tmp.path() : std::string()) + "/img." + format->extension();
      const FileSpec spec = OneImage(11, 10100);  // int(sqrt(10100)) = 100
      FormatOptions options;
      options.transfer_size = 1000;
      REQUIRE(format->Write(storage, path, spec, options).ok());
      auto reader = format->Open(storage, path, options);
      INFO(reader.status().ToString());
      REQUIRE(reader.ok());
      REQUIRE((*reader)->num_samples() == 1);
      SampleBuffer encoded, pixels;
      REQUIRE((*reader)->ReadSample(0, &encoded).ok());
      REQUIRE(BufferString(encoded) == ReadAll(storage, path));  // the sample is the whole file
      REQUIRE((*reader)->sample_size(0) == encoded.size());
      const std::string json = (*reader)->DescribeJson();
      REQUIRE(json.find("\"width\":100,\"height\":100,\"channels\":1") != std::string::npos);
      REQUIRE(json.find("\"encoded_bytes\":" + std::to_string(encoded.size())) !=
              std::string::npos);

      REQUIRE(format->Decode(encoded.data(), encoded.size(), &pixels).ok());
      REQUIRE(pixels.size() == 100 * 100);
      const std::string expected = ExpectedPixels(11, 100);
      if (name == "png") {
        REQUIRE(BufferString(pixels) == expected);  // lossless
        REQUIRE(json.find("\"bit_depth\":8,\"color_type\":\"gray\"") != std::string::npos);
      } else {
        // Random pixels are the worst case for JPEG; at quality 90 the error stays a few levels.
        const double mae = MeanAbsError(BufferString(pixels), expected);
        INFO("mean abs error " << mae);
        REQUIRE(mae < 8.0);
        REQUIRE(json.find("\"color_space\":\"grayscale\"") != std::string::npos);
      }
    }
  }
}

TEST_CASE("jpeg quality trades size for error", "[format][image][jpeg]") {
  auto storage = BoundMemoryStorage();
  auto jpeg = MakeFormatByName("jpeg");
  const FileSpec spec = OneImage(3, 64 * 64);
  const std::string expected = ExpectedPixels(3, 64);
  uint64_t last_size = 0;
  double last_error = 1e9;
  for (int quality : {30, 75, 90, 100}) {
    INFO("quality " << quality);
    FormatOptions options;
    options.formats.Get<ImageOptions>().quality = quality;
    const std::string path = "/q" + std::to_string(quality) + ".jpeg";
    REQUIRE(jpeg->Write(storage.get(), path, spec, options).ok());
    const std::string bytes = ReadAll(storage.get(), path);
    SampleBuffer pixels;
    REQUIRE(DecodeBytes(*jpeg, bytes, &pixels).ok());
    const double mae = MeanAbsError(BufferString(pixels), expected);
    REQUIRE(bytes.size() > last_size);
    REQUIRE(mae < last_error);
    last_size = bytes.size();
    last_error = mae;
  }
  REQUIRE(last_error < 2.0);  // quality 100
  for (int bad : {0, 101}) {
    FormatOptions options;
    options.formats.Get<ImageOptions>().quality = bad;
    Status st = jpeg->Write(storage.get(), "/bad.jpeg", spec, options);
    REQUIRE(st.code() == StatusCode::kInvalidArgument);
    REQUIRE(st.message().find("dataset.image_quality") != std::string::npos);
    REQUIRE_FALSE(storage->Exists("/bad.jpeg").value());
  }
}

TEST_CASE("image writers store one image per file and size it as DLIO does", "[format][image]") {
  auto storage = BoundMemoryStorage();
  for (const std::string name : {"png", "jpeg"}) {
    INFO(name);
    auto format = MakeFormatByName(name);
    FileSpec spec;
    spec.sample_sizes = {1000, 1000};
    Status st = format->Write(storage.get(), "/two." + name, spec, {});
    REQUIRE(st.code() == StatusCode::kInvalidArgument);
    REQUIRE(st.message().find("dataset.num_samples_per_file") != std::string::npos);
    spec.sample_sizes.clear();
    REQUIRE(format->Write(storage.get(), "/none." + name, spec, {}).code() ==
            StatusCode::kInvalidArgument);
    REQUIRE_FALSE(storage->Exists("/two." + name).value());
    // dim = int(sqrt(record_length)), at least 1.
    for (auto [record, side] : {std::pair<uint64_t, uint32_t>{0, 1},
                                {3, 1},
                                {4, 2},
                                {255, 15},
                                {256, 16},
                                {150528, 387}}) {
      const std::string path = "/s" + std::to_string(record) + "." + name;
      REQUIRE(format->Write(storage.get(), path, OneImage(1, record), {}).ok());
      auto reader = format->Open(storage.get(), path, {});
      REQUIRE(reader.ok());
      const std::string dims =
          "\"width\":" + std::to_string(side) + ",\"height\":" + std::to_string(side);
      REQUIRE((*reader)->DescribeJson().find(dims) != std::string::npos);
    }
  }
}

TEST_CASE("image reads follow transfer_size, Open reads the head and the tail",
          "[format][image][transfer]") {
  for (const std::string name : {"png", "jpeg"}) {
    INFO(name);
    MemoryTracer tracer;
    auto storage = BoundMemoryStorage(&tracer);
    auto format = MakeFormatByName(name);
    const std::string path = "/t." + name;
    REQUIRE(format->Write(storage.get(), path, OneImage(5, 40000), {}).ok());
    const uint64_t size = storage->FileSize(path).value();
    REQUIRE(size > 20000);
    for (uint64_t transfer : {uint64_t{0}, uint64_t{4096}}) {
      FormatOptions options;
      options.transfer_size = transfer;
      const IoStats at_open = storage->stats();
      auto reader = format->Open(storage.get(), path, options);
      REQUIRE(reader.ok());
      const IoStats opened = storage->stats();
      REQUIRE(opened.read_ops - at_open.read_ops == 2);  // header request + end-marker request
      REQUIRE(opened.read_bytes - at_open.read_bytes <= 4096 + 12);
      const size_t mark = tracer.Events().size();
      SampleBuffer buf;
      REQUIRE((*reader)->ReadSample(0, &buf).ok());
      const IoStats after = storage->stats();
      REQUIRE(after.read_bytes - opened.read_bytes == size);
      const uint64_t want = transfer == 0 ? 1 : (size + transfer - 1) / transfer;
      REQUIRE(after.read_ops - opened.read_ops == want);
      auto events = tracer.Events();
      int64_t next = 0;
      for (size_t i = mark; i < events.size(); ++i) {
        if (std::string(events[i].name) != "pread") continue;
        REQUIRE(events[i].offset == next);
        if (transfer != 0) REQUIRE(events[i].count <= static_cast<int64_t>(transfer));
        next += events[i].count;
      }
      REQUIRE(next == static_cast<int64_t>(size));
    }
  }
}

TEST_CASE("image Open rejects wrong magic and truncated files naming file and offset",
          "[format][image]") {
  auto storage = BoundMemoryStorage();
  for (const std::string name : {"png", "jpeg"}) {
    INFO(name);
    auto format = MakeFormatByName(name);
    REQUIRE(format->Write(storage.get(), "/good." + name, OneImage(2, 5000), {}).ok());
    const std::string good = ReadAll(storage.get(), "/good." + name);

    PutImageFile(storage.get(), "/magic." + name, "GIF89a" + good.substr(6));
    auto magic = format->Open(storage.get(), "/magic." + name, {});
    REQUIRE(magic.status().code() == StatusCode::kCorruption);
    REQUIRE(magic.status().message().find("/magic." + name) != std::string::npos);
    REQUIRE(magic.status().message().find("offset 0") != std::string::npos);

    PutImageFile(storage.get(), "/cut." + name, good.substr(0, good.size() / 2));
    auto cut = format->Open(storage.get(), "/cut." + name, {});
    REQUIRE(cut.status().code() == StatusCode::kCorruption);
    INFO(cut.status().message());
    REQUIRE(cut.status().message().find("/cut." + name) != std::string::npos);
    REQUIRE(cut.status().message().find(
                "offset " + std::to_string(good.size() / 2 - (name == "png" ? 12 : 2))) !=
            std::string::npos);

    for (size_t n : {0, 1, 3, 7, 20}) {
      PutImageFile(storage.get(), "/tiny" + std::to_string(n) + "." + name, good.substr(0, n));
      auto tiny = format->Open(storage.get(), "/tiny" + std::to_string(n) + "." + name, {});
      REQUIRE(tiny.status().code() == StatusCode::kCorruption);
    }
  }
}

TEST_CASE("png Open checks the IHDR chunk and its CRC", "[format][image][png]") {
  auto storage = BoundMemoryStorage();
  auto png = MakeFormatByName("png");
  REQUIRE(png->Write(storage.get(), "/a.png", OneImage(2, 900), {}).ok());
  std::string bytes = ReadAll(storage.get(), "/a.png");
  std::string bad_crc = bytes;
  bad_crc[18] ^= 0x01;  // width changes, CRC no longer matches
  PutImageFile(storage.get(), "/crc.png", bad_crc);
  auto r = png->Open(storage.get(), "/crc.png", {});
  REQUIRE(r.status().code() == StatusCode::kCorruption);
  REQUIRE(r.status().message().find("offset 29") != std::string::npos);
  std::string not_ihdr = bytes;
  not_ihdr[12] = 'X';
  PutImageFile(storage.get(), "/type.png", not_ihdr);
  r = png->Open(storage.get(), "/type.png", {});
  REQUIRE(r.status().code() == StatusCode::kCorruption);
  REQUIRE(r.status().message().find("offset 8") != std::string::npos);
}

TEST_CASE("Decode of damaged images returns Corruption, never crashes", "[format][image]") {
  auto storage = BoundMemoryStorage();
  for (const std::string name : {"png", "jpeg"}) {
    INFO(name);
    auto format = MakeFormatByName(name);
    REQUIRE(format->Write(storage.get(), "/d." + name, OneImage(9, 20000), {}).ok());
    const std::string good = ReadAll(storage.get(), "/d." + name);
    SampleBuffer pixels;
    REQUIRE(DecodeBytes(*format, good, &pixels).ok());
    // Cut anywhere: in the header, in the pixel data, just before the end marker.
    for (size_t keep : {size_t{0}, size_t{2}, size_t{10}, size_t{40}, size_t{300}, good.size() / 2,
                        good.size() - 13, good.size() - 2}) {
      INFO("first " << keep << " of " << good.size() << " bytes");
      Status st = DecodeBytes(*format, good.substr(0, keep), &pixels);
      INFO(st.ToString());
      REQUIRE(st.code() == StatusCode::kCorruption);
      REQUIRE(st.message().rfind(name + ":", 0) == 0);
    }
    // Overwritten bytes in the middle of the compressed data.
    std::string damaged = good;
    for (size_t i = good.size() / 3; i < good.size() / 3 + 64; ++i) damaged[i] = '\xFF';
    Status st = DecodeBytes(*format, damaged, &pixels);
    INFO(st.ToString());
    REQUIRE(st.code() == StatusCode::kCorruption);
    std::string garbage(5000, '\0');
    for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>(i * 131 + 7);
    REQUIRE(DecodeBytes(*format, garbage, &pixels).code() == StatusCode::kCorruption);
    REQUIRE(DecodeBytes(*format, good.substr(0, 4) + garbage, &pixels).code() ==
            StatusCode::kCorruption);
  }
}

TEST_CASE("jpeg Open reads the whole file when the header outgrows the first request",
          "[format][image][jpeg]") {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  auto jpeg = MakeFormatByName("jpeg");
  REQUIRE(jpeg->Write(storage.get(), "/a.jpeg", OneImage(4, 30000), {}).ok());
  const std::string bytes = ReadAll(storage.get(), "/a.jpeg");
  // A 6000-byte COM segment right after SOI pushes the frame header past 4096 bytes.
  std::string comment = "\xFF\xFE";
  comment += static_cast<char>((6000 + 2) >> 8);
  comment += static_cast<char>((6000 + 2) & 0xFF);
  comment += std::string(6000, 'c');
  PutImageFile(storage.get(), "/big_header.jpeg", bytes.substr(0, 2) + comment + bytes.substr(2));
  FormatOptions options;
  options.transfer_size = 8192;
  const IoStats before = storage->stats();
  auto reader = jpeg->Open(storage.get(), "/big_header.jpeg", options);
  INFO(reader.status().ToString());
  REQUIRE(reader.ok());
  const uint64_t size = bytes.size() + comment.size();
  REQUIRE(storage->stats().read_bytes - before.read_bytes == 4096 + 2 + size);
  REQUIRE((*reader)->DescribeJson().find("\"width\":173") != std::string::npos);
  SampleBuffer encoded, pixels;
  REQUIRE((*reader)->ReadSample(0, &encoded).ok());
  REQUIRE(jpeg->Decode(encoded.data(), encoded.size(), &pixels).ok());
  REQUIRE(pixels.size() == 173 * 173);
}

TEST_CASE("DetectFormat knows jpg, jpeg and png by extension and magic",
          "[format][image][detect]") {
  auto storage = BoundMemoryStorage();
  REQUIRE(MakeFormatByName("jpeg")->Write(storage.get(), "/a.jpg", OneImage(1, 400), {}).ok());
  REQUIRE(MakeFormatByName("png")->Write(storage.get(), "/b.png", OneImage(1, 400), {}).ok());
  REQUIRE(DetectBuiltinFormat(storage.get(), "/a.jpg").value() == "jpeg");
  REQUIRE(DetectBuiltinFormat(storage.get(), "/b.png").value() == "png");
  REQUIRE(storage->Rename("/a.jpg", "/a.JPEG").ok());
  REQUIRE(DetectBuiltinFormat(storage.get(), "/a.JPEG").value() == "jpeg");
  REQUIRE(storage->Rename("/a.JPEG", "/a.img").ok());
  REQUIRE(storage->Rename("/b.png", "/b.img").ok());
  REQUIRE(DetectBuiltinFormat(storage.get(), "/a.img").value() == "jpeg");
  REQUIRE(DetectBuiltinFormat(storage.get(), "/b.img").value() == "png");
  REQUIRE(storage->Rename("/b.img", "/b.jpg").ok());
  auto wrong = DetectBuiltinFormat(storage.get(), "/b.jpg");
  REQUIRE(wrong.status().code() == StatusCode::kCorruption);
  REQUIRE(wrong.status().message().find("/b.jpg") != std::string::npos);
}

TEST_CASE("image readers work with O_DIRECT on posix storage", "[format][image][direct]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  for (const std::string name : {"png", "jpeg"}) {
    INFO(name);
    auto format = MakeFormatByName(name);
    const std::string path = tmp / ("d." + name);
    REQUIRE(format->Write(storage.get(), path, OneImage(8, 12345), {}).ok());
    FormatOptions options;
    options.direct = true;
    options.transfer_size = 4096;
    auto reader = format->Open(storage.get(), path, options);
    INFO(reader.status().ToString());
    REQUIRE(reader.ok());
    SampleBuffer encoded, pixels;
    REQUIRE((*reader)->ReadSample(0, &encoded).ok());
    REQUIRE(BufferString(encoded) == ReadTextFile(path));
    REQUIRE(format->Decode(encoded.data(), encoded.size(), &pixels).ok());
    REQUIRE(pixels.size() == 111 * 111);
  }
}

}  // namespace
}  // namespace dlio::testing
