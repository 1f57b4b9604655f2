#include "cache/tier_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/fnv_hash.h"
#include "core/owner_stamp.h"
#include "dlio/cache.h"

namespace dlio::cache_internal {
namespace {

// Reads `size` bytes of the source's `path` in `chunk`-byte requests, handing each to `sink`.
Status ReadSource(
    Storage* source, const std::string& path, uint64_t size, size_t chunk,
    const std::atomic<bool>* stop,
    const std::function<Status(uint64_t offset, const uint8_t* data, size_t n)>& sink) {
  DLIO_ASSIGN_OR_RETURN(auto file, source->Open(path, OpenMode::kRead));
  std::vector<uint8_t> buf(std::min<uint64_t>(chunk, std::max<uint64_t>(size, 1)));
  uint64_t offset = 0;
  while (offset < size) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
      return Status::Cancelled("copying ", path, " into the cache: the cache is shutting down");
    }
    const size_t want = std::min<uint64_t>(buf.size(), size - offset);
    DLIO_ASSIGN_OR_RETURN(size_t got, file->ReadAt(offset, want, buf.data()));
    if (got == 0) {
      return Status::IOError("copying ", path, " into the cache: it ended at offset ", offset,
                             " instead of ", size, " (the source changed)");
    }
    DLIO_RETURN_NOT_OK(sink(offset, buf.data(), got));
    offset += got;
  }
  return file->Close();
}

// A new read-only descriptor (its own open file description) of `file`, the copy of `path`.
Result<OwnedFd> OpenReadOnly(const std::string& file, const std::string& path) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, StrCat("opening the cached copy of ", path));
  return OwnedFd(fd);
}

class MemoryStore final : public TierStore {
 public:
  explicit MemoryStore(uint64_t capacity) : TierStore("memory", capacity) {}

  Result<TierCopy> MakeCopy(Storage* source, const std::string& path, uint64_t size, uint32_t,
                            size_t chunk, const std::atomic<bool>* stop) override {
    DLIO_ASSIGN_OR_RETURN(std::shared_ptr<MemoryBlock> block, MemoryBlock::Make(path, size));
    DLIO_RETURN_NOT_OK(ReadSource(source, path, size, chunk, stop,
                                  [&](uint64_t offset, const uint8_t* bytes, size_t n) {
                                    return block->Write(offset, bytes, n);
                                  }));
    DLIO_RETURN_NOT_OK(block->Seal());
    return TierCopy{std::move(block), ""};
  }
  Result<std::unique_ptr<File>> OpenCopy(const std::string& path, const TierCopy& copy,
                                         LevelCounters* counters) override {
    return NewMemoryCopyFile(path, copy.data, counters);
  }
  // Through /proc, so the descriptor has its own offset (a dup would share the memfd's).
  Result<OwnedFd> OpenCopyFd(const std::string& path, const TierCopy& copy) override {
    return OpenReadOnly(StrCat("/proc/self/fd/", copy.data->fd()), path);
  }
  void Discard(const TierCopy&) override {}
};

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix.data(), suffix.size()) == 0;
}

// The folder of a directory tier: `<path>` (made 0700 when missing), and in it the folder
// kCacheDirName, which only dlio writes (0700, with the marker file kCacheMarkerName that says
// dlio made it): its lock file, copies and temporaries. dlio removes nothing outside it.
class DirectoryStore final : public TierStore {
 public:
  DirectoryStore(const CacheTierOptions& options)
      : TierStore("directory " + options.path, options.capacity_bytes),
        dir_(options.path),
        own_(options.path + "/" + kCacheDirName),
        fs_(NewPosixStorage(StorageOptions())) {}

  ~DirectoryStore() override {
    if (lock_ == nullptr) return;
    (void)fs_->Remove(own_ + "/" + kCacheLockName);
    lock_.reset();
    // The folder goes once it holds nothing but the marker (the cache discarded its copies).
    auto names = fs_->List(own_);
    if (names.ok() && *names == std::vector<std::string>{kCacheMarkerName}) {
      (void)fs_->Remove(own_ + "/" + kCacheMarkerName);
      (void)fs_->RemoveEmptyDir(own_);
    }
  }

  Status Start(int index) {
    const std::string key = StrCat("storage.tiers[", index, "].path");
    Status made = MakeFolders(key);
    if (!made.ok()) return made.WithContext(key);
    DLIO_RETURN_NOT_OK(CheckCapacity(index));
    auto lock = fs_->TryLock(own_ + "/" + kCacheLockName);
    if (!lock.ok()) return lock.status().WithContext(key);
    if (*lock == nullptr) {
      return Status::FailedPrecondition(key, ": ", dir_,
                                        " is the tier of another running dlio cache (its lock ",
                                        own_, "/", kCacheLockName, " is held)");
    }
    lock_ = std::move(lock).value();
    DLIO_ASSIGN_OR_RETURN(auto names, fs_->List(own_));
    for (const std::string& name : names) {
      // Copies and temporaries of a cache that ended without removing them (the lock says no
      // live cache owns them), in dlio's own folder: never a user's file.
      if (EndsWith(name, kCacheCopySuffix) || name.find(kCacheTmpInfix) != std::string::npos) {
        Status removed = fs_->Remove(own_ + "/" + name);
        if (!removed.ok()) return removed.WithContext(key);
      }
    }
    return Status::OK();
  }

