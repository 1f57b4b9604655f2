// Pillow (python3-pil, which decodes with the same system libjpeg-turbo and zlib) and file(1)
// read the jpeg/png files we write, and we read and decode what Pillow writes. Uses Debian's
// /usr/bin/python3 (SystemPython()); fails loudly when Pillow is missing.
#include <zlib.h>

#include <catch2/catch.hpp>

#include "format/format_test_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

void RequirePillow() {
  const CommandResult r = RunCommand(SystemPython() + " -c 'import PIL.Image, numpy'");
  INFO("interop tests need Pillow in " << SystemPython()
                                       << " (apt-get install python3-pil): " << r.output);
  REQUIRE(r.exit_code == 0);
}

CommandResult RunPython(const TempDir& tmp, const std::string& script, const std::string& args) {
  const std::string path = tmp / "script.py";
  WriteTextFile(path, script);
  return RunCommand(SystemPython() + " " + path + " " + args);
}

// Prints "<name> <format> <width> <height> <mode> <crc32 of the pixels>" for each image path.
constexpr const char* kPillowDescribe = R"(
import sys, zlib
from PIL import Image
for path in sys.argv[1:]:
    im = Image.open(path)
    im.load()
    print(path.rsplit('/', 1)[1], im.format, im.size[0], im.size[1], im.mode,
          zlib.crc32(im.tobytes()))
)";

