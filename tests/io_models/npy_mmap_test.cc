// reader.io_model mmap on npy: np.load(path, mmap_mode='r') of .npy files dlio wrote, and rows
// copied out of the array (np.array(arr[i])), under libdlio_preload.so, against dlio's npy mmap
// reader on the same files: the same opens, stats, reads and closes, the same mapping, the same
// rows; a cut header and samples on the last axis refused naming the file.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/format.h"
#include "dlio/storage.h"
#include "dlio_reads.h"
#include "format/format_test_util.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::BuiltinFormat;
using io_model_test::KindFilter;
using io_model_test::PythonHas;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::TempDir;

// np.load with mmap_mode, then every row copied out in order, the array released.
constexpr char kLoop[] = R"(import sys
import numpy as np
for path in sys.argv[1:]:
    arr = np.load(path, mmap_mode='r')
    rows = [bytes(np.array(arr[i])) for i in range(arr.shape[0])]
    del arr
)";

const KindFilter kCalls{
    {OpKind::kOpen, OpKind::kStat, OpKind::kRead, OpKind::kSeek, OpKind::kClose, OpKind::kMmap}};

TEST_CASE("npy mmap model: np.load(mmap_mode='r') opens, reads and maps as numpy does",
          "[io_models][mmap]") {
  if (!PythonHas("numpy")) {
    std::fprintf(stderr, "SKIPPED: %s cannot import numpy\n", testing::SystemPython().c_str());
    std::exit(77);
  }
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  auto format = BuiltinFormat("npy");
  std::vector<std::string> files;
  std::string args = "'" + std::string(tmp / "loop.py") + "'";
  // 64 rows of 8 KiB; 3 rows of 100 B (the whole file within one buffer fill).
  for (const auto& [rows, size] :
       std::vector<std::pair<uint64_t, uint64_t>>{{64, 8192}, {3, 100}}) {
    FileSpec spec;
    spec.seed = rows;
    spec.sample_sizes.assign(rows, size);
    files.push_back("f" + std::to_string(rows) + ".npy");
    auto storage = NewPosixStorage({});
    REQUIRE(format->Write(storage.get(), data + "/" + files.back(), spec, {}).ok());
    args += " '" + data + "/" + files.back() + "'";
  }
  testing::WriteTextFile(tmp / "loop.py", kLoop);
  const std::vector<Request> python =
      RequestsOf(TracePythonProgram(args, data, tmp / "prof"), data, kCalls);
  FormatOptions options;
  options.io_model = IoModel::kMmap;
  const io_model_test::DlioRun dlio =
      io_model_test::ReadWithDlio(*format, files, data, options, kCalls);
  // Python's mapping holds a dup of the third descriptor and closes it just before unmapping (the
  // touched pages, then munmap); dlio has no dup to close.
  std::vector<Request> without_dup;
  for (size_t j = 0; j < python.size(); ++j) {
    const bool dup_close = python[j].kind == OpKind::kClose && j + 1 < python.size() &&
                           python[j + 1].kind == OpKind::kRead &&
                           python[j + 1].file == python[j].file;
    if (!dup_close) without_dup.push_back(python[j]);
  }
  INFO("Python:\n" << ToString(python) << "dlio:\n" << ToString(dlio.requests));
  // Per file: three opens (np.load's, open_memmap's, numpy.memmap's), each with its fstat, a
  // 4 KiB fill in each of the first two, the buffers' lseeks and tell()s, memmap's seek to the
  // end and tell(), mmap's fstat, the whole file mapped, two closes.
  CHECK(python.size() == without_dup.size() + 2);
  CHECK(dlio.requests == without_dup);
  REQUIRE(dlio.samples.size() == 64 + 3);
  for (size_t i = 0; i < 64; ++i) {
    CHECK(dlio.samples[i] == testing::ExpectedSample(
                                 [] {
                                   FileSpec s;
                                   s.seed = 64;
                                   s.sample_sizes.assign(64, 8192);
                                   return s;
                                 }(),
                                 i));
  }
}

TEST_CASE("npy mmap model: a cut header and samples on the last axis are refused naming the file",
          "[io_models][mmap]") {
  TempDir tmp;
  auto format = BuiltinFormat("npy");
  auto storage = NewPosixStorage({});
  FormatOptions options;
  options.io_model = IoModel::kMmap;
  const std::string cut = tmp / "cut.npy";
  testing::WriteTextFile(cut, std::string("\x93NUMPY\x01\x00\x76\x00{'descr'", 18));
  auto r = format->Open(storage.get(), cut, options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kCorruption);
  CHECK_THAT(r.status().message(), Catch::Contains("cut.npy"));
  // A 4 x 6 array read as 6 samples: on its last axis, which rows of a mapping cannot be.
  const std::string wide = tmp / "wide.npy";
  FileSpec spec;
  spec.sample_sizes.assign(4, 6);
  REQUIRE(format->Write(storage.get(), wide, spec, {}).ok());
  options.samples_per_file = 6;
  r = format->Open(storage.get(), wide, options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(r.status().message(), Catch::Contains("wide.npy"));
  CHECK_THAT(r.status().message(), Catch::Contains("last axis"));
}

}  // namespace
}  // namespace dlio
