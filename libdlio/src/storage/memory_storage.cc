// In-memory files for tests and for runs that should not touch a disk. Semantics follow posix so
// one conformance suite covers both: directories exist explicitly (CreateDirs) or implicitly (as
// the parent of a file); open file handles keep their bytes after Remove, as an unlinked inode
// does.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "dlio/storage.h"
#include "storage/capabilities.h"

namespace dlio {
namespace {

// The bytes of one file, shared by every handle open on it.
struct MemData {
  std::shared_mutex mu;
  std::vector<uint8_t> bytes;
};

// "a//b/" -> "a/b"; "/" stays "/".
std::string Normalize(const std::string& path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool HasPrefixDir(const std::string& path, const std::string& dir) {
  if (dir == "/") return path.size() > 1 && path[0] == '/';
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

class MemoryFile final : public File {
 public:
  MemoryFile(std::string path, std::shared_ptr<MemData> data, bool writable)
      : File(std::move(path), 1), data_(std::move(data)), writable_(writable) {}
  ~MemoryFile() override { (void)Close(); }

 protected:
  Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
    std::shared_lock<std::shared_mutex> lock(data_->mu);
    const uint64_t size = data_->bytes.size();
    if (offset >= size || n == 0) return size_t{0};
    const size_t got = static_cast<size_t>(std::min<uint64_t>(n, size - offset));
    std::memcpy(buf, data_->bytes.data() + offset, got);
    return got;
  }
  Status DoWriteAt(uint64_t offset, const void* buf, size_t n) override {
    if (!writable_)
      return Status::IOError("pwrite " + path() + ": Bad file descriptor (opened for reading)");
    std::unique_lock<std::shared_mutex> lock(data_->mu);
    if (offset + n > data_->bytes.size()) {
      try {
        data_->bytes.resize(offset + n);
      } catch (const std::bad_alloc&) {
        return Status::ResourceExhausted("pwrite ", path(), ": out of memory growing to ",
                                         offset + n, " bytes");
      }
    }
    if (n > 0) std::memcpy(data_->bytes.data() + offset, buf, n);
    return Status::OK();
  }
  Result<uint64_t> DoSize() override {
    std::shared_lock<std::shared_mutex> lock(data_->mu);
    return static_cast<uint64_t>(data_->bytes.size());
  }
  Status DoSync() override { return Status::OK(); }
  Status DoClose() override {
    data_.reset();
    return Status::OK();
  }

 private:
  std::shared_ptr<MemData> data_;
  const bool writable_;
};

// The paths locked in one MemoryStorage; shared with its locks.
struct LockTable {
  std::mutex mu;
  std::set<std::string> held;
};

class MemoryLock final : public StorageLock {
 public:
  MemoryLock(std::shared_ptr<LockTable> table, std::string path)
      : table_(std::move(table)), path_(std::move(path)) {}
  ~MemoryLock() override {
    std::lock_guard<std::mutex> lock(table_->mu);
    table_->held.erase(path_);
  }

 private:
  std::shared_ptr<LockTable> table_;
  std::string path_;
};

class MemoryStorage final : public Storage {
 public:
  MemoryStorage() : Storage("memory"), locks_(std::make_shared<LockTable>()) {}

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& raw, OpenMode mode,
                                       const FileOptions&) override {
    const std::string path = Normalize(raw);
    std::lock_guard<std::mutex> lock(mu_);
    if (IsDirLocked(path)) return Status::IOError("open " + raw + ": Is a directory");
    auto it = files_.find(path);
    std::shared_ptr<MemData> data;
    if (it != files_.end()) {
      if (mode == OpenMode::kCreateNew) {
        return Status::AlreadyExists("open " + raw +
                                     ": file exists (refusing to overwrite with kCreateNew)");
      }
      data = it->second;
      if (mode == OpenMode::kWrite) {
        std::unique_lock<std::shared_mutex> dlock(data->mu);
        data->bytes.clear();
      }
    } else {
      if (mode == OpenMode::kRead) {
        return Status::NotFound("open " + raw + ": No such file or directory");
      }
      const std::string parent = Parent(path);
      if (!parent.empty() && !IsDirLocked(parent) && ExistsLocked(parent)) {
        return Status::IOError("open " + raw + ": Not a directory");
      }
      data = std::make_shared<MemData>();
      files_.emplace(path, data);
    }
    return std::unique_ptr<File>(
        std::make_unique<MemoryFile>(raw, std::move(data), mode != OpenMode::kRead));
  }

  StorageCapabilities capabilities() const override {
    return storage_internal::kMemoryCapabilities;
  }

  Result<uint64_t> DoFileSize(const std::string& raw) override {
    const std::string path = Normalize(raw);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find(path);
    if (it == files_.end()) {
      if (IsDirLocked(path)) return Status::IOError("stat " + raw + ": Is a directory");
      return Status::NotFound("stat " + raw + ": No such file or directory");
    }
    std::shared_lock<std::shared_mutex> dlock(it->second->mu);
    return static_cast<uint64_t>(it->second->bytes.size());
  }

  Result<bool> DoExists(const std::string& raw) override {
    std::lock_guard<std::mutex> lock(mu_);
    return ExistsLocked(Normalize(raw));
  }

  Result<bool> DoIsDirectory(const std::string& raw) override {
    std::lock_guard<std::mutex> lock(mu_);
    return IsDirLocked(Normalize(raw));
  }

  Status DoCreateDirs(const std::string& raw) override {
    if (raw.empty()) return Status::InvalidArgument("mkdir: empty path");
    const std::string path = Normalize(raw);
    std::lock_guard<std::mutex> lock(mu_);
    for (std::string p = path; !p.empty() && p != "/"; p = Parent(p)) {
      if (files_.count(p)) {
        return Status::AlreadyExists("mkdir " + p + ": exists and is not a directory");
      }
    }
    for (std::string p = path; !p.empty() && p != "/"; p = Parent(p)) dirs_.insert(p);
    return Status::OK();
  }

  Result<std::vector<std::string>> DoList(const std::string& raw) override {
    const std::string dir = Normalize(raw);
    std::lock_guard<std::mutex> lock(mu_);
    if (!IsDirLocked(dir)) {
      if (files_.count(dir)) return Status::IOError("opendir " + raw + ": Not a directory");
      return Status::NotFound("opendir " + raw + ": No such file or directory");
    }
    std::set<std::string> names;
    auto child = [&](const std::string& p) {
      if (!HasPrefixDir(p, dir)) return;
      const size_t start = dir == "/" ? 1 : dir.size() + 1;
      const size_t slash = p.find('/', start);
      names.insert(p.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    };
    for (const auto& [p, d] : files_) child(p);
    for (const auto& p : dirs_) child(p);
    return std::vector<std::string>(names.begin(), names.end());
  }

  Status DoRename(const std::string& raw_from, const std::string& raw_to) override {
    const std::string from = Normalize(raw_from), to = Normalize(raw_to);
    const std::string what = "rename " + raw_from + " -> " + raw_to;
    std::lock_guard<std::mutex> lock(mu_);
    if (from == to)
      return ExistsLocked(from) ? Status::OK()
                                : Status::NotFound(what + ": No such file or directory");
    auto it = files_.find(from);
    if (it != files_.end()) {
      if (IsDirLocked(to)) return Status::IOError(what + ": Is a directory");
      files_[to] = it->second;
      files_.erase(from);
      return Status::OK();
    }
    if (!IsDirLocked(from)) return Status::NotFound(what + ": No such file or directory");
    if (HasPrefixDir(to, from)) return Status::InvalidArgument(what + ": Invalid argument");
    if (files_.count(to)) return Status::IOError(what + ": Not a directory");
    if (HasChildrenLocked(to)) return Status::IOError(what + ": Directory not empty");
    // Move the directory and everything below it.
    auto moved = [&](const std::string& p) { return to + p.substr(from.size()); };
    std::map<std::string, std::shared_ptr<MemData>> files;
    for (auto& [p, d] : files_) files[HasPrefixDir(p, from) ? moved(p) : p] = d;
    std::set<std::string> dirs;
    for (const auto& p : dirs_) {
      if (p == from)
        dirs.insert(to);
      else
        dirs.insert(HasPrefixDir(p, from) ? moved(p) : p);
    }
    dirs.insert(to);
    files_ = std::move(files);
    dirs_ = std::move(dirs);
    return Status::OK();
  }

  Status DoRemove(const std::string& raw) override {
    const std::string path = Normalize(raw);
    std::lock_guard<std::mutex> lock(mu_);
    if (files_.erase(path) == 1) return Status::OK();
    if (IsDirLocked(path)) {
      return Status::InvalidArgument("unlink " + raw +
                                     ": is a directory (Remove deletes files only)");
    }
    return Status::NotFound("unlink " + raw + ": No such file or directory");
  }

  Status DoRemoveEmptyDir(const std::string& raw) override {
    const std::string path = Normalize(raw);
    std::lock_guard<std::mutex> lock(mu_);
    if (files_.count(path)) return Status::IOError("rmdir " + raw + ": Not a directory");
    if (!IsDirLocked(path)) return Status::NotFound("rmdir " + raw + ": No such file or directory");
    if (HasChildrenLocked(path)) return Status::IOError("rmdir " + raw + ": Directory not empty");
    dirs_.erase(path);
    return Status::OK();
  }

  Status DoSyncDir(const std::string& raw) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!IsDirLocked(Normalize(raw))) {
      return Status::NotFound("open directory " + raw + ": No such file or directory");
    }
    return Status::OK();
  }

