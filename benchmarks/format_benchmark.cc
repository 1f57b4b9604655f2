// Read throughput of the file formats through MakeFormatDataSource (single thread, page cache,
// samples in file order), against a plain pread loop over the same byte regions; and the CRC-32C
// of tfrecord, portable and SSE4.2.
//   format_benchmark --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

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
const char* const kFormats[] = {"npz", "npy", "indexed_binary", "tfrecord"};

// Writes each (format, sample size) file once per process, under a fresh /tmp directory that is
// removed at exit.
class Datasets {
 public:
  Datasets() {
    char templ[] = "/tmp/dlio-format-bench-XXXXXX";
    dir_ = mkdtemp(templ) ? templ : "/tmp";
    storage_ = dlio::NewPosixStorage(dlio::StorageOptions{});
    storage_->Bind(dlio::SystemClock(), nullptr);
    (void)dlio::RegisterBuiltinFormats(&registries_);
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

  // Path of a file of `format` holding samples of `size` bytes (kFileBytes in total).
  std::string File(const std::string& name, uint64_t size) {
    const std::string path = dir_ + "/" + name + "_" + std::to_string(size) + "." +
                             format(name)->extension();
    if (!std::filesystem::exists(path)) {
      dlio::FileSpec spec;
      spec.seed = size;
      spec.sample_sizes.assign(kFileBytes / size, size);
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
  const std::string path = Data().File(name, size);
  dlio::FormatDataSourceOptions options;
  // One request per sample, like the pread baseline (tfrecord: 0 = 256 KiB stream requests).
  options.format.transfer_size = 0;
  options.samples_per_file = kFileBytes / size;
  auto source = dlio::MakeFormatDataSource(Data().storage(), Data().format(name), {path}, options);
  if (!source.ok()) {
    state.SkipWithError(source.status().ToString().c_str());
    return;
  }
  dlio::SampleBuffer buf;
  uint64_t i = 0, samples = 0;
  for (auto _ : state) {
    dlio::Status st = (*source)->Read({0, i}, &buf);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(buf.data());
    i = (i + 1) % options.samples_per_file;
    ++samples;
  }
  state.SetLabel(name);
  state.SetBytesProcessed(static_cast<int64_t>(samples * size));
  state.SetItemsProcessed(static_cast<int64_t>(samples));
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

// CRC-32C over a buffer: implementation 0 = portable slicing-by-8, 1 = SSE4.2 (three streams).
void BM_Crc32c(benchmark::State& state) {
  const bool hardware = state.range(0) == 1;
  if (hardware && !dlio::format_internal::Crc32cHardwareAvailable()) {
    state.SkipWithError("no SSE4.2 on this CPU");
    return;
  }
  std::vector<uint8_t> buf(static_cast<size_t>(state.range(1)));
  dlio::format_internal::FillSampleBytes(1, 0, 0, buf.data(), buf.size());
  uint32_t crc = 0;
  for (auto _ : state) {
    crc = hardware ? dlio::format_internal::Crc32cExtendHardware(crc, buf.data(), buf.size())
                   : dlio::format_internal::Crc32cExtendPortable(crc, buf.data(), buf.size());
    benchmark::DoNotOptimize(crc);
  }
  state.SetLabel(hardware ? "sse4.2" : "portable");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * buf.size()));
}

BENCHMARK(BM_GenerateContent);
BENCHMARK(BM_Crc32c)->ArgsProduct({{0, 1}, {2048, 1 << 20}})->ArgNames({"impl", "bytes"});
BENCHMARK(BM_FormatRead)
    ->ArgsProduct({{0, 1, 2, 3}, {2048, 256 << 10, 4 << 20}})
    ->ArgNames({"format", "sample"});
BENCHMARK(BM_PlainPread)->Arg(2048)->Arg(256 << 10)->Arg(4 << 20)->ArgName("sample");

}  // namespace

BENCHMARK_MAIN();
