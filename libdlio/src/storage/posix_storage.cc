// POSIX files: buffered, or O_DIRECT with an aligned bounce buffer for unaligned requests.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "dlio/storage.h"
#include "storage/capabilities.h"
#include "storage/open_check.h"

namespace dlio {
namespace {

using storage_internal::Errno;

// Loops until n bytes or end of file; EINTR and partial transfers are retried. With O_DIRECT
// (`align` > 1) a short read that leaves the next offset unaligned can only be end of file (and
// re-reading there would fail with EINVAL), so it stops.
Result<size_t> PreadFully(int fd, uint64_t offset, size_t n, void* buf, const std::string& path,
                          size_t align = 1) {
  size_t done = 0;
  auto* p = static_cast<uint8_t*>(buf);
  while (done < n) {
    ssize_t r = ::pread(fd, p + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, StrCat("pread ", path, " at offset ", offset + done));
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
    if (align > 1 && ((offset + done) & (align - 1)) != 0) break;
  }
  return done;
}

// One pread (retried only on EINTR): the count the kernel returns, however short.
Result<size_t> PreadOnce(int fd, uint64_t offset, size_t n, void* buf, const std::string& path) {
  for (;;) {
    const ssize_t r = ::pread(fd, buf, n, static_cast<off_t>(offset));
    if (r >= 0) return static_cast<size_t>(r);
    if (errno != EINTR) {
      return Status::FromErrno(errno, StrCat("pread ", path, " at offset ", offset));
    }
  }
}

// One preadv of `n` bytes into buf and `tail_n` into tail (retried on EINTR); a short count
// before the end of the file is completed with PreadFully of what is left, as DoReadAt would.
Result<size_t> PreadTwo(int fd, uint64_t offset, size_t n, void* buf, size_t tail_n, void* tail,
                        const std::string& path) {
  iovec iov[2] = {{buf, n}, {tail, tail_n}};
  ssize_t r = 0;
  do {
    r = ::preadv(fd, iov, 2, static_cast<off_t>(offset));
  } while (r < 0 && errno == EINTR);
  if (r < 0) return Status::FromErrno(errno, StrCat("preadv ", path, " at offset ", offset));
  size_t got = static_cast<size_t>(r);
  if (got == 0 || got == n + tail_n) return got;
  if (got < n) {
    DLIO_ASSIGN_OR_RETURN(
        size_t more, PreadFully(fd, offset + got, n - got, static_cast<uint8_t*>(buf) + got, path));
    got += more;
    if (got < n) return got;  // the file ends inside the first range
  }
  const size_t in_tail = got - n;
  DLIO_ASSIGN_OR_RETURN(size_t more, PreadFully(fd, offset + got, tail_n - in_tail,
                                                static_cast<uint8_t*>(tail) + in_tail, path));
  return got + more;
}

Status PwriteFully(int fd, uint64_t offset, const void* buf, size_t n, const std::string& path) {
  size_t done = 0;
  const auto* p = static_cast<const uint8_t*>(buf);
  while (done < n) {
    ssize_t r = ::pwrite(fd, p + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, StrCat("pwrite ", path, " at offset ", offset + done));
    }
    if (r == 0) return Status::IOError("pwrite ", path, " wrote nothing at offset ", offset + done);
    done += static_cast<size_t>(r);
  }
  return Status::OK();
}

bool IsAligned(uint64_t v, size_t a) { return (v & (a - 1)) == 0; }

// A whole file mapped read-only and shared, as np.memmap(mode='r') maps it. An empty file has
// no mapping (mmap refuses a length of 0).
class PosixMapping final : public FileMapping {
 public:
  PosixMapping(std::string path, const uint8_t* data, uint64_t size)
      : FileMapping(std::move(path), data, size) {}
  ~PosixMapping() override { (void)Unmap(); }

 protected:
  Status DoUnmap() override {
    if (size() == 0) return Status::OK();
    if (::munmap(const_cast<uint8_t*>(data()), size()) != 0) return Errno("munmap", path());
    return Status::OK();
  }
};

// Thread safety: ReadAt/WriteAt are safe concurrently (pread/pwrite on a shared fd; bounce
// buffers are taken from a mutex-guarded pool, so steady state allocates nothing).
class PosixFile final : public File {
 public:
  // `buffered_fd` is a second, non-O_DIRECT descriptor used for the unaligned pieces of direct
  // writes (or -1).
  PosixFile(std::string path, int fd, bool direct, size_t alignment, int buffered_fd,
            uint64_t block_size)
      : File(std::move(path), direct ? alignment : 1),
        fd_(fd),
        buffered_fd_(buffered_fd),
        direct_(direct) {
    set_block_size(block_size);
  }
  ~PosixFile() override { (void)Close(); }
  bool DescriptorSeeks() const override { return true; }

