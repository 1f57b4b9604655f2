#include "storage/s3/s3_storage.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <set>

#include "dlio/s3_stats.h"
#include "dlio/storage_wrapper.h"
#include "storage/s3/s3_client.h"
#include "storage/s3/s3_file.h"
#include "storage/s3/s3_options.h"
#include "storage/s3/s3_stats_block.h"

namespace dlio {
namespace {

using s3::ObjectName;
using s3::S3Client;

constexpr uint64_t kMinPartSize = uint64_t{5} << 20;
constexpr uint64_t kMaxPartSize = uint64_t{5} << 30;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// "s3://b/./a//k/" -> "b/a/k": empty and "." segments mean nothing in a key (storage_root "./"
// style prefixes). DLIO's data folders are URLs: s3://bucket/prefix, ais://bucket/prefix (AIStore).
std::string Normalize(std::string path) {
  for (const char* scheme : {"s3://", "ais://"}) {
    if (path.rfind(scheme, 0) == 0) path.erase(0, std::string_view(scheme).size());
  }
  std::string out;
  size_t at = 0;
  while (at <= path.size()) {
    size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    const std::string_view segment = std::string_view(path).substr(at, slash - at);
    if (!segment.empty() && segment != ".") {
      if (!out.empty()) out.push_back('/');
      out.append(segment);
    }
    at = slash + 1;
  }
  return out;
}

class S3Storage final : public Storage, public S3StatsSource {
 public:
  S3Storage(std::shared_ptr<S3Client> client, uint64_t part_size)
      : Storage("s3"), client_(std::move(client)), part_size_(part_size) {
    set_trace_names("S3", "open", "GetObject", "write", "close");
  }

  void TakeEpochStats(EpochStatsSink* sink) override {
    const S3Stats stats = TakeS3Stats();
    if (sink != nullptr) sink->blocks.push_back(s3::S3StatsBlock(stats));
  }

  std::vector<std::string> RunWarnings() const override {
    if (client_->config().verify_tls) return {};
    return {
        "storage.storage_options.s3_verify_tls is false: the S3 server's TLS certificate and "
        "host name are not verified"};
  }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions&) override {
    DLIO_ASSIGN_OR_RETURN(ObjectName name, Object(path, "open"));
    if (mode == OpenMode::kWrite) {
      return s3::NewS3WriteFile(path, client_, std::move(name), part_size_, "");
    }
    DLIO_ASSIGN_OR_RETURN(auto size, client_->Head(name.bucket, name.key));
    if (mode == OpenMode::kRead) {
      if (!size) return Status::NotFound("open " + Url(name) + ": no such object");
      return s3::NewS3ReadFile(path, client_, std::move(name), *size);
    }
    if (mode == OpenMode::kCreateNew && size) {
      return Status::AlreadyExists("open " + Url(name) +
                                   ": object exists (refusing to overwrite with kCreateNew)");
    }
    std::string initial;
    if (size && *size > 0) {  // kReadWrite keeps the contents
      initial.resize(static_cast<size_t>(*size));
      DLIO_ASSIGN_OR_RETURN(size_t got, client_->GetRange(name.bucket, name.key, 0, initial.size(),
                                                          initial.data(), *size));
      initial.resize(got);
    }
    return s3::NewS3WriteFile(path, client_, std::move(name), part_size_, std::move(initial));
  }

  StorageCapabilities capabilities() const override { return {}; }

  S3Stats TakeS3Stats() override { return client_->TakeStats(); }

  Result<uint64_t> DoFileSize(const std::string& path) override {
    DLIO_ASSIGN_OR_RETURN(ObjectName name, Object(path, "stat"));
    DLIO_ASSIGN_OR_RETURN(auto size, client_->Head(name.bucket, name.key));
    if (!size) return Status::NotFound("stat " + Url(name) + ": no such object");
    return *size;
  }

  Result<bool> DoExists(const std::string& path) override {
    const ObjectName name = Split(path);
    if (name.key.empty()) return BucketExists(name.bucket);
    DLIO_ASSIGN_OR_RETURN(auto size, client_->Head(name.bucket, name.key));
    if (size) return true;
    return DoIsDirectory(path);
  }

  Result<bool> DoIsDirectory(const std::string& path) override {
    const ObjectName name = Split(path);
    if (name.key.empty()) return BucketExists(name.bucket);
    if (KnownDir(name)) return true;
    DLIO_ASSIGN_OR_RETURN(auto listing, client_->List(name.bucket, name.key + "/", "/", 1));
    return !listing.objects.empty() || !listing.prefixes.empty();
  }

  Status DoCreateDirs(const std::string& path) override {
    const ObjectName name = Split(path);
    if (name.bucket.empty()) return Status::InvalidArgument("mkdir: empty path");
    DLIO_ASSIGN_OR_RETURN(bool bucket, BucketExists(name.bucket));
    if (!bucket) {
      return Status::NotFound("mkdir s3://" + name.bucket + "/" + name.key + ": bucket '" +
                              name.bucket + "' does not exist (dlio does not create buckets)");
    }
    std::lock_guard<std::mutex> lock(mu_);
    for (std::string key = name.key; !key.empty();) {
      dirs_.insert(name.bucket + "/" + key);
      const size_t slash = key.rfind('/');
      key = slash == std::string::npos ? "" : key.substr(0, slash);
    }
    return Status::OK();
  }

