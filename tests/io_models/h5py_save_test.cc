// checkpoint.type h5py_save: the HDF5 file dlio writes for a model's weights is the one h5py
// writes (the same write requests, row by row, for datasets in groups, flat names, nested groups,
// every dtype the key takes, scalars, and Keras 2's save_weights with its string attributes), h5py
// reads it back with its names, shapes, dtypes and bytes; the checkpointer saves, reads back and
// loads it, finds a changed byte, and refuses bad keys by name.
#include "format/hdf5/h5py_save.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "checkpoint/h5py_save_options.h"
#include "dlio/checkpointer.h"
#include "dlio/clock.h"
#include "dlio/profile_fit.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::KindFilter;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::TempDir;

const KindFilter kWrites{{OpKind::kWrite}};

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

// The bytes every writer here puts in the datasets: byte k of all data is (k * 7) mod 256.
void Fill(uint64_t offset, size_t n, char* dst) {
  for (size_t k = 0; k < n; ++k) dst[k] = static_cast<char>((offset + k) * 7);
}

// Writes each file with h5py under the interposer and prints, per file, the
// checkpoint.h5py_datasets value that describes it.
constexpr char kSaveScript[] = R"(
import sys, h5py, numpy as np
d = sys.argv[1]
cases = {
    'keras.h5': [('layer_%d/kernel' % k, s, 'float32') for k, s in enumerate(
        [(3, 3, 3, 32), (32,), (3, 3, 32, 64), (64,), (1024, 128), (128,), (128, 10), (10,)])],
    'flat.h5': [('w', (7, 10), 'float32'), ('b', (10,), 'float64'), ('step', (), 'int64')],
    'nested.h5': [('model/encoder/w', (64, 64), 'float16'), ('model/encoder/b', (64,), 'float16'),
                  ('model/decoder/w', (64, 8), 'int32'), ('opt/iter', (), 'int64'),
                  ('opt/lr', (1,), 'float32'), ('ids', (300,), 'uint8'), ('m', (5,), 'int8'),
                  ('q', (9,), 'int16')],
}
names = {'float16': 'fp16', 'float32': 'fp32', 'float64': 'fp64', 'int8': 'int8',
         'uint8': 'uint8', 'int16': 'int16', 'int32': 'int32', 'int64': 'int64'}
for f, ds in cases.items():
    offset = 0
    with h5py.File(d + '/' + f, 'w') as h:
        for name, shape, dt in ds:
            n = int(np.prod(shape)) * np.dtype(dt).itemsize
            raw = ((np.arange(offset, offset + n) * 7) & 0xff).astype(np.uint8)
            offset += n
            h.create_dataset(name, data=raw.view(dt).reshape(shape))
    print(f + '|' + ', '.join('%s:%s:%s' % (name, 'x'.join(map(str, shape)) or 'scalar', names[dt])
                              for name, shape, dt in ds))
# Keras 2's save_weights: byte-string attributes on the root and on each layer's group (an empty
# float64 array for a layer without weights), each weight created, then assigned.
layers = [('conv2d', [('kernel:0', (3, 3, 3, 8)), ('bias:0', (8,))]), ('flatten', []),
          ('dense', [('kernel:0', (1352, 10)), ('bias:0', (10,))])]
items, offset = [], 0
with h5py.File(d + '/keras2.h5', 'w') as f:
    f.attrs['backend'] = b'tensorflow'
    f.attrs['keras_version'] = b'2.11.0'
    f.attrs['layer_names'] = np.asarray([n.encode() for n, _ in layers])
    items += ['@backend:scalar:bytes10', '@keras_version:scalar:bytes6', '@layer_names:3:S7']
    for name, weights in layers:
        g = f.create_group(name)
        wn = np.asarray([('%s/%s' % (name, w)).encode() for w, _ in weights])
        g.attrs['weight_names'] = wn
        items.append('%s@weight_names:%d:%s' % (name, len(weights),
                                                'S%d' % wn.dtype.itemsize if weights else 'fp64'))
        for w, shape in weights:
            n = int(np.prod(shape)) * 4
            raw = ((np.arange(offset, offset + n) * 7) & 0xff).astype(np.uint8)
            offset += n
            dset = g.create_dataset('%s/%s' % (name, w), shape, dtype='float32')
            dset[...] = raw.view('float32').reshape(shape)
            items.append('%s/%s/%s:%s:fp32' % (name, name, w, 'x'.join(map(str, shape))))
