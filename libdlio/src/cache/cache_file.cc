#include "cache/cache_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
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

Result<std::unique_ptr<MemoryBlock>> MemoryBlock::Make(const std::string& path, uint64_t size) {
  const int fd = ::memfd_create("dlio-cache", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return Status::FromErrno(errno, "memfd_create for the memory copy of " + path);
  std::unique_ptr<MemoryBlock> block(new MemoryBlock(path, fd, size));
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    return Status::FromErrno(errno,
                             StrCat("sizing the memory copy of ", path, " to ", size, " bytes"));
  }
  return block;
}

MemoryBlock::~MemoryBlock() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  ::close(fd_);
}

Status MemoryBlock::Write(uint64_t offset, const uint8_t* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd_, data, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      return Status::FromErrno(w < 0 ? errno : ENOSPC,
                               StrCat("writing the memory copy of ", path_, " at offset ", offset));
    }
    data += w;
    offset += static_cast<uint64_t>(w);
    n -= static_cast<size_t>(w);
  }
  return Status::OK();
}

Status MemoryBlock::Seal() {
  if (::fcntl(fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    return Status::FromErrno(errno, "sealing the memory copy of " + path_);
  }
  if (size_ == 0) return Status::OK();
  void* map = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_, 0);
  if (map == MAP_FAILED) return Status::FromErrno(errno, "mapping the memory copy of " + path_);
  data_ = static_cast<const uint8_t*>(map);
  return Status::OK();
}

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
  out->failed_copies = Take(failed_copies, reset);
}

Result<SourceStat> StatSource(Storage* source, bool host_files, const std::string& path) {
  SourceStat stat;
  DLIO_ASSIGN_OR_RETURN(stat.size, source->FileSize(path));
  if (host_files) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
    stat.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    stat.dev = static_cast<uint64_t>(st.st_dev);
    stat.ino = static_cast<uint64_t>(st.st_ino);
    stat.mode = static_cast<uint32_t>(st.st_mode & 07777);
  }
  return stat;
}

uint32_t CopyModeOf(const SourceStat& stat) {
  return stat.mode == 0 ? 0600 : (stat.mode & 0644) | 0400;
}

Status ValidateCacheOptions(const CacheOptions& options) {
  for (size_t i = 0; i < options.tiers.size(); ++i) {
    const CacheTierOptions& tier = options.tiers[i];
    const std::string key = "storage.tiers[" + std::to_string(i) + "]";
    if (tier.capacity_bytes == 0) {
      return Status::InvalidArgument(key, ".capacity_bytes must be > 0");
    }
    if (tier.threads < 1) return Status::InvalidArgument(key, ".threads must be >= 1");
    if (tier.type == CacheTierOptions::Type::kDirectory && tier.path.empty()) {
      return Status::InvalidArgument(key, ".path must name a directory for a directory tier");
    }
  }
  return Status::OK();
}

void WarnCopyFailed(const CacheOptions& options, int tier, const std::string& tier_name,
                    const std::string& path, const Status& status) {
  const std::string line =
      StrCat("dlio cache: warning: storage.tiers[", tier, "] (", tier_name, "): copying ", path,
             " failed: ", status.message(),
             "; a file whose copy fails is read from the next level and not placed in this tier "
             "again (failed_copies counts them)");
  if (options.on_warning) {
    options.on_warning(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

void SaturatingAdd(std::atomic<uint64_t>& counter, uint64_t n) {
  uint64_t now = counter.load(std::memory_order_relaxed);
  while (!counter.compare_exchange_weak(now, now > UINT64_MAX - n ? UINT64_MAX : now + n,
                                        std::memory_order_relaxed)) {
  }
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

namespace dlio {

void OwnedFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

}  // namespace dlio