  Result<std::vector<std::string>> DoList(const std::string& path) override {
    const ObjectName name = Split(path);
    const std::string prefix = name.key.empty() ? "" : name.key + "/";
    DLIO_ASSIGN_OR_RETURN(auto listing, client_->List(name.bucket, prefix, "/"));
    std::set<std::string> names;
    for (const auto& [key, size] : listing.objects) {
      if (key.size() > prefix.size()) names.insert(key.substr(prefix.size()));
    }
    for (const auto& p : listing.prefixes) {
      std::string child = p.substr(prefix.size());
      while (!child.empty() && child.back() == '/') child.pop_back();
      if (!child.empty()) names.insert(child);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      const std::string mine = name.bucket + "/" + prefix;
      for (auto it = dirs_.lower_bound(mine); it != dirs_.end() && it->rfind(mine, 0) == 0; ++it) {
        const std::string rest = it->substr(mine.size());
        if (!rest.empty() && rest.find('/') == std::string::npos) names.insert(rest);
      }
    }
    if (names.empty()) {
      DLIO_ASSIGN_OR_RETURN(bool dir, DoIsDirectory(path));
      if (!dir) return Status::NotFound("opendir " + Url(name) + ": no such folder (key prefix)");
    }
    return std::vector<std::string>(names.begin(), names.end());
  }

  Status DoRename(const std::string& from, const std::string& to) override {
    const ObjectName a = Split(from), b = Split(to);
    const std::string what = "rename " + Url(a) + " -> " + Url(b);
    if (a.bucket != b.bucket) return Status::Unimplemented(what + ": across buckets");
    if (a.key.empty() || b.key.empty()) return Status::InvalidArgument(what + ": a bucket");
    if (a.key == b.key) return Status::OK();
    DLIO_ASSIGN_OR_RETURN(auto size, client_->Head(a.bucket, a.key));
    if (size) {
      DLIO_RETURN_NOT_OK(client_->Copy(a.bucket, a.key, b.key));
      return client_->Delete(a.bucket, a.key);
    }
    // A folder: every object under it, one copy and delete each (not atomic, unlike POSIX).
    DLIO_ASSIGN_OR_RETURN(auto listing, client_->List(a.bucket, a.key + "/", ""));
    if (listing.objects.empty() && !KnownDir(a)) {
      return Status::NotFound(what + ": no such object or folder");
    }
    for (const auto& [key, bytes] : listing.objects) {
      const std::string dest = b.key + key.substr(a.key.size());
      DLIO_RETURN_NOT_OK(client_->Copy(a.bucket, key, dest));
      DLIO_RETURN_NOT_OK(client_->Delete(a.bucket, key));
    }
    std::lock_guard<std::mutex> lock(mu_);
    dirs_.erase(a.bucket + "/" + a.key);
    dirs_.insert(b.bucket + "/" + b.key);
    return Status::OK();
  }

  Status DoRemove(const std::string& path) override {
    DLIO_ASSIGN_OR_RETURN(ObjectName name, Object(path, "unlink"));
    DLIO_ASSIGN_OR_RETURN(auto size, client_->Head(name.bucket, name.key));
    if (!size) return Status::NotFound("unlink " + Url(name) + ": no such object");
    return client_->Delete(name.bucket, name.key);
  }

  Status DoRemoveEmptyDir(const std::string& path) override {
    const ObjectName name = Split(path);
    DLIO_ASSIGN_OR_RETURN(auto listing, client_->List(name.bucket, name.key + "/", "/", 1));
    if (!listing.objects.empty() || !listing.prefixes.empty()) {
      return Status::IOError("rmdir " + Url(name) + ": Directory not empty");
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (dirs_.erase(name.bucket + "/" + name.key) == 0) {
      return Status::NotFound("rmdir " + Url(name) + ": no such folder");
    }
    return Status::OK();
  }

  Status DoSyncDir(const std::string&) override { return Status::OK(); }

 private:
  static ObjectName Split(const std::string& path) {
    const std::string p = Normalize(path);
    const size_t slash = p.find('/');
    if (slash == std::string::npos) return {p, ""};
    return {p.substr(0, slash), p.substr(slash + 1)};
  }
  static std::string Url(const ObjectName& name) { return "s3://" + name.bucket + "/" + name.key; }

  // The object a file call names: InvalidArgument when the path has no key.
  static Result<ObjectName> Object(const std::string& path, const char* call) {
    ObjectName name = Split(path);
    if (name.bucket.empty() || name.key.empty()) {
      return Status::InvalidArgument(std::string(call) + " '" + path +
                                     "': an s3 path is <bucket>/<key> (storage.storage_root "
                                     "names the bucket)");
    }
    return name;
  }

  bool KnownDir(const ObjectName& name) {
    std::lock_guard<std::mutex> lock(mu_);
    return dirs_.count(name.bucket + "/" + name.key) > 0;
  }

  Result<bool> BucketExists(const std::string& bucket) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (buckets_.count(bucket)) return true;
    }
    Status st = client_->HeadBucket(bucket);
    if (st.code() == StatusCode::kNotFound) return false;
    DLIO_RETURN_NOT_OK(st);
    std::lock_guard<std::mutex> lock(mu_);
    buckets_.insert(bucket);
    return true;
  }

