// numpy reads what we write, and we read what numpy writes. Uses Debian's /usr/bin/python3 with
// numpy (SystemPython()); fails loudly when numpy is missing rather than skipping.
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>
#include <vector>

#include "format/format_test_util.h"
#include "format/formats.h"
#include "format/npy_options.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

void RequireNumpy() {
  const CommandResult r = RunCommand(SystemPython() + " -c 'import numpy'");
  INFO("interop tests need numpy in " << SystemPython()
                                      << " (apt-get install python3-numpy): " << r.output);
  REQUIRE(r.exit_code == 0);
}

CommandResult RunPython(const TempDir& tmp, const std::string& script, const std::string& args) {
  const std::string path = tmp / "script.py";
  WriteTextFile(path, script);
  return RunCommand(SystemPython() + " " + path + " " + args);
}

// The CRC-32 of each sample of `spec`, space-separated (zlib.crc32 of numpy's bytes).
std::string SampleCrcs(const FileSpec& spec) {
  std::string crcs;
  for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
    const std::string s = ExpectedSample(spec, i);
    if (i > 0) crcs += ' ';
    crcs += std::to_string(
        crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
  }
  return crcs;
}

TEST_CASE("numpy loads the npy and npz files we write", "[interop][numpy]") {
  RequireNumpy();
  TempDir tmp;
  auto storage = BoundPosixStorage();
  FileSpec spec;
  spec.seed = 5;
  spec.sample_sizes.assign(6, 1234);
  std::string all;
  for (uint64_t i = 0; i < 6; ++i) all += ExpectedSample(spec, i);
  const unsigned long crc =
      crc32(0, reinterpret_cast<const Bytef*>(all.data()), static_cast<uInt>(all.size()));
  std::string labels;
  for (uint64_t i = 0; i < 6; ++i) {
    if (i > 0) labels += ',';
    labels += std::to_string(format_internal::SampleLabel(spec.seed, i));
  }

  FormatOptions stored, deflated;
  deflated.compression = "gzip";
  deflated.compression_level = 6;
  REQUIRE(MakeFormatByName("npy")->Write(storage.get(), tmp / "a.npy", spec, stored).ok());
  REQUIRE(MakeFormatByName("npz")->Write(storage.get(), tmp / "s.npz", spec, stored).ok());
  REQUIRE(MakeFormatByName("npz")->Write(storage.get(), tmp / "d.npz", spec, deflated).ok());
  REQUIRE(format_internal::WriteNpz(storage.get(), tmp / "z.npz", spec, deflated, true).ok());

  const std::string script = R"(
import sys, zlib, zipfile
import numpy as np
for path in sys.argv[1:]:
    f = np.load(path)
    if path.endswith('.npy'):
        x, y = f, None
    else:
        x, y = f['x'], f['y']
        zipfile.ZipFile(path).testzip()
    ys = ','.join(str(v) for v in y.tolist()) if y is not None else '-'
    print(path.rsplit('/', 1)[1], x.shape, x.dtype, zlib.crc32(x.tobytes()),
          y.dtype if y is not None else '-', ys)
)";
  const CommandResult r = RunPython(
      tmp, script, tmp / "a.npy" + " " + tmp / "s.npz" + " " + tmp / "d.npz" + " " + tmp / "z.npz");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string tail = " (6, 1234) uint8 " + std::to_string(crc) + " ";
  REQUIRE(r.output.find("a.npy" + tail + "- -") != std::string::npos);
  for (const std::string name : {"s.npz", "d.npz", "z.npz"}) {
    REQUIRE(r.output.find(name + tail + "int64 " + labels) != std::string::npos);
  }
}