  Result<TierCopy> MakeCopy(Storage* source, const std::string& path, uint64_t size, uint32_t mode,
                            size_t chunk, const std::atomic<bool>* stop) override {
    const size_t slash = path.rfind('/');
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    char hash[17];
    std::snprintf(hash, sizeof(hash), "%016llx", static_cast<unsigned long long>(Fnv1a64(path)));
    const std::string final_name =
        StrCat(own_, "/", hash, "-", next_.fetch_add(1), "-", base, kCacheCopySuffix);
    const std::string tmp = final_name + kCacheTmpInfix + UniqueOwnerToken();
    Status status = WriteCopy(source, path, tmp, size, mode, chunk, stop);
    if (status.ok()) status = fs_->Rename(tmp, final_name);
    if (!status.ok()) {
      auto exists = fs_->Exists(tmp);
      if (exists.ok() && *exists) (void)fs_->Remove(tmp);  // this call's own temporary
      return status;
    }
    return TierCopy{nullptr, final_name};
  }

  Result<std::unique_ptr<File>> OpenCopy(const std::string& path, const TierCopy& copy,
                                         LevelCounters* counters) override {
    DLIO_ASSIGN_OR_RETURN(auto file, fs_->Open(copy.file, OpenMode::kRead));
    return NewCountedFile(path, std::move(file), counters);
  }

  Result<OwnedFd> OpenCopyFd(const std::string& path, const TierCopy& copy) override {
    return OpenReadOnly(copy.file, path);
  }

  void Discard(const TierCopy& copy) override { (void)fs_->Remove(copy.file); }

 private:
  // The tier folder (0700 when this call makes it) and dlio's folder in it.
  Status MakeFolders(const std::string& key) {
    const size_t slash = dir_.find_last_not_of('/');
    const size_t parent_end = slash == std::string::npos ? 0 : dir_.rfind('/', slash);
    if (parent_end != std::string::npos && parent_end > 0) {
      DLIO_RETURN_NOT_OK(fs_->CreateDirs(dir_.substr(0, parent_end)));
    }
    if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::FromErrno(errno, "mkdir " + dir_);
    }
    const std::string marker = own_ + "/" + kCacheMarkerName;
    if (::mkdir(own_.c_str(), 0700) == 0) {
      const int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0) return Status::FromErrno(errno, "creating " + marker);
      static constexpr char kText[] = "dlio tiered cache: this folder holds dlio's copies\n";
      const bool written = ::write(fd, kText, sizeof(kText) - 1) == sizeof(kText) - 1;
      ::close(fd);
      return written ? Status::OK() : Status::IOError("writing ", marker);
    }
    if (errno != EEXIST) return Status::FromErrno(errno, "mkdir " + own_);
    // Made earlier: by dlio (a directory of this user holding the marker), or refused untouched.
    struct stat st {
    }, mt{};
    if (::lstat(own_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
        ::lstat(marker.c_str(), &mt) != 0 || !S_ISREG(mt.st_mode)) {
      return Status::FailedPrecondition(
          own_, " exists but is not a folder dlio made (no ", kCacheMarkerName,
          " of this user in it); dlio keeps its copies there and removes nothing it did not make: "
          "move it away or choose another folder");
    }
    if ((st.st_mode & 077) != 0 && ::chmod(own_.c_str(), 0700) != 0) {
      return Status::FromErrno(errno, "chmod 0700 " + own_);
    }
    return Status::OK();
  }

  // A capacity above the size of the tier's file system could never be used: refused.
  Status CheckCapacity(int index) {
    struct statvfs vfs {};
    if (::statvfs(own_.c_str(), &vfs) != 0) return Status::OK();  // cannot tell: trust the config
    const uint64_t total = static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
    if (total > 0 && capacity() > total) {
      return Status::InvalidArgument("storage.tiers[", index, "].capacity_bytes: ", capacity(),
                                     " bytes is more than the whole file system of ", dir_,
                                     " holds (", total, " bytes); give a capacity it can hold");
    }
    return Status::OK();
  }

  Status WriteCopy(Storage* source, const std::string& path, const std::string& tmp, uint64_t size,
                   uint32_t mode, size_t chunk, const std::atomic<bool>* stop) {
    DLIO_ASSIGN_OR_RETURN(auto out, fs_->Open(tmp, OpenMode::kCreateNew));
    // Readable by no more users than the source, before any byte is in it.
    Status status = ::chmod(tmp.c_str(), mode) == 0
                        ? Status::OK()
                        : Status::FromErrno(errno, StrCat("chmod ", tmp));
    if (status.ok()) {
      status = ReadSource(source, path, size, chunk, stop,
                          [&](uint64_t offset, const uint8_t* bytes, size_t n) {
                            return out->WriteAt(offset, bytes, n);
                          });
    }
    Status closed = out->Close();
    return status.ok() ? closed : status;
  }

  const std::string dir_;
  const std::string own_;  // dlio's folder in dir_
  std::unique_ptr<Storage> fs_;
  std::unique_ptr<StorageLock> lock_;
  std::atomic<uint64_t> next_{0};
};

}  // namespace

Result<std::unique_ptr<TierStore>> OpenTierStore(const CacheTierOptions& options, int index) {
  if (options.type == CacheTierOptions::Type::kMemory) {
    return std::unique_ptr<TierStore>(std::make_unique<MemoryStore>(options.capacity_bytes));
  }
  auto store = std::make_unique<DirectoryStore>(options);
  DLIO_RETURN_NOT_OK(store->Start(index));
  return std::unique_ptr<TierStore>(std::move(store));
}

}  // namespace dlio::cache_internal
