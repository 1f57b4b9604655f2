// MPI-IO files. With comm/mpi_comm.cc, the only file that includes mpi.h (through
// comm/mpi_util.h); without DLIO_WITH_MPI the factory is a stub that names the build option.
#include "storage/mpiio_storage.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dlio/storage_wrapper.h"
#include "storage/capabilities.h"
#include "storage/mpiio_options.h"

#if defined(DLIO_WITH_MPI)
#include "comm/mpi_util.h"
#endif

namespace dlio {

#if defined(DLIO_WITH_MPI)
namespace {

using mpi_internal::MpiCount;
using mpi_internal::MpiErrorText;

// Largest request per MPI call: counts are ints.
constexpr size_t kMaxCall = mpi_internal::kMaxMpiCount;

Status MpiError(int code, const std::string& what) {
  int error_class = MPI_ERR_OTHER;
  MPI_Error_class(code, &error_class);
  const std::string message = what + ": " + MpiErrorText(code);
  if (error_class == MPI_ERR_NO_SUCH_FILE) return Status::NotFound(message);
  if (error_class == MPI_ERR_FILE_EXISTS) return Status::AlreadyExists(message);
  if (error_class == MPI_ERR_NO_SPACE || error_class == MPI_ERR_QUOTA) {
    return Status::ResourceExhausted(message);
  }
  return Status::IOError(message);
}

// Admits MPI calls according to the thread level MPI was initialized with: any thread
// (MPI_THREAD_MULTIPLE), one thread at a time (SERIALIZED), or the main thread only (FUNNELED,
// SINGLE), refusing others with an error rather than breaking MPI's rules.
class MpiGate {
 public:
  MpiGate() { MPI_Query_thread(&level_); }

  Status Enter(std::unique_lock<std::mutex>* lock, const std::string& what) {
    if (level_ >= MPI_THREAD_MULTIPLE) return Status::OK();
    if (level_ == MPI_THREAD_SERIALIZED) {
      *lock = std::unique_lock<std::mutex>(mu_);
      return Status::OK();
    }
    int is_main = 0;
    MPI_Is_thread_main(&is_main);
    if (is_main) return Status::OK();
    return Status::FailedPrecondition(
        what +
        ": MPI was initialized without thread support (MPI_THREAD_FUNNELED or SINGLE), so "
        "only the main thread may call it, and this call comes from another thread (a "
        "pipeline read thread?): initialize MPI with MPI_THREAD_MULTIPLE (dlio's "
        "MakeMpiComm does) or read on the main thread (reader.pipeline: sync with "
        "reader.read_threads <= 1)");
  }

 private:
  int level_ = MPI_THREAD_SINGLE;
  std::mutex mu_;
};

// Thread safety: ReadAt/WriteAt on an independent file are safe for concurrent use (with
// MPI_THREAD_MULTIPLE). A collective file takes calls from the thread that opened it only.
class MpiioFile final : public File {
 public:
  // `size`: the file's size at open, for collective files (see DoReadAt).
  MpiioFile(std::string path, MPI_File fh, bool collective, uint64_t size, MpiGate* gate)
      : File(std::move(path), 1),
        fh_(fh),
        collective_(collective),
        size_(size),
        owner_(std::this_thread::get_id()),
        gate_(gate) {}
  ~MpiioFile() override { (void)Close(); }

 protected:
  Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
    std::unique_lock<std::mutex> lock;
    if (collective_) {
      DLIO_RETURN_NOT_OK(Admit(&lock, "MPI_File_read_at_all"));
      return ReadCollective(offset, n, static_cast<uint8_t*>(buf));
    }
    DLIO_RETURN_NOT_OK(Admit(&lock, "MPI_File_read_at"));
    auto* p = static_cast<uint8_t*>(buf);
    size_t done = 0;
    while (done < n) {
      const int count = MpiCount(n - done);
      MPI_Status status;
      const int rc = MPI_File_read_at(fh_, static_cast<MPI_Offset>(offset + done), p + done, count,
                                      MPI_BYTE, &status);
      if (rc != MPI_SUCCESS) {
        return MpiError(rc, StrCat("MPI_File_read_at ", path(), " at offset ", offset + done));
      }
      int got = 0;
      MPI_Get_count(&status, MPI_BYTE, &got);
      if (got == MPI_UNDEFINED || got < 0) got = 0;
      done += static_cast<size_t>(got);
      if (got < count) break;  // end of file
    }
    return done;
  }