std::string Crc(const std::string& s) {
  return std::to_string(
      crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

std::string DecodeFile(Storage* storage, const std::string& format, const std::string& path) {
  auto f = MakeFormatByName(format);
  auto reader = f->Open(storage, path, {});
  INFO(path << ": " << reader.status().ToString());
  REQUIRE(reader.ok());
  SampleBuffer encoded, pixels;
  REQUIRE((*reader)->ReadSample(0, &encoded).ok());
  Status st = f->Decode(encoded.data(), encoded.size(), &pixels);
  INFO(st.ToString());
  REQUIRE(st.ok());
  return BufferString(pixels);
}

TEST_CASE("Pillow and file(1) read the jpeg and png files we write", "[interop][image]") {
  RequirePillow();
  TempDir tmp;
  auto storage = BoundPosixStorage();
  FileSpec spec;
  spec.seed = 13;
  spec.sample_sizes = {150528};  // 387 x 387, resnet50's record_length
  std::string pixels(387 * 387, '\0');
  format_internal::FillSampleBytes(13, 0, 0, reinterpret_cast<uint8_t*>(pixels.data()),
                                   pixels.size());
  REQUIRE(MakeFormatByName("png")->Write(storage.get(), tmp / "a.png", spec, {}).ok());
  REQUIRE(MakeFormatByName("jpeg")->Write(storage.get(), tmp / "a.jpeg", spec, {}).ok());
  const std::string decoded_jpeg = DecodeFile(storage.get(), "jpeg", tmp / "a.jpeg");

  const CommandResult r = RunPython(tmp, kPillowDescribe, tmp / "a.png" + " " + tmp / "a.jpeg");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // PNG is lossless: Pillow sees our pixels. For JPEG, Pillow's decode (same libjpeg-turbo,
  // default settings) gives exactly what our Decode gives.
  REQUIRE(r.output.find("a.png PNG 387 387 L " + Crc(pixels)) != std::string::npos);
  REQUIRE(r.output.find("a.jpeg JPEG 387 387 L " + Crc(decoded_jpeg)) != std::string::npos);

  const CommandResult file = RunCommand("file -b " + tmp / "a.png" + " " + tmp / "a.jpeg");
  INFO(file.output);
  if (file.exit_code == 0) {  // file(1) is optional on the build host
    REQUIRE(file.output.find("PNG image data, 387 x 387, 8-bit grayscale, non-interlaced") !=
            std::string::npos);
    REQUIRE(file.output.find("JPEG image data") != std::string::npos);
    REQUIRE(file.output.find("387x387, components 1") != std::string::npos);
  }
}

TEST_CASE("Pillow reads the RGB images dataset.image_channels 3 makes", "[interop][image]") {
  RequirePillow();
  TempDir tmp;
  auto storage = BoundPosixStorage();
  FileSpec spec;
  spec.seed = 5;
  spec.sample_sizes = {196608 + 500};  // floor(sqrt(197108 / 3)) = 256: a 256 x 256 RGB image
  FormatOptions rgb;
  rgb.image.channels = 3;
  std::string pixels(256 * 256 * 3, '\0');
  format_internal::FillSampleBytes(5, 0, 0, reinterpret_cast<uint8_t*>(pixels.data()),
                                   pixels.size());
  REQUIRE(MakeFormatByName("png")->Write(storage.get(), tmp / "c.png", spec, rgb).ok());
  REQUIRE(MakeFormatByName("jpeg")->Write(storage.get(), tmp / "c.jpeg", spec, rgb).ok());
  const std::string decoded_jpeg = DecodeFile(storage.get(), "jpeg", tmp / "c.jpeg");
  CHECK(decoded_jpeg.size() == pixels.size());
  CHECK(DecodeFile(storage.get(), "png", tmp / "c.png") == pixels);
  const CommandResult r = RunPython(tmp, kPillowDescribe, tmp / "c.png" + " " + tmp / "c.jpeg");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("c.png PNG 256 256 RGB " + Crc(pixels)) != std::string::npos);
  CHECK(r.output.find("c.jpeg JPEG 256 256 RGB " + Crc(decoded_jpeg)) != std::string::npos);
}

TEST_CASE("we read and decode the jpeg and png files Pillow writes", "[interop][image]") {
  RequirePillow();
  TempDir tmp;
  // Each image goes to <name>.<ext> plus <name>.raw: the pixels a decoder should produce
  // (PNG: 8 bits per channel, palettes expanded to RGB(A), 16 bits -> high byte; JPEG: Pillow's
  // own decode).
  const std::string script = R"(
import sys
import numpy as np
from PIL import Image
d = sys.argv[1]
rng = np.random.default_rng(4)
gray = rng.integers(0, 256, size=(37, 53), dtype=np.uint8)
rgb = rng.integers(0, 256, size=(29, 41, 3), dtype=np.uint8)
rgba = rng.integers(0, 256, size=(17, 23, 4), dtype=np.uint8)
smooth = np.tile(np.linspace(0, 255, 64, dtype=np.uint8), (48, 1))

def save_png(name, im, raw):
    im.save(f'{d}/{name}.png')
    open(f'{d}/{name}.raw', 'wb').write(np.ascontiguousarray(raw, dtype=np.uint8).tobytes())

save_png('png_gray', Image.fromarray(gray, 'L'), gray)
save_png('png_rgb', Image.fromarray(rgb, 'RGB'), rgb)
save_png('png_rgba', Image.fromarray(rgba, 'RGBA'), rgba)
pal = Image.fromarray(rgb, 'RGB').quantize(colors=16)
save_png('png_palette', pal, np.asarray(pal.convert('RGB')))
bits = Image.fromarray(gray > 127)
save_png('png_1bit', bits, np.where(gray > 127, 255, 0))
g16 = (gray.astype(np.uint16) * 257 + 3)
save_png('png_16bit', Image.fromarray(g16.astype('<u2'), 'I;16'), g16 >> 8)

def save_jpeg(name, im, **kw):
    im.save(f'{d}/{name}.jpg', **kw)
    back = Image.open(f'{d}/{name}.jpg')
    open(f'{d}/{name}.raw', 'wb').write(np.asarray(back).tobytes())

save_jpeg('jpeg_gray', Image.fromarray(gray, 'L'))
save_jpeg('jpeg_rgb', Image.fromarray(rgb, 'RGB'), quality=85)
save_jpeg('jpeg_progressive', Image.fromarray(rgb, 'RGB'), progressive=True, quality=60)
save_jpeg('jpeg_smooth_exif', Image.fromarray(smooth, 'L'), quality=95,
          exif=b'Exif\x00\x00' + bytes(9000))
)";
  const CommandResult r = RunPython(tmp, script, tmp.path());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);

  struct Case {
    std::string file;
    uint32_t width, height, channels;
  };
  auto storage = BoundPosixStorage();
  for (const Case& c :
       {Case{"png_gray.png", 53, 37, 1}, Case{"png_rgb.png", 41, 29, 3},
        Case{"png_rgba.png", 23, 17, 4}, Case{"png_palette.png", 41, 29, 3},
        Case{"png_1bit.png", 53, 37, 1}, Case{"png_16bit.png", 53, 37, 1},
        Case{"jpeg_gray.jpg", 53, 37, 1}, Case{"jpeg_rgb.jpg", 41, 29, 3},
        Case{"jpeg_progressive.jpg", 41, 29, 3}, Case{"jpeg_smooth_exif.jpg", 64, 48, 1}}) {
    INFO(c.file);
    const std::string path = tmp / c.file;
    const std::string format = c.file.rfind("png", 0) == 0 ? "png" : "jpeg";
    REQUIRE(DetectBuiltinFormat(storage.get(), path).value() == format);
    auto reader = MakeFormatByName(format)->Open(storage.get(), path, {});
    INFO(reader.status().ToString());
    REQUIRE(reader.ok());
    const std::string dims = "\"width\":" + std::to_string(c.width) +
                             ",\"height\":" + std::to_string(c.height) +
                             ",\"channels\":" + std::to_string(c.channels);
    INFO((*reader)->DescribeJson());
    REQUIRE((*reader)->DescribeJson().find(dims) != std::string::npos);
    const std::string ours = DecodeFile(storage.get(), format, path);
    const std::string theirs = ReadTextFile(tmp / (c.file.substr(0, c.file.find('.')) + ".raw"));
    REQUIRE(ours.size() == size_t{c.width} * c.height * c.channels);
    REQUIRE(ours == theirs);
  }
}

}  // namespace
}  // namespace dlio::testing
