// The closed sets of values of the config (reader.read_type, checkpoint.rank_mode, ...) as enums,
// each with the one table of its config spellings. The key table parses and prints them from these
// tables, so an error lists exactly the accepted values and ConfigToJson prints the names.
// Header-only: any module may use them without linking the config module. Registry names (formats,
// storages, pipelines, samplers, compute emulators, checkpointers) are open sets and stay strings.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace dlio {

// reader.file_shuffle / reader.sample_shuffle (DLIO: off, seed = reproducible, random).
enum class ShuffleMode { kOff, kSeed, kRandom };
// reader.sharding: how samples are split over ranks (see dlio/sampler.h).
enum class Sharding { kBlock, kRoundRobin, kNone, kShard };
// reader.read_type: on_demand reads during training; memory loads the dataset first (preload).
enum class ReadType { kOnDemand, kMemory };
// reader.data_loader: the loader being emulated, DLIO's DataLoaderType values and dlio's own
// (kDlio, the default). Only two change what dlio builds (options_for.cc): kPytorch (DataLoader
// worker processes under reader.io_model auto) and kTensorflow (tf.data's shuffle window under
// reader.sampler auto); the others name a loader dlio emulates with its reader threads.
enum class DataLoader {
  kDlio,
  kPytorch,
  kTensorflow,
  kDali,
  kNativeDali,
  kSynthetic,
  kCustom,
  kNone,
  kDaosPytorch
};
// checkpoint.rank_mode: every rank writes its share, or rank 0 alone.
enum class CheckpointRankMode { kAll, kRoot };
// checkpoint.mode: the run's ranks are the whole job, or the first ranks of a larger one.
enum class CheckpointMode { kDefault, kSubset };
// side_io.schedule
enum class SideIoSchedule {
  kPerStep,         // `reads` reads before every training step
  kSpread,          // `reads` reads in all, at seeded random steps of the run
  kBeforeTraining,  // `reads` reads in all, before the first epoch
};
// side_io.access: offsets of side reads, seeded random or consecutive; or kWhole: each side read
// is a pass over the whole file to its end, opened and closed around it (SideIo::ReadWholeFile).
enum class SideIoAccess { kRandom, kSequential, kWhole };
// metric.mlperf_rules: MLPerf Storage's training checks; auto = on for unet3d/resnet50/cosmoflow.
enum class MlperfRules { kAuto, kOn, kOff };
// output.log_level, and the level of each message the runner logs.
enum class LogLevel { kDebug = 0, kInfo, kWarn, kError };
// dataset.sample_layout: which axis of an npy array (an .npy file, an .npz member) indexes its
// samples. kFirstAxis: sample i is x[i], one contiguous slice (dlio's own layout); kLastAxis:
// sample i is x[..., i], as the Python DLIO writes and reads them (shape (dim, dim, num_samples)).
enum class SampleLayout { kFirstAxis, kLastAxis };
// reader.io_model: whose requests a reader issues to the file system (docs/io_models.md; one
// entry each in the I/O-model table, libdlio/src/io_models/io_model_table.h). The value names a
// request model, or one of two aliases:
// - request models: kNative dlio's own reads (a whole sample or transfer_size per request,
//   indexes where the format has them); the others reproduce what the named Python stack sends,
//   request for request: kNumpy np.load over npy/npz, kH5py libhdf5 with h5py's defaults, kTfData
//   TFRecordDataset's buffered stream, kMmap memory-mapped reading (np.memmap), kPandas
//   pandas.read_csv, kTarfile tarfile.open(mode="r|")'s stream (WebDataset), kPyarrow
//   pyarrow.parquet as MLPerf Storage's DLIO fork calls it, kPil PIL's Image.open and load of
//   an image file through Python's buffered file, kPyio a file read front to back through
//   Python's buffered file in the calls reader.pyio_* describe, kTarfileIndex tarfile.open(path)'s
//   random access (the member index, then extractfile(name).read() per member), kZipfile
//   zipfile.ZipFile(path)'s (the central directory, then read(name) per member), kTorchLoad
//   torch.load(path) of a torch.save file (its directory, data.pkl, then the storages);
// - kAuto: the format's default request model (FormatCapabilities::io_models; native when it
//   declares none);
// - kPytorch: kAuto's request model, read by the pytorch loader (DataLoader worker processes;
//   Loader::kPytorchWorkers).
// ResolveIoModel (dlio/format.h) turns a value into the request model a format reads with.
// reader.pyarrow_read: how the pyarrow request model reads a row group's selected chunks: as the
// MLPerf fork's file reader (one buffered Python read of their span), or as pyarrow's
// read_row_group (one read per chunk; with pre_buffer, coalesced). io_models/pyarrow_read.h.
enum class PyarrowRead { kFork, kColumns, kPreBuffer };
// reader.h5py_reopen: what the h5py I/O model opens again for every sample (docs/io_models.md).
enum class H5pyReopen {
  kFile,     // h5py.File and f['records'] per sample, closed after it (DLIO's on_demand reader)
  kDataset,  // the file stays open; f['records'] is looked up again per sample
  kNone,     // the file and its datasets stay open (a loop over `records = f['records']`)
};
// reader.hdf5_lookup_order: where a lookup table's row is read beside its sample: auto = before
// a sample of DLIO's rows (coordinates that place a crop), after a group-per-sample file's
// sample (a label read after its image).
enum class LookupOrder { kAuto, kBefore, kAfter };
// reader.pyio_call: the call io_model pyio reads a file with after its head: read (a new bytes
// object per call), readinto (into a buffer the program keeps) or read1 (at most one read(2) a
// call: a text file's chunks, as TextIOWrapper reads them for `for line in open(path)`).
enum class PyioCall { kRead, kReadinto, kRead1 };
// reader.tarfile_open: how io_model tarfile's program hands a shard to tarfile: the file object
// open(path, "rb") gives (WebDataset) or the path (tarfile opens it unbuffered).
enum class TarfileOpen { kFileObject, kPath };
enum class IoModel {
  kAuto,
  kNative,
  kNumpy,
  kH5py,
  kTfData,
  kPytorch,
  kMmap,
  kPandas,
  kTarfile,
  kPyarrow,
  kPil,
  kPyio,
  kTarfileIndex,
  kZipfile,
  kTorchLoad
};
// Who runs a loop's reads, the second meaning reader.io_model can carry (io_model pytorch, or
// auto with reader.data_loader pytorch: PipelineNameFor in dlio/loop.h): dlio's reader threads, or
// PyTorch DataLoader worker processes (the pytorch pipeline).
enum class Loader { kThreads, kPytorchWorkers };
// reader.loader: who runs the reads, whatever request model reader.io_model names. kAuto: as the
// io_model picks it (pytorch: worker processes; auto with reader.data_loader pytorch: worker
// processes where the pipeline overlaps I/O; else threads); kThreads: dlio's reader threads;
// kPytorchWorkers: DataLoader worker processes, each reading with the request model (a model with
// per-process state, such as tarfile_index's member index, then has it per worker).
enum class ReaderLoader { kAuto, kThreads, kPytorchWorkers };
// reader.client_costs: what a framework request model costs the client (docs/io_models.md).
// kNone: the model's requests into dlio's reused buffers; kFramework: also the framework's client
// work (fresh arrays, copies, CRC passes, collate into shared memory).
enum class ClientCosts { kNone, kFramework };
// How Barrier waits for the other processes (train.barrier_wait). kSpin: the MPI library's
// MPI_Barrier (Open MPI busy-polls, which starves the other processes when the cores are
// oversubscribed). kSleep: MPI_Ibarrier, tested at once and then polled with MPI_Test between
// sleeps of 20 us growing to 200 us, leaving the cores to the processes that still compute.
enum class BarrierWait { kSleep, kSpin };
// profiling.profiler: what DLIO's workflow.profiling runs beside the benchmark (runner.cc):
// iostat, nothing, or DLIO's darshan / tensorboard (accepted, not run).
enum class Profiler { kNone, kIostat, kDarshan, kTensorboard };
// storage.tiers[i].type: where a cache tier keeps its copies, in memory or in a folder
// (CacheTierOptions::Type, dlio/cache.h).
enum class CacheTierType { kMemory, kDirectory };
// model.model_datatype / model.optimizer_datatype: element type of checkpointed tensors.
enum class Datatype { kFp16, kBf16, kFp32, kFp64, kInt8, kUint8 };

