// Pillow (python3-pil, which decodes with the same system libjpeg-turbo and zlib) and file(1)
// read the jpeg/png files we write, and we read and decode what Pillow writes. Uses Debian's
// /usr/bin/python3 (SystemPython()); fails loudly when Pillow is missing.
#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "format/format_test_util.h"
#include "format/image/image_options.h"
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
  rgb.formats.Get<ImageOptions>().channels = 3;
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

// For each DIR/<mode>_<side>_<k>.png dlio wrote, and for as many random images of that mode and
// side that Pillow saves with its defaults (the bytes 0-255, as dlio's pixels), prints
// "<mode> <side> dlio|pillow <file bytes> <IDAT chunks> <last IDAT bytes>", and "<mode> <side>
// resave <bytes>" for Pillow's own save of the pixels of each of dlio's files.
constexpr const char* kPngLayouts = R"(
import glob, io, os, struct, sys
import numpy as np
from PIL import Image

def layout(data):
    pos, idat = 8, []
    while pos < len(data):
        n = struct.unpack('>I', data[pos:pos + 4])[0]
        if data[pos + 4:pos + 8] == b'IDAT':
            idat.append(n)
        pos += 12 + n
    return f'{len(data)} {len(idat)} {idat[-1]}'

def saved(im):
    out = io.BytesIO()
    im.save(out, 'PNG')
    return out.getvalue()

d, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(7)
for mode, side in [a.split(':') for a in sys.argv[3:]]:
    side = int(side)
    for path in sorted(glob.glob(f'{d}/{mode}_{side}_*.png')):
        data = open(path, 'rb').read()
        print(mode, side, 'dlio', layout(data))
        print(mode, side, 'resave', len(saved(Image.open(path))))
    shape = (side, side) if mode == 'L' else (side, side, 3)
    for _ in range(n):
        print(mode, side, 'pillow', layout(saved(Image.fromarray(
            rng.integers(0, 256, size=shape, dtype=np.uint8), mode))))
)";

struct PngLayouts {
  std::vector<uint64_t> file_bytes, last_idat;
  std::set<uint64_t> idat_chunks;
};

uint64_t Median(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TEST_CASE("our png files are as large as Pillow's of random pixels, chunk for chunk",
          "[interop][image]") {
  RequirePillow();
  TempDir tmp;
  auto storage = BoundPosixStorage();
  constexpr int kFiles = 9;
  struct Shape {
    const char* mode;
    uint32_t side;
  };
  const Shape shapes[] = {{"L", 64},  {"RGB", 64},  {"L", 256},  {"RGB", 256},
                          {"L", 255}, {"RGB", 333}, {"RGB", 512}};
  std::string args = tmp.path() + " " + std::to_string(kFiles);
  for (const Shape& s : shapes) {
    FormatOptions options;
    options.formats.Get<ImageOptions>().channels = std::string(s.mode) == "L" ? 1 : 3;
    FileSpec spec;
    spec.sample_sizes = {uint64_t{s.side} * s.side * options.formats.Get<ImageOptions>().channels};
    for (int k = 0; k < kFiles; ++k) {
      spec.seed = 100 + k;
      const std::string name =
          std::string(s.mode) + "_" + std::to_string(s.side) + "_" + std::to_string(k) + ".png";
      REQUIRE(MakeFormatByName("png")->Write(storage.get(), tmp / name, spec, options).ok());
    }
    args += " " + std::string(s.mode) + ":" + std::to_string(s.side);
  }
  const CommandResult r = RunPython(tmp, kPngLayouts, args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::map<std::string, std::map<std::string, PngLayouts>> seen;  // "L 64" -> writer -> layouts
  std::istringstream lines(r.output);
  std::string mode, side, writer;
  uint64_t bytes = 0;
  while (lines >> mode >> side >> writer >> bytes) {
    PngLayouts& l = seen[mode + " " + side][writer];
    l.file_bytes.push_back(bytes);
    if (writer == "resave") continue;
    uint64_t chunks = 0, last = 0;
    REQUIRE(lines >> chunks >> last);
    l.idat_chunks.insert(chunks);
    l.last_idat.push_back(last);
  }
  REQUIRE(seen.size() == std::size(shapes));
  for (auto& [shape, by] : seen) {
    INFO(shape);
    PngLayouts &ours = by["dlio"], &pillow = by["pillow"];
    REQUIRE(ours.file_bytes.size() == kFiles);
    REQUIRE(pillow.file_bytes.size() == kFiles);
    // The same pixels: Pillow's stream is ours (libpng narrows the window of a small image, which
    // changes the 2-byte zlib header, not the size).
    CHECK(by["resave"].file_bytes == ours.file_bytes);
    // Other random pixels: the same IDAT layout, sizes within Pillow's own spread.
    CHECK(ours.idat_chunks == pillow.idat_chunks);
    const auto [our_min, our_max] =
        std::minmax_element(ours.last_idat.begin(), ours.last_idat.end());
    const auto [pil_min, pil_max] =
        std::minmax_element(pillow.last_idat.begin(), pillow.last_idat.end());
    CHECK(*our_min <= *pil_max);
    CHECK(*pil_min <= *our_max);
    const int64_t gap = static_cast<int64_t>(Median(ours.file_bytes)) -
                        static_cast<int64_t>(Median(pillow.file_bytes));
    CHECK(std::abs(gap) <= 8);
  }
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