  Result<std::unique_ptr<StorageLock>> DoTryLock(const std::string& raw) override {
    const std::string path = Normalize(raw);
    {
      // The lock file is created as posix creates it; an existing one keeps its bytes.
      std::lock_guard<std::mutex> lock(mu_);
      if (IsDirLocked(path)) return Status::IOError("lock " + raw + ": not a regular file");
      const std::string parent = Parent(path);
      if (!parent.empty() && !IsDirLocked(parent) && ExistsLocked(parent)) {
        return Status::IOError("open (lock file) " + raw + ": Not a directory");
      }
      if (files_.count(path) == 0) files_.emplace(path, std::make_shared<MemData>());
    }
    std::lock_guard<std::mutex> lock(locks_->mu);
    if (!locks_->held.insert(path).second) return std::unique_ptr<StorageLock>();
    return std::unique_ptr<StorageLock>(std::make_unique<MemoryLock>(locks_, path));
  }

 private:
  bool ExistsLocked(const std::string& path) const {
    return files_.count(path) > 0 || IsDirLocked(path);
  }
  bool IsDirLocked(const std::string& path) const {
    if (path == "/" || path == ".") return true;
    if (dirs_.count(path)) return true;
    return HasChildrenLocked(path);
  }
  bool HasChildrenLocked(const std::string& dir) const {
    const std::string prefix = dir == "/" ? "/" : dir + "/";
    auto f = files_.lower_bound(prefix);
    if (f != files_.end() && f->first.compare(0, prefix.size(), prefix) == 0) return true;
    auto d = dirs_.lower_bound(prefix);
    return d != dirs_.end() && d->compare(0, prefix.size(), prefix) == 0;
  }

  std::mutex mu_;  // guards files_ and dirs_ (never held during a file's byte copies)
  std::map<std::string, std::shared_ptr<MemData>> files_;
  std::set<std::string> dirs_;
  std::shared_ptr<LockTable> locks_;
};

}  // namespace

std::unique_ptr<Storage> NewMemoryStorage() { return std::make_unique<MemoryStorage>(); }

}  // namespace dlio
