// dlio-run and the Python DLIO's datasets, without the Python DLIO: a folder laid out as it writes
// one (built with h5py: DLIO's names, /records_0, more files than the run uses, a stray file)
// trains on the first num_files_train files; and the hdf5 and npz datasets dlio-run generates are
// found and read with h5py and numpy as the Python DLIO lists and reads them (names ending in the
// format, sorted, /records_0, x). The Python DLIO round trip itself is recorded in docs/formats.md.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace dlio::testing {
namespace {

using dlio::testing::DlioRun;

CommandResult RunPython(const TempDir& tmp, const std::string& script, const std::string& args) {
  const std::string path = tmp / "script.py";
  WriteTextFile(path, script);
  return RunCommand(SystemPython() + " " + path + " " + args);
}

std::string Tiny(const std::string& format, const std::string& data, const std::string& out) {
  return " --quiet --set dataset.format=" + format + " --set dataset.data_folder=" + data +
         " --set output.folder=" + out +
         " --set dataset.num_samples_per_file=2 --set dataset.record_length_bytes=256"
         " --set reader.batch_size=2 --set reader.read_threads=1 --set train.epochs=1"
         " --set train.computation_time=0 --set output.trace=true";
}

TEST_CASE("dlio-run trains on the first files of a dataset laid out as the Python DLIO's") {
  TempDir tmp;
  const CommandResult made = RunPython(tmp, R"(import sys, os, h5py, numpy as np
d = os.path.join(sys.argv[1], 'train')
os.makedirs(d)
for i in range(8):
    with h5py.File(os.path.join(d, 'img_%d_of_8.hdf5' % i), 'w') as f:
        f.create_dataset('records_0', data=np.full((2, 16, 16), i, dtype=np.uint8))
        f.create_dataset('labels', data=np.zeros(2, dtype=np.int64))
open(os.path.join(d, 'README.txt'), 'w').write('not data')
)",
                                       tmp / "data");
  INFO(made.output);
  REQUIRE(made.exit_code == 0);
  const CommandResult r =
      RunCommand("timeout 120 " + DlioRun() + Tiny("hdf5", tmp / "data", tmp / "out") +
                 " --no-generate --set dataset.num_files_train=3");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("train epoch 1: 3 steps") != std::string::npos);
  // The first three by name were read, no other.
  const CommandResult read = RunCommand("cat " + tmp / "out" + "/*.pfw");
  CHECK(read.output.find("img_2_of_8.hdf5") != std::string::npos);
  CHECK(read.output.find("img_3_of_8.hdf5") == std::string::npos);
  CHECK(read.output.find("README") == std::string::npos);

  const CommandResult few =
      RunCommand("timeout 120 " + DlioRun() + Tiny("hdf5", tmp / "data", tmp / "few") +
                 " --no-generate --set dataset.num_files_train=9");
  CHECK(few.exit_code != 0);
  CHECK(few.output.find("dataset.num_files_train is 9 but " + tmp / "data" +
                        "/train holds 8 file(s) named *.hdf5 or *.h5") != std::string::npos);
}

TEST_CASE("h5py and numpy read dlio-run's datasets as the Python DLIO lists and reads them") {
  TempDir tmp;
  for (const std::string format : {"hdf5", "npz"}) {
    const std::string data = tmp / format;
    const CommandResult g =
        RunCommand("timeout 120 " + DlioRun() + Tiny(format, data, tmp / ("out-" + format)) +
                   " --generate --no-train --set dataset.num_files_train=4");
    INFO(g.output);
    REQUIRE(g.exit_code == 0);
  }
  const CommandResult r = RunPython(tmp, R"(import sys, os, h5py, numpy as np
for fmt in ('hdf5', 'npz'):
    d = os.path.join(sys.argv[1], fmt, 'train')
    files = sorted(os.path.join(d, e) for e in os.listdir(d) if e.endswith(fmt))
    samples = 0
    for path in files:
        if fmt == 'hdf5':
            with h5py.File(path, 'r') as f:
                samples += sum(1 for i in range(2) if f['records_0'][i].size == 256)
        else:
            samples += np.load(path)['x'].size // 256
    print(fmt, [os.path.basename(p) for p in files], samples)
)",
                                    tmp.path());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("hdf5 ['img_0_of_4.hdf5', 'img_1_of_4.hdf5', 'img_2_of_4.hdf5', "
                      "'img_3_of_4.hdf5'] 8") != std::string::npos);
  CHECK(r.output.find("npz ['img_0_of_4.npz', 'img_1_of_4.npz', 'img_2_of_4.npz', "
                      "'img_3_of_4.npz'] 8") != std::string::npos);
}

