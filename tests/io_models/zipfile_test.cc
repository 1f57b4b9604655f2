// reader.io_model: zipfile. dlio's zip reader under the zipfile model issues the requests CPython
// 3.11's zipfile makes for `z = zipfile.ZipFile(path)` and `z.read(name)` of every member in a
// shuffled order, row by row (opens, fstats, reads, closes): on archives Python's zipfile wrote
// (stored members smaller than its 4 KiB buffer and larger, a directory, deflated members, a
// comment) and on one dlio wrote; the samples are the members' bytes as zipfile reads them, with
// and without client costs, and the native reader reads the same bytes. Zips dlio writes open in
// Python's zipfile with its CRCs checked; corrupt and short archives are refused naming the file.
#include <catch2/catch.hpp>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/config.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio_reads.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::BuiltinFormat;
using io_model_test::CommaJoined;
using io_model_test::kOpenStatReadSeekClose;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ShuffledOrder;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::TempDir;

// Writes the archives with Python's zipfile (untraced): "stored.zip", a directory and members
// of sizes around the buffer; "mixed.zip", deflated and stored members and an archive comment.
void WritePythonArchives(const std::string& data, const TempDir& tmp) {
  const std::string script = tmp / "make_zips.py";
  testing::WriteTextFile(
      script,
      "import sys, zipfile\n"
      "def blob(size, seed):\n"
      "    return bytes((seed * 31 + i * 7) % 251 for i in range(size))\n"
      "d = sys.argv[1]\n"
      "with zipfile.ZipFile(d + '/stored.zip', 'w', zipfile.ZIP_STORED) as z:\n"
      "    z.mkdir('imgs')\n"
      "    for i, s in enumerate([1000, 5000, 3000, 100000, 1 << 20, 200, 4096, 0, 9000]):\n"
      "        z.writestr('imgs/%06d.jpg' % i, blob(s, i))\n"
      "with zipfile.ZipFile(d + '/mixed.zip', 'w') as z:\n"
      "    for i, s in enumerate([20480, 700, 70000, 12, 300000]):\n"
      "        z.writestr('s%03d.bin' % i, blob(s, i) if i % 2 else bytes(s),\n"
      "                   zipfile.ZIP_DEFLATED if i % 2 == 0 else zipfile.ZIP_STORED)\n"
      "    z.comment = b'made by the zipfile test'\n");
  const auto run =
      testing::RunCommand("'" + testing::SystemPython() + "' '" + script + "' '" + data + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
}

// The Python program: ZipFile(path), then each member of `order` (directories aside, in the
// central directory's order) read by name and written to out/<i>.
std::vector<Request> ReadWithPython(const std::string& archive, const std::vector<uint64_t>& order,
                                    const std::string& data, const TempDir& tmp,
                                    const std::string& out) {
  const std::string script = tmp / "read_zip.py";
  testing::WriteTextFile(script,
                         "import sys, zipfile\n"
                         "path, order, out = sys.argv[1], sys.argv[2], sys.argv[3]\n"
                         "z = zipfile.ZipFile(path)\n"
                         "names = [i.filename for i in z.infolist() if not i.is_dir()]\n"
                         "for i in map(int, order.split(',')):\n"
                         "    blob = z.read(names[i])\n"
                         "    with open('%s/%d' % (out, i), 'wb') as f: f.write(blob)\n"
                         "z.close()\n");
  std::filesystem::create_directories(out);
  const std::string args =
      "'" + script + "' '" + data + "/" + archive + "' " + CommaJoined(order) + " '" + out + "'";
  return RequestsOf(TracePythonProgram(args, data, tmp / ("prof-" + archive)), data,
                    kOpenStatReadSeekClose);
}

// dlio's zip reader under `model`: the archive's samples in `order`, each checked against the
// bytes Python read (out/<i>).
io_model_test::DlioRun ReadWithDlio(const std::string& archive, const std::vector<uint64_t>& order,
                                    const std::string& data, const std::string& out, IoModel model,
                                    bool client_costs, uint64_t* samples) {
  FormatOptions options;
  options.io_model = model;
  options.framework_client_costs = client_costs;
  return io_model_test::ReadOrderWithDlio(*BuiltinFormat("zip"), data, archive, order, out, options,
                                          samples);
}

FileSpec DlioSpec(std::vector<uint64_t> sizes) {
  FileSpec spec;
  spec.seed = 7;
  spec.sample_sizes = std::move(sizes);
  return spec;
}

Status WriteDlioZip(const std::string& path, const FileSpec& spec,
                    const std::string& compression = "none") {
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  FormatOptions options;
  options.compression = compression;
  return BuiltinFormat("zip")->Write(storage.get(), path, spec, options);
}

TEST_CASE("zipfile model: the requests of ZipFile(path) and read(name), as measured") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  WritePythonArchives(data, tmp);
  REQUIRE(WriteDlioZip(data + "/dlio.zip", DlioSpec({20480, 20480, 300, 70000, 5000, 4096})).ok());
  struct Case {
    std::string archive;
    uint64_t samples;
  };
  for (const Case& c : std::vector<Case>{{"stored.zip", 9}, {"mixed.zip", 5}, {"dlio.zip", 6}}) {
    const std::vector<uint64_t> order = ShuffledOrder(c.samples);
    const std::string out = tmp / ("out-" + c.archive);
    const std::vector<Request> python = ReadWithPython(c.archive, order, data, tmp, out);
    REQUIRE(python.size() >= 4);  // open, fstat, reads, close
    for (const bool costs : {false, true}) {
      uint64_t samples = 0;
      const auto dlio =
          ReadWithDlio(c.archive, order, data, out, IoModel::kZipfile, costs, &samples);
      INFO(c.archive << (costs ? ", client_costs framework" : "") << "\nPython:\n"
                     << ToString(python) << "dlio:\n"
                     << ToString(dlio.requests));
      CHECK(samples == c.samples);
      CHECK(dlio.requests == python);
    }
    // native: the same bytes, one request per stored member.
    uint64_t native = 0;
    ReadWithDlio(c.archive, order, data, out, IoModel::kNative, false, &native);
    CHECK(native == c.samples);
  }
}

