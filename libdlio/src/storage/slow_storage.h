// Decorators over a Storage: a forwarding base (LevelDB's EnvWrapper style) and the latency-adding
// "slow" backend built on it.
#pragma once

#include <memory>

#include "dlio/storage.h"

namespace dlio {

// Forwards every call to the wrapped storage's public methods. The inner storage keeps its own
// counters and tracer (the slow factory binds it to a null tracer so only the outer layer traces).
class StorageWrapper : public Storage {
 public:
  StorageWrapper(std::string name, std::unique_ptr<Storage> inner)
      : Storage(std::move(name)), inner_(std::move(inner)) {}
  bool SupportsDirect() const override { return inner_->SupportsDirect(); }
  StorageCapabilities capabilities() const override { return inner_->capabilities(); }
  const void* CollectiveMpiComm(const std::string& path) const override {
    return inner_->CollectiveMpiComm(path);
  }
  Storage* inner() const { return inner_.get(); }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    return inner_->Open(path, mode, options);
  }
  Result<uint64_t> DoFileSize(const std::string& path) override { return inner_->FileSize(path); }
  Result<bool> DoExists(const std::string& path) override { return inner_->Exists(path); }
  Result<bool> DoIsDirectory(const std::string& path) override { return inner_->IsDirectory(path); }
  Status DoCreateDirs(const std::string& path) override { return inner_->CreateDirs(path); }
  Result<std::vector<std::string>> DoList(const std::string& dir) override {
    return inner_->List(dir);
  }
  Status DoRename(const std::string& from, const std::string& to) override {
    return inner_->Rename(from, to);
  }
  Status DoRemove(const std::string& path) override { return inner_->Remove(path); }
  Status DoRemoveEmptyDir(const std::string& path) override { return inner_->RemoveEmptyDir(path); }
  Status DoSyncDir(const std::string& dir) override { return inner_->SyncDir(dir); }
  Result<std::unique_ptr<StorageLock>> DoTryLock(const std::string& path) override {
    return inner_->TryLock(path);
  }

 private:
  std::unique_ptr<Storage> inner_;
};

// Adds seeded latency to every ReadAt/WriteAt of `inner`, slept through the bound Clock:
// max(0, normal(slow_latency_us, slow_latency_stdev_us)) + bytes / slow_bandwidth_mib_s.
// The k-th call on a path always gets the same delay for a given seed.
std::unique_ptr<Storage> NewSlowStorage(std::unique_ptr<Storage> inner,
                                        const StorageOptions& options);

// The delay in nanoseconds of call number `call` of `bytes` bytes on the file whose path hashes
// to `path_hash` (exposed for tests).
int64_t SlowDelayNanos(const StorageOptions& options, uint64_t path_hash, uint64_t call,
                       size_t bytes);

}  // namespace dlio