// dataset.compression_ratio: x.npy deflated to the length a ratio drawn per file gives. numpy
// loads every file (zipfile checks the CRC), and zipfile tells the member's stored size.
TEST_CASE("numpy loads the npz files we deflate to a chosen compression ratio",
          "[interop][numpy]") {
  RequireNumpy();
  TempDir tmp;
  auto storage = BoundPosixStorage();
  FormatOptions o;
  o.compression = "gzip";
  o.compression_ratio = 3.0;
  o.compression_ratio_stdev = 0.25;
  std::string args;
  constexpr int kFiles = 40;
  for (int k = 0; k < kFiles; ++k) {
    FileSpec spec;
    spec.seed = 100 + static_cast<uint64_t>(k);
    spec.sample_sizes.assign(4, 16384);
    const std::string path = tmp / ("r" + std::to_string(k) + ".npz");
    REQUIRE(MakeFormatByName("npz")->Write(storage.get(), path, spec, o).ok());
    args += ' ';
    args += path;
  }
  FormatOptions none = o;
  none.compression = "none";
  FileSpec one;
  one.sample_sizes.assign(1, 64);
  CHECK(MakeFormatByName("npz")->Write(storage.get(), tmp / "n.npz", one, none).code() ==
        StatusCode::kInvalidArgument);

  const std::string script = R"(
import sys, zipfile
import numpy as np
for path in sys.argv[1:]:
    with np.load(path) as z:
        x, y = z['x'], z['y']
    info = zipfile.ZipFile(path).getinfo('x.npy')
    assert zipfile.ZipFile(path).testzip() is None
    print('member', info.file_size, info.compress_size, x.shape, int(x[-1, -1]), len(y))
)";
  const CommandResult r = RunPython(tmp, script, args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.output);
  std::vector<double> ratios;
  for (std::string word; lines >> word;) {
    if (word != "member") continue;
    uint64_t size = 0, stored = 0;
    std::string shape_a, shape_b;
    int last = -1, labels = 0;
    lines >> size >> stored >> shape_a >> shape_b >> last >> labels;
    CHECK(shape_a + shape_b == "(4,16384)");
    CHECK(last == 0);  // the member's last bytes are the zeros
    CHECK(labels == 4);
    ratios.push_back(static_cast<double>(size) / static_cast<double>(stored));
  }
  REQUIRE(ratios.size() == kFiles);
  double mean = 0, var = 0;
  for (double x : ratios) mean += x / kFiles;
  for (double x : ratios) var += (x - mean) * (x - mean) / (kFiles - 1);
  CHECK(mean == Approx(3.0).epsilon(0.05));
  CHECK(std::sqrt(var) == Approx(0.25).epsilon(0.35));
}

TEST_CASE("we read what np.save, np.savez and np.savez_compressed write", "[interop][numpy]") {
  RequireNumpy();
  TempDir tmp;
  // Each array goes to <name>.npy/.npz plus <name>.raw: its bytes in on-disk order.
  const std::string script = R"(
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(3)
arrays = {
  'f32_3d': rng.random((4, 3, 5), dtype=np.float32),
  'i16': rng.integers(-30000, 30000, size=(7, 6), dtype=np.int16),
  'bool': rng.random(5) > 0.5,
  'be_f8': rng.random((3, 2)).astype('>f8'),
  'scalar': np.array(2.5),
}
for name, a in arrays.items():
    np.save(f'{d}/{name}.npy', a)
    open(f'{d}/{name}.raw', 'wb').write(a.tobytes())
fo = np.asfortranarray(rng.random((3, 4)))
np.save(f'{d}/fortran.npy', fo)
open(f'{d}/fortran.raw', 'wb').write(fo.tobytes(order='F'))
x = rng.integers(0, 255, size=(8, 100), dtype=np.uint8)
y = np.arange(8)
np.savez(f'{d}/plain.npz', x=x, y=y)
open(f'{d}/plain.raw', 'wb').write(x.tobytes())
xc = rng.random((6, 10)).astype(np.float32)
np.savez_compressed(f'{d}/comp.npz', y=y, x=xc)
open(f'{d}/comp.raw', 'wb').write(xc.tobytes())
pos = rng.integers(0, 9, size=(5, 2, 2), dtype=np.int32)
np.savez_compressed(f'{d}/positional.npz', pos, y)
open(f'{d}/positional.raw', 'wb').write(pos.tobytes())
)";
  const CommandResult r = RunPython(tmp, script, tmp.path());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);

  struct Case {
    std::string file, format;
    uint64_t samples, sample_size;
    std::string dtype;
  };
  auto storage = BoundPosixStorage();
  for (const Case& c :
       {Case{"f32_3d.npy", "npy", 4, 60, "<f4"}, Case{"i16.npy", "npy", 7, 12, "<i2"},
        Case{"bool.npy", "npy", 5, 1, "|b1"}, Case{"be_f8.npy", "npy", 3, 16, ">f8"},
        Case{"scalar.npy", "npy", 1, 8, "<f8"}, Case{"fortran.npy", "npy", 1, 96, "<f8"},
        Case{"plain.npz", "npz", 8, 100, "|u1"}, Case{"comp.npz", "npz", 6, 40, "<f4"},
        Case{"positional.npz", "npz", 5, 16, "<i4"}}) {
    INFO(c.file);
    const std::string path = tmp / c.file;
    auto detected = DetectBuiltinFormat(storage.get(), path);
    REQUIRE(detected.ok());
    REQUIRE(*detected == c.format);
    for (uint64_t transfer : {uint64_t{0}, uint64_t{7}}) {
      FormatOptions options;
      options.transfer_size = transfer;
      auto reader = MakeFormatByName(c.format)->Open(storage.get(), path, options);
      INFO(reader.status().ToString());
      REQUIRE(reader.ok());
      REQUIRE((*reader)->num_samples() == c.samples);
      REQUIRE((*reader)->DescribeJson().find("\"dtype\":\"" + c.dtype + "\"") != std::string::npos);
      const std::string raw = ReadTextFile(tmp / (c.file.substr(0, c.file.find('.')) + ".raw"));
      REQUIRE(raw.size() == c.samples * c.sample_size);
      SampleBuffer buf;
      for (uint64_t i = c.samples; i-- > 0;) {
        REQUIRE((*reader)->sample_size(i) == c.sample_size);
        REQUIRE((*reader)->ReadSample(i, &buf).ok());
        REQUIRE(BufferString(buf) == raw.substr(i * c.sample_size, c.sample_size));
      }
    }
  }
}

