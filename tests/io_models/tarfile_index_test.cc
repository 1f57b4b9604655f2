// reader.io_model: tarfile_index. dlio's webdataset reader under the tarfile_index model issues
// the requests CPython 3.11's tarfile makes for `t = tarfile.open(path)`, `t.getmembers()` and
// `t.extractfile(name).read()` of every member of each sample, in a shuffled sample order, row by
// row (opens, fstats, reads, closes): on archives Python's tarfile wrote (members smaller than
// its 4 KiB buffer, larger, of one and several buffers, two members per key, a pax long name, a
// directory, a member with no key) and on one dlio wrote with one member per sample; the samples
// are the members' bytes as tarfile extracts them, with and without client costs. Corrupt or
// short archives are refused naming the file and the offset; under this model the webdataset
// sampler is not a shard stream.
#include <catch2/catch.hpp>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/config.h"
#include "dlio/loop.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio_reads.h"
#include "format/webdataset/webdataset_options.h"
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

// Writes the archives with Python's tarfile (untraced): "small.tar", one member per key of
// sizes around the buffer; "pairs.tar", <key>.jpg + <key>.cls pairs, a directory, a member
// without a key and a name long enough for a pax header.
void WritePythonArchives(const std::string& data, const TempDir& tmp) {
  const std::string script = tmp / "make_tars.py";
  testing::WriteTextFile(
      script,
      "import io, sys, tarfile\n"
      "def add(t, name, size, seed):\n"
      "    info = tarfile.TarInfo(name); info.size = size\n"
      "    t.addfile(info, io.BytesIO(bytes((seed * 31 + i * 7) % 251 for i in range(size))))\n"
      "d = sys.argv[1]\n"
      "with tarfile.open(d + '/small.tar', 'w') as t:\n"
      "    for i, s in enumerate([1000, 5000, 3000, 100000, 1 << 20, 200, 4096, 9000]):\n"
      "        add(t, 'k%02d.bin' % i, s, i)\n"
      "with tarfile.open(d + '/pairs.tar', 'w') as t:\n"
      "    info = tarfile.TarInfo('imgs'); info.type = tarfile.DIRTYPE; t.addfile(info)\n"
      "    add(t, 'README', 700, 99)\n"
      "    for i, s in enumerate([20480, 700, 70000, 12]):\n"
      "        add(t, 'imgs/s%03d.jpg' % i, s, i)\n"
      "        add(t, 'imgs/s%03d.cls' % i, 2, i + 50)\n"
      "    add(t, 'imgs/' + 'x' * 120 + '.jpg', 3000, 7)\n");
  const auto run =
      testing::RunCommand("'" + testing::SystemPython() + "' '" + script + "' '" + data + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
}

// The Python program: open, the index, then each sample of `order` (members grouped by
// WebDataset's key, as dlio groups them) extracted and written, concatenated, to out/<i>.
std::vector<Request> ReadWithPython(const std::string& archive, const std::vector<uint64_t>& order,
                                    const std::string& data, const TempDir& tmp,
                                    const std::string& out) {
  const std::string script = tmp / "read_tar.py";
  testing::WriteTextFile(
      script,
      "import os, sys, tarfile\n"
      "path, order, out = sys.argv[1], sys.argv[2], sys.argv[3]\n"
      "t = tarfile.open(path)\n"
      "samples, last = [], None\n"
      "for m in t.getmembers():\n"
      "    if not m.isreg(): continue\n"
      "    base = os.path.basename(m.name)\n"
      "    key = m.name[:len(m.name) - len(base)] + base.split('.')[0] if '.' in base else None\n"
      "    if key is None: last = None; continue\n"
      "    if key != last: samples.append([])\n"
      "    samples[-1].append(m.name); last = key\n"
      "for i in map(int, order.split(',')):\n"
      "    blob = b''.join(t.extractfile(n).read() for n in samples[i])\n"
      "    with open('%s/%d' % (out, i), 'wb') as f: f.write(blob)\n"
      "t.close()\n");
  std::filesystem::create_directories(out);
  const std::string args =
      "'" + script + "' '" + data + "/" + archive + "' " + CommaJoined(order) + " '" + out + "'";
  return RequestsOf(TracePythonProgram(args, data, tmp / ("prof-" + archive)), data,
                    kOpenStatReadSeekClose);
}

// dlio's webdataset reader under tarfile_index: the archive's samples in `order`, each checked
// against the bytes Python extracted (out/<i>).
io_model_test::DlioRun ReadWithDlio(const std::string& archive, const std::vector<uint64_t>& order,
                                    const std::string& data, const std::string& out,
                                    bool client_costs, uint64_t* samples) {
  FormatOptions options;
  options.io_model = IoModel::kTarfileIndex;
  options.framework_client_costs = client_costs;
  return io_model_test::ReadOrderWithDlio(*BuiltinFormat("webdataset"), data, archive, order, out,
                                          options, samples);
}

// Writes a dlio shard of `sizes` with one `.bin` member per sample.
void WriteDlioShard(const std::string& path, const std::vector<uint64_t>& sizes) {
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  FormatOptions options;
  options.formats.Get<WebdatasetOptions>().members = "bin";
  FileSpec spec;
  spec.seed = 7;
  spec.sample_sizes = sizes;
  REQUIRE(BuiltinFormat("webdataset")->Write(storage.get(), path, spec, options).ok());
}

TEST_CASE("tarfile_index model: the requests of tarfile.open and extractfile, as measured") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  WritePythonArchives(data, tmp);
  WriteDlioShard(data + "/dlio.tar", {20480, 20480, 300, 70000, 20480, 5000, 4096});
  struct Case {
    std::string archive;
    uint64_t samples;
  };
  for (const Case& c : std::vector<Case>{{"small.tar", 8}, {"pairs.tar", 5}, {"dlio.tar", 7}}) {
    const std::vector<uint64_t> order = ShuffledOrder(c.samples);
    const std::string out = tmp / ("out-" + c.archive);
    const std::vector<Request> python = ReadWithPython(c.archive, order, data, tmp, out);
    // four opens (three compression probes, then the archive), a read each at least, closes
    REQUIRE(python.size() >= 4 * 4);
    for (const bool costs : {false, true}) {
      uint64_t samples = 0;
      const auto dlio = ReadWithDlio(c.archive, order, data, out, costs, &samples);
      INFO(c.archive << (costs ? ", client_costs framework" : "") << "\nPython:\n"
                     << ToString(python) << "dlio:\n"
                     << ToString(dlio.requests));
      CHECK(samples == c.samples);
      CHECK(dlio.requests == python);
    }
  }
}