// EnumNames<E>::kNames[i] is the config spelling of the value i of E.
template <typename E>
struct EnumNames;

template <>
struct EnumNames<ShuffleMode> {
  static constexpr std::array<std::string_view, 3> kNames{"off", "seed", "random"};
};
template <>
struct EnumNames<Sharding> {
  static constexpr std::array<std::string_view, 4> kNames{"block", "round_robin", "none", "shard"};
};
template <>
struct EnumNames<ReadType> {
  static constexpr std::array<std::string_view, 2> kNames{"on_demand", "memory"};
};
template <>
struct EnumNames<DataLoader> {
  static constexpr std::array<std::string_view, 9> kNames{"dlio",   "pytorch",     "tensorflow",
                                                          "dali",   "native_dali", "synthetic",
                                                          "custom", "none",        "daos_pytorch"};
};
template <>
struct EnumNames<CheckpointRankMode> {
  static constexpr std::array<std::string_view, 2> kNames{"all", "root"};
};
template <>
struct EnumNames<CheckpointMode> {
  static constexpr std::array<std::string_view, 2> kNames{"default", "subset"};
};
template <>
struct EnumNames<SideIoSchedule> {
  static constexpr std::array<std::string_view, 3> kNames{"per_step", "spread", "before_training"};
};
template <>
struct EnumNames<SideIoAccess> {
  static constexpr std::array<std::string_view, 3> kNames{"random", "sequential", "whole"};
};
template <>
struct EnumNames<MlperfRules> {
  static constexpr std::array<std::string_view, 3> kNames{"auto", "on", "off"};
};
template <>
struct EnumNames<SampleLayout> {
  static constexpr std::array<std::string_view, 2> kNames{"first_axis", "last_axis"};
};
template <>
struct EnumNames<LogLevel> {
  static constexpr std::array<std::string_view, 4> kNames{"debug", "info", "warn", "error"};
};
template <>
struct EnumNames<IoModel> {
  static constexpr std::array<std::string_view, 15> kNames{
      "auto",    "native",  "numpy", "h5py", "tf.data",       "pytorch", "mmap",      "pandas",
      "tarfile", "pyarrow", "pil",   "pyio", "tarfile_index", "zipfile", "torch_load"};
};
template <>
struct EnumNames<PyarrowRead> {
  static constexpr std::array<std::string_view, 3> kNames{"fork", "columns", "pre_buffer"};
};
template <>
struct EnumNames<H5pyReopen> {
  static constexpr std::array<std::string_view, 3> kNames{"file", "dataset", "none"};
};
template <>
struct EnumNames<LookupOrder> {
  static constexpr std::array<std::string_view, 3> kNames{"auto", "before", "after"};
};
template <>
struct EnumNames<PyioCall> {
  static constexpr std::array<std::string_view, 3> kNames{"read", "readinto", "read1"};
};
template <>
struct EnumNames<TarfileOpen> {
  static constexpr std::array<std::string_view, 2> kNames{"file_object", "path"};
};
template <>
struct EnumNames<Loader> {
  static constexpr std::array<std::string_view, 2> kNames{"threads", "pytorch"};
};
template <>
struct EnumNames<ReaderLoader> {
  static constexpr std::array<std::string_view, 3> kNames{"auto", "threads", "pytorch_workers"};
};
template <>
struct EnumNames<ClientCosts> {
  static constexpr std::array<std::string_view, 2> kNames{"none", "framework"};
};
template <>
struct EnumNames<BarrierWait> {
  static constexpr std::array<std::string_view, 2> kNames{"sleep", "spin"};
};
template <>
struct EnumNames<Profiler> {
  static constexpr std::array<std::string_view, 4> kNames{"none", "iostat", "darshan",
                                                          "tensorboard"};
};
template <>
struct EnumNames<CacheTierType> {
  static constexpr std::array<std::string_view, 2> kNames{"memory", "directory"};
};
template <>
struct EnumNames<Datatype> {
  static constexpr std::array<std::string_view, 6> kNames{"fp16", "bf16", "fp32",
                                                          "fp64", "int8", "uint8"};
};

// The config spelling of `value` ("memory" for ReadType::kMemory); "unknown" for a value outside
// the enum (only a cast can make one).
template <typename E>
constexpr std::string_view EnumName(E value) {
  const auto i = static_cast<size_t>(value);
  return i < EnumNames<E>::kNames.size() ? EnumNames<E>::kNames[i] : std::string_view("unknown");
}

// The value spelled exactly `name`, or nullopt.
template <typename E>
constexpr std::optional<E> EnumFromName(std::string_view name) {
  for (size_t i = 0; i < EnumNames<E>::kNames.size(); ++i) {
    if (EnumNames<E>::kNames[i] == name) return static_cast<E>(i);
  }
  return std::nullopt;
}

// "off, seed, random": the accepted spellings of E, for messages.
template <typename E>
std::string EnumNameList() {
  std::string out;
  for (std::string_view name : EnumNames<E>::kNames) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace dlio
