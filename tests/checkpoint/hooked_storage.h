// A storage for checkpoint tests whose writes can fail (or kill the process) on cue, and whose
// reads can come back corrupted.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlio/storage.h"
#include "dlio/storage_wrapper.h"

namespace dlio::testing {

// `on_write(n, path, offset)` runs before the n-th WriteAt of any file (n from 1) and may fail
// it. Requires external synchronization (one writer).
using WriteHook = std::function<Status(int n, const std::string& path, uint64_t offset)>;

class HookedStorage final : public StorageWrapper {
 public:
  HookedStorage(std::unique_ptr<Storage> inner, WriteHook on_write)
      : StorageWrapper("hooked", std::move(inner)), on_write_(std::move(on_write)) {
    this->inner()->Bind(SystemClock(), nullptr);
    Bind(SystemClock(), nullptr);
  }

  bool corrupt_reads = false;  // files opened from now on flip the first byte of every read
  // The opens that may write ("create <path>" for kCreateNew, "truncate <path>" for kWrite,
  // "update <path>" for kReadWrite) and the renames ("rename <from> -> <to>"), in call order.
  std::vector<std::string> calls;

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    if (mode == OpenMode::kCreateNew) calls.push_back("create " + path);
    if (mode == OpenMode::kWrite) calls.push_back("truncate " + path);
    if (mode == OpenMode::kReadWrite) calls.push_back("update " + path);
    DLIO_ASSIGN_OR_RETURN(auto file, StorageWrapper::DoOpen(path, mode, options));
    return std::unique_ptr<File>(std::make_unique<HookedFile>(std::move(file), this));
  }
  Status DoRename(const std::string& from, const std::string& to) override {
    calls.push_back("rename " + from + " -> " + to);
    return StorageWrapper::DoRename(from, to);
  }

 private:
  class HookedFile final : public FileWrapper {
   public:
    HookedFile(std::unique_ptr<File> inner, HookedStorage* owner)
        : FileWrapper(std::move(inner)), owner_(owner), corrupt_reads_(owner->corrupt_reads) {}

   protected:
    Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
      DLIO_ASSIGN_OR_RETURN(size_t got, FileWrapper::DoReadAt(offset, n, buf));
      if (corrupt_reads_ && got > 0) static_cast<uint8_t*>(buf)[0] ^= 0xff;
      return got;
    }
    Status DoWriteAt(uint64_t offset, const void* buf, size_t n) override {
      DLIO_RETURN_NOT_OK(owner_->on_write_(++owner_->writes_, path(), offset));
      return FileWrapper::DoWriteAt(offset, buf, n);
    }

   private:
    HookedStorage* owner_;
    bool corrupt_reads_;
  };

  WriteHook on_write_;
  int writes_ = 0;
};

}  // namespace dlio::testing