  // The size the open's fstat found (a file opened for reading): the first Size() returns it
  // without an fstat of its own, as a program's open(2) and fstat are one fstat (Python's
  // open(path, "rb") asks the size once); later calls ask the kernel.
  void SizeFromOpen(uint64_t size) { size_at_open_.store(static_cast<int64_t>(size)); }

 protected:
  Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
    const size_t a = alignment();
    if (!direct_ || (IsAligned(offset, a) && IsAligned(n, a) &&
                     IsAligned(reinterpret_cast<uintptr_t>(buf), a))) {
      return PreadFully(fd_, offset, n, buf, path(), direct_ ? a : 1);
    }
    // Read the aligned covering range into a bounce buffer and copy out the requested part.
    const uint64_t start = offset & ~static_cast<uint64_t>(a - 1);
    const uint64_t end = (offset + n + a - 1) & ~static_cast<uint64_t>(a - 1);
    BounceLease lease(this);
    DLIO_RETURN_NOT_OK(lease.buffer().Resize(static_cast<size_t>(end - start)));
    DLIO_ASSIGN_OR_RETURN(size_t got, PreadFully(fd_, start, static_cast<size_t>(end - start),
                                                 lease.buffer().data(), path(), a));
    const size_t skip = static_cast<size_t>(offset - start);
    if (got <= skip) return size_t{0};
    const size_t avail = std::min(n, got - skip);
    std::memcpy(buf, lease.buffer().data() + skip, avail);
    return avail;
  }

  // Without O_DIRECT (whose alignment rules DoReadAt's bounce buffer serves range by range).
  bool HasVectoredRead() const override { return !direct_; }
  Result<size_t> DoReadTwoAt(uint64_t offset, size_t n, void* buf, size_t tail_n,
                             void* tail) override {
    return PreadTwo(fd_, offset, n, buf, tail_n, tail, path());
  }

  // One pread. Under O_DIRECT an unaligned request goes through DoReadAt's bounce buffer (one
  // aligned pread unless the kernel returns short before the end of file).
  Result<size_t> DoReadSomeAt(uint64_t offset, size_t n, void* buf) override {
    if (direct_) return DoReadAt(offset, n, buf);
    return PreadOnce(fd_, offset, n, buf, path());
  }

  Status DoWriteAt(uint64_t offset, const void* buf, size_t n) override {
    const size_t a = alignment();
    if (!direct_) return PwriteFully(fd_, offset, buf, n, path());
    // O_DIRECT: the aligned head goes straight to disk (through the bounce buffer if the caller's
    // memory is unaligned); an unaligned offset, or the tail that is not a multiple of the
    // alignment, goes through the buffered descriptor, because O_DIRECT cannot write it.
    if (!IsAligned(offset, a) || buffered_fd_ < 0) {
      if (buffered_fd_ < 0) {
        return Status::FailedPrecondition("pwrite " + path() + ": file opened read-only");
      }
      return PwriteFully(buffered_fd_, offset, buf, n, path());
    }
    const size_t head = n & ~(a - 1);
    if (head > 0) {
      if (IsAligned(reinterpret_cast<uintptr_t>(buf), a)) {
        DLIO_RETURN_NOT_OK(PwriteFully(fd_, offset, buf, head, path()));
      } else {
        BounceLease lease(this);
        DLIO_RETURN_NOT_OK(lease.buffer().Resize(head));
        std::memcpy(lease.buffer().data(), buf, head);
        DLIO_RETURN_NOT_OK(PwriteFully(fd_, offset, lease.buffer().data(), head, path()));
      }
    }
    if (head < n) {
      DLIO_RETURN_NOT_OK(PwriteFully(buffered_fd_, offset + head,
                                     static_cast<const uint8_t*>(buf) + head, n - head, path()));
    }
    return Status::OK();
  }

  Result<uint64_t> DoSize() override {
    const int64_t at_open = size_at_open_.exchange(-1);
    if (at_open >= 0) return static_cast<uint64_t>(at_open);
    struct stat st;
    if (::fstat(fd_, &st) != 0) return Errno("fstat", path());
    return static_cast<uint64_t>(st.st_size);
  }

  // The descriptor's own lseek (its offset moves only here: dlio's reads are pread).
  Result<uint64_t> DoSeek(int64_t offset, int whence) override {
    const off_t at = ::lseek(fd_, static_cast<off_t>(offset), whence);
    if (at >= 0) return static_cast<uint64_t>(at);
    if (errno == EINVAL) {
      return Status::InvalidArgument("lseek ", path(), ": offset ", offset, " (whence ", whence,
                                     ") lies before the start of the file");
    }
    return Errno("lseek", path());
  }

