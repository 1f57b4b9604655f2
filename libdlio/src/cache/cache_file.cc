#include "cache/cache_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>

namespace dlio::cache_internal {
namespace {

uint64_t Take(std::atomic<uint64_t>& counter, bool reset) {
  return reset ? counter.exchange(0, std::memory_order_relaxed)
               : counter.load(std::memory_order_relaxed);
}

Status Refuse(const std::string& path) {
  return Status::FailedPrecondition(path,
                                    ": opened for reading through the tiered cache (no writes)");
}

class MemoryCopyFile final : public File {
 public:
  MemoryCopyFile(const std::string& path, MemoryCopy data, LevelCounters* counters)
      : File(path, 1), data_(std::move(data)), counters_(counters) {}
  ~MemoryCopyFile() override { (void)Close(); }

 protected:
  Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
    if (offset >= data_->size()) return size_t{0};
    const size_t count = std::min<uint64_t>(n, data_->size() - offset);
    std::memcpy(buf, data_->data() + offset, count);
    counters_->bytes_served.fetch_add(count, std::memory_order_relaxed);
    return count;
  }
  Status DoWriteAt(uint64_t, const void*, size_t) override { return Refuse(path()); }
  Result<uint64_t> DoSize() override { return data_->size(); }
  Status DoSync() override { return Status::OK(); }
  Status DoClose() override { return Status::OK(); }

 private:
  MemoryCopy data_;
  LevelCounters* counters_;
};

// Reports the source's path (not a directory tier's copy name) in errors and traces.
class CountedFile final : public File {
 public:
  CountedFile(const std::string& path, std::unique_ptr<File> inner, LevelCounters* counters)
      : File(path, inner->alignment()), inner_(std::move(inner)), counters_(counters) {}
  ~CountedFile() override { (void)Close(); }

 protected:
  Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
    return Count(inner_->ReadAt(offset, n, buf));
  }
  Result<size_t> DoReadSomeAt(uint64_t offset, size_t n, void* buf) override {
    return Count(inner_->ReadSomeAt(offset, n, buf));
  }
  Status DoWriteAt(uint64_t, const void*, size_t) override { return Refuse(path()); }
  Result<uint64_t> DoSize() override { return inner_->Size(); }
  Status DoSync() override { return Status::OK(); }
  Status DoClose() override { return inner_->Close(); }

 private:
  Result<size_t> Count(Result<size_t> read) {
    if (read.ok()) counters_->bytes_served.fetch_add(*read, std::memory_order_relaxed);
    return read;
  }
  std::unique_ptr<File> inner_;
  LevelCounters* counters_;
};

}  // namespace

void LevelCounters::Snapshot(CacheTierStats* out, bool reset) {
  out->hits = Take(hits, reset);
  out->misses = Take(misses, reset);
  out->read_through = Take(read_through, reset);
  out->bytes_served = Take(bytes_served, reset);
  out->bytes_copied = Take(bytes_copied, reset);
  out->files_copied = Take(files_copied, reset);
  out->evictions = Take(evictions, reset);
  out->invalidations = Take(invalidations, reset);
  out->skipped_too_big = Take(skipped_too_big, reset);
}

Result<SourceStat> StatSource(Storage* source, bool host_files, const std::string& path) {
  SourceStat stat;
  DLIO_ASSIGN_OR_RETURN(stat.size, source->FileSize(path));
  if (host_files) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
    stat.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  return stat;
}

std::unique_ptr<File> NewMemoryCopyFile(const std::string& path, MemoryCopy data,
                                        LevelCounters* counters) {
  return std::make_unique<MemoryCopyFile>(path, std::move(data), counters);
}

std::unique_ptr<File> NewCountedFile(const std::string& path, std::unique_ptr<File> inner,
                                     LevelCounters* counters) {
  return std::make_unique<CountedFile>(path, std::move(inner), counters);
}

}  // namespace dlio::cache_internal