  // The number of calls depends only on `n`, never on where the file ends, so ranks that request
  // the same sizes make the same calls. Requests are clipped to the size the file had at open
  // (a rank past the end joins with a count of 0): collective reads report the requested count
  // even past the end of file in both ROMIO and OMPIO, so the status cannot tell.
  Result<size_t> ReadCollective(uint64_t offset, size_t n, uint8_t* p) {
    const size_t calls = n == 0 ? 1 : (n + kMaxCall - 1) / kMaxCall;
    size_t done = 0;
    for (size_t i = 0; i < calls; ++i) {
      const uint64_t at = offset + i * kMaxCall;
      const size_t want = std::min(kMaxCall, n - std::min(n, i * kMaxCall));
      const size_t avail =
          at >= size_ ? 0 : static_cast<size_t>(std::min<uint64_t>(want, size_ - at));
      MPI_Status status;
      const int rc = MPI_File_read_at_all(fh_, static_cast<MPI_Offset>(at), p + i * kMaxCall,
                                          static_cast<int>(avail), MPI_BYTE, &status);
      if (rc != MPI_SUCCESS) {
        return MpiError(rc, StrCat("MPI_File_read_at_all ", path(), " at offset ", at));
      }
      done += avail;
    }
    return done;
  }

  Status DoWriteAt(uint64_t offset, const void* buf, size_t n) override {
    std::unique_lock<std::mutex> lock;
    DLIO_RETURN_NOT_OK(Admit(&lock, "MPI_File_write_at"));
    const auto* p = static_cast<const uint8_t*>(buf);
    size_t done = 0;
    while (done < n) {
      const int count = MpiCount(n - done);
      MPI_Status status;
      const int rc = MPI_File_write_at(fh_, static_cast<MPI_Offset>(offset + done),
                                       const_cast<uint8_t*>(p + done), count, MPI_BYTE, &status);
      if (rc != MPI_SUCCESS) {
        return MpiError(rc, StrCat("MPI_File_write_at ", path(), " at offset ", offset + done));
      }
      int put = 0;
      MPI_Get_count(&status, MPI_BYTE, &put);
      if (put <= 0 || put == MPI_UNDEFINED) {
        return Status::IOError("MPI_File_write_at ", path(), " wrote nothing at offset ",
                               offset + done);
      }
      done += static_cast<size_t>(put);
    }
    return Status::OK();
  }

  Result<uint64_t> DoSize() override {
    std::unique_lock<std::mutex> lock;
    DLIO_RETURN_NOT_OK(Admit(&lock, "MPI_File_get_size"));
    MPI_Offset size = 0;
    const int rc = MPI_File_get_size(fh_, &size);
    if (rc != MPI_SUCCESS) return MpiError(rc, "MPI_File_get_size " + path());
    return static_cast<uint64_t>(size);
  }

  Status DoSync() override {
    std::unique_lock<std::mutex> lock;
    DLIO_RETURN_NOT_OK(Admit(&lock, "MPI_File_sync"));
    const int rc = MPI_File_sync(fh_);
    return rc == MPI_SUCCESS ? Status::OK() : MpiError(rc, "MPI_File_sync " + path());
  }

  Status DoClose() override {
    if (fh_ == MPI_FILE_NULL) return Status::OK();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) {
      fh_ = MPI_FILE_NULL;
      return Status::FailedPrecondition("MPI_File_close " + path() +
                                        ": MPI was finalized before the file was closed");
    }
    std::unique_lock<std::mutex> lock;
    DLIO_RETURN_NOT_OK(Admit(&lock, "MPI_File_close"));
    const int rc = MPI_File_close(&fh_);
    fh_ = MPI_FILE_NULL;
    return rc == MPI_SUCCESS ? Status::OK() : MpiError(rc, "MPI_File_close " + path());
  }

 private:
  Status Admit(std::unique_lock<std::mutex>* lock, const char* fn) {
    if (collective_ && std::this_thread::get_id() != owner_) {
      return Status::FailedPrecondition(
          std::string(fn) + " " + path() +
          ": a collectively opened file takes calls only from the thread that opened it, or the "
          "ranks' collective calls could interleave (storage.mpiio_collective needs "
          "reader.pipeline: sync with reader.read_threads <= 1)");
    }
    return gate_->Enter(lock, std::string(fn) + " " + path());
  }

  MPI_File fh_;
  const bool collective_;
  const uint64_t size_;
  const std::thread::id owner_;
  MpiGate* gate_;  // owned by the storage, which outlives its files
};

// Path operations go to an inner POSIX storage (built with a null tracer: this layer traces).
class MpiioStorage final : public StorageWrapper {
 public:
  explicit MpiioStorage(const StorageOptions& options)
      : StorageWrapper("mpiio", NewPosixStorage(StorageOptions{})),
        collective_(MpiioCollective(options.backends)) {
    set_trace_category("MPIIO");
    world_ = MPI_COMM_WORLD;
    for (std::string dir : options.data_dirs) {
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
      if (!dir.empty()) collective_dirs_.push_back(dir + "/");
    }
  }