  Result<uint64_t> DoMapSize() override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return Errno("fstat", path());
    return static_cast<uint64_t>(st.st_size);
  }

  Result<std::unique_ptr<FileMapping>> DoMap(uint64_t size) override {
    if (size == 0) return std::unique_ptr<FileMapping>(new PosixMapping(path(), nullptr, 0));
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) return Errno("mmap", path());
    return std::unique_ptr<FileMapping>(
        new PosixMapping(path(), static_cast<const uint8_t*>(p), size));
  }

  Status DoSync() override {
    if (buffered_fd_ >= 0 && ::fsync(buffered_fd_) != 0) return Errno("fsync", path());
    if (::fsync(fd_) != 0) return Errno("fsync", path());
    return Status::OK();
  }

  Status DoClose() override {
    Status st;
    if (buffered_fd_ >= 0 && ::close(buffered_fd_) != 0) st = Errno("close", path());
    buffered_fd_ = -1;
    // No retry on EINTR: Linux has released the descriptor either way.
    if (fd_ >= 0 && ::close(fd_) != 0 && st.ok()) st = Errno("close", path());
    fd_ = -1;
    return st;
  }

 private:
  // Borrows a bounce buffer from the file's pool for one call.
  class BounceLease {
   public:
    explicit BounceLease(PosixFile* f) : f_(f) {
      std::lock_guard<std::mutex> lock(f_->pool_mu_);
      if (f_->pool_.empty()) {
        buf_ = AlignedBuffer(f_->alignment());
      } else {
        buf_ = std::move(f_->pool_.back());
        f_->pool_.pop_back();
      }
    }
    ~BounceLease() {
      std::lock_guard<std::mutex> lock(f_->pool_mu_);
      f_->pool_.push_back(std::move(buf_));
    }
    AlignedBuffer& buffer() { return buf_; }

   private:
    PosixFile* f_;
    AlignedBuffer buf_;
  };

  int fd_;
  int buffered_fd_;
  const bool direct_;
  std::atomic<int64_t> size_at_open_{-1};  // SizeFromOpen, until the first Size()
  std::mutex pool_mu_;
  std::vector<AlignedBuffer> pool_;
};

// A flock(2) on an open descriptor: closing the descriptor (or the holder's death) releases it.
class PosixLock final : public StorageLock {
 public:
  explicit PosixLock(int fd) : fd_(fd) {}
  ~PosixLock() override { ::close(fd_); }

 private:
  int fd_;
};

// One attempt: the lock, nullptr when held elsewhere, or an error. Sets *replaced when the lock
// was taken on a file that is no longer the one at `path` (its holder removed it before releasing
// it), so the caller tries again on the current file.
Result<std::unique_ptr<StorageLock>> TryFlockOnce(const std::string& path, bool* replaced) {
  *replaced = false;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open (lock file)", path);
  struct stat held;
  if (::fstat(fd, &held) != 0 || !S_ISREG(held.st_mode)) {
    ::close(fd);
    return Status::IOError("lock " + path + ": not a regular file");
  }
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EINTR) continue;
    ::close(fd);
    if (err == EWOULDBLOCK) return std::unique_ptr<StorageLock>();
    if (err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS) {
      return Status::Unimplemented("flock " + path + ": " + std::strerror(err) +
                                   " (the file system offers no flock)");
    }
    return Errno("flock", path, err);
  }
  struct stat now;
  if (::stat(path.c_str(), &now) != 0 || now.st_dev != held.st_dev || now.st_ino != held.st_ino) {
    ::close(fd);
    *replaced = true;
    return std::unique_ptr<StorageLock>();
  }
  return std::unique_ptr<StorageLock>(std::make_unique<PosixLock>(fd));
}

class PosixStorage final : public Storage {
 public:
  explicit PosixStorage(const StorageOptions& options)
      : Storage("posix"), direct_(options.direct), alignment_(options.direct_alignment) {}

