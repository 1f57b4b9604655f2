// format pt and reader.io_model torch_load. dlio's pt reader under the torch_load model issues
// the requests `torch.load(path)` makes (PyTorch 1.13, CPython 3.11) row by row (opens, fstats,
// reads, closes): on files torch.save wrote (a dict of a float tensor and a label, a bare tensor
// smaller than Python's buffer, a tuple of two tensors, an empty tensor beside one of 1 MiB) and
// on files dlio wrote; a sample is the storages' bytes in key order, as torch.load gives them,
// with and without client costs, and the native reader reads the same bytes. Files dlio writes
// load in torch.load as an OrderedDict of one uint8 tensor, data.pkl of the size asked for;
// corrupt and short files are refused naming the file and the offset; the config checks name
// their keys.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/config.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio_reads.h"
#include "format/formats.h"
#include "format/torch/pt_options.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::BuiltinFormat;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::TempDir;

const std::vector<std::string> kPythonFiles = {"dict.pt", "small.pt", "tuple.pt", "empty.pt"};

// torch.save of each kind of object (untraced).
void WritePythonFiles(const std::string& data, const TempDir& tmp) {
  const std::string script = tmp / "make_pt.py";
  testing::WriteTextFile(
      script,
      "import sys, torch\n"
      "d = sys.argv[1]\n"
      "g = torch.Generator().manual_seed(3)\n"
      "torch.save({'features': torch.rand(3, 64, 64, generator=g), 'label': 7}, d + '/dict.pt')\n"
      "torch.save(torch.arange(25, dtype=torch.int32), d + '/small.pt')\n"
      "torch.save((torch.rand(5000, generator=g), torch.arange(300, dtype=torch.int16)),\n"
      "           d + '/tuple.pt')\n"
      "torch.save([torch.zeros(0), torch.rand(1 << 18, generator=g)], d + '/empty.pt')\n");
  const auto run =
      testing::RunCommand("'" + testing::SystemPython() + "' '" + script + "' '" + data + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
}

// The Python program: torch.load of each file, its tensors' bytes (in the order the object holds
// them, which is their storages' key order) written to out/<file>.
std::vector<Request> LoadWithPython(const std::vector<std::string>& files, const std::string& data,
                                    const TempDir& tmp, const std::string& out) {
  const std::string script = tmp / "load_pt.py";
  testing::WriteTextFile(script,
                         "import sys, torch\n"
                         "data, out = sys.argv[1], sys.argv[2]\n"
                         "def tensors(o):\n"
                         "    if torch.is_tensor(o): return [o]\n"
                         "    items = o.values() if isinstance(o, dict) else o if isinstance(o, "
                         "(list, tuple)) else []\n"
                         "    return [t for v in items for t in tensors(v)]\n"
                         "for name in sys.argv[3:]:\n"
                         "    o = torch.load(data + '/' + name)\n"
                         "    with open(out + '/' + name, 'wb') as f:\n"
                         "        f.write(b''.join(t.numpy().tobytes() for t in tensors(o)))\n");
  std::filesystem::create_directories(out);
  std::string args = "'" + script + "' '" + data + "' '" + out + "'";
  for (const std::string& f : files) args += " " + f;
  return RequestsOf(TracePythonProgram(args, data, tmp / "prof-load"), data,
                    io_model_test::kOpenStatReadSeekClose);
}

Status WriteDlioPt(const std::string& path, uint64_t size, uint64_t pickle_bytes) {
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  FormatOptions options;
  options.formats.Get<PtOptions>().pickle_bytes = pickle_bytes;
  FileSpec spec;
  spec.seed = 11;
  spec.sample_sizes = {size};
  return BuiltinFormat("pt")->Write(storage.get(), path, spec, options);
}

io_model_test::DlioRun ReadWithDlio(const std::vector<std::string>& files, const std::string& data,
                                    IoModel model, bool client_costs) {
  FormatOptions options;
  options.io_model = model;
  options.framework_client_costs = client_costs;
  return io_model_test::ReadWithDlio(*BuiltinFormat("pt"), files, data, options);
}

TEST_CASE("torch_load model: the requests of torch.load(path) per file, as measured") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  WritePythonFiles(data, tmp);
  REQUIRE(WriteDlioPt(data + "/img_0_of_2.pt", 49152, 194).ok());
  REQUIRE(WriteDlioPt(data + "/img_1_of_2.pt", 3000, 0).ok());
  std::vector<std::string> files = kPythonFiles;
  files.insert(files.end(), {"img_0_of_2.pt", "img_1_of_2.pt"});
  const std::string out = tmp / "out";
  const std::vector<Request> python = LoadWithPython(files, data, tmp, out);
  REQUIRE(python.size() >= files.size() * 4);  // open, fstat, reads, close
  for (const bool costs : {false, true}) {
    const auto dlio = ReadWithDlio(files, data, IoModel::kTorchLoad, costs);
    INFO((costs ? "client_costs framework\n" : "") << "Python:\n"
                                                   << ToString(python) << "dlio:\n"
                                                   << ToString(dlio.requests));
    CHECK(dlio.requests == python);
    REQUIRE(dlio.samples.size() == files.size());
    for (size_t i = 0; i < files.size(); ++i) {
      INFO(files[i]);
      CHECK(dlio.samples[i] == testing::ReadTextFile(out + "/" + files[i]));
    }
  }
  // native: the same bytes, fewer requests (the directory, then one per storage).
  const auto native = ReadWithDlio(files, data, IoModel::kNative, false);
  REQUIRE(native.samples.size() == files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    INFO(files[i]);
    CHECK(native.samples[i] == testing::ReadTextFile(out + "/" + files[i]));
  }
  CHECK(native.requests.size() < python.size());
  // inspect: a data.pkl dlio's writer can pad its own to (the dict's) is a writer key for fit; a
  // bare tensor's, smaller than dlio's own sample's, is not.
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  for (const IoModel model : {IoModel::kNative, IoModel::kTorchLoad}) {
    FormatOptions options;
    options.io_model = model;
    auto dict = BuiltinFormat("pt")->Open(storage.get(), data + "/dict.pt", options);
    auto bare = BuiltinFormat("pt")->Open(storage.get(), data + "/small.pt", options);
    REQUIRE(dict.ok());
    REQUIRE(bare.ok());
    INFO((*dict)->DescribeJson() << "\n" << (*bare)->DescribeJson());
    CHECK((*dict)->DescribeJson().find("\"dataset.pt_pickle_bytes\"") != std::string::npos);
    CHECK((*bare)->DescribeJson().find("writer_keys") == std::string::npos);
    CHECK((*bare)->DescribeJson().find("\"stores_file_name\":true") != std::string::npos);
  }
}