  StorageCapabilities capabilities() const override { return storage_internal::kMpiioCapabilities; }

  // The communicator collective files are opened on, for parallel HDF5 (storage.h).
  const void* CollectiveMpiComm(const std::string& path) const override {
    return IsCollective(path) ? mpi_internal::MpiHandleOf(world_) : nullptr;
  }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions&) override {
    const int amode = AccessMode(mode);
    const bool collective = mode == OpenMode::kRead && IsCollective(path);
    const char* fn = collective ? "MPI_File_open(MPI_COMM_WORLD)" : "MPI_File_open";
    std::unique_lock<std::mutex> lock;
    DLIO_RETURN_NOT_OK(gate_.Enter(&lock, std::string(fn) + " " + path));
    // Classify failures by looking at the path: implementations differ in the error classes
    // they return for a missing or existing file.
    if (mode == OpenMode::kCreateNew) {
      DLIO_ASSIGN_OR_RETURN(bool exists, inner()->Exists(path));
      if (exists) {
        return Status::AlreadyExists("open " + path +
                                     ": file exists (refusing to overwrite with kCreateNew)");
      }
    }
    MPI_File fh = MPI_FILE_NULL;
    const int rc = MPI_File_open(collective ? MPI_COMM_WORLD : MPI_COMM_SELF, path.c_str(), amode,
                                 MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
      Status st = MpiError(rc, std::string(fn) + " " + path);
      if (mode == OpenMode::kRead) {
        auto exists = inner()->Exists(path);
        if (exists.ok() && !*exists) return Status::NotFound(st.message());
      }
      return st;
    }
    MPI_Offset size = 0;
    DLIO_RETURN_NOT_OK(PrepareOpened(path, mode, collective, &fh, &size));
    lock = {};
    return std::unique_ptr<File>(
        std::make_unique<MpiioFile>(path, fh, collective, static_cast<uint64_t>(size), &gate_));
  }

 private:
  static int AccessMode(OpenMode mode) {
    switch (mode) {
      case OpenMode::kRead:
        return MPI_MODE_RDONLY;
      case OpenMode::kWrite:
      case OpenMode::kReadWrite:
        return MPI_MODE_RDWR | MPI_MODE_CREATE;
      case OpenMode::kCreateNew:
        return MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL;
    }
    return 0;
  }

  // A just opened handle: errors as return codes (the default for files, made explicit),
  // truncated for kWrite, its size read when collective (*size). Closes it on failure.
  static Status PrepareOpened(const std::string& path, OpenMode mode, bool collective, MPI_File* fh,
                              MPI_Offset* size) {
    MPI_File_set_errhandler(*fh, MPI_ERRORS_RETURN);
    if (mode == OpenMode::kWrite) {
      const int rc = MPI_File_set_size(*fh, 0);
      if (rc != MPI_SUCCESS) {
        MPI_File_close(fh);
        return MpiError(rc, "MPI_File_set_size(0) " + path);
      }
    }
    if (collective) {
      const int rc = MPI_File_get_size(*fh, size);
      if (rc != MPI_SUCCESS) {
        MPI_File_close(fh);
        return MpiError(rc, "MPI_File_get_size " + path);
      }
    }
    return Status::OK();
  }

  bool IsCollective(const std::string& path) const {
    if (!collective_) return false;
    if (collective_dirs_.empty()) return true;
    for (const auto& dir : collective_dirs_) {
      if (path.compare(0, dir.size(), dir) == 0) return true;
    }
    return false;
  }

  const bool collective_;
  std::vector<std::string> collective_dirs_;  // each ends with '/'
  MpiGate gate_;
  MPI_Comm world_;  // MPI_COMM_WORLD (a handle, stored so CollectiveMpiComm can point at it)
};

}  // namespace

Result<std::unique_ptr<Storage>> NewMpiioStorage(const StorageOptions& options) {
  if (!mpi_internal::MpiUsable()) {
    return Status::FailedPrecondition(
        "storage 'mpiio' needs MPI initialized in this process: run under mpiexec/srun (dlio-run "
        "picks the MPI comm there, or use --comm mpi), or call dlio::MakeMpiComm first");
  }
  return std::unique_ptr<Storage>(std::make_unique<MpiioStorage>(options));
}

#else  // !DLIO_WITH_MPI

Result<std::unique_ptr<Storage>> NewMpiioStorage(const StorageOptions&) {
  return Status::Unimplemented(
      "storage 'mpiio' is not built into this dlio: reconfigure with -DDLIO_WITH_MPI=ON");
}

#endif

}  // namespace dlio
