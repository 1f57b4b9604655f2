#include "io_models/pyio/request_storage.h"

#include <algorithm>
#include <string>
#include <vector>

namespace dlio::pyio {
namespace {

class SizedFile final : public File {
 public:
  SizedFile(std::string path, uint64_t size) : File(std::move(path), 1), size_(size) {}

 protected:
  Result<size_t> DoReadAt(uint64_t offset, size_t n, void* /*buf*/) override {
    return offset >= size_ ? 0 : static_cast<size_t>(std::min<uint64_t>(n, size_ - offset));
  }
  Status DoWriteAt(uint64_t, const void*, size_t) override { return Refused("write"); }
  Result<uint64_t> DoSize() override { return size_; }
  Status DoSync() override { return Status::OK(); }
  Status DoClose() override { return Status::OK(); }

 private:
  Status Refused(const char* what) const {
    return Status::Unimplemented(what, " ", path(), ": a sized file of the request simulation");
  }
  uint64_t size_;
};

class SizedFileStorage final : public Storage {
 public:
  explicit SizedFileStorage(uint64_t size) : Storage("sized"), size_(size) {}

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions&) override {
    if (mode != OpenMode::kRead) return Refused("open for writing", path);
    return std::unique_ptr<File>(new SizedFile(path, size_));
  }
  Result<uint64_t> DoFileSize(const std::string&) override { return size_; }
  Result<bool> DoExists(const std::string&) override { return true; }
  Result<bool> DoIsDirectory(const std::string&) override { return false; }
  Status DoCreateDirs(const std::string& path) override { return Refused("create", path); }
  Result<std::vector<std::string>> DoList(const std::string& dir) override {
    return Refused("list", dir);
  }
  Status DoRename(const std::string& from, const std::string&) override {
    return Refused("rename", from);
  }
  Status DoRemove(const std::string& path) override { return Refused("remove", path); }
  Status DoRemoveEmptyDir(const std::string& path) override { return Refused("remove", path); }
  Status DoSyncDir(const std::string&) override { return Status::OK(); }

 private:
  static Status Refused(const char* what, const std::string& path) {
    return Status::Unimplemented(what, " ", path, ": the request simulation's storage");
  }
  uint64_t size_;
};

}  // namespace

std::unique_ptr<Storage> NewSizedFileStorage(uint64_t file_size) {
  return std::make_unique<SizedFileStorage>(file_size);
}

}  // namespace dlio::pyio