print('keras2.h5|' + ', '.join(items))
)";

// Reads dlio's file and h5py's with h5py: the same datasets (names, shapes, dtypes, bytes).
constexpr char kCheckScript[] = R"(
import sys, h5py, numpy as np
def datasets(path):
    out = []
    with h5py.File(path, 'r') as h:
        h.visititems(lambda name, o: out.append(
            (name, o.shape, o.dtype.str, np.asarray(o[()]).tobytes()))
            if isinstance(o, h5py.Dataset) else None)
    return out
for theirs, ours in zip(sys.argv[1::2], sys.argv[2::2]):
    a, b = datasets(theirs), datasets(ours)
    assert a == b, (ours, [x[:3] for x in a], [x[:3] for x in b])
    assert len(a) > 0
print('ok')
)";

struct Case {
  std::string file, datasets;
};

std::vector<Case> ParseCases(const std::string& text) {
  std::vector<Case> cases;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t bar = line.find('|');
    if (bar != std::string::npos) cases.push_back({line.substr(0, bar), line.substr(bar + 1)});
  }
  return cases;
}

TEST_CASE("h5py_save: h5py's write requests, and h5py reads dlio's files", "[checkpoint][h5py]") {
  TempDir tmp;
  const std::string theirs = tmp / "h5py";
  const std::string ours = tmp / "dlio";
  std::filesystem::create_directories(theirs);
  std::filesystem::create_directories(ours);
  testing::WriteTextFile(tmp / "save.py", kSaveScript);
  testing::WriteTextFile(tmp / "check.py", kCheckScript);
  const std::string out = tmp / "cases.txt";
  const ProfileTrace trace = TracePythonProgram(
      Quoted(tmp / "save.py") + " " + Quoted(theirs) + " > " + Quoted(out), theirs, tmp / "prof");
  const std::vector<Case> cases = ParseCases(testing::ReadTextFile(out));
  REQUIRE(cases.size() == 4);
  const std::vector<Request> h5py_writes = RequestsOf(trace, theirs, kWrites);

  MemoryTracer tracer;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), &tracer);
  std::string check = Quoted(testing::SystemPython()) + " " + Quoted(tmp / "check.py");
  std::vector<char> memory;
  for (const Case& c : cases) {
    INFO(c.file << ": " << c.datasets);
    auto layout = h5py_save::ParseH5pyDatasets(c.datasets);
    INFO(layout.status().ToString());
    REQUIRE(layout.ok());
    const std::string path = ours + "/" + c.file;
    const Status st = h5py_save::WriteH5pySave(storage.get(), path, false, *layout, Fill, &memory);
    INFO(st.ToString());
    REQUIRE(st.ok());
    const auto size = h5py_save::H5pySaveFileSize(*layout);
    REQUIRE(size.ok());
    CHECK(std::filesystem::file_size(path) == *size);
    CHECK(std::filesystem::file_size(theirs + "/" + c.file) == *size);
    check += " " + Quoted(theirs + "/" + c.file) + " " + Quoted(path);
  }
  const auto read = testing::RunCommand(check);
  INFO(read.output);
  CHECK(read.exit_code == 0);
  const std::vector<Request> dlio_writes = RequestsOf(tracer, ours, kWrites);
  INFO("h5py:\n" << ToString(h5py_writes) << "dlio:\n" << ToString(dlio_writes));
  CHECK(dlio_writes == h5py_writes);
  // the superblock, each dataset's data, the metadata at close, the superblock twice: per file
  // more writes than datasets (the test can fail)
  CHECK(h5py_writes.size() > 3 * cases.size() + 8 + 3 + 8);

  // dlio-run fit of each file's trace, reading the file back and from its writes alone: a
  // checkpoint of type h5py_save whose requests are h5py's (read back: its very datasets).
  for (const Case& c : cases) {
    INFO(c.file);
    const ProfileTrace one = io_model_test::EventsOfFile(trace, theirs, c.file);
    std::vector<h5py_save::H5pyWrite> want;
    for (const Request& r : h5py_writes) {
      if (r.file == c.file) {
        want.push_back({static_cast<uint64_t>(r.offset), static_cast<uint64_t>(r.size)});
      }
    }
    for (const bool read : {false, true}) {
      INFO((read ? "read back" : "writes alone"));
      FitOptions options;
      if (read) options.read_file = io_model_test::ReadThrough(storage.get());
      auto fitted = FitTrace(one, options);
      INFO(fitted.status().ToString());
      REQUIRE(fitted.ok());
      INFO(FitYaml(*fitted, {c.file}));
      const FitEntry* type = fitted->Find("checkpoint.type");
      REQUIRE(type != nullptr);
      REQUIRE(type->value == "h5py_save");
      CHECK(fitted->Find("checkpoint.h5py_file_name")->value == c.file);
      std::string datasets = fitted->Find("checkpoint.h5py_datasets")->value;
      if (datasets.size() > 1 && datasets.front() == '"')
        datasets = datasets.substr(1, datasets.size() - 2);
      auto layout = h5py_save::ParseH5pyDatasets(datasets);
      INFO(layout.status().ToString());
      REQUIRE(layout.ok());
      auto writes = h5py_save::H5pySaveWrites(*layout);
      REQUIRE(writes.ok());
      if (read) {
        CHECK(*writes == want);
        CHECK(*layout == *h5py_save::ParseH5pyDatasets(c.datasets));
      } else {
        // The data writes' sizes; the groups are not in the writes (a group per dataset, or none,
        // whichever makes more of the trace's writes): keras.h5's and flat.h5's structures are
        // those, nested.h5's shared groups make one metadata write more or less. keras2.h5's
        // attributes are not in the writes either: its global heap (4 KiB, the root's
        // variable-length strings), written before the close, is taken for one more dataset.
        if (c.file == "keras2.h5") {
          CHECK(writes->size() + 1 == want.size());
          CHECK(layout->data_bytes() ==
                h5py_save::ParseH5pyDatasets(c.datasets)->data_bytes() + 4096);
          continue;
        }
        if (c.file == "nested.h5") {
          CHECK(writes->size() + 1 >= want.size());
          CHECK(writes->size() <= want.size() + 1);
        } else {
          CHECK(*writes == want);
        }
        CHECK(layout->data_bytes() == h5py_save::ParseH5pyDatasets(c.datasets)->data_bytes());
      }
    }
  }
}

