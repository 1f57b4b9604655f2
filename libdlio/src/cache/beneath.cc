#include "cache/beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <vector>

#include "dlio/storage_wrapper.h"

namespace dlio::cache_internal {
namespace {

// `dir` without trailing slashes ("" for the root).
std::string TrimSlashes(std::string dir) {
  while (!dir.empty() && dir.back() == '/') dir.pop_back();
  return dir;
}

long RawOpenat2(int dir_fd, const char* path, uint64_t flags, uint64_t resolve) {
  open_how how{};
  how.flags = flags;
  how.resolve = resolve;
  return ::syscall(SYS_openat2, dir_fd, path, &how, sizeof(how));
}

// An O_PATH descriptor of `rest` beneath `dir_fd`, or -1 with errno set.
int OpenBeneathFd(int dir_fd, const std::string& rest) {
  static std::atomic<bool> no_openat2{false};  // the kernel said ENOSYS once: walk from then on
  if (!no_openat2.load(std::memory_order_relaxed)) {
    const long fd = RawOpenat2(dir_fd, rest.empty() ? "." : rest.c_str(), O_PATH | O_CLOEXEC,
                               RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
    if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
    no_openat2 = true;
  }
  return OpenBeneathByWalk(dir_fd, rest);
}

Status Refused(const std::string& path, const std::string& why) {
  return Status::FailedPrecondition(path, ": refused by the cache server: ", why);
}

}  // namespace

int OpenBeneathByWalk(int dir_fd, const std::string& rest) {
  std::vector<OwnedFd> stack;  // the folders walked into below dir_fd
  auto current = [&] { return stack.empty() ? dir_fd : stack.back().get(); };
  size_t start = 0;
  while (true) {
    const size_t end = std::min(rest.find('/', start), rest.size());
    const std::string name = rest.substr(start, end - start);
    const bool last = rest.find_first_not_of('/', end) == std::string::npos;
    if (name == "..") {
      if (stack.empty()) {
        errno = EXDEV;
        return -1;
      }
      stack.pop_back();
    } else if (!name.empty() && name != ".") {
      const int fd = ::openat(current(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) return -1;
      OwnedFd owned(fd);
      struct stat st {};
      if (::fstat(fd, &st) != 0) return -1;
      if (S_ISLNK(st.st_mode)) {
        errno = ELOOP;
        return -1;
      }
      if (last) return owned.release();
      if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
      }
      stack.push_back(std::move(owned));
    }
    if (last) return ::dup(current());  // the path ended on the folder itself, or at `..`
    start = end + 1;
  }
}

Result<AllowedDirs> AllowedDirs::Make(const std::vector<std::string>& dirs,
                                      const std::string& key) {
  if (dirs.empty()) {
    return Status::InvalidArgument(key, ": no data directory: the server would serve nothing");
  }
  AllowedDirs out;
  for (const std::string& dir : dirs) {
    if (dir.empty() || dir[0] != '/') {
      return Status::InvalidArgument(key, ": '", dir, "' is not an absolute path");
    }
    out.roots_.push_back({TrimSlashes(dir), out.dirs_.size()});
    char real[PATH_MAX];
    if (::realpath(dir.c_str(), real) != nullptr && TrimSlashes(real) != out.roots_.back().prefix) {
      out.roots_.push_back({TrimSlashes(real), out.dirs_.size()});
    }
    out.dirs_.push_back(dir);
  }
  return out;
}

const AllowedDirs::Root* AllowedDirs::Match(const std::string& path, std::string* rest) const {
  for (const Root& root : roots_) {
    const std::string& p = root.prefix;
    if (path.size() > p.size() && path.compare(0, p.size(), p) == 0 && path[p.size()] == '/') {
      const size_t from = path.find_first_not_of('/', p.size());
      *rest = from == std::string::npos ? "" : path.substr(from);
      return &root;
    }
  }
  return nullptr;
}

bool AllowedDirs::Under(const std::string& path) const {
  std::string rest;
  if (Match(path, &rest) == nullptr) return false;
  // No `..` component: named beneath a folder, it must not lead out of it as written.
  const std::string padded = "/" + rest + "/";
  return padded.find("/../") == std::string::npos;
}

Result<OwnedFd> AllowedDirs::Open(const std::string& path) const {
  std::string rest;
  const Root* root = Match(path, &rest);
  if (root == nullptr) return Refused(path, "not under a data directory of the server");
  const std::string& dir = dirs_[root->dir];
  // The folder is the operator's, trusted as named; what lies beneath is the clients'.
  OwnedFd dir_fd(
      ::open(root->prefix.empty() ? "/" : root->prefix.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() < 0) return Status::FromErrno(errno, StrCat(path, ": data directory ", dir));
  OwnedFd fd(OpenBeneathFd(dir_fd.get(), rest));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound(path, ": no such file");
    if (err == EXDEV || err == ELOOP) return Refused(path, "it leads out of " + dir);
    return Status::FromErrno(err, path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
  if (!S_ISREG(st.st_mode)) return Refused(path, "not a regular file");
  return fd;
}

namespace {

// A file of the inner storage, reporting the path the caller opened (not /proc/self/fd/N).
class ConfinedFile final : public File {
 public:
  ConfinedFile(const std::string& path, std::unique_ptr<File> inner)
      : File(path, inner->alignment()), inner_(std::move(inner)) {}
  ~ConfinedFile() override { (void)Close(); }

 protected:
  Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
    return inner_->ReadAt(offset, n, buf);
  }
  Result<size_t> DoReadSomeAt(uint64_t offset, size_t n, void* buf) override {
    return inner_->ReadSomeAt(offset, n, buf);
  }
  Status DoWriteAt(uint64_t, const void*, size_t) override {
    return Refused(path(), "the source of a served cache is read-only");
  }
  Result<uint64_t> DoSize() override { return inner_->Size(); }
  Status DoSync() override { return Status::OK(); }
  Status DoClose() override { return inner_->Close(); }

 private:
  std::unique_ptr<File> inner_;
};

class ConfinedSource final : public StorageWrapper {
 public:
  ConfinedSource(std::unique_ptr<Storage> inner, AllowedDirs dirs)
      : StorageWrapper("confined", std::move(inner)), dirs_(std::move(dirs)) {}

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    if (mode != OpenMode::kRead) return ReadOnly(path);
    DLIO_ASSIGN_OR_RETURN(OwnedFd fd, dirs_.Open(path));
    // The file resolved, reopened for reading by the inner storage (its costs, its counters).
    const std::string proc = StrCat("/proc/self/fd/", fd.get());
    auto file = inner()->Open(::access(proc.c_str(), F_OK) == 0 ? proc : path, mode, options);
    if (!file.ok()) return file.status();
    return std::unique_ptr<File>(std::make_unique<ConfinedFile>(path, std::move(file).value()));
  }
  Result<uint64_t> DoFileSize(const std::string& path) override {
    DLIO_ASSIGN_OR_RETURN(OwnedFd fd, dirs_.Open(path));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
    return static_cast<uint64_t>(st.st_size);
  }
  Result<bool> DoExists(const std::string& path) override {
    auto fd = dirs_.Open(path);
    if (fd.ok()) return true;
    if (fd.status().code() == StatusCode::kNotFound) return false;
    return fd.status();
  }
  Result<bool> DoIsDirectory(const std::string& path) override { return Unsupported(path); }
  Status DoCreateDirs(const std::string& path) override { return ReadOnly(path); }
  Result<std::vector<std::string>> DoList(const std::string& dir) override {
    return Unsupported(dir);
  }
  Status DoRename(const std::string& from, const std::string&) override { return ReadOnly(from); }
  Status DoRemove(const std::string& path) override { return ReadOnly(path); }
  Status DoRemoveEmptyDir(const std::string& path) override { return ReadOnly(path); }
  Status DoSyncDir(const std::string& dir) override { return ReadOnly(dir); }
  Result<std::unique_ptr<StorageLock>> DoTryLock(const std::string& path) override {
    return ReadOnly(path);
  }

 private:
  static Status ReadOnly(const std::string& path) {
    return Refused(path, "the source of a served cache is read-only");
  }
  static Status Unsupported(const std::string& path) {
    return Refused(path, "the source of a served cache opens files only");
  }

  const AllowedDirs dirs_;
};

}  // namespace

std::unique_ptr<Storage> NewConfinedSource(std::unique_ptr<Storage> source, AllowedDirs dirs) {
  return std::make_unique<ConfinedSource>(std::move(source), std::move(dirs));
}

}  // namespace dlio::cache_internal
