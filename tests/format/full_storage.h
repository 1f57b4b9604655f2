// A memory storage with a capacity: writes that would grow the stored bytes past it fail with
// ENOSPC's ResourceExhausted, like a full disk (no mount needed). Removing a file frees its bytes.
#pragma once

#include <cerrno>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "dlio/storage.h"
#include "dlio/storage_wrapper.h"

namespace dlio::testing {

class FullStorage final : public StorageWrapper {
 public:
  explicit FullStorage(uint64_t capacity)
      : StorageWrapper("full", NewMemoryStorage()), capacity_(capacity) {
    inner()->Bind(SystemClock(), nullptr);
  }

  // Bytes stored now (the sum of file sizes).
  uint64_t used() {
    std::lock_guard<std::mutex> lock(mu_);
    return used_;
  }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    DLIO_ASSIGN_OR_RETURN(std::unique_ptr<File> file, StorageWrapper::DoOpen(path, mode, options));
    DLIO_ASSIGN_OR_RETURN(const uint64_t size, file->Size());
    {
      std::lock_guard<std::mutex> lock(mu_);
      used_ -= sizes_[path];
      sizes_[path] = size;
      used_ += size;
    }
    return std::unique_ptr<File>(std::make_unique<FullFile>(this, std::move(file)));
  }
  Status DoRename(const std::string& from, const std::string& to) override {
    DLIO_RETURN_NOT_OK(StorageWrapper::DoRename(from, to));
    std::lock_guard<std::mutex> lock(mu_);
    used_ -= sizes_[to];
    sizes_[to] = sizes_[from];
    sizes_.erase(from);
    return Status::OK();
  }
  Status DoRemove(const std::string& path) override {
    DLIO_RETURN_NOT_OK(StorageWrapper::DoRemove(path));
    std::lock_guard<std::mutex> lock(mu_);
    used_ -= sizes_[path];
    sizes_.erase(path);
    return Status::OK();
  }

 private:
  class FullFile final : public FileWrapper {
   public:
    FullFile(FullStorage* storage, std::unique_ptr<File> inner)
        : FileWrapper(std::move(inner)), storage_(storage) {}

   protected:
    Status DoWriteAt(uint64_t offset, const void* buf, size_t n) override {
      DLIO_RETURN_NOT_OK(storage_->Grow(path(), offset + n, offset));
      return FileWrapper::DoWriteAt(offset, buf, n);
    }

   private:
    FullStorage* storage_;
  };

  // Accounts `path` growing to `end` bytes; ENOSPC when that passes the capacity.
  Status Grow(const std::string& path, uint64_t end, uint64_t offset) {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t& size = sizes_[path];
    if (end <= size) return Status::OK();
    if (used_ + (end - size) > capacity_) {
      return Status::FromErrno(ENOSPC, "pwrite " + path + " at offset " + std::to_string(offset));
    }
    used_ += end - size;
    size = end;
    return Status::OK();
  }

  const uint64_t capacity_;
  std::mutex mu_;
  std::map<std::string, uint64_t> sizes_;
  uint64_t used_ = 0;
};

}  // namespace dlio::testing