std::unique_ptr<Checkpointer> MakeH5pyCheckpointer(Storage* storage, const std::string& folder,
                                                   const std::string& datasets) {
  Registries registries;
  REQUIRE(RegisterBuiltinCheckpointers(&registries.checkpointers).ok());
  CheckpointOptions options;
  options.name = "h5py_save";
  options.folder = folder;
  options.read_back = true;
  options.sections.Get<H5pySaveOptions>().datasets = datasets;
  CheckpointEnv env;
  env.storage = storage;
  env.clock = SystemClock();
  auto made = (*registries.checkpointers.Get("h5py_save"))(options, env);
  INFO(made.status().ToString());
  REQUIRE(made.ok());
  return std::move(made).value();
}

TEST_CASE("h5py_save checkpointer: a save is read back and loaded, and a changed byte found",
          "[checkpoint][h5py]") {
  TempDir tmp;
  MemoryTracer tracer;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), &tracer);
  const std::string datasets = "dense/kernel:784x64, dense/bias:64, head/kernel:64x10:fp64";
  auto ckpt = MakeH5pyCheckpointer(storage.get(), tmp / "ckpt", datasets);
  auto saved = ckpt->Save(1, 10);
  INFO(saved.status().ToString());
  REQUIRE(saved.ok());
  REQUIRE(saved->files.size() == 1);
  const std::string path = saved->files[0].path;
  CHECK(path == std::string(tmp / "ckpt") + "/ckpt-000000/model-rank0.h5");
  const auto layout = h5py_save::ParseH5pyDatasets(datasets);
  REQUIRE(layout.ok());
  CHECK(layout->data_bytes() == (784 * 64 + 64) * 4 + 64 * 10 * 8);
  const auto size = h5py_save::H5pySaveFileSize(*layout);
  REQUIRE(size.ok());
  CHECK(saved->files[0].bytes == *size);
  CHECK(std::filesystem::file_size(path) == *size);
  CHECK(saved->bytes_read == *size);
  // in place, as h5py writes: every write goes to the final name, nothing is renamed
  for (const TraceEvent& e : tracer.Events()) {
    CHECK(std::string(e.name) != "rename");
    if (std::string(e.name).find("write") != std::string::npos) {
      CHECK(tracer.FileName(e.file_id) == path);
    }
  }
  auto loaded = ckpt->Load(0);
  INFO(loaded.status().ToString());
  CHECK(loaded.ok());

  // A byte of dense/kernel's data changed: the load names the file, the dataset and the offset.
  std::string bytes = testing::ReadTextFile(path);
  const size_t at = bytes.size() / 2;  // inside the 200 KB of dense/kernel's data
  bytes[at] = static_cast<char>(bytes[at] ^ 0x5a);
  {
    std::ofstream rewrite(path, std::ios::binary | std::ios::trunc);
    rewrite << bytes;
  }
  auto bad = ckpt->Load(0);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kCorruption);
  CHECK_THAT(bad.status().ToString(), Catch::Contains("dense/kernel") &&
                                          Catch::Contains("model-rank0.h5") &&
                                          Catch::Contains("differs at offset"));
}