// The Python DLIO's npz/npy generators (data_generator/npz_generator.py, npy_generator.py):
//   records = np.random.randint(255, size=(dim, dim, num_samples), dtype=np.uint8)
//   np.savez(path, x=records, y=[0] * num_samples)   # np.savez_compressed with compression
//   np.save(path, records)
// and its readers take np.load(path)['x'][..., i] (npz) / np.load(path)[..., i] (npy).
TEST_CASE("we read DLIO-layout files written by numpy as DLIO's readers do", "[interop][numpy]") {
  RequireNumpy();
  TempDir tmp;
  const std::string script = R"(
import sys
import numpy as np
d = sys.argv[1]
np.random.seed(10)
for name, dim, n in (('cosmo', 41, 1), ('multi', 23, 5), ('square', 6, 6)):
    records = np.random.randint(255, size=(dim, dim, n), dtype=np.uint8)
    np.savez(f'{d}/{name}.npz', x=records, y=[0] * n)
    np.savez_compressed(f'{d}/{name}_z.npz', x=records, y=[0] * n)
    np.save(f'{d}/{name}.npy', records)
    x = np.load(f'{d}/{name}.npz', allow_pickle=True)['x']
    for i in range(n):
        open(f'{d}/{name}.{i}.raw', 'wb').write(x[..., i].tobytes())
)";
  const CommandResult r = RunPython(tmp, script, tmp.path());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);

  struct Case {
    std::string name;
    uint64_t dim, n;
  };
  auto storage = BoundPosixStorage();
  for (const Case& c : {Case{"cosmo", 41, 1}, Case{"multi", 23, 5}, Case{"square", 6, 6}}) {
    for (const std::string& file : {c.name + ".npz", c.name + "_z.npz", c.name + ".npy"}) {
      INFO(file);
      const std::string format = file.substr(file.size() - 3);
      FormatOptions options;
      options.transfer_size = 100;
      options.samples_per_file = c.n;  // num_samples_per_file: what tells for npy
      if (c.dim == c.n)
        options.formats.Get<NpyOptions>().sample_layout =
            SampleLayout::kLastAxis;  // a tie: the key tells
      auto reader = MakeFormatByName(format)->Open(storage.get(), tmp / file, options);
      INFO(reader.status().ToString());
      REQUIRE(reader.ok());
      REQUIRE((*reader)->num_samples() == c.n);
      REQUIRE((*reader)->sample_size(0) == c.dim * c.dim);
      const std::string json = (*reader)->DescribeJson();
      CHECK(json.find("\"sample_layout\":\"last_axis\"") != std::string::npos);
      if (format == "npz" && c.dim != c.n) {
        CHECK(json.find("\"layout_basis\":\"labels\",\"labels\":" + std::to_string(c.n)) !=
              std::string::npos);
      }
      SampleBuffer buf;
      for (uint64_t i = c.n; i-- > 0;) {
        REQUIRE((*reader)->ReadSample(i, &buf).ok());
        REQUIRE(BufferString(buf) ==
                ReadTextFile(tmp / (c.name + "." + std::to_string(i) + ".raw")));
      }
    }
  }
}

