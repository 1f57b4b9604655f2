// Decompression bombs: small jpeg/png files whose headers claim huge images are refused from the
// header (reader.max_decoded_bytes), before the pixels are allocated.
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "format/format_test_util.h"
#include "png_bytes.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

// A valid 8-bit grayscale PNG of width x height black pixels when `rows` == height; with fewer
// rows its IDAT holds only that many (the header still claims the full size).
std::string BlackPng(uint32_t width, uint32_t height, uint32_t rows) {
  std::string png = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  PutBe32(&ihdr, width);
  PutBe32(&ihdr, height);
  ihdr += std::string("\x08\x00\x00\x00\x00", 5);  // depth 8, gray, deflate, filter 0, no interlace
  PutChunk(&png, "IHDR", ihdr);
  const std::vector<uint8_t> raw(size_t{rows} * (width + 1), 0);  // filter byte 0, black pixels
  uLongf size = compressBound(raw.size());
  std::string idat(size, '\0');
  REQUIRE(compress2(reinterpret_cast<Bytef*>(idat.data()), &size, raw.data(), raw.size(), 9) ==
          Z_OK);
  idat.resize(size);
  PutChunk(&png, "IDAT", idat);
  PutChunk(&png, "IEND", "");
  return png;
}

// Our writer's small jpeg with the frame header (SOF) patched to claim width x height.
std::string JpegClaiming(Storage* storage, uint16_t width, uint16_t height) {
  auto jpeg = MakeFormatByName("jpeg");
  FileSpec spec;
  spec.seed = 3;
  spec.sample_sizes = {256};  // 16 x 16
  REQUIRE(jpeg->Write(storage, "/small.jpeg", spec, {}).ok());
  auto file = storage->Open("/small.jpeg", OpenMode::kRead);
  REQUIRE(file.ok());
  std::string bytes(static_cast<size_t>((*file)->Size().value()), '\0');
  REQUIRE((*file)->ReadExactAt(0, bytes.size(), bytes.data()).ok());
  const size_t sof = bytes.find("\xFF\xC0");
  REQUIRE(sof != std::string::npos);
  bytes[sof + 5] = static_cast<char>(height >> 8);
  bytes[sof + 6] = static_cast<char>(height & 0xFF);
  bytes[sof + 7] = static_cast<char>(width >> 8);
  bytes[sof + 8] = static_cast<char>(width & 0xFF);
  return bytes;
}

Status Decode(const Format& f, const std::string& bytes, uint64_t limit, SampleBuffer* out) {
  return f.DecodeWithLimit(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), limit,
                           out);
}

TEST_CASE("a valid png larger than reader.max_decoded_bytes is refused, a smaller one decodes",
          "[format][image][png]") {
  auto png = MakeFormatByName("png");
  const std::string bytes = BlackPng(4000, 3000, 3000);  // 12 MB of pixels in a few KB
  REQUIRE(bytes.size() < 100000);
  SampleBuffer pixels;
  Status refused = Decode(*png, bytes, 1 << 20, &pixels);
  INFO(refused.ToString());
  CHECK(refused.code() == StatusCode::kResourceExhausted);
  CHECK(refused.message().find("4000x3000") != std::string::npos);
  CHECK(refused.message().find("reader.max_decoded_bytes (1048576)") != std::string::npos);
  CHECK(pixels.capacity() < (1u << 20));  // refused before the buffer grew
  REQUIRE(Decode(*png, bytes, 12000000, &pixels).ok());
  CHECK(pixels.size() == 12000000);
}

TEST_CASE("headers claiming 60000x60000 are refused before allocating", "[format][image]") {
  auto storage = BoundMemoryStorage();
  const std::string png_bytes = BlackPng(60000, 60000, 2);
  const std::string jpeg_bytes = JpegClaiming(storage.get(), 60000, 60000);
  for (const std::string name : {"png", "jpeg"}) {
    CAPTURE(name);
    auto format = MakeFormatByName(name);
    const std::string& bytes = name == "png" ? png_bytes : jpeg_bytes;
    SampleBuffer pixels;
    // Plain Decode applies the default limit (1 GiB); the image would take 3.6 GB.
    Status st =
        format->Decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &pixels);
    INFO(st.ToString());
    CHECK(st.code() == StatusCode::kResourceExhausted);
    CHECK(st.message().find(name + ": a 60000x60000 image") == 0);
    CHECK(st.message().find("reader.max_decoded_bytes (1073741824)") != std::string::npos);
    CHECK(pixels.capacity() == 0);

    // A reader opened for decoding refuses the file at Open, naming it; without decode it opens
    // (the sample is the file's bytes).
    const std::string path = "/bomb." + name;
    auto file = storage->Open(path, OpenMode::kCreateNew);
    REQUIRE(file.ok());
    REQUIRE((*file)->WriteAt(0, bytes.data(), bytes.size()).ok());
    REQUIRE((*file)->Close().ok());
    FormatOptions options;
    options.decode = true;
    auto reader = format->Open(storage.get(), path, options);
    REQUIRE_FALSE(reader.ok());
    CHECK(reader.status().code() == StatusCode::kResourceExhausted);
    CHECK(reader.status().message().find(path + ": a 60000x60000 image") == 0);
    options.max_decoded_bytes = uint64_t{4} << 30;
    CHECK(format->Open(storage.get(), path, options).ok());
    options.decode = false;
    options.max_decoded_bytes = 1;
    CHECK(format->Open(storage.get(), path, options).ok());
  }
}

}  // namespace
}  // namespace dlio::testing