TEST_CASE("h5py_save checkpointer: with folder_name '.' every save rewrites one file",
          "[checkpoint][h5py]") {
  TempDir tmp;
  auto storage = NewPosixStorage({});
  Registries registries;
  REQUIRE(RegisterBuiltinCheckpointers(&registries.checkpointers).ok());
  CheckpointOptions options;
  options.name = "h5py_save";
  options.folder = tmp / "ckpt";
  options.folder_name = ".";
  options.read_back = true;
  options.sections.Get<H5pySaveOptions>().datasets = "dense/kernel:64x10, dense/bias:10";
  options.sections.Get<H5pySaveOptions>().file_name = "weights.h5";
  CheckpointEnv env;
  env.storage = storage.get();
  env.clock = SystemClock();
  const std::string path = std::string(tmp / "ckpt") + "/weights.h5";
  {
    auto ckpt = (*registries.checkpointers.Get("h5py_save"))(options, env);
    INFO(ckpt.status().ToString());
    REQUIRE(ckpt.ok());
    for (uint64_t epoch = 1; epoch <= 3; ++epoch) {
      auto saved = (*ckpt)->Save(epoch, static_cast<int64_t>(epoch) * 10);
      INFO(saved.status().ToString());
      REQUIRE(saved.ok());
      REQUIRE(saved->files.size() == 1);
      CHECK(saved->files[0].path == path);
    }
    // the one file, no folder per save and no completion marker
    std::vector<std::string> entries;
    for (const auto& e : std::filesystem::directory_iterator(tmp / "ckpt")) {
      entries.push_back(e.path().filename().string());
    }
    CHECK(entries == std::vector<std::string>{"weights.h5"});
  }
  // A new run in the same folder: the file is not its own, and is not overwritten ...
  {
    auto ckpt = (*registries.checkpointers.Get("h5py_save"))(options, env);
    REQUIRE(ckpt.ok());
    auto saved = (*ckpt)->Save(1, 10);
    REQUIRE_FALSE(saved.ok());
    CHECK(saved.status().code() == StatusCode::kAlreadyExists);
    CHECK(std::filesystem::exists(path));
  }
  // ... unless it resumes from it: a load that finds dlio's bytes, then saves that rewrite it.
  {
    auto ckpt = (*registries.checkpointers.Get("h5py_save"))(options, env);
    REQUIRE(ckpt.ok());
    auto loaded = (*ckpt)->Load((*ckpt)->next_id() - 1);
    INFO(loaded.status().ToString());
    REQUIRE(loaded.ok());
    auto saved = (*ckpt)->Save(4, 40);
    INFO(saved.status().ToString());
    CHECK(saved.ok());
  }
}

