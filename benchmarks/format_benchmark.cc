// Read throughput of the file formats through MakeFormatDataSource (single thread, page cache,
// samples in file order), against a plain pread loop over the same byte regions; decode
// throughput of the formats with a decoder (csv, jpeg, png); and the CRC-32C of tfrecord,
// portable, SSE4.2 and VPCLMULQDQ. hdf5 files use the default (contiguous) layout; a format that
// was not built (hdf5 with DLIO_WITH_HDF5=OFF) is skipped.
//   format_benchmark --benchmark_counters_tabular=true
// Read rates count stored bytes (csv text, encoded images); decode rates count decoded bytes
// (float32 values, pixels).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/data_source.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "format/content.h"
#include "format/tfrecord/crc32c.h"

namespace {

constexpr uint64_t kFileBytes = 32ull << 20;  // per dataset file; stays in the page cache
// csv stores ~2.7 bytes of text per requested byte: a quarter of kFileBytes keeps files small.
constexpr uint64_t kCsvFileBytes = kFileBytes / 4;
const char* const kFormats[] = {"npz", "npy",  "indexed_binary", "csv",        "jpeg",
                                "png", "hdf5", "tfrecord",       "webdataset", "parquet"};
const char* const kDecoders[] = {"csv", "jpeg", "png"};

bool OneSamplePerFile(const std::string& name) { return name == "jpeg" || name == "png"; }

// Samples of `size` bytes in one dataset file of `name`.
uint64_t SamplesPerFile(const std::string& name, uint64_t size) {
  if (OneSamplePerFile(name)) return 1;
  if (name == "csv") return std::max<uint64_t>(1, kCsvFileBytes / size);
  return kFileBytes / size;
}

// Files the read benchmark cycles through: one-image-per-file formats get up to kFileBytes of
// images (at most 128 files), so they are not served from one hot file.
uint64_t FilesFor(const std::string& name, uint64_t size) {
  return OneSamplePerFile(name) ? std::clamp<uint64_t>(kFileBytes / size, 1, 128) : 1;
}

// Writes each (format, sample size) file once per process, under a fresh /tmp directory that is
// removed at exit.
class Datasets {
 public:
  Datasets() {
    char templ[] = "/tmp/dlio-format-bench-XXXXXX";
    dir_ = mkdtemp(templ) ? templ : "/tmp";
    storage_ = dlio::NewPosixStorage(dlio::StorageOptions{});
    storage_->Bind(dlio::SystemClock(), nullptr);
    (void)dlio::RegisterBuiltinFormats(&registries_.formats);
  }
  ~Datasets() {
    std::error_code ec;
    if (dir_ != "/tmp") std::filesystem::remove_all(dir_, ec);
  }

  dlio::Storage* storage() { return storage_.get(); }

  const dlio::Format* format(const std::string& name) {
    auto& f = formats_[name];
    if (!f) {
      auto made = (*registries_.formats.Get(name))();
      if (made.ok()) f = std::move(made).value();
    }
    return f.get();
  }

  // Path of file `k` of `format` holding samples of `size` bytes (SamplesPerFile of them); call
  // only for a format that was built (format(name) != nullptr).
  std::string File(const std::string& name, uint64_t size, uint64_t k = 0) {
    const std::string path = dir_ + "/" + name + "_" + std::to_string(size) + "_" +
                             std::to_string(k) + "." + format(name)->extension();
    if (!std::filesystem::exists(path)) {
      dlio::FileSpec spec;
      spec.seed = size + k;
      spec.sample_sizes.assign(SamplesPerFile(name, size), size);
      (void)format(name)->Write(storage_.get(), path, spec, dlio::FormatOptions{});
    }
    return path;
  }