TEST_CASE("our last-axis npz and npy files are DLIO's shapes and dtypes to numpy",
          "[interop][numpy]") {
  RequireNumpy();
  TempDir tmp;
  auto storage = BoundPosixStorage();
  FileSpec spec;
  spec.seed = 77;
  spec.sample_sizes.assign(3, 41 * 41);
  FormatOptions options;
  options.formats.Get<NpyOptions>().sample_layout = SampleLayout::kLastAxis;
  REQUIRE(MakeFormatByName("npz")->Write(storage.get(), tmp / "o.npz", spec, options).ok());
  REQUIRE(MakeFormatByName("npy")->Write(storage.get(), tmp / "o.npy", spec, options).ok());
  options.compression = "gzip";
  REQUIRE(MakeFormatByName("npz")->Write(storage.get(), tmp / "oz.npz", spec, options).ok());
  const std::string script = R"(
import sys, zlib
import numpy as np
for path in sys.argv[1:]:
    f = np.load(path, allow_pickle=True)
    x = f if path.endswith('.npy') else f['x']
    y = None if path.endswith('.npy') else f['y']
    crcs = ' '.join(str(zlib.crc32(x[..., i].tobytes())) for i in range(x.shape[-1]))
    print(path.rsplit('/', 1)[1], x.shape, x.dtype, y.shape if y is not None else '-',
          y.dtype if y is not None else '-', crcs)
)";
  const CommandResult r =
      RunPython(tmp, script, tmp / "o.npz" + " " + tmp / "oz.npz" + " " + tmp / "o.npy");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string crcs = SampleCrcs(spec);
  CHECK(r.output.find("o.npz (41, 41, 3) uint8 (3,) int64 " + crcs) != std::string::npos);
  CHECK(r.output.find("oz.npz (41, 41, 3) uint8 (3,) int64 " + crcs) != std::string::npos);
  CHECK(r.output.find("o.npy (41, 41, 3) uint8 - - " + crcs) != std::string::npos);
}

// DLIO's dataset.record_dims / record_element_type (tests/dlio_dataset_dimension_test.py): numpy
// sees the dtype and the shape DLIO writes, (*dims, n) on the last axis, and each sample's bytes
// are ours; our readers read the same 80-byte samples back.
TEST_CASE("record_dims and record_element_type shape npy and npz arrays as DLIO's",
          "[interop][numpy]") {
  FileSpec spec;
  spec.sample_sizes.assign(3, 4 * 5 * 4);  // [4, 5] float32
  spec.seed = 91;
  RequireNumpy();
  auto storage = BoundPosixStorage();
  TempDir tmp;
  FormatOptions last, first;
  for (FormatOptions* o : {&last, &first}) {
    o->record_dims = {4, 5};
    o->record_element_type = "float32";
    o->samples_per_file = 3;
  }
  last.formats.Get<NpyOptions>().sample_layout = SampleLayout::kLastAxis;
  const std::vector<std::pair<std::string, const FormatOptions*>> files = {
      {"l.npz", &last}, {"l.npy", &last}, {"f.npz", &first}, {"f.npy", &first}};
  for (const auto& [name, options] : files) {
    const std::string format = name.substr(2);
    REQUIRE(MakeFormatByName(format)->Write(storage.get(), tmp / name, spec, *options).ok());
    auto reader = MakeFormatByName(format)->Open(storage.get(), tmp / name, *options);
    REQUIRE(reader.ok());
    REQUIRE((*reader)->num_samples() == 3);
    for (uint64_t i = 0; i < 3; ++i) {
      INFO(name << " sample " << i);
      SampleBuffer out;
      REQUIRE((*reader)->ReadSample(i, &out).ok());
      CHECK(std::string(reinterpret_cast<const char*>(out.data()), out.size()) ==
            ExpectedSample(spec, i));
    }
  }
  const std::string script = R"(
import sys, zlib
import numpy as np
for path in sys.argv[1:]:
    f = np.load(path)
    x = f if path.endswith('.npy') else f['x']
    name = path.rsplit('/', 1)[1]
    s = [x[..., i] if name[0] == 'l' else x[i] for i in range(3)]
    print(name, x.shape, x.dtype, ' '.join(str(zlib.crc32(v.tobytes())) for v in s))
)";
  std::string args;
  for (const auto& f : files) args += " " + (tmp / f.first);
  const CommandResult r = RunPython(tmp, script, args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string crcs = SampleCrcs(spec);
  CHECK(r.output.find("l.npz (4, 5, 3) float32 " + crcs) != std::string::npos);
  CHECK(r.output.find("l.npy (4, 5, 3) float32 " + crcs) != std::string::npos);
  CHECK(r.output.find("f.npz (3, 4, 5) float32 " + crcs) != std::string::npos);
  CHECK(r.output.find("f.npy (3, 4, 5) float32 " + crcs) != std::string::npos);
}

}  // namespace
}  // namespace dlio::testing
