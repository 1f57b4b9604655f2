// Page-cache reads through read() and pread() at 4 KiB, 16 KiB, 64 KiB and 1 MiB: the cost
// libdlio_preload.so adds is the difference between a run with LD_PRELOAD and one without
// (benchmarks/preload_overhead.sh runs both and prints the overhead). The data file lives in
// $DLIO_BENCH_DATA_DIR (made on first use) so a run can put it inside the traced prefix.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr off_t kFileBytes = 64 << 20;

// A buffer at a fixed place relative to a page: where malloc puts a vector depends on what else
// the process has allocated (a preloaded library's own allocations move it), and a page-cache copy
// into a buffer at another alignment takes a different time (measured: ~10% at 1 MiB with the
// interposer loaded and tracing off). Both runs copy into the same layout: 64 bytes past a page
// boundary (exactly page-aligned, the copy is ~15% slower still, from 4K aliasing with the source).
class Buffer {
 public:
  explicit Buffer(size_t n)
      : base_(static_cast<char*>(std::aligned_alloc(4096, n + 4096))), size_(n) {}
  ~Buffer() { std::free(base_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  char* data() { return base_ + 64; }
  size_t size() const { return size_; }

 private:
  char* base_;
  size_t size_;
};

std::string DataFile() {
  const char* dir = std::getenv("DLIO_BENCH_DATA_DIR");
  return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/preload-bench.bin";
}

// Opens the data file, writing it first when it is missing or short; then reads it once so
// every page is cached.
int OpenData(benchmark::State& state) {
  const std::string path = DataFile();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || st.st_size != kFileBytes) {
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char> block(1 << 20, 'x');
    bool ok = fd >= 0;
    for (off_t done = 0; ok && done < kFileBytes; done += 1 << 20) {
      ok = ::write(fd, block.data(), block.size()) == static_cast<ssize_t>(block.size());
    }
    if (fd >= 0) ::close(fd);
    if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
      state.SkipWithError(("cannot write " + path).c_str());
      return -1;
    }
  }
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    state.SkipWithError(("cannot open " + path).c_str());
    return -1;
  }
  std::vector<char> buf(1 << 20);
  for (off_t off = 0; off < kFileBytes; off += 1 << 20) {
    if (::pread(fd, buf.data(), buf.size(), off) <= 0) break;
  }
  return fd;
}

// read(): sequential, back to the start at the end of the file (one lseek per pass).
void BM_Read(benchmark::State& state) {
  const int fd = OpenData(state);
  if (fd < 0) return;
  const auto size = static_cast<size_t>(state.range(0));
  Buffer buf(size);
  off_t pos = 0;
  for (auto _ : state) {
    if (pos + static_cast<off_t>(size) > kFileBytes) {
      ::lseek(fd, 0, SEEK_SET);
      pos = 0;
    }
    const ssize_t n = ::read(fd, buf.data(), size);
    if (n != static_cast<ssize_t>(size)) state.SkipWithError("short read");
    pos += n;
    benchmark::DoNotOptimize(buf.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
  ::close(fd);
}
BENCHMARK(BM_Read)->Arg(4 << 10)->Arg(16 << 10)->Arg(64 << 10)->Arg(1 << 20);

// pread(): the same offsets without a file position.
void BM_Pread(benchmark::State& state) {
  const int fd = OpenData(state);
  if (fd < 0) return;
  const auto size = static_cast<size_t>(state.range(0));
  Buffer buf(size);
  off_t pos = 0;
  for (auto _ : state) {
    if (pos + static_cast<off_t>(size) > kFileBytes) pos = 0;
    const ssize_t n = ::pread(fd, buf.data(), size, pos);
    if (n != static_cast<ssize_t>(size)) state.SkipWithError("short read");
    pos += n;
    benchmark::DoNotOptimize(buf.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
  ::close(fd);
}
BENCHMARK(BM_Pread)->Arg(4 << 10)->Arg(16 << 10)->Arg(64 << 10)->Arg(1 << 20);

}  // namespace

BENCHMARK_MAIN();
