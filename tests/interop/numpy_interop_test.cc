// numpy reads what we write, and we read what numpy writes. Uses Debian's /usr/bin/python3 with
// numpy (SystemPython()); fails loudly when numpy is missing rather than skipping.
#include <zlib.h>

#include <catch2/catch.hpp>
#include <sstream>

#include "format/format_test_util.h"
#include "format/formats.h"
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
    if (i > 0) labels += ',';  // not (i ? "," : "") + ...: GCC 12 -Wrestrict false positive
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
    auto detected = DetectFormat(storage.get(), path);
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

}  // namespace
}  // namespace dlio::testing
