// An S3 client on libcurl: the requests the s3 Storage makes (range GET, PUT, multipart upload,
// HEAD, ListObjectsV2, DELETE, server-side copy), signed with SigV4 (sigv4.h). Safe for
// concurrent use: each request borrows a curl easy handle from a pool, so connections are kept
// and reused per handle. Requests that fail with a transport error, HTTP 500/502/503/504 or 429
// (503 SlowDown included), or a range GET answered with other bytes than asked for, are retried
// with exponential backoff; other failures are errors naming the method, bucket, key, HTTP status
// and S3's error code and message. What a server sends is bounded and checked (s3_transfer.h,
// s3_list.h): it may be hostile.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/s3_stats.h"
#include "dlio/status.h"
#include "storage/s3/s3_request_stats.h"
#include "storage/s3/sigv4.h"

namespace dlio::s3 {

struct S3ClientConfig {
  // "http://127.0.0.1:9000", "https://host", "http://host:8080/s3" (a path prefix, AIStore's);
  // empty: https://s3.<region>.amazonaws.com.
  std::string endpoint;
  std::string region = "us-east-1";
  AwsCredentials credentials;
  bool path_style = true;  // false: virtual-host addressing (<bucket>.<endpoint host>)
  bool verify_tls = true;
  std::string ca_bundle;  // PEM file of the CAs to trust; empty: the system's
  double connect_timeout_s = 10;
  double request_timeout_s = 300;  // whole request; 0 = none
  // An attempt moving fewer than low_speed_bytes_s bytes per second (either way, headers
  // included) for low_speed_time_s seconds is aborted (and retried): a server that accepted the
  // request and went silent. low_speed_time_s 0: no such limit.
  uint64_t low_speed_bytes_s = 1;
  uint64_t low_speed_time_s = 60;
  uint64_t max_list_pages = 100000;  // a listing of more pages is an error
  int max_attempts = 5;              // attempts of one request (1 = no retry)
  double retry_base_ms = 50;         // first backoff; doubles per attempt, capped at 5 s
};

struct ObjectListing {
  std::vector<std::pair<std::string, uint64_t>> objects;  // key, size
  std::vector<std::string> prefixes;                      // CommonPrefixes (with delimiter)
};

// What one client sent, counted with relaxed atomics.
struct S3RequestCounts {
  uint64_t attempts = 0;        // HTTP requests sent (retries included)
  uint64_t retries = 0;         // attempts repeated after a transport error, 5xx or 429
  uint64_t parts_uploaded = 0;  // UploadPart requests that succeeded
  uint64_t multipart_completed = 0;
};

class S3Client {
 public:
  // InvalidArgument for a malformed endpoint.
  static Result<std::unique_ptr<S3Client>> Make(S3ClientConfig config);
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  // GET of bytes [offset, offset + n) into buf (n > 0): the count received (short at the end).
  // `object_size` (known from a HEAD; kUnknownSize when not) checks a 200 that ignored the range:
  // its Content-Length must be the whole object's.
  static constexpr uint64_t kUnknownSize = UINT64_MAX;
  Result<size_t> GetRange(const std::string& bucket, const std::string& key, uint64_t offset,
                          size_t n, void* buf, uint64_t object_size = kUnknownSize);
  Status Put(const std::string& bucket, const std::string& key, std::string_view body);
  // Multipart upload: the upload id; the ETag of each part; parts numbered from 1.
  Result<std::string> CreateMultipart(const std::string& bucket, const std::string& key);
  Result<std::string> UploadPart(const std::string& bucket, const std::string& key,
                                 const std::string& upload_id, int part_number,
                                 std::string_view body);
  Status CompleteMultipart(const std::string& bucket, const std::string& key,
                           const std::string& upload_id, const std::vector<std::string>& etags);
  Status AbortMultipart(const std::string& bucket, const std::string& key,
                        const std::string& upload_id);
  // The object's size, or nullopt when it does not exist.
  Result<std::optional<uint64_t>> Head(const std::string& bucket, const std::string& key);
  // OK when the bucket exists and may be used; NotFound naming it when not.
  Status HeadBucket(const std::string& bucket);
  // Every object under `prefix` (all pages; `delimiter` "/" groups deeper keys into prefixes);
  // stops after `limit` entries when limit > 0. Pages of `page_size` keys (S3's maximum 1000).
  // A malformed page, a continuation token seen before or more than max_list_pages pages are
  // errors naming the bucket and the prefix.
  Result<ObjectListing> List(const std::string& bucket, const std::string& prefix,
                             const std::string& delimiter, size_t limit = 0,
                             size_t page_size = 1000);
  Status Delete(const std::string& bucket, const std::string& key);
  Status Copy(const std::string& bucket, const std::string& from_key, const std::string& to_key);

  const S3ClientConfig& config() const { return config_; }
  S3RequestCounts counts() const;
  // The statistics since the last call (or since the client was made), then reset: per epoch.
  S3Stats TakeStats();

  struct Request;
  struct Response;

 private:
  explicit S3Client(S3ClientConfig config);
  Result<Response> Perform(const Request& request);
  Result<Response> PerformOnce(void* curl, const Request& request);
  Status TransferError(const Request& request, const std::string& url, int curl_code,
                       const char* detail, const Response& response) const;
  void Count(const Request& request, const Result<Response>& result, int attempts, double ms);
  // HttpError, counted as an error.
  Status Fail(const Request& request, const Response& response, int attempts = 1);
  void* Borrow();
  void Return(void* curl);

  S3ClientConfig config_;
  std::string scheme_, host_;  // of the endpoint (host with :port)
  std::string base_path_;      // the endpoint's path ("" or e.g. "/s3"), before every request's
  std::mutex mu_;
  std::vector<void*> idle_;  // CURL* handles not in use, made by process pid_
  int pid_;
  std::atomic<uint64_t> attempts_{0}, retries_{0}, parts_uploaded_{0}, multipart_completed_{0};
  S3RequestStats stats_;  // per epoch (TakeStats)
};

}  // namespace dlio::s3