// DLIO's dlio_dataset_dimension_test.py for tfrecord, indexed_binary and csv: record_dims and
// record_element_type shape what dlio-run generates, checked with readers of our own here (the
// tfrecord framing by hand and the Example with google.protobuf, the index files with numpy, the
// rows with pandas) as upstream checks them: the Example's 'image' bytes and each indexed sample
// are prod(dims) x itemsize; a csv row has prod(dims) values.
TEST_CASE("record_dims and record_element_type shape tfrecord / indexed_binary / csv samples") {
  TempDir tmp;
  struct Shape {
    std::string type, dims;
    int values, itemsize;
  };
  const std::vector<Shape> shapes = {
      {"float32", "[7,3]", 21, 4}, {"int8", "[3,5,7]", 105, 1}, {"float16", "[2,3,4,5]", 120, 2}};
  int n = 0;
  for (const std::string format : {"tfrecord", "indexed_binary", "csv"}) {
    for (const Shape& s : shapes) {
      const std::string dir = tmp / (format + "-" + std::to_string(n++));
      const CommandResult r = RunCommand(
          "timeout 120 " + DlioRun() + " -w dlio_default --quiet --generate --no-train" +
          " ++workload.dataset.format=" + format + " ++workload.dataset.data_folder=" + dir +
          " ++workload.output.folder=" + dir + "-out ++workload.dataset.num_files_train=2" +
          " ++workload.dataset.num_files_eval=0 ++workload.workflow.evaluation=False" +
          " ++workload.dataset.num_samples_per_file=3" +
          " ++workload.dataset.record_element_type=" + s.type +
          " '++workload.dataset.record_dims=" + s.dims + "'");
      INFO(format << " " << s.type << " " << s.dims << ": " << r.output);
      REQUIRE(r.exit_code == 0);
      const CommandResult check =
          RunPython(tmp, R"(import glob, struct, sys
import numpy as np, pandas as pd
sys.path.insert(0, sys.argv[4])
import example_pb2
fmt, folder, values, itemsize = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[5])
paths = sorted(glob.glob(folder + '/train/**/*.' + fmt, recursive=True))
assert len(paths) == 2, paths
for p in paths:
    if fmt == 'tfrecord':
        data, pos, n = open(p, 'rb').read(), 0, 0
        while pos < len(data):
            (length,) = struct.unpack('<Q', data[pos:pos + 8])
            ex = example_pb2.Example.FromString(data[pos + 12:pos + 12 + length])
            image = ex.features.feature['image'].bytes_list.value[0]
            assert len(image) == values * itemsize, (p, len(image))
            pos, n = pos + 16 + length, n + 1
        assert n == 3, (p, n)
    elif fmt == 'indexed_binary':
        off = np.fromfile(p + '.off.idx', dtype=np.int64)
        size = np.fromfile(p + '.sz.idx', dtype=np.int64)
        assert len(off) == 3 and list(size) == [values * itemsize] * 3, (p, off, size)
        data = open(p, 'rb').read()
        assert all(len(data[o:o + z]) == z for o, z in zip(off, size))
    else:
        df = pd.read_csv(p, compression='infer', header=None)
        assert len(df) == 3 and len(df.iloc[0]) == values, (p, df.shape)
print('ok')
)",
                    format + " " + dir + " " + std::to_string(s.values) + " " +
                        DLIO_TFRECORD_PY_DIR + " " + std::to_string(s.itemsize));
      INFO(check.output);
      CHECK(check.exit_code == 0);
    }
  }
}

}  // namespace
}  // namespace dlio::testing
