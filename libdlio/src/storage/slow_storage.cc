#include "storage/slow_storage.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>

#include "core/fnv_hash.h"
#include "storage/capabilities.h"
#include "storage/slow_options.h"

namespace dlio {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in (0, 1).
double Unit(uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53; }

// The delay of one call (SlowDelayNanos) from the storage's own options and seed.
int64_t DelayNanos(const SlowOptions& slow, uint64_t seed, uint64_t path_hash, uint64_t call,
                   size_t bytes) {
  double us = slow.latency_us;
  if (slow.latency_stdev_us > 0) {
    const uint64_t base = SplitMix64(seed ^ SplitMix64(path_hash ^ SplitMix64(call)));
    // Box-Muller from two independent uniforms.
    const double u1 = Unit(base), u2 = Unit(SplitMix64(base));
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    us += slow.latency_stdev_us * z;
  }
  if (us < 0) us = 0;
  if (slow.bandwidth_mib_s > 0) {
    us += static_cast<double>(bytes) / (slow.bandwidth_mib_s * 1048576.0) * 1e6;
  }
  return static_cast<int64_t>(us * 1000.0);
}

class SlowFile final : public FileWrapper {
 public:
  SlowFile(std::unique_ptr<File> inner, const SlowOptions& slow, uint64_t seed, const Clock* clock)
      : FileWrapper(std::move(inner)),
        slow_(slow),
        seed_(seed),
        clock_(clock),
        path_hash_(Fnv1a64(path())) {}

 protected:
  Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
    Delay(n);
    return FileWrapper::DoReadAt(offset, n, buf);
  }
  Result<size_t> DoReadSomeAt(uint64_t offset, size_t n, void* buf) override {
    Delay(n);
    return FileWrapper::DoReadSomeAt(offset, n, buf);
  }
  Status DoWriteAt(uint64_t offset, const void* buf, size_t n) override {
    Delay(n);
    return FileWrapper::DoWriteAt(offset, buf, n);
  }

 private:
  void Delay(size_t n) {
    const uint64_t call = calls_.fetch_add(1, std::memory_order_relaxed);
    clock_->SleepForNanos(DelayNanos(slow_, seed_, path_hash_, call, n));
  }

  const SlowOptions& slow_;  // owned by the SlowStorage, which outlives its files
  const uint64_t seed_;
  const Clock* clock_;
  const uint64_t path_hash_;
  std::atomic<uint64_t> calls_{0};
};

class SlowStorage final : public StorageWrapper {
 public:
  SlowStorage(std::unique_ptr<Storage> inner, const StorageOptions& options)
      : StorageWrapper("slow", std::move(inner)),
        slow_(options.backends.Value<SlowOptions>()),
        seed_(options.seed) {}
  StorageCapabilities capabilities() const override {
    return storage_internal::SlowCapabilities(inner()->capabilities());
  }
  // Its own cost plus the wrapped storage's (a slow over a slow adds both latencies).
  EmulatedCost emulated_cost() const override {
    EmulatedCost cost = inner()->emulated_cost();
    cost.latency_ns += static_cast<uint64_t>(slow_.latency_us * 1000.0);
    if (slow_.bandwidth_mib_s > 0) {
      const auto mine = static_cast<uint64_t>(slow_.bandwidth_mib_s * 1048576.0);
      cost.bytes_per_s = cost.bytes_per_s == 0 ? mine : std::min(cost.bytes_per_s, mine);
    }
    return cost;
  }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    DLIO_ASSIGN_OR_RETURN(std::unique_ptr<File> f, StorageWrapper::DoOpen(path, mode, options));
    return std::unique_ptr<File>(
        std::make_unique<SlowFile>(std::move(f), slow_, seed_, sink().clock));
  }

 private:
  const SlowOptions slow_;
  const uint64_t seed_;
};

}  // namespace

int64_t SlowDelayNanos(const StorageOptions& options, uint64_t path_hash, uint64_t call,
                       size_t bytes) {
  return DelayNanos(options.backends.Value<SlowOptions>(), options.seed, path_hash, call, bytes);
}

std::unique_ptr<Storage> NewSlowStorage(std::unique_ptr<Storage> inner,
                                        const StorageOptions& options) {
  return std::make_unique<SlowStorage>(std::move(inner), options);
}

}  // namespace dlio
