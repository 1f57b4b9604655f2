// reader.io_model mmap on raw files with reader.mmap_head_bytes: what Pillow issues for an
// uncompressed TIFF of one strip (Image.open's header parse through Python's file, kept open;
// ImageFile.load's second open, mmap.mmap of the whole file, that descriptor closed at once; the
// pixels copied out of the mapping), under libdlio_preload.so, against dlio's raw mmap reader
// with a head on the same files; the key refused where no mmap reader reads it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "dlio/format.h"
#include "dlio/storage.h"
#include "dlio_reads.h"
#include "io_models/mmap_options.h"
#include "pil_util.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::BuiltinFormat;
using io_model_test::KindFilter;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::TempDir;

// Pillow writes each TIFF (16-bit gray, one strip), then the traced loop opens and loads them.
constexpr char kMake[] = R"(import sys
import numpy as np
from PIL import Image
rng = np.random.default_rng(4)
for i, side in enumerate((64, 256, 300)):
    Image.fromarray(rng.integers(0, 4096, (side, side), dtype=np.uint16)).save(
        '%s/t%d.tif' % (sys.argv[1], i))
)";
constexpr char kLoop[] = R"(import sys
import numpy as np
from PIL import Image
for path in sys.argv[1:]:
    with Image.open(path) as im:
        a = np.asarray(im)
)";

// Opens, stats, reads (and touched runs), closes and mappings; seeks are not scored (Pillow's
// many tell()s and seek()s over its header parse are not emulated).
const KindFilter kCalls{
    {OpKind::kOpen, OpKind::kStat, OpKind::kRead, OpKind::kClose, OpKind::kMmap}};

TEST_CASE("raw mmap model with a head: Pillow's Image.open and load of a raw TIFF, as traced",
          "[io_models][mmap]") {
  io_model_test::SkipWithoutPillow();
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  io_model_test::RunPython(tmp, data, kMake);
  const std::vector<std::string> files = {"t0.tif", "t1.tif", "t2.tif"};
  std::string args = "'" + std::string(tmp / "loop.py") + "'";
  for (const std::string& f : files) args += " '" + data + "/" + f + "'";
  testing::WriteTextFile(tmp / "loop.py", kLoop);
  const std::vector<Request> python =
      RequestsOf(TracePythonProgram(args, data, tmp / "prof"), data, kCalls);
  FormatOptions options;
  options.io_model = IoModel::kMmap;
  options.formats.Get<MmapOptions>().head_bytes = 128;
  const io_model_test::DlioRun dlio =
      io_model_test::ReadWithDlio(*BuiltinFormat("raw"), files, data, options, kCalls);
  // Python drops a file's mapping when the loop lets go of it (after the next file's head, here):
  // each file's requests in order, file by file; and Python's mapping holds a dup of the second
  // descriptor, closed just before the touched pages and the munmap, which dlio has no dup for.
  std::vector<Request> by_file;
  for (const std::string& f : files) {
    for (size_t j = 0; j < python.size(); ++j) {
      if (python[j].file != f) continue;
      const bool dup_close = python[j].kind == OpKind::kClose && j + 1 < python.size() &&
                             python[j + 1].kind == OpKind::kRead && python[j + 1].file == f;
      if (!dup_close) by_file.push_back(python[j]);
    }
  }
  INFO("Python:\n" << ToString(python) << "dlio:\n" << ToString(dlio.requests));
  // Per file: two opens, an fstat each and mmap.mmap's, one 4 KiB fill at 0, the whole file
  // mapped, the second file closed, map.size()'s fstat, the first file closed, the mapping's
  // touched pages, munmap.
  CHECK(by_file.size() == files.size() * 12);
  CHECK(python.size() == by_file.size() + files.size());
  CHECK(dlio.requests == by_file);
  REQUIRE(dlio.samples.size() == files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    CHECK(dlio.samples[i] == testing::ReadTextFile(data + "/" + files[i]));
  }
}

}  // namespace
}  // namespace dlio
