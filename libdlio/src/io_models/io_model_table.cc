#include "io_models/io_model_table.h"

#include "dlio/format.h"

namespace dlio::io_models {
namespace {

// glibc's mmap threshold once Python 3.11 on Debian 12 has imported the stack (measured in forked
// children: benchmarks/python_malloc_thresholds.py, docs/io_models.md "glibc's thresholds").
constexpr size_t kImportNumpy = 315'392;   // numpy 1.24.2; h5py 3.7.0's import leaves the same
constexpr size_t kImportTorch = 425'984;   // torch 1.13
constexpr size_t kImportPandas = 454'656;  // pandas 1.5.3
constexpr size_t kImportPil = 167'936;     // Pillow 9.4's PIL.Image

std::vector<IoModelEntry> MakeTable() {
  using L = Loader;
  std::vector<IoModelEntry> t = {
      {IoModel::kAuto, IoModel::kAuto, L::kThreads, {}, 0, false},
      {IoModel::kNative, IoModel::kNative, L::kThreads, {}, 0, false},
      {IoModel::kNumpy,
       IoModel::kNumpy,
       L::kThreads,
       {"npy", "npz"},
       kImportNumpy,
       false,
       false,
       true},
      {IoModel::kH5py, IoModel::kH5py, L::kThreads, {"hdf5"}, kImportNumpy, false},
      {IoModel::kTfData, IoModel::kTfData, L::kThreads, {"tfrecord"}, 0, true},
      {IoModel::kPytorch, IoModel::kAuto, L::kPytorchWorkers, {}, kImportTorch, false},
      // np.memmap: numpy's import.
      {IoModel::kMmap,
       IoModel::kMmap,
       L::kThreads,
       {"indexed_binary", "mmap_indexed_binary", "npy", "raw"},
       kImportNumpy,
       false,
       false,
       false,
       {"reader.mmap_"}},  // io_models/mmap_keys.cc
      {IoModel::kPandas, IoModel::kPandas, L::kThreads, {"csv"}, kImportPandas, false, false, true},
      // tarfile is in the standard library: no import moves the threshold.
      {IoModel::kTarfile, IoModel::kTarfile, L::kThreads, {"webdataset"}, 0, true},
      // pyarrow's buffers come from its own memory pool (jemalloc), not glibc's heap.
      {IoModel::kPyarrow, IoModel::kPyarrow, L::kThreads, {"parquet"}, 0, false},
      {IoModel::kPil, IoModel::kPil, L::kThreads, {"jpeg", "png"}, kImportPil, false, false, true},
      // Python's own io: no import moves the threshold (what the program then does with the
      // bytes is its own).
      {IoModel::kPyio,
       IoModel::kPyio,
       L::kThreads,
       {"jpeg", "npy", "png", "raw"},
       0,
       false,
       true,
       true,
       {"reader.pyio_"}},  // io_models/pyio_keys.cc
      // tarfile's random access: the standard library again; a shard's members by offset.
      {IoModel::kTarfileIndex,
       IoModel::kTarfileIndex,
       L::kThreads,
       {"webdataset"},
       0,
       false,
       false,
       true,
       {},
       true},
      // zipfile's random access: the standard library; members by their local headers.
      {IoModel::kZipfile, IoModel::kZipfile, L::kThreads, {"zip"}, 0, false, false, true},
      // torch.load: torch's import; under framework each storage is new memory (fresh pages
      // past the threshold), as torch.load allocates one per load.
      {IoModel::kTorchLoad,
       IoModel::kTorchLoad,
       L::kThreads,
       {"pt"},
       kImportTorch,
       false,
       false,
       true},
  };
  return t;
}

}  // namespace

const std::vector<IoModelEntry>& IoModelTable() {
  static const std::vector<IoModelEntry> table = MakeTable();
  return table;
}

const IoModelEntry& IoModelEntryFor(IoModel model) {
  const auto i = static_cast<size_t>(model);
  const std::vector<IoModelEntry>& t = IoModelTable();
  return i < t.size() ? t[i] : t.front();
}

}  // namespace dlio::io_models

namespace dlio {

IoModel ResolveIoModel(IoModel requested, const FormatCapabilities& capabilities) {
  const IoModel request = io_models::IoModelEntryFor(requested).request;
  if (request != IoModel::kAuto) return request;
  return capabilities.io_models.empty() || capabilities.native_under_auto
             ? IoModel::kNative
             : capabilities.io_models.front();
}

bool IoModelDoesClientWork(IoModel model) { return io_models::IoModelEntryFor(model).client_work; }

}  // namespace dlio
