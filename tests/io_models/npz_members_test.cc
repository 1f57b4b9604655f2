// reader.npz_members held against numpy: a loop that opens an npz once and reads several of its
// members (`z = np.load(path); x = z['x']; y = z['y']`) runs under libdlio_preload.so, and dlio's
// npz reader under reader.io_model numpy with the same members named reads the same files under
// a MemoryTracer. Opens, reads and lseeks must be equal row by row, one np.load
// per sample, in both member orders, over numpy's stored and deflated files and dlio's own; the
// samples are the x member's either way. A name the archive lacks, and a list without the
// samples' member, are refused naming the file.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "../format/format_test_util.h"
#include "dlio/format.h"
#include "dlio/storage.h"
#include "dlio_reads.h"
#include "format/npy_options.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::BuiltinFormat;
using io_model_test::DlioRun;
using io_model_test::kOpensReadsSeeks;
using io_model_test::ReadWithDlio;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::TempDir;

// numpy's files: four first-axis samples of x with labels y, stored and deflated, members in
// either order, one x of several pieces (np.load reads a member 256 KiB at a time).
const char kWriteScript[] = R"(import numpy as np, sys
d = sys.argv[1]
r = np.random.default_rng(11)
np.savez(d + '/stored.npz', x=r.integers(0, 255, (4, 3000), dtype=np.uint8), y=np.arange(4))
np.savez_compressed(d + '/deflated.npz', x=r.integers(0, 9, (4, 5000), dtype=np.uint8),
                    y=np.arange(4))
np.savez(d + '/labels_first.npz', y=np.arange(4), x=r.random((4, 700), dtype=np.float32))
np.savez(d + '/big.npz', x=r.integers(0, 255, (4, 300000), dtype=np.uint8),
         y=np.arange(4), mask=np.ones((4, 10), dtype=bool))
)";

// One np.load per sample, reading the members argv[1] names (comma-separated) in order, then
// indexing the sample out of x (first axis), as a map-style Dataset's __getitem__ does.
const char kLoadScript[] = R"(import numpy as np, sys
names = sys.argv[1].split(',')
for p in sys.argv[2:]:
    for i in range(4):
        z = np.load(p)
        arrays = {n: z[n] for n in names}
        s = arrays['x'][i]
)";

std::vector<std::string> WriteFiles(const TempDir& tmp, const std::string& data) {
  std::filesystem::create_directories(data);
  const std::string script = tmp / "write.py";
  testing::WriteTextFile(script, kWriteScript);
  const auto run =
      testing::RunCommand("'" + testing::SystemPython() + "' '" + script + "' '" + data + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  // dlio's own npz (x then y, four first-axis samples), deflated.
  auto storage = testing::BoundPosixStorage();
  FormatOptions options;
  options.compression = "gzip";
  FileSpec spec;
  spec.sample_sizes.assign(4, 20000);
  spec.seed = 5;
  REQUIRE(BuiltinFormat("npz")->Write(storage.get(), data + "/dlio.npz", spec, options).ok());
  return {"big.npz", "deflated.npz", "dlio.npz", "labels_first.npz", "stored.npz"};
}

FormatOptions NumpyReading(const std::string& members) {
  FormatOptions options;
  options.io_model = IoModel::kNumpy;
  options.formats.Get<NpyOptions>().npz_members = members;
  return options;
}

// The Python loop's requests over `files` reading `members`.
std::vector<Request> PythonRequests(const TempDir& tmp, const std::string& data,
                                    const std::vector<std::string>& files,
                                    const std::string& members) {
  const std::string script = tmp / "load.py";
  testing::WriteTextFile(script, kLoadScript);
  std::string args = "'" + script + "' '" + members + "'";
  for (const std::string& f : files) args += " '" + data + "/" + f + "'";
  const ProfileTrace real = TracePythonProgram(args, data, tmp / ("prof_" + members));
  return RequestsOf(real, data, kOpensReadsSeeks);
}

TEST_CASE("npz_members: each np.load reads the members named, in order, as numpy does") {
  if (!io_model_test::PythonHas("numpy")) return;
  TempDir tmp;
  const std::string data = tmp / "data";
  const std::vector<std::string> files = WriteFiles(tmp, data);
  const auto npz = BuiltinFormat("npz");
  const DlioRun sample_only = ReadWithDlio(*npz, files, data, NumpyReading(""), kOpensReadsSeeks);
  for (const std::string members : {"x,y", "y,x"}) {
    const std::vector<Request> want = PythonRequests(tmp, data, files, members);
    const DlioRun got = ReadWithDlio(*npz, files, data, NumpyReading(members), kOpensReadsSeeks);
    INFO("members " << members << "\nnumpy:\n"
                    << ToString(want) << "dlio:\n"
                    << ToString(got.requests));
    CHECK(want.size() > files.size() * 4 * 10);
    CHECK(got.requests == want);
    CHECK(got.samples == sample_only.samples);  // the samples are x's either way
    CHECK(got.requests.size() > sample_only.requests.size());
  }
  // A member named with its suffix, or with blanks around it, is the same member.
  CHECK(ReadWithDlio(*npz, files, data, NumpyReading(" x.npy , y.npy")).requests ==
        ReadWithDlio(*npz, files, data, NumpyReading("x,y")).requests);
}

TEST_CASE("npz_members: a member the archive lacks, or a list without x, is refused per file") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  auto storage = testing::BoundPosixStorage();
  FileSpec spec;
  spec.sample_sizes.assign(2, 1000);
  const auto npz = BuiltinFormat("npz");
  const std::string path = data + "/a.npz";
  REQUIRE(npz->Write(storage.get(), path, spec, FormatOptions()).ok());
  auto missing = npz->Open(storage.get(), path, NumpyReading("x,labels"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message() ==
        path + ": reader.npz_members names 'labels', which is not a member of the archive");
  auto without_x = npz->Open(storage.get(), path, NumpyReading("y"));
  REQUIRE_FALSE(without_x.ok());
  CHECK(without_x.status().code() == StatusCode::kInvalidArgument);
  CHECK(without_x.status().message() ==
        path + ": reader.npz_members does not name the member holding the samples, 'x.npy'");
  // Named twice: read twice (as z['x'] twice is), the samples from the first.
  const DlioRun once = ReadWithDlio(*npz, {"a.npz"}, data, NumpyReading("x"));
  const DlioRun twice = ReadWithDlio(*npz, {"a.npz"}, data, NumpyReading("x,x"));
  CHECK(twice.samples == once.samples);
  CHECK(twice.requests.size() > once.requests.size());
}

}  // namespace
}  // namespace dlio
