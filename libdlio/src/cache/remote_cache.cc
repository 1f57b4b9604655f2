// The TieredCache of a process whose node's cache another process serves (dlio/cache.h,
// NewTieredClientStorage): opens ask the CacheServer, reads go to the descriptor it hands over.
#include <unistd.h>

#include <mutex>
#include <nlohmann/json.hpp>

#include "cache/cache_client.h"
#include "cache/cache_policy.h"
#include "dlio/cache.h"
#include "dlio/cache_server.h"
#include "dlio/storage_wrapper.h"

namespace dlio {
namespace {

using cache_internal::CacheClient;

// Sends the bytes read from one open to the server when the file closes (kReadReport).
class ReadTally {
 public:
  ReadTally(CacheClient* client, std::string path, int tier)
      : client_(client), path_(std::move(path)), tier_(tier) {}
  void Add(size_t n) { bytes_.fetch_add(n, std::memory_order_relaxed); }
  Status Report() {
    const uint64_t bytes = bytes_.exchange(0);
    return bytes == 0 ? Status::OK() : client_->ReadReport(path_, tier_, bytes);
  }

 private:
  CacheClient* client_;
  const std::string path_;
  const int tier_;
  std::atomic<uint64_t> bytes_{0};
};

Status Refuse(const std::string& path) {
  return Status::FailedPrecondition(path,
                                    ": opened for reading through the tiered cache (no writes)");
}

// A complete copy read through the descriptor the server handed over.
class DescriptorFile final : public File {
 public:
  DescriptorFile(const std::string& path, OwnedFd fd, uint64_t size, CacheClient* client, int tier)
      : File(path, 1), fd_(std::move(fd)), size_(size), tally_(client, path, tier) {}
  ~DescriptorFile() override { (void)Close(); }

 protected:
  Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
    size_t done = 0;
    while (done < n && offset + done < size_) {
      const ssize_t r = ::pread(fd_.get(), static_cast<char*>(buf) + done, n - done,
                                static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        return Status::FromErrno(
            errno, StrCat("reading the cached copy of ", path(), " at offset ", offset + done));
      }
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    tally_.Add(done);
    return done;
  }
  Status DoWriteAt(uint64_t, const void*, size_t) override { return Refuse(path()); }
  Result<uint64_t> DoSize() override { return size_; }
  Status DoSync() override { return Status::OK(); }
  Status DoClose() override {
    fd_.reset();
    return tally_.Report();
  }

 private:
  OwnedFd fd_;
  const uint64_t size_;
  ReadTally tally_;
};

// A file of the source (tier -1), whose reads are reported to the server's source level.
class SourceFile final : public FileWrapper {
 public:
  SourceFile(std::unique_ptr<File> inner, CacheClient* client)
      : FileWrapper(std::move(inner)), tally_(client, path(), -1) {}
  ~SourceFile() override { (void)Close(); }

 protected:
  Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
    return Count(FileWrapper::DoReadAt(offset, n, buf));
  }
  Result<size_t> DoReadSomeAt(uint64_t offset, size_t n, void* buf) override {
    return Count(FileWrapper::DoReadSomeAt(offset, n, buf));
  }
  Status DoWriteAt(uint64_t, const void*, size_t) override { return Refuse(path()); }
  Status DoClose() override {
    Status closed = FileWrapper::DoClose();
    Status reported = tally_.Report();
    return closed.ok() ? reported : closed;
  }

 private:
  Result<size_t> Count(Result<size_t> read) {
    if (read.ok()) tally_.Add(*read);
    return read;
  }
  ReadTally tally_;
};

class RemoteTieredCache final : public TieredCache {
 public:
  RemoteTieredCache(std::unique_ptr<CacheClient> client, std::string name, Storage* source,
                    bool reports_stats)
      : client_(std::move(client)),
        name_(std::move(name)),
        source_(source),
        reports_stats_(reports_stats),
        policy_(static_cast<CachePolicyKind>(client_->hello().policy)),
        uses_future_(cache_internal::MakeCachePolicy(policy_)->capabilities().uses_future) {}

