// Decorators over a Storage (LevelDB's EnvWrapper style): StorageWrapper and FileWrapper forward
// every call to the storage or file they wrap, so a decorator (the "slow" backend, a test's full
// disk, a user's read counter) overrides only the hooks it changes and calls the wrapper's for the
// rest.
//
// Accounting: a wrapper is a Storage of its own. Calls made through it are counted and traced by
// the wrapper (its stats(), the tracer it is bound to). Path calls (Exists, Rename, ...) also
// reach the inner storage's counters and tracer. A file the inner storage opened reports to
// whichever storage returned it last: returned as it is by StorageWrapper::DoOpen, it reports to
// the wrapper only; wrapped in a FileWrapper, the wrapper counts the FileWrapper's calls and the
// inner storage those of the file inside. Bind the inner storage to a null tracer (MakeStorage
// with a null tracer, or Bind(clock, nullptr)) so that only the outer layer traces.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlio/storage.h"

namespace dlio {

// Forwards every call to the wrapped file's public methods. Thread safety as File's: ReadAt and
// WriteAt from many threads when the inner file allows it. Destruction closes the wrapper (which
// closes the inner file); a subclass that overrides DoClose calls Close() in its own destructor,
// as every File implementation does. ReadAt and ReadSomeAt reach the inner file through
// separate hooks (DoReadAt, DoReadSomeAt): a decorator that changes or counts reads overrides
// both.
class FileWrapper : public File {
 public:
  explicit FileWrapper(std::unique_ptr<File> inner)
      : File(inner->path(), inner->alignment()), inner_(std::move(inner)) {}
  ~FileWrapper() override { (void)Close(); }

  File* inner() const { return inner_.get(); }
  bool DescriptorSeeks() const override { return inner_->DescriptorSeeks(); }

 protected:
  Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
    return inner_->ReadAt(offset, n, buf);
  }
  Result<size_t> DoReadSomeAt(uint64_t offset, size_t n, void* buf) override {
    return inner_->ReadSomeAt(offset, n, buf);
  }
  Status DoWriteAt(uint64_t offset, const void* buf, size_t n) override {
    return inner_->WriteAt(offset, buf, n);
  }
  Result<uint64_t> DoSize() override { return inner_->Size(); }
  Status DoSync() override { return inner_->Sync(); }
  Status DoClose() override { return inner_->Close(); }
  Result<uint64_t> DoSeek(int64_t offset, int whence) override {
    return inner_->Seek(offset, whence);
  }

 private:
  std::unique_ptr<File> inner_;
};

// Forwards every call to the wrapped storage's public methods, and its capabilities, direct I/O
// support, collective communicator and epoch hooks (OnEpochPlan, TakeEpochStats, RunWarnings). Owns
// the inner storage, or (second constructor) shares one that must outlive it: several wrappers over
// one storage each count and trace the calls made through them (the accelerator threads of a
// process over one in-memory dataset). Safe for concurrent use when the inner storage is (every
// dlio storage is). Files the wrapper opens are the inner storage's files unless a subclass wraps
// them (override DoOpen and return a FileWrapper subclass).
class StorageWrapper : public Storage {
 public:
  StorageWrapper(std::string name, std::unique_ptr<Storage> inner)
      : Storage(std::move(name)), owned_(std::move(inner)), inner_(owned_.get()) {}
  StorageWrapper(std::string name, Storage* shared_inner)
      : Storage(std::move(name)), inner_(shared_inner) {}

  bool SupportsDirect() const override { return inner_->SupportsDirect(); }
  StorageCapabilities capabilities() const override { return inner_->capabilities(); }
  EmulatedCost emulated_cost() const override { return inner_->emulated_cost(); }
  const void* CollectiveMpiComm(const std::string& path) const override {
    return inner_->CollectiveMpiComm(path);
  }
  Status OnEpochPlan(const EpochPlan& plan) override { return inner_->OnEpochPlan(plan); }
  void TakeEpochStats(EpochStatsSink* sink) override { inner_->TakeEpochStats(sink); }
  std::vector<std::string> RunWarnings() const override { return inner_->RunWarnings(); }
  Storage* inner() const { return inner_; }

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
  std::unique_ptr<Storage> owned_;  // null when the inner storage is shared
  Storage* inner_;
};

}  // namespace dlio
