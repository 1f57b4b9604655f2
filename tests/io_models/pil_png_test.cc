// reader.io_model pil on png: dlio's png reader issues the requests Pillow's PngImagePlugin
// issues for `Image.open(path)` and its load (chunk by chunk through the BufferedReader), row by
// row: hand-built PNGs whose layout fixes every offset (one IDAT under the buffer, one of 40 KB,
// 64 KiB IDATs, a stream that ends early in its IDAT, one that never ends), then dlio-written
// (libpng's 8 KiB IDATs), Pillow-written and Adam7 PNGs under Pillow itself; a damaged PNG is
// refused naming it.
#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "dlio_reads.h"
#include "pil_util.h"
#include "png_bytes.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::BuiltinFormat;
using io_model_test::DlioRun;
using io_model_test::ReadWithDlio;
using io_model_test::Request;
using io_model_test::ToString;
using testing::TempDir;

DlioRun ReadPngs(const std::vector<std::string>& files, const std::string& data, IoModel model) {
  return ReadWithDlio(*BuiltinFormat("png"), files, data, model);
}

using testing::PutBe32;
using testing::PutChunk;

// The rows of a `side` x `side` gray image as its zlib stream holds them: a filter byte (none)
// and the pixels per row, per Adam7 pass (a pass with no pixel has no rows) when `interlaced`.
std::string GrayRows(uint32_t side, bool interlaced) {
  struct Pass {
    uint32_t x0, y0, dx, dy;
  };
  const std::vector<Pass> passes =
      interlaced ? std::vector<Pass>{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
                                     {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}
                 : std::vector<Pass>{{0, 0, 1, 1}};
  std::string rows;
  for (const Pass& p : passes) {
    const uint32_t cols = side > p.x0 ? (side - p.x0 + p.dx - 1) / p.dx : 0;
    for (uint32_t y = p.y0; y < side && cols > 0; y += p.dy) {
      rows.push_back('\0');
      for (uint32_t x = 0; x < cols; ++x) rows.push_back(static_cast<char>(x * 7 + y * 13));
    }
  }
  return rows;
}

// A deflate stored block holding `n` (at most 65535) bytes of `data` from `at`.
std::string StoredBlock(bool last, const std::string& data, size_t at, size_t n) {
  const uint16_t len = static_cast<uint16_t>(n), nlen = static_cast<uint16_t>(~len);
  std::string block{last ? '\x01' : '\x00', static_cast<char>(len & 0xFF),
                    static_cast<char>(len >> 8), static_cast<char>(nlen & 0xFF),
                    static_cast<char>(nlen >> 8)};
  return block.append(data, at, n);
}

// A `side` x `side` 8-bit gray PNG whose IDAT chunks hold `idats`.
std::string GrayPng(uint32_t side, bool interlaced, const std::vector<std::string>& idats) {
  std::string png = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  PutBe32(&ihdr, side);
  PutBe32(&ihdr, side);
  ihdr += std::string("\x08\x00\x00\x00", 4);  // 8-bit gray, deflate, filter method 0
  ihdr.push_back(interlaced ? '\x01' : '\x00');
  PutChunk(&png, "IHDR", ihdr);
  for (const std::string& idat : idats) PutChunk(&png, "IDAT", idat);
  PutChunk(&png, "IEND", "");
  return png;
}

// A PNG of `side` x `side` gray pixels whose zlib stream is stored blocks (so its size is known:
// 2 + 5 per 65535 bytes of rows + the rows + 4), followed by `junk` bytes in the IDAT data (which
// Pillow's decoder never asks for), split into IDAT chunks of `chunk` bytes.
std::string StoredPng(uint32_t side, size_t chunk, size_t junk = 0, bool interlaced = false) {
  const std::string rows = GrayRows(side, interlaced);
  std::string z = "\x78\x01";
  for (size_t at = 0; at < rows.size(); at += 65535) {
    const size_t n = std::min<size_t>(65535, rows.size() - at);
    z += StoredBlock(at + n == rows.size(), rows, at, n);
  }
  PutBe32(&z, static_cast<uint32_t>(
                  adler32(1, reinterpret_cast<const Bytef*>(rows.data()), rows.size())));
  z.append(junk, '\x5a');
  std::vector<std::string> idats;
  for (size_t at = 0; at < z.size(); at += chunk) idats.push_back(z.substr(at, chunk));
  return GrayPng(side, interlaced, idats);
}

// A `side` x `side` gray PNG whose zlib stream holds the rows (at most 65535 bytes) in a stored
// block that is not the last and never ends: one IDAT of those, then an IDAT of 200,000 bytes
// Pillow's decoder never asks for (it is done at the last row), which load_end reads in one call.
std::string UnendedPng(uint32_t side, bool interlaced) {
  const std::string rows = GrayRows(side, interlaced);
  return GrayPng(
      side, interlaced,
      {"\x78\x01" + StoredBlock(false, rows, 0, rows.size()), std::string(200000, '\x5a')});
}

// A PNG of `side` x `side` gray pixels written by dlio's writer (libpng, 8 KiB IDATs).
void WriteDlioPng(const std::string& path, uint64_t side) {
  io_model_test::WriteDlioImage("png", path, side);
}

TEST_CASE("pil model, png: the requests of Image.open and load, as measured with strace") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  const std::string tiny = StoredPng(4, 8192);              // 88 bytes
  const std::string one = StoredPng(199, 1 << 20);          // 39,868: one IDAT of 39,811
  const std::string blocks = StoredPng(400, 65536);         // 160,502: IDATs of 64 KiB
  const std::string early = StoredPng(4, 1 << 20, 200000);  // 200,088: junk after the stream
  REQUIRE(tiny.size() == 88);
  REQUIRE(one.size() == 39868);
  REQUIRE(blocks.size() == 160502);
  REQUIRE(early.size() == 200088);
  const std::string unended = UnendedPng(4, false);  // 200,096
  REQUIRE(unended.size() == 200096);
  testing::WriteTextFile(data + "/tiny.png", tiny);
  testing::WriteTextFile(data + "/one.png", one);
  testing::WriteTextFile(data + "/blocks.png", blocks);
  testing::WriteTextFile(data + "/early.png", early);
  testing::WriteTextFile(data + "/unended.png", unended);
  const DlioRun run = ReadPngs({"tiny.png", "one.png", "blocks.png", "early.png", "unended.png"},
                               data, IoModel::kPil);
  const std::vector<Request> expected{
      {"tiny.png", OpKind::kOpen},  // the fill holds the whole file
      {"tiny.png", OpKind::kStat},
      {"tiny.png", OpKind::kRead, 0, 4096},
      {"tiny.png", OpKind::kClose},
      {"one.png", OpKind::kOpen},  // read(39811) of the IDAT: buffered, direct, one fill
      {"one.png", OpKind::kStat},
      {"one.png", OpKind::kRead, 0, 4096},
      {"one.png", OpKind::kRead, 4096, 32768},
      {"one.png", OpKind::kRead, 36864, 4096},
      {"one.png", OpKind::kClose},
      {"blocks.png", OpKind::kOpen},  // read(65536), read(65536), read(29349): one per IDAT
      {"blocks.png", OpKind::kStat},
      {"blocks.png", OpKind::kRead, 0, 4096},
      {"blocks.png", OpKind::kRead, 4096, 61440},
      {"blocks.png", OpKind::kRead, 65536, 4096},
      {"blocks.png", OpKind::kRead, 69632, 61440},
      {"blocks.png", OpKind::kRead, 131072, 4096},
      {"blocks.png", OpKind::kRead, 135168, 24576},
      {"blocks.png", OpKind::kRead, 159744, 4096},
      {"blocks.png", OpKind::kClose},
      {"early.png", OpKind::kOpen},  // the decoder is done after read(65536): load_end reads
      {"early.png", OpKind::kStat},  // the IDAT's other 134,495 bytes in one call
      {"early.png", OpKind::kRead, 0, 4096},
      {"early.png", OpKind::kRead, 4096, 61440},
      {"early.png", OpKind::kRead, 65536, 4096},
      {"early.png", OpKind::kRead, 69632, 126976},
      {"early.png", OpKind::kRead, 196608, 4096},
      {"early.png", OpKind::kClose},
      {"unended.png", OpKind::kOpen},  // done at the last row: the second IDAT in one call
      {"unended.png", OpKind::kStat},
      {"unended.png", OpKind::kRead, 0, 4096},
      {"unended.png", OpKind::kRead, 4096, 192512},
      {"unended.png", OpKind::kRead, 196608, 4096},
      {"unended.png", OpKind::kClose}};
  INFO(ToString(run.requests));
  // The lseeks (open's tell, Image.open's seek(0), a tell per chunk header) are held against
  // Pillow's own in the test below.
  CHECK(io_model_test::Without(run.requests, OpKind::kSeek) == expected);
  // The sample is the file's bytes (IEND's CRC, which no call reads, included).
  REQUIRE(run.samples.size() == 5);
  CHECK(run.samples[0] == tiny);
  CHECK(run.samples[2] == blocks);
  CHECK(run.samples[3] == early);
  CHECK(run.samples[4] == unended);
  // pyio reads it whole too; png's auto stays native.
  CHECK(ReadPngs({"one.png"}, data, IoModel::kPyio).samples[0] == one);
  WriteDlioPng(data + "/dlio.png", 300);
  CHECK(ReadPngs({"dlio.png"}, data, IoModel::kAuto).requests ==
        ReadPngs({"dlio.png"}, data, IoModel::kNative).requests);
}