  Result<std::unique_ptr<File>> Open(const std::string& path, const FileOptions& options) override {
    DLIO_ASSIGN_OR_RETURN(CacheClient::Opened opened, OpenOnSpare(path));
    if (opened.reply.tier >= 0) {
      return std::unique_ptr<File>(std::make_unique<DescriptorFile>(
          path, std::move(opened.fd), opened.reply.size, client_.get(), opened.reply.tier));
    }
    DLIO_ASSIGN_OR_RETURN(auto file, source_->Open(path, OpenMode::kRead, options));
    return std::unique_ptr<File>(std::make_unique<SourceFile>(std::move(file), client_.get()));
  }
  Result<CacheHandoff> OpenForHandoff(const std::string& path) override {
    DLIO_ASSIGN_OR_RETURN(CacheClient::Opened opened, OpenOnSpare(path));
    CacheHandoff out;
    out.fd = std::move(opened.fd);
    out.tier = opened.reply.tier;
    out.size = opened.reply.size;
    out.mtime_ns = opened.reply.mtime_ns;
    out.read_through = (opened.reply.flags & cache_wire::kOpenReadThrough) != 0;
    return out;
  }
  void CreditRead(int tier, uint64_t bytes) override { (void)client_->ReadReport("", tier, bytes); }
  // The server's cache is the node's: a client that cannot tell it drops nothing silently.
  void Invalidate(const std::string& path) override { (void)client_->Invalidate(path); }
  void SetFutureAccesses(std::vector<std::string> paths) override { (void)client_->Future(paths); }
  void WaitIdle() override {}
  CacheStats Stats() const override { return Fetch(false); }
  CacheStats TakeStats() override { return Fetch(true); }
  CachePolicyKind policy() const override { return policy_; }
  bool uses_future_accesses() const override { return uses_future_; }

 private:
  // The server's statistics when this client reports them (the node's leader); else none, so a
  // node's counters appear once.
  CacheStats Fetch(bool take) const {
    if (!reports_stats_) return {};
    auto json = client_->Stats(take);
    if (!json.ok()) return {};
    auto stats = ParseCacheStatsJson(*json);
    return stats.ok() ? std::move(stats).value() : CacheStats{};
  }

  // kOpen on a connection no other thread is using (made when none is free), so one thread's open
  // that waits for a read-through copy does not hold the others'.
  Result<CacheClient::Opened> OpenOnSpare(const std::string& path) {
    std::unique_ptr<CacheClient> spare;
    {
      std::lock_guard<std::mutex> lock(spare_mu_);
      if (!spares_.empty()) {
        spare = std::move(spares_.back());
        spares_.pop_back();
      }
    }
    if (spare == nullptr) {
      DLIO_ASSIGN_OR_RETURN(spare,
                            CacheClient::Connect(client_->socket_path(), name_ + " (opens)"));
    }
    auto opened = spare->Open(path);
    std::lock_guard<std::mutex> lock(spare_mu_);
    spares_.push_back(std::move(spare));
    return opened;
  }

  // The first connection: kFuture, reports, invalidations, statistics (the server knows this
  // client's list by it).
  const std::unique_ptr<CacheClient> client_;
  const std::string name_;
  std::mutex spare_mu_;
  std::vector<std::unique_ptr<CacheClient>> spares_;  // idle connections for opens
  Storage* const source_;
  const bool reports_stats_;
  const CachePolicyKind policy_;
  const bool uses_future_;
};

}  // namespace

namespace cache_internal {

Result<std::unique_ptr<TieredCache>> ConnectRemoteCache(const std::string& socket_path,
                                                        const std::string& client_name,
                                                        Storage* source, bool reports_stats) {
  DLIO_ASSIGN_OR_RETURN(auto client, CacheClient::Connect(socket_path, client_name));
  return std::unique_ptr<TieredCache>(
      std::make_unique<RemoteTieredCache>(std::move(client), client_name, source, reports_stats));
}

}  // namespace cache_internal
}  // namespace dlio
