// C stdio streams: what codes that save with fopen/fwrite (L2HMC's checkpoints) ask of the file
// system, so their buffering (and its request sizes below the stream) is the C library's.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <mutex>

#include "dlio/storage.h"
#include "dlio/storage_wrapper.h"
#include "storage/capabilities.h"
#include "storage/open_check.h"

namespace dlio {
namespace {

using storage_internal::Errno;

// Thread safety: a stream has one position, so every call takes the file's mutex.
class StdioFile final : public File {
 public:
  StdioFile(std::string path, FILE* stream, uint64_t block_size)
      : File(std::move(path), 1), stream_(stream) {
    set_block_size(block_size);
  }
  ~StdioFile() override { (void)Close(); }

 protected:
  Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
    std::lock_guard<std::mutex> lock(mu_);
    DLIO_RETURN_NOT_OK(Seek(offset));
    const size_t got = std::fread(buf, 1, n, stream_);
    position_ += got;
    if (got < n && std::ferror(stream_)) {
      const int err = errno;
      position_known_ = false;
      std::clearerr(stream_);
      return Status::FromErrno(err, StrCat("fread ", path(), " at offset ", offset));
    }
    std::clearerr(stream_);  // end of file is a short count, not an error
    return got;
  }

  Status DoWriteAt(uint64_t offset, const void* buf, size_t n) override {
    std::lock_guard<std::mutex> lock(mu_);
    DLIO_RETURN_NOT_OK(Seek(offset));
    if (std::fwrite(buf, 1, n, stream_) != n) {
      const int err = errno;
      position_known_ = false;
      std::clearerr(stream_);
      return Status::FromErrno(err, StrCat("fwrite ", path(), " at offset ", offset));
    }
    position_ += n;
    return Status::OK();
  }

  Result<uint64_t> DoSize() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (std::fflush(stream_) != 0) return Errno("fflush", path());
    struct stat st;
    if (::fstat(::fileno(stream_), &st) != 0) return Errno("fstat", path());
    return static_cast<uint64_t>(st.st_size);
  }

  Status DoSync() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (std::fflush(stream_) != 0) return Errno("fflush", path());
    if (::fsync(::fileno(stream_)) != 0) return Errno("fsync", path());
    return Status::OK();
  }

  Status DoClose() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (stream_ == nullptr) return Status::OK();
    // fclose flushes the buffered tail: its failure is a lost write.
    const int rc = std::fclose(stream_);
    stream_ = nullptr;
    if (rc != 0) return Errno("fclose", path());
    return Status::OK();
  }

 private:
  Status Seek(uint64_t offset) {
    // Skipping the seek when the stream is already there keeps its buffer (a sequential
    // fwrite/fread pattern stays one stream of C-library-sized requests).
    if (position_known_ && position_ == offset) return Status::OK();
    if (::fseeko(stream_, static_cast<off_t>(offset), SEEK_SET) != 0) {
      position_known_ = false;
      return Errno("fseeko", StrCat(path(), " to offset ", offset));
    }
    position_ = offset;
    position_known_ = true;
    return Status::OK();
  }

  std::mutex mu_;
  FILE* stream_;
  uint64_t position_ = 0;  // the stream's position when position_known_
  bool position_known_ = false;
};

// Path operations are POSIX calls, forwarded to an inner posix storage that is never bound to a
// tracer, so each call is traced once, by the outer public method.
class StdioStorage final : public StorageWrapper {
 public:
  StdioStorage() : StorageWrapper("stdio", NewPosixStorage(StorageOptions{})) {
    set_trace_names("STDIO", "fopen", "fread", "fwrite", "fclose");
  }
  bool SupportsDirect() const override { return false; }
  StorageCapabilities capabilities() const override { return storage_internal::kStdioCapabilities; }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions&) override {
    int flags = O_CLOEXEC;
    const char* fmode = "rb";
    switch (mode) {
      case OpenMode::kRead:
        flags |= O_RDONLY | O_NONBLOCK;  // a FIFO would block; cleared by CheckOpenedFile
        break;
      case OpenMode::kWrite:
        flags |= O_RDWR | O_CREAT | O_TRUNC;
        fmode = "w+b";
        break;
      case OpenMode::kCreateNew:
        flags |= O_RDWR | O_CREAT | O_EXCL;
        fmode = "w+b";
        break;
      case OpenMode::kReadWrite:
        flags |= O_RDWR | O_CREAT;
        fmode = "r+b";
        break;
    }
    // open(2) first: stdio's modes cannot say "create, keep contents".
    const int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) {
      const int err = errno;
      if (err == EEXIST) {
        return Status::AlreadyExists("fopen " + path +
                                     ": file exists (refusing to overwrite with kCreateNew)");
      }
      return Errno("fopen", path, err);
    }
    uint64_t block_size = 0;
    DLIO_RETURN_NOT_OK(storage_internal::CheckOpened(fd, flags, path, "fopen",
                                                     mode == OpenMode::kRead, &block_size));
    FILE* stream = ::fdopen(fd, fmode);
    if (stream == nullptr) {
      const int err = errno;
      ::close(fd);
      return Errno("fdopen", path, err);
    }
    return std::unique_ptr<File>(std::make_unique<StdioFile>(path, stream, block_size));
  }
};

}  // namespace

std::unique_ptr<Storage> NewStdioStorage() { return std::make_unique<StdioStorage>(); }

}  // namespace dlio