  bool SupportsDirect() const override { return true; }
  StorageCapabilities capabilities() const override { return storage_internal::kPosixCapabilities; }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    const bool direct = options.direct || direct_;
    if (direct && (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0)) {
      return Status::InvalidArgument("open ", path, ": direct_alignment ", alignment_,
                                     " is not a power of two");
    }
    int flags = O_CLOEXEC;
    switch (mode) {
      case OpenMode::kRead:
        flags |= O_RDONLY | O_NONBLOCK;  // a FIFO would block; cleared by CheckOpenedFile
        break;
      case OpenMode::kWrite:
        flags |= O_RDWR | O_CREAT | O_TRUNC;
        break;
      case OpenMode::kCreateNew:
        flags |= O_RDWR | O_CREAT | O_EXCL;
        break;
      case OpenMode::kReadWrite:
        flags |= O_RDWR | O_CREAT;
        break;
    }
    if (direct) flags |= O_DIRECT;
    const int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) {
      const int err = errno;
      if (direct && err == EINVAL && mode == OpenMode::kRead) {
        DLIO_RETURN_NOT_OK(storage_internal::CheckRegularPath(path, "open"));
      }
      if (direct && err == EINVAL) {
        // With O_EXCL the file was ours if it appeared; do not leave it behind.
        if (mode == OpenMode::kCreateNew) ::unlink(path.c_str());
        return Status::InvalidArgument("open " + path +
                                       ": O_DIRECT unsupported by this file system (EINVAL); "
                                       "disable direct I/O (reader.odirect) for this path");
      }
      if (err == EEXIST) {
        return Status::AlreadyExists("open " + path +
                                     ": file exists (refusing to overwrite with kCreateNew)");
      }
      return Errno("open", path, err);
    }
    uint64_t block_size = 0, size = 0;
    DLIO_RETURN_NOT_OK(storage_internal::CheckOpened(fd, flags, path, "open",
                                                     mode == OpenMode::kRead, &block_size, &size));
    int buffered_fd = -1;
    if (direct && mode != OpenMode::kRead) {
      buffered_fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (buffered_fd < 0) {
        const int err = errno;
        ::close(fd);
        return Errno("open (buffered twin of O_DIRECT)", path, err);
      }
    }
    auto file = std::make_unique<PosixFile>(path, fd, direct, alignment_, buffered_fd, block_size);
    if (mode == OpenMode::kRead) file->SizeFromOpen(size);
    return std::unique_ptr<File>(std::move(file));
  }

  Result<uint64_t> DoFileSize(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return Errno("stat", path);
    if (S_ISDIR(st.st_mode)) return Status::IOError("stat " + path + ": Is a directory");
    return static_cast<uint64_t>(st.st_size);
  }

  Result<bool> DoExists(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) return true;
    if (errno == ENOENT || errno == ENOTDIR) return false;
    return Errno("stat", path);
  }

  Result<bool> DoIsDirectory(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
    if (errno == ENOENT || errno == ENOTDIR) return false;
    return Errno("stat", path);
  }

  Status DoCreateDirs(const std::string& path) override {
    if (path.empty()) return Status::InvalidArgument("mkdir: empty path");
    std::string prefix;
    size_t pos = 0;
    while (pos != std::string::npos) {
      const size_t next = path.find('/', pos + 1);
      prefix = path.substr(0, next);
      pos = next;
      if (prefix.empty() || prefix == "/") continue;
      if (::mkdir(prefix.c_str(), 0755) == 0) continue;
      const int err = errno;
      if (err != EEXIST) return Errno("mkdir", prefix, err);
      struct stat st;
      if (::stat(prefix.c_str(), &st) != 0) return Errno("stat", prefix);
      if (!S_ISDIR(st.st_mode)) {
        return Status::AlreadyExists("mkdir " + prefix + ": exists and is not a directory");
      }
    }
    return Status::OK();
  }

  Result<std::vector<std::string>> DoList(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return Errno("opendir", dir);
    std::vector<std::string> names;
    errno = 0;
    while (struct dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      names.emplace_back(e->d_name);
    }
    const int err = errno;
    ::closedir(d);
    if (err != 0) return Errno("readdir", dir, err);
    std::sort(names.begin(), names.end());
    return names;
  }

  Status DoRename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return Errno("rename", from + " -> " + to);
    return Status::OK();
  }

  Status DoRemove(const std::string& path) override {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return Errno("unlink", path);
    if (S_ISDIR(st.st_mode)) {
      return Status::InvalidArgument("unlink " + path +
                                     ": is a directory (Remove deletes files only)");
    }
    if (::unlink(path.c_str()) != 0) return Errno("unlink", path);
    return Status::OK();
  }

  Status DoRemoveEmptyDir(const std::string& path) override {
    if (::rmdir(path.c_str()) != 0) return Errno("rmdir", path);
    return Status::OK();
  }

  Status DoSyncDir(const std::string& dir) override {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Errno("open directory", dir);
    Status st;
    if (::fsync(fd) != 0) st = Errno("fsync directory", dir);
    ::close(fd);
    return st;
  }

  Result<std::unique_ptr<StorageLock>> DoTryLock(const std::string& path) override {
    for (int attempt = 0; attempt < 100; ++attempt) {
      bool replaced = false;
      DLIO_ASSIGN_OR_RETURN(auto lock, TryFlockOnce(path, &replaced));
      if (!replaced) return lock;
    }
    return Status::IOError("lock " + path + ": the lock file was replaced 100 times in a row");
  }

 private:
  const bool direct_;
  const size_t alignment_;
};

}  // namespace

std::unique_ptr<Storage> NewPosixStorage(const StorageOptions& options) {
  return std::make_unique<PosixStorage>(options);
}

}  // namespace dlio