TEST_CASE("h5py_save: dataset names may hold ':', as Keras' do", "[checkpoint][h5py]") {
  const auto layout = h5py_save::ParseH5pyDatasets(
      "dense/kernel:0:784x10, dense/bias:0:10:fp64, step:0::int64, "
      "n:scalar, a:3:4:fp16");
  INFO(layout.status().ToString());
  REQUIRE(layout.ok());
  REQUIRE(layout->datasets.size() == 5);
  CHECK(layout->datasets[0].name == "dense/kernel:0");
  CHECK(layout->datasets[0].shape == std::vector<uint64_t>{784, 10});
  CHECK(layout->datasets[0].type == h5py_save::H5pyType::kF32);
  CHECK(layout->datasets[1].name == "dense/bias:0");
  CHECK(layout->datasets[1].type == h5py_save::H5pyType::kF64);
  CHECK(layout->datasets[2].name == "step:0");
  CHECK(layout->datasets[2].shape.empty());
  CHECK(layout->datasets[2].type == h5py_save::H5pyType::kI64);
  CHECK(layout->datasets[3].name == "n");
  CHECK(layout->datasets[3].shape.empty());
  CHECK(layout->datasets[4].name == "a:3");
  CHECK(layout->datasets[4].shape == std::vector<uint64_t>{4});
  CHECK(layout->datasets[4].type == h5py_save::H5pyType::kF16);
}

TEST_CASE("h5py_save checkpointer: bad keys are refused, naming them", "[checkpoint][h5py]") {
  struct Bad {
    std::string datasets, says;
  };
  for (const Bad& b : std::vector<Bad>{
           {"", "is empty"},
           {"w", "is not name:shape[:dtype]"},
           {"w:3x0", "shape '3x0'"},
           {"w:3xx4", "shape '3xx4'"},
           {"w:3:bf16", "dtype 'bf16'"},
           {"w:3:bool", "dtype 'bool'"},
           {"w:3, w:4", "'w' is given twice"},
           {"a/w:3, a:4", "'a' is both a dataset and a group"},
           {"a:4, a@n:2", "attributes of datasets are not emulated"},
           {"@n:2, @n:3", "attribute 'n' of '' is given twice"},
           {"@n:2:S0", "dtype 'S0'"},
           {"w:2:S4", "dtype 'S4'"},
           {"g@:2", "is not an attribute name"},
           {"/w:3", "is not a dataset path"},
           {"a//w:3", "is not a dataset path"},
           {"a/:3", "is not a dataset path"},
       }) {
    INFO(b.datasets);
    const auto parsed = h5py_save::ParseH5pyDatasets(b.datasets);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(parsed.status().ToString(),
               Catch::Contains("checkpoint.h5py_datasets") && Catch::Contains(b.says));
  }
  TempDir tmp;
  auto storage = NewPosixStorage({});
  Registries registries;
  REQUIRE(RegisterBuiltinCheckpointers(&registries.checkpointers).ok());
  CheckpointEnv env;
  env.storage = storage.get();
  env.clock = SystemClock();
  CheckpointOptions base;
  base.name = "h5py_save";
  base.folder = tmp / "ckpt";
  base.sections.Get<H5pySaveOptions>().datasets = "w:3";
  struct Refused {
    std::function<void(CheckpointOptions*)> set;
    std::string says;
  };
  for (const Refused& r : std::vector<Refused>{
           {[](CheckpointOptions* o) { o->fsync = true; }, "checkpoint.fsync"},
           {[](CheckpointOptions* o) { o->size_divisor = 4; }, "checkpoint.size_divisor"},
           {[](CheckpointOptions* o) { o->sections.Get<H5pySaveOptions>().file_name = "a/b.h5"; },
            "checkpoint.h5py_file_name"},
           {[](CheckpointOptions* o) { o->sections.Get<H5pySaveOptions>().file_name = "w{id}.h5"; },
            "checkpoint.h5py_file_name"},
           {[](CheckpointOptions* o) {
              o->world = 2;
              o->sections.Get<H5pySaveOptions>().file_name = "w.h5";
            },
            "has no {rank}"},
       }) {
    CheckpointOptions o = base;
    r.set(&o);
    auto made = (*registries.checkpointers.Get("h5py_save"))(o, env);
    REQUIRE_FALSE(made.ok());
    CHECK_THAT(made.status().ToString(), Catch::Contains(r.says));
  }
}

}  // namespace
}  // namespace dlio