 private:
  std::string dir_;
  std::unique_ptr<dlio::Storage> storage_;
  dlio::Registries registries_;
  std::map<std::string, std::unique_ptr<dlio::Format>> formats_;
};

Datasets& Data() {
  static Datasets data;
  return data;
}

void BM_FormatRead(benchmark::State& state) {
  const std::string name = kFormats[state.range(0)];
  const uint64_t size = static_cast<uint64_t>(state.range(1));
  if (Data().format(name) == nullptr) {
    state.SkipWithError((name + " was not built").c_str());
    return;
  }
  std::vector<std::string> paths;
  for (uint64_t k = 0; k < FilesFor(name, size); ++k) paths.push_back(Data().File(name, size, k));
  dlio::FormatDataSourceOptions options;
  // One request per sample, like the pread baseline (tfrecord: 0 = 256 KiB stream requests).
  options.format.transfer_size = 0;
  options.format.verify = state.range(2) != 0;  // checksums (tfrecord's CRC-32C)
  // 0: native (dlio's own requests); 1: the format's default model (tfrecord: tf.data).
  options.format.io_model = state.range(3) == 0 ? dlio::IoModel::kNative : dlio::IoModel::kAuto;
  options.samples_per_file = SamplesPerFile(name, size);
  options.max_open_files = paths.size();  // opens stay out of the loop
  auto source = dlio::MakeFormatDataSource(Data().storage(), Data().format(name), paths, options);
  if (!source.ok()) {
    state.SkipWithError(source.status().ToString().c_str());
    return;
  }
  dlio::SampleBuffer buf;
  uint64_t i = 0, samples = 0, bytes = 0;
  uint32_t f = 0;
  for (auto _ : state) {
    dlio::Status st = (*source)->Read({f, i}, &buf);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(buf.data());
    if (++i == options.samples_per_file) {
      i = 0;
      f = (f + 1) % static_cast<uint32_t>(paths.size());
    }
    ++samples;
    bytes += buf.size();
  }
  state.SetLabel(name);
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(static_cast<int64_t>(samples));
}

// Decode of one stored sample of `size` requested bytes, over and over (what reader.decode adds
// per sample on a preprocessing thread).
void BM_FormatDecode(benchmark::State& state) {
  const std::string name = kDecoders[state.range(0)];
  const uint64_t size = static_cast<uint64_t>(state.range(1));
  const dlio::Format* format = Data().format(name);
  auto reader = format->Open(Data().storage(), Data().File(name, size), dlio::FormatOptions{});
  dlio::SampleBuffer encoded, decoded;
  dlio::Status st = reader.ok() ? (*reader)->ReadSample(0, &encoded) : reader.status();
  if (!st.ok()) {
    state.SkipWithError(st.ToString().c_str());
    return;
  }
  for (auto _ : state) {
    st = format->Decode(encoded.data(), encoded.size(), &decoded);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(decoded.data());
  }
  state.SetLabel(name);
  state.counters["encoded_bytes"] = static_cast<double>(encoded.size());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * decoded.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// The same regions of the npy file, read with pread into a reused buffer.
void BM_PlainPread(benchmark::State& state) {
  const uint64_t size = static_cast<uint64_t>(state.range(0));
  const std::string path = Data().File("npy", size);
  const int fd = ::open(path.c_str(), O_RDONLY);
  std::vector<uint8_t> buf(size);
  const uint64_t n = kFileBytes / size;
  uint64_t i = 0, samples = 0;
  for (auto _ : state) {
    if (::pread(fd, buf.data(), size, static_cast<off_t>(128 + i * size)) !=
        static_cast<ssize_t>(size)) {
      state.SkipWithError("pread failed");
      break;
    }
    benchmark::DoNotOptimize(buf.data());
    i = (i + 1) % n;
    ++samples;
  }
  ::close(fd);
  state.SetLabel("pread");
  state.SetBytesProcessed(static_cast<int64_t>(samples * size));
  state.SetItemsProcessed(static_cast<int64_t>(samples));
}

// Sample content generation of the writers (the data generation phase's CPU cost).
void BM_GenerateContent(benchmark::State& state) {
  std::vector<uint8_t> buf(4 << 20);
  uint64_t sample = 0;
  for (auto _ : state) {
    dlio::format_internal::FillSampleBytes(7, sample++, 0, buf.data(), buf.size());
    benchmark::DoNotOptimize(buf.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * buf.size()));
}

// CRC-32C over a buffer: implementation 0 = portable slicing-by-8, 1 = SSE4.2 crc32 (three
// streams), 2 = folding with AVX-512 VPCLMULQDQ (what Crc32cExtend uses when the CPU has it).
void BM_Crc32c(benchmark::State& state) {
  namespace fi = dlio::format_internal;
  const int64_t impl = state.range(0);
  if ((impl == 1 && !fi::Crc32cHardwareAvailable()) ||
      (impl == 2 && !fi::Crc32cFoldingAvailable())) {
    state.SkipWithError("the CPU lacks the instructions");
    return;
  }
  std::vector<uint8_t> buf(static_cast<size_t>(state.range(1)));
  fi::FillSampleBytes(1, 0, 0, buf.data(), buf.size());
  uint32_t crc = 0;
  for (auto _ : state) {
    crc = impl == 0   ? fi::Crc32cExtendPortable(crc, buf.data(), buf.size())
          : impl == 1 ? fi::Crc32cExtendHardware(crc, buf.data(), buf.size())
                      : fi::Crc32cExtendFolding(crc, buf.data(), buf.size());
    benchmark::DoNotOptimize(crc);
  }
  state.SetLabel(impl == 0 ? "portable" : impl == 1 ? "sse4.2" : "vpclmulqdq");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * buf.size()));
}