// Opens `archive` under tarfile_index expecting `expected` samples; the error.
Status OpenError(const std::string& path, uint64_t expected = 0) {
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  FormatOptions options;
  options.io_model = IoModel::kTarfileIndex;
  options.samples_per_file = expected;
  return BuiltinFormat("webdataset")->Open(storage.get(), path, options).status();
}

TEST_CASE("tarfile_index model: corrupt and short archives are refused naming file and offset") {
  TempDir tmp;
  const std::string path = tmp / "a.tar";
  WriteDlioShard(path, {20480, 20480, 20480});
  const std::string good = testing::ReadTextFile(path);
  REQUIRE(OpenError(path).ok());
  // Fewer samples than the config says.
  const Status few = OpenError(path, 4);
  CHECK(few.code() == StatusCode::kCorruption);
  CHECK(few.ToString().find(path) != std::string::npos);
  CHECK(few.ToString().find("holds 3 samples") != std::string::npos);
  // The second header's checksum broken: its offset named.
  const size_t second = 512 + 20480;
  std::string bad = good;
  bad[second + 10] = 'Z';
  testing::WriteTextFile(path, bad);
  const Status sum = OpenError(path);
  CHECK(sum.code() == StatusCode::kCorruption);
  CHECK(sum.ToString().find(path) != std::string::npos);
  CHECK(sum.ToString().find(std::to_string(second)) != std::string::npos);
  // Cut inside the second member's data: its size runs past the end.
  testing::WriteTextFile(path, good.substr(0, second + 512 + 1000));
  const Status cut = OpenError(path);
  CHECK(cut.code() == StatusCode::kCorruption);
  CHECK(cut.ToString().find("runs past the end") != std::string::npos);
  // Cut on the third header: a truncated header.
  testing::WriteTextFile(path, good.substr(0, 2 * (512 + 20480) + 100));
  const Status header = OpenError(path);
  CHECK(header.code() == StatusCode::kCorruption);
  CHECK(header.ToString().find("truncated tar header at offset " +
                               std::to_string(2 * (512 + 20480))) != std::string::npos);
}

TEST_CASE("tarfile_index model: webdataset's samples are not streamed by shard under it") {
  WorkloadConfig c;
  c.dataset.format = "webdataset";
  c.reader.read_threads = 2;
  FormatCapabilities caps = BuiltinFormat("webdataset")->capabilities();
  REQUIRE(caps.shard_streams);
  for (const IoModel model : {IoModel::kTarfile, IoModel::kTarfileIndex}) {
    c.reader.io_model = model;
    SamplerOptions o;
    o.sharding = Sharding::kBlock;
    AdaptSamplerToFormat(c, caps, Loader::kThreads, &o);
    INFO(EnumName(model));
    const bool streams = model == IoModel::kTarfile;
    CHECK((o.sharding == Sharding::kShard) == streams);
    CHECK(o.shuffle_after_read == streams);
    CHECK(o.interleave == (streams ? 2u : 0u));
  }
}

}  // namespace
}  // namespace dlio