TEST_CASE("pil model, png: a damaged PNG is refused naming the file and the offset") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  const std::string good = StoredPng(199, 8192);
  std::string cut = good.substr(0, 20000) + good.substr(good.size() - 12);  // IEND kept
  std::string bad_type = good;
  bad_type[37] = '#';  // the first IDAT's type
  std::string bad_zlib = good;
  bad_zlib[41] = '\x00';  // the zlib header
  testing::WriteTextFile(data + "/cut.png", cut);
  testing::WriteTextFile(data + "/type.png", bad_type);
  testing::WriteTextFile(data + "/zlib.png", bad_zlib);
  testing::WriteTextFile(data + "/text.png", std::string(5000, 'x'));
  io_model_test::CheckPilRefuses(
      "png", data,
      {{"cut.png", "PNG image data ends at offset 20012 before the image's last row"},
       {"type.png", "broken PNG chunk header at offset 33"},
       {"zlib.png", "PNG image data near offset 41 does not inflate"},
       {"text.png", "not a PNG: offset 0"}});
}

TEST_CASE("pil model, png: Pillow's requests for dlio's, Pillow's and hand-built PNGs") {
  io_model_test::SkipWithoutPillow();
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  std::vector<std::string> files;
  for (uint64_t side : {4, 30, 200, 550, 1420}) {  // under 100 B to ~2 MB, 8 KiB IDATs
    files.push_back("dlio_" + std::to_string(side) + ".png");
    WriteDlioPng(data + "/" + files.back(), side);
  }
  io_model_test::RunPython(tmp, data,
                           "import sys, numpy as np\n"
                           "from PIL import Image\n"
                           "r = np.random.default_rng(1)\n"
                           "shapes = [(4, 4), (16, 16, 3), (115, 115, 3), (316, 316, 3),"
                           " (820, 820, 3), (300, 200, 4)]\n"
                           "for i, s in enumerate(shapes):\n"
                           "    Image.fromarray(r.integers(0, 255, s, dtype=np.uint8))"
                           ".save('%s/pil_%d.png' % (sys.argv[1], i))\n"
                           "from PIL.PngImagePlugin import PngInfo\n"
                           "info = PngInfo()\n"
                           "info.add_text('comment', 'x' * 5000)\n"  // a tEXt chunk past the fill
                           "Image.fromarray(r.integers(0, 255, (64, 64), dtype=np.uint8))"
                           ".save(sys.argv[1] + '/pil_text.png', pnginfo=info)\n");
  for (int i = 0; i < 6; ++i) files.push_back("pil_" + std::to_string(i) + ".png");
  files.push_back("pil_text.png");
  testing::WriteTextFile(data + "/blocks.png", StoredPng(400, 65536));
  testing::WriteTextFile(data + "/early.png", StoredPng(4, 1 << 20, 200000));
  files.push_back("blocks.png");
  files.push_back("early.png");
  testing::WriteTextFile(data + "/unended.png", UnendedPng(4, false));
  files.push_back("unended.png");
  // Adam7: empty passes; passes short of a column; 90 KB; a stream that never ends.
  for (uint32_t side : {1, 13, 300}) {
    files.push_back("adam7_" + std::to_string(side) + ".png");
    testing::WriteTextFile(data + "/" + files.back(), StoredPng(side, 8192, 0, true));
  }
  for (uint32_t side : {1, 13, 100}) {
    files.push_back("adam7_unended_" + std::to_string(side) + ".png");
    testing::WriteTextFile(data + "/" + files.back(), UnendedPng(side, true));
  }
  const DlioRun pil = ReadPngs(files, data, IoModel::kPil);
  for (const std::string load : {"im", "im.convert('RGB')"}) {
    const std::vector<Request> python =
        io_model_test::PillowRequests(tmp, data, files, load, load == "im" ? "asarray" : "convert");
    INFO(load << "\nPillow:\n" << ToString(python) << "dlio:\n" << ToString(pil.requests));
    REQUIRE(python.size() >= 4 * files.size());  // open, stat, a read and close per file
    CHECK(pil.requests == python);
  }
  CHECK(pil.samples == ReadPngs(files, data, IoModel::kNative).samples);
}

}  // namespace
}  // namespace dlio