TEST_CASE("pt format: dlio's files load in torch.load, data.pkl of the size asked for") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  struct Case {
    uint64_t size, pickle;
  };
  const std::vector<Case> cases = {{1, 0}, {4096, 0}, {100000, 500}, {49152, 194}};
  std::vector<std::string> files;
  for (size_t i = 0; i < cases.size(); ++i) {
    files.push_back("img_" + std::to_string(i) + "_of_4.pt");
    REQUIRE(WriteDlioPt(data + "/" + files.back(), cases[i].size, cases[i].pickle).ok());
  }
  const std::string script = tmp / "check.py";
  testing::WriteTextFile(script,
                         "import sys, torch, zipfile\n"
                         "for path in sys.argv[1:]:\n"
                         "    o = torch.load(path)\n"
                         "    assert list(o) == ['x'] and o['x'].dtype == torch.uint8, o\n"
                         "    pkl = [i.file_size for i in zipfile.ZipFile(path).infolist()\n"
                         "           if i.filename.endswith('/data.pkl')][0]\n"
                         "    print('%d:%d:%s' % (o['x'].numel(), pkl, o['x'][:4].tolist()))\n");
  std::string args = "'" + testing::SystemPython() + "' '" + script + "'";
  for (const std::string& f : files) args += " '" + data + "/" + f + "'";
  const auto run = testing::RunCommand(args);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto native = ReadWithDlio(files, data, IoModel::kNative, false);
  REQUIRE(native.samples.size() == cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string& s = native.samples[i];
    REQUIRE(s.size() == cases[i].size);
    std::string head;
    for (size_t b = 0; b < std::min<size_t>(4, s.size()); ++b) {
      head += (b ? ", " : "") + std::to_string(static_cast<uint8_t>(s[b]));
    }
    const std::string line =
        std::to_string(cases[i].size) + ":" + std::to_string(cases[i].pickle) + ":[" + head + "]";
    // 0 asks for the sample's own pickle: its size is the file's, whatever it is.
    if (cases[i].pickle > 0) {
      CHECK(run.output.find(line) != std::string::npos);
    } else {
      CHECK(run.output.find(std::to_string(cases[i].size) + ":") != std::string::npos);
    }
  }
}

