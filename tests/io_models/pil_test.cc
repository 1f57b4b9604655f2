// reader.io_model: pil. dlio's jpeg reader under the pil model issues the requests Pillow's
// np.asarray(Image.open(path)) issues (open, fstat, reads, close), row by row, for files smaller
// than the buffer, than one 64 KiB block, of several blocks and of an exact multiple of 64 KiB,
// written by dlio and by Pillow; its samples equal the native reader's, and a file that is no
// JPEG or lost its end is refused naming it.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "dlio_reads.h"
#include "pil_util.h"
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

// Every sample of `files`, read by dlio's jpeg reader under `model`.
DlioRun ReadJpegs(const std::vector<std::string>& files, const std::string& data, IoModel model) {
  return ReadWithDlio(*BuiltinFormat("jpeg"), files, data, model);
}

void WriteDlioJpeg(const std::string& path, uint64_t side) {
  io_model_test::WriteDlioImage("jpeg", path, side);
}

// A file of `size` bytes that starts as a JPEG (SOI, APP0) and ends with the EOI marker.
std::string JpegShaped(size_t size) {
  std::string s(size, '\x11');
  s[0] = '\xff', s[1] = '\xd8', s[2] = '\xff', s[3] = '\xe0';
  s[size - 2] = '\xff', s[size - 1] = '\xd9';
  return s;
}

TEST_CASE("pil model: the requests of Image.open and load, as measured with strace") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  // Sizes of the strace runs of Pillow 9.4 (docs/io_models.md, "pil"): under the buffer, under a
  // 64 KiB block, several blocks.
  testing::WriteTextFile(data + "/c.jpg", JpegShaped(2611));
  testing::WriteTextFile(data + "/a.jpg", JpegShaped(37212));
  testing::WriteTextFile(data + "/d.jpg", JpegShaped(235447));
  const DlioRun run = ReadJpegs({"c.jpg", "a.jpg", "d.jpg"}, data, IoModel::kPil);
  const std::vector<Request> expected{{"c.jpg", OpKind::kOpen},
                                      {"c.jpg", OpKind::kStat},
                                      {"c.jpg", OpKind::kSeek, 0, -1},  // FileIO's tell
                                      {"c.jpg", OpKind::kSeek, 0, -1},  // Image.open's seek(0)
                                      {"c.jpg", OpKind::kRead, 0, 4096},
                                      {"c.jpg", OpKind::kRead, 2611, 61440},
                                      {"c.jpg", OpKind::kClose},
                                      {"a.jpg", OpKind::kOpen},
                                      {"a.jpg", OpKind::kStat},
                                      {"a.jpg", OpKind::kSeek, 0, -1},  // FileIO's tell
                                      {"a.jpg", OpKind::kSeek, 0, -1},  // Image.open's seek(0)
                                      {"a.jpg", OpKind::kRead, 0, 4096},
                                      {"a.jpg", OpKind::kRead, 4096, 61440},
                                      {"a.jpg", OpKind::kRead, 37212, 24576},
                                      {"a.jpg", OpKind::kClose},
                                      {"d.jpg", OpKind::kOpen},
                                      {"d.jpg", OpKind::kStat},
                                      {"d.jpg", OpKind::kSeek, 0, -1},  // FileIO's tell
                                      {"d.jpg", OpKind::kSeek, 0, -1},  // Image.open's seek(0)
                                      {"d.jpg", OpKind::kRead, 0, 4096},
                                      {"d.jpg", OpKind::kRead, 4096, 61440},
                                      {"d.jpg", OpKind::kRead, 65536, 65536},
                                      {"d.jpg", OpKind::kRead, 131072, 65536},
                                      {"d.jpg", OpKind::kRead, 196608, 65536},
                                      {"d.jpg", OpKind::kRead, 235447, 24576},
                                      {"d.jpg", OpKind::kClose}};
  INFO(ToString(run.requests));
  CHECK(run.requests == expected);
  // The sample is the file's bytes.
  REQUIRE(run.samples.size() == 3);
  CHECK(run.samples[0] == JpegShaped(2611));
  CHECK(run.samples[2] == JpegShaped(235447));
  // jpeg's auto stays native (the pil model is asked for by name, or chosen by fit).
  WriteDlioJpeg(data + "/dlio.jpeg", 300);
  CHECK(ReadJpegs({"dlio.jpeg"}, data, IoModel::kAuto).requests ==
        ReadJpegs({"dlio.jpeg"}, data, IoModel::kNative).requests);
}

TEST_CASE("pil model: a file that is no JPEG, or lost its end, is refused naming it") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  std::string cut = JpegShaped(70000);
  cut[cut.size() - 1] = '\0';
  testing::WriteTextFile(data + "/cut.jpg", cut);
  testing::WriteTextFile(data + "/text.jpg", std::string(5000, 'x'));
  io_model_test::CheckPilRefuses(
      "jpeg", data,
      {{"cut.jpg", "no JPEG end-of-image marker (FF D9) at offset 69998"},
       {"text.jpg", "not a JPEG: offset 0"}});
}

TEST_CASE("pil model: Pillow's requests for dlio's and Pillow's own JPEGs") {
  io_model_test::SkipWithoutPillow();
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  std::vector<std::string> files;
  for (uint64_t side : {40, 220, 600, 1100}) {  // 2 KB to ~950 KB
    files.push_back("dlio_" + std::to_string(side) + ".jpeg");
    WriteDlioJpeg(data + "/" + files.back(), side);
  }
  io_model_test::RunPython(tmp, data,
                           "import sys, numpy as np\n"
                           "from PIL import Image\n"
                           "r = np.random.default_rng(1)\n"
                           "for i, (h, w) in enumerate([(200, 300), (64, 64), (700, 500)]):\n"
                           "    Image.fromarray(r.integers(0, 255, (h, w, 3), dtype=np.uint8))"
                           ".save('%s/pil_%d.jpg' % (sys.argv[1], i), quality=85)\n");
  for (int i = 0; i < 3; ++i) files.push_back("pil_" + std::to_string(i) + ".jpg");
  const std::vector<Request> python = io_model_test::PillowRequests(tmp, data, files, "im", "load");
  const DlioRun pil = ReadJpegs(files, data, IoModel::kPil);
  INFO("Pillow:\n" << ToString(python) << "dlio:\n" << ToString(pil.requests));
  CHECK(pil.requests == python);
  CHECK(pil.samples == ReadJpegs(files, data, IoModel::kNative).samples);
}

}  // namespace
}  // namespace dlio