  std::shared_ptr<S3Client> client_;
  const uint64_t part_size_;
  std::mutex mu_;
  std::set<std::string> dirs_;     // "<bucket>/<key>" of folders made by CreateDirs
  std::set<std::string> buckets_;  // buckets seen to exist
};

Status OutOfRange(const char* key, double value, const char* range) {
  return Status::InvalidArgument("storage.storage_options.", key, ": ", value, " is outside ",
                                 range);
}

// The limits that bound a stalled request, for callers that build S3Options themselves (the
// config's keys, storage/s3/s3_keys.cc, are checked against the same ranges).
Status CheckTimeouts(const S3Options& o) {
  if (!(o.connect_timeout_s > 0 && o.connect_timeout_s <= 3600)) {
    return OutOfRange("s3_connect_timeout_s", o.connect_timeout_s, "(0, 3600] seconds");
  }
  if (!(o.request_timeout_s >= 0 && o.request_timeout_s <= 86400)) {
    return OutOfRange("s3_request_timeout_s", o.request_timeout_s, "[0, 86400] seconds");
  }
  if (o.low_speed_bytes_s < 1 || o.low_speed_bytes_s > (uint64_t{1} << 30)) {
    return OutOfRange("s3_low_speed_bytes_s", static_cast<double>(o.low_speed_bytes_s),
                      "1 to 2^30 bytes per second");
  }
  if (o.low_speed_time_s > 3600) {
    return OutOfRange("s3_low_speed_time_s", static_cast<double>(o.low_speed_time_s),
                      "0 to 3600 seconds");
  }
  return Status::OK();
}

std::string FirstOf(const std::string& a, const char* env1, const char* env2 = nullptr) {
  if (!a.empty()) return a;
  std::string v = Env(env1);
  if (v.empty() && env2 != nullptr) v = Env(env2);
  return v;
}

}  // namespace

Result<std::unique_ptr<Storage>> NewS3Storage(const StorageOptions& options) {
  const S3Options o = options.backends.Value<S3Options>();
  if (o.part_size_mib < (kMinPartSize >> 20) || o.part_size_mib > (kMaxPartSize >> 20)) {
    return Status::InvalidArgument("storage.storage_options.s3_part_size_mib: ", o.part_size_mib,
                                   " MiB is outside S3's part sizes (5 MiB to 5 GiB)");
  }
  DLIO_RETURN_NOT_OK(CheckTimeouts(o));
  s3::S3ClientConfig config;
  config.endpoint = FirstOf(o.endpoint_url, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL");
  config.region = FirstOf(o.region, "AWS_REGION", "AWS_DEFAULT_REGION");
  if (config.region.empty()) config.region = "us-east-1";
  config.credentials.access_key_id = FirstOf(o.access_key_id, "AWS_ACCESS_KEY_ID");
  config.credentials.secret_access_key = FirstOf(o.secret_access_key, "AWS_SECRET_ACCESS_KEY");
  config.credentials.session_token = FirstOf(o.session_token, "AWS_SESSION_TOKEN");
  if (config.credentials.access_key_id.empty() || config.credentials.secret_access_key.empty()) {
    return Status::InvalidArgument(
        "s3 storage: no credentials (storage.storage_options.access_key_id and "
        "secret_access_key, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)");
  }
  config.path_style = o.force_path_style;
  config.verify_tls = o.verify_tls;
  config.ca_bundle = FirstOf(o.ca_bundle, "AWS_CA_BUNDLE");
  config.max_attempts = static_cast<int>(std::min<uint64_t>(o.max_attempts, INT32_MAX));
  config.connect_timeout_s = o.connect_timeout_s;
  config.request_timeout_s = o.request_timeout_s;
  config.low_speed_bytes_s = o.low_speed_bytes_s;
  config.low_speed_time_s = o.low_speed_time_s;
  DLIO_ASSIGN_OR_RETURN(auto client, S3Client::Make(std::move(config)));
  return NewS3StorageOn(std::move(client), o.part_size_mib << 20);
}

S3StatsSource* S3StatsOf(Storage* storage) {
  while (storage != nullptr) {
    if (auto* source = dynamic_cast<S3StatsSource*>(storage)) return source;
    auto* wrapper = dynamic_cast<StorageWrapper*>(storage);
    storage = wrapper != nullptr ? wrapper->inner() : nullptr;
  }
  return nullptr;
}

std::unique_ptr<Storage> NewS3StorageOn(std::shared_ptr<s3::S3Client> client, uint64_t part_size) {
  return std::make_unique<S3Storage>(std::move(client), part_size);
}

}  // namespace dlio