TEST_CASE(
    "zip format: dlio's archives open in Python's zipfile, CRCs checked, stored or deflated") {
  TempDir tmp;
  const FileSpec spec = DlioSpec({0, 1, 4096, 100000, 33});
  for (const std::string compression : {"none", "gzip"}) {
    const std::string path = tmp / ("a-" + compression + ".zip");
    REQUIRE(WriteDlioZip(path, spec, compression).ok());
    const std::string script = tmp / "check.py";
    testing::WriteTextFile(
        script,
        "import sys, zipfile\n"
        "z = zipfile.ZipFile(sys.argv[1])\n"
        "assert z.testzip() is None\n"
        "print(' '.join('%s:%d:%d' % (i.filename, i.file_size, i.compress_type)\n"
        "               for i in z.infolist()))\n");
    const auto run =
        testing::RunCommand("'" + testing::SystemPython() + "' '" + script + "' '" + path + "'");
    INFO(run.output);
    REQUIRE(run.exit_code == 0);
    const int method = compression == "gzip" ? 8 : 0;
    std::string expected;
    for (size_t i = 0; i < spec.sample_sizes.size(); ++i) {
      expected += (i ? " " : "") + std::string("0000000") + std::to_string(i) +
                  ".bin:" + std::to_string(spec.sample_sizes[i]) + ":" + std::to_string(method);
    }
    CHECK(run.output.find(expected) != std::string::npos);
    // Both readers give the same bytes.
    auto storage = NewPosixStorage({});
    storage->Bind(SystemClock(), nullptr);
    for (const IoModel model : {IoModel::kNative, IoModel::kZipfile}) {
      FormatOptions options;
      options.io_model = model;
      auto reader = BuiltinFormat("zip")->Open(storage.get(), path, options);
      REQUIRE(reader.ok());
      REQUIRE((*reader)->num_samples() == spec.sample_sizes.size());
      SampleBuffer a;
      for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
        REQUIRE((*reader)->ReadSample(i, &a).ok());
        CHECK(a.size() == spec.sample_sizes[i]);
        CHECK((*reader)->sample_size(i) == spec.sample_sizes[i]);
      }
    }
  }
}

// Opens `path` under `model` expecting `expected` samples and reads sample 1; the error.
Status ReadError(const std::string& path, IoModel model, uint64_t expected = 0) {
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  FormatOptions options;
  options.io_model = model;
  options.samples_per_file = expected;
  auto reader = BuiltinFormat("zip")->Open(storage.get(), path, options);
  if (!reader.ok()) return reader.status();
  SampleBuffer buf;
  return (*reader)->ReadSample(1, &buf);
}

TEST_CASE("zip format: corrupt and short archives are refused naming the file") {
  TempDir tmp;
  const std::string path = tmp / "a.zip";
  REQUIRE(WriteDlioZip(path, DlioSpec({20000, 20000, 20000})).ok());
  const std::string good = testing::ReadTextFile(path);
  for (const IoModel model : {IoModel::kNative, IoModel::kZipfile}) {
    INFO(EnumName(model));
    testing::WriteTextFile(path, good);
    REQUIRE(ReadError(path, model).ok());
    const Status few = ReadError(path, model, 4);
    CHECK(few.code() == StatusCode::kCorruption);
    CHECK(few.ToString().find(path) != std::string::npos);
    CHECK(few.ToString().find("holds 3 members") != std::string::npos);
    // The second member's local header signature broken (the first is 30 + 12 + 20000 bytes).
    std::string bad = good;
    const size_t second = 30 + 12 + 20000;
    bad[second] = 'X';
    testing::WriteTextFile(path, bad);
    const Status sig = ReadError(path, model);
    CHECK(sig.code() == StatusCode::kCorruption);
    CHECK(sig.ToString().find(path) != std::string::npos);
    CHECK(sig.ToString().find(std::to_string(second)) != std::string::npos);
    // Cut in the middle: no end record.
    testing::WriteTextFile(path, good.substr(0, good.size() / 2));
    const Status cut = ReadError(path, model);
    CHECK(cut.code() == StatusCode::kCorruption);
    CHECK(cut.ToString().find(path) != std::string::npos);
  }
}

}  // namespace
}  // namespace dlio
