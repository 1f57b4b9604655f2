// pread throughput through File::ReadAt (tracing off / on with the trace-file tracer) versus a raw
// pread loop on the same warm file. Targets: tracing-on within 3% of off for >= 256 KiB requests,
// and a negligible gap between File::ReadAt and raw pread.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "dlio/storage.h"
#include "dlio/tracer.h"

namespace {

constexpr size_t kFileSize = 64 << 20;

// A warm 64 MiB file in /tmp, written once per process and removed at exit.
class WarmFile {
 public:
  WarmFile() : path_("/tmp/dlio-storage-bench-" + std::to_string(getpid()) + ".bin") {
    std::vector<char> block(1 << 20, 'x');
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    for (size_t off = 0; off < kFileSize; off += block.size()) {
      if (::pwrite(fd, block.data(), block.size(), static_cast<off_t>(off)) < 0) break;
    }
    ::close(fd);
    // Warm the page cache.
    const int rfd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    for (size_t off = 0; off < kFileSize; off += block.size()) {
      if (::pread(rfd, block.data(), block.size(), static_cast<off_t>(off)) <= 0) break;
    }
    ::close(rfd);
  }
  ~WarmFile() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const WarmFile& File() {
  static const WarmFile file;  // benchmark fixture, created on first use
  return file;
}

void BM_RawPread(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  std::vector<char> buf(n);
  const int fd = ::open(File().path().c_str(), O_RDONLY | O_CLOEXEC);
  uint64_t off = 0;
  for (auto _ : state) {
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd, buf.data() + done, n - done, static_cast<off_t>(off + done));
      if (r <= 0) break;
      done += static_cast<size_t>(r);
    }
    benchmark::DoNotOptimize(done);
    off = (off + n) % kFileSize;
  }
  ::close(fd);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n));
}

void RunReadAt(benchmark::State& state, dlio::Tracer* tracer) {
  const auto n = static_cast<size_t>(state.range(0));
  std::vector<char> buf(n);
  auto storage = dlio::NewPosixStorage(dlio::StorageOptions{});
  storage->Bind(dlio::SystemClock(), tracer);
  auto file = storage->Open(File().path(), dlio::OpenMode::kRead).value();
  uint64_t off = 0;
  for (auto _ : state) {
    auto got = file->ReadAt(off, n, buf.data());
    benchmark::DoNotOptimize(got);
    off = (off + n) % kFileSize;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n));
}

void BM_ReadAtTraceOff(benchmark::State& state) { RunReadAt(state, nullptr); }

void BM_ReadAtTraceOn(benchmark::State& state) {
  dlio::TraceFileOptions o;
  o.path = "/tmp/dlio-storage-bench-" + std::to_string(getpid()) + ".pfw";
  auto tracer = dlio::MakeTraceFileTracer(o).value();
  RunReadAt(state, tracer.get());
  (void)tracer->Flush();
  tracer.reset();
  ::unlink(o.path.c_str());
}

#define DLIO_SIZES Arg(4 << 10)->Arg(256 << 10)->Arg(4 << 20)
BENCHMARK(BM_RawPread)->DLIO_SIZES;
BENCHMARK(BM_ReadAtTraceOff)->DLIO_SIZES;
BENCHMARK(BM_ReadAtTraceOn)->DLIO_SIZES;

}  // namespace

BENCHMARK_MAIN();