BENCHMARK(BM_GenerateContent);
BENCHMARK(BM_Crc32c)
    ->ArgsProduct({{0, 1, 2}, {256, 2048, 256 << 10, 1 << 20, 4 << 20}})
    ->ArgNames({"impl", "bytes"});
BENCHMARK(BM_FormatRead)
    ->ArgsProduct({{0, 1, 2, 3, 4, 5, 6, 7}, {2048, 256 << 10, 4 << 20}, {1}, {0}})
    ->ArgNames({"format", "sample", "verify", "model"});
// tfrecord without its CRC-32C checks (reader.verify_checksums: false).
BENCHMARK(BM_FormatRead)
    ->ArgsProduct({{7}, {2048, 256 << 10, 4 << 20}, {0}, {0}})
    ->ArgNames({"format", "sample", "verify", "model"});
// tfrecord under its default model, tf.data (one 256 KiB-buffered stream per file).
BENCHMARK(BM_FormatRead)
    ->ArgsProduct({{7}, {2048, 256 << 10, 4 << 20}, {0, 1}, {1}})
    ->ArgNames({"format", "sample", "verify", "model"});
// webdataset (one shard) natively and under its default model, tarfile (10240-byte stream).
BENCHMARK(BM_FormatRead)
    ->ArgsProduct({{8}, {2048, 256 << 10, 4 << 20}, {1}, {0, 1}})
    ->ArgNames({"format", "sample", "verify", "model"});
// parquet (one column of the sample's bytes, row groups of 1024 rows) natively and under its
// default model, pyarrow (footer reads, then a row group's column chunks coalesced).
BENCHMARK(BM_FormatRead)
    ->ArgsProduct({{9}, {2048, 256 << 10, 4 << 20}, {1}, {0, 1}})
    ->ArgNames({"format", "sample", "verify", "model"});
BENCHMARK(BM_FormatDecode)
    ->ArgsProduct({{0, 1, 2}, {2048, 256 << 10, 4 << 20}})
    ->ArgNames({"format", "sample"});
BENCHMARK(BM_PlainPread)->Arg(2048)->Arg(256 << 10)->Arg(4 << 20)->ArgName("sample");

}  // namespace

BENCHMARK_MAIN();