// Opens `path` under `model` and reads its sample; the error.
Status ReadError(const std::string& path, IoModel model) {
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  FormatOptions options;
  options.io_model = model;
  auto reader = BuiltinFormat("pt")->Open(storage.get(), path, options);
  if (!reader.ok()) return reader.status();
  SampleBuffer buf;
  return (*reader)->ReadSample(0, &buf);
}

void CheckRefused(const Status& st, const std::string& path, const std::string& what) {
  INFO(st.ToString());
  CHECK(!st.ok());
  CHECK(st.ToString().find(path) != std::string::npos);
  CHECK(st.ToString().find(what) != std::string::npos);
}

TEST_CASE("pt format: corrupt and short files are refused naming the file and offset") {
  TempDir tmp;
  const std::string path = tmp / "img_0_of_1.pt";
  REQUIRE(WriteDlioPt(path, 20000, 0).ok());
  const std::string good = testing::ReadTextFile(path);
  const size_t storage_header = good.find("img_0_of_1/data/0") - 30;
  for (const IoModel model : {IoModel::kNative, IoModel::kTorchLoad}) {
    INFO(EnumName(model));
    testing::WriteTextFile(path, good);
    REQUIRE(ReadError(path, model).ok());
    std::string bad = good;
    bad[storage_header] = 'X';  // the storage's local header signature
    testing::WriteTextFile(path, bad);
    CheckRefused(ReadError(path, model), path, std::to_string(storage_header));
    bad = good;  // the storage's size in the directory one less than its stored bytes
    const size_t storage_entry = good.rfind("img_0_of_1/data/0") - 46;
    REQUIRE(good.compare(storage_entry, 4, "PK\x01\x02") == 0);
    bad[storage_entry + 24] = static_cast<char>(good[storage_entry + 24] - 1);
    testing::WriteTextFile(path, bad);
    CheckRefused(ReadError(path, model), path, std::to_string(storage_header));
    CHECK(ReadError(path, model).ToString().find("claims 19999") != std::string::npos);
    bad = good;  // data.pkl renamed in the central directory: no pickle
    bad[good.rfind("img_0_of_1/data.pkl") + 11] = 'D';
    testing::WriteTextFile(path, bad);
    CheckRefused(ReadError(path, model), path, "data.pkl");
    testing::WriteTextFile(path, good.substr(0, good.size() / 2));  // cut: no end of the directory
    CheckRefused(ReadError(path, model), path, "central");
  }
}

TEST_CASE("pt format: the config checks name their keys") {
  WorkloadConfig c;
  c.dataset.format = "pt";
  c.dataset.record_length_bytes = 1000;
  REQUIRE(format_internal::ValidatePtConfig(c).ok());
  c.dataset.num_samples_per_file = 4;
  CHECK(format_internal::ValidatePtConfig(c).ToString().find("dataset.num_samples_per_file") !=
        std::string::npos);
  c.dataset.num_samples_per_file = 1;
  c.dataset.formats.Get<PtOptions>().pickle_bytes = 20;
  const Status small = format_internal::ValidatePtConfig(c);
  CHECK(small.code() == StatusCode::kInvalidArgument);
  CHECK(small.ToString().find("dataset.pt_pickle_bytes") != std::string::npos);
}

}  // namespace
}  // namespace dlio
