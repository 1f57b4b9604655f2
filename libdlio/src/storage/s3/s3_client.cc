#include "storage/s3/s3_client.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <unordered_set>

#include "core/xml_escape.h"
#include "dlio/str_cat.h"
#include "storage/s3/s3_list.h"
#include "storage/s3/s3_transfer.h"
#include "storage/s3/s3_xml.h"

namespace dlio::s3 {

namespace {

constexpr double kMaxBackoffMs = 5000;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool RetryableCurl(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SEND_FAIL_REWIND:
      return true;
    default:
      return false;
  }
}

bool TlsFailure(CURLcode code) {
  return code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE ||
         code == CURLE_SSL_CERTPROBLEM || code == CURLE_SSL_CONNECT_ERROR;
}

std::string TlsHint(const S3ClientConfig& config) {
  const std::string bundle = config.ca_bundle.empty() ? "the system's CAs" : config.ca_bundle;
  return StrCat(": TLS certificate verification against ", bundle,
                " failed; name the server's CA with storage.storage_options.s3_ca_bundle (or "
                "$AWS_CA_BUNDLE), or set s3_verify_tls: false to skip verification");
}

bool RetryableStatus(long status) {
  return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

// The error of an HTTP answer that is no success: names the request, the status and S3's code.
Status HttpError(const S3Client::Request& q, const S3Client::Response& r, int attempts) {
  std::string code = XmlFirst(r.body, "Code").value_or("");
  const std::string message = XmlFirst(r.body, "Message").value_or("");
  if (code.empty()) {
    if (r.status == 404) code = q.key.empty() ? "NoSuchBucket" : "NoSuchKey";
    if (r.status == 403) code = "AccessDenied";
  }
  std::string text = StrCat(What(q), ": HTTP ", r.status);
  if (!code.empty()) text += " " + XmlShown(code);
  if (!message.empty()) text += " (" + XmlShown(message, 512) + ")";
  if (attempts > 1) text += StrCat(" after ", attempts, " attempts");
  if (r.status == 404) return Status::NotFound(text);
  return Status::IOError(text);
}

S3Client::Request NewRequest(S3RequestKind kind, const char* method, const std::string& bucket,
                             const std::string& key) {
  S3Client::Request q;
  q.kind = kind;
  q.method = method;
  q.bucket = bucket;
  q.key = key;
  return q;
}

std::string EncodedQuery(const HeaderList& query) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : query) parts.push_back(UriEncode(k, true) + "=" + UriEncode(v, true));
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "&") + p;
  return out;
}

}  // namespace

Result<std::unique_ptr<S3Client>> S3Client::Make(S3ClientConfig config) {
  GlobalInit();
  if (config.endpoint.empty()) config.endpoint = "https://s3." + config.region + ".amazonaws.com";
  const size_t sep = config.endpoint.find("://");
  if (sep == std::string::npos) {
    return Status::InvalidArgument("s3 endpoint_url '" + config.endpoint +
                                   "': expected http(s)://host[:port][/path]");
  }
  std::unique_ptr<S3Client> client(new S3Client(config));
  client->scheme_ = config.endpoint.substr(0, sep);
  client->host_ = config.endpoint.substr(sep + 3);
  while (!client->host_.empty() && client->host_.back() == '/') client->host_.pop_back();
  if (const size_t slash = client->host_.find('/'); slash != std::string::npos) {
    client->base_path_ = client->host_.substr(slash);  // AIStore's /s3
    client->host_.resize(slash);
  }
  if ((client->scheme_ != "http" && client->scheme_ != "https") || client->host_.empty() ||
      client->base_path_.find_first_of("?#") != std::string::npos) {
    return Status::InvalidArgument("s3 endpoint_url '" + config.endpoint +
                                   "': expected http(s)://host[:port][/path]");
  }
  if (config.max_attempts < 1) client->config_.max_attempts = 1;
  return client;
}

S3Client::S3Client(S3ClientConfig config) : config_(std::move(config)), pid_(getpid()) {}

S3Client::~S3Client() {
  if (getpid() != pid_) return;  // a forked copy: the handles are the parent's
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* S3Client::Borrow() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (getpid() != pid_) {
      // A forked copy (the pytorch pipeline's workers): the handles' connections are the
      // parent's sockets, so they are abandoned, not cleaned up (that could talk on them).
      idle_.clear();
      pid_ = getpid();
    }
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void S3Client::Return(void* curl) {
  std::lock_guard<std::mutex> lock(mu_);
  if (getpid() == pid_) idle_.push_back(curl);
}

Result<S3Client::Response> S3Client::Perform(const Request& request) {
  CURL* curl = static_cast<CURL*>(Borrow());
  if (curl == nullptr) return Status::ResourceExhausted(What(request) + ": curl_easy_init failed");
  const auto start = std::chrono::steady_clock::now();
  Result<Response> result = Status::Internal("no attempt");
  double backoff_ms = config_.retry_base_ms;
  int attempt = 1;
  for (; attempt <= config_.max_attempts; ++attempt) {
    attempts_.fetch_add(1, std::memory_order_relaxed);
    if (attempt > 1) retries_.fetch_add(1, std::memory_order_relaxed);
    result = PerformOnce(curl, request);
    const bool transport_retry = !result.ok() && result.status().code() == StatusCode::kCancelled;
    const bool http_retry = result.ok() && RetryableStatus(result->status);
    if (!transport_retry && !http_retry) break;
    if (attempt == config_.max_attempts) {
      if (http_retry) {
        result = HttpError(request, *result, attempt);
      } else {
        result =
            Status::IOError(StrCat(result.status().message(), " (after ", attempt, " attempts)"));
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(backoff_ms));
    backoff_ms = std::min(backoff_ms * 2, kMaxBackoffMs);
  }
  Return(curl);
  Count(
      request, result, std::min(attempt, config_.max_attempts),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return result;
}

void S3Client::Count(const Request& q, const Result<Response>& result, int attempts, double ms) {
  const bool answered = result.ok() && result->status / 100 == 2;
  const bool get = q.kind == S3RequestKind::kGet;
  // An answer that is no success is counted as an error by the caller (Fail), if it is one.
  stats_.Record(q.kind, attempts, !result.ok(), answered && get ? result->out_bytes : 0,
                answered && q.method == "PUT" ? q.body.size() : 0, answered && get ? ms : -1);
}

Status S3Client::Fail(const Request& q, const Response& r, int attempts) {
  // A HEAD's 404 ("does not exist") is an answer, not an error.
  if (!(q.kind == S3RequestKind::kHead && r.status == 404)) stats_.CountError();
  return HttpError(q, r, attempts);
}

S3Stats S3Client::TakeStats() { return stats_.Take(); }

// One attempt. A transport error worth retrying comes back as kCancelled (Perform's signal),
// any other as IOError.
Result<S3Client::Response> S3Client::PerformOnce(void* handle, const Request& q) {
  CURL* curl = static_cast<CURL*>(handle);
  curl_easy_reset(curl);  // keeps the connection cache
  const std::string host = config_.path_style ? host_ : q.bucket + "." + host_;
  std::string path = base_path_ + (config_.path_style ? "/" + q.bucket : "");
  if (!q.key.empty() || path.empty()) path += "/" + q.key;
  const std::string query = EncodedQuery(q.query);
  const std::string url =
      scheme_ + "://" + host + UriEncode(path, false) + (query.empty() ? "" : "?" + query);

  SigV4Request sign;
  sign.method = q.method;
  sign.host = host;
  sign.path = path;
  sign.query = q.query;
  sign.headers = q.headers;
  sign.payload_sha256 = Sha256Hex(q.body);
  sign.headers.emplace_back("x-amz-content-sha256", sign.payload_sha256);
  const HeaderList auth =
      SignV4(sign, config_.credentials, config_.region, "s3",
             AmzDate(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
  curl_slist* headers = nullptr;
  auto add = [&headers](const std::string& h) { headers = curl_slist_append(headers, h.c_str()); };
  add("Host: " + host);
  add("Expect:");  // no 100-continue round trip before PUT bodies
  for (const auto& [k, v] : sign.headers) add(k + ": " + v);
  for (const auto& [k, v] : auth) add(k + ": " + v);

  Response response;
  response.status = 0;
  WriteState write_state{curl, &q, &response};
  ReadState read_state{q.body, 0};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnWrite);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &write_state);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(config_.connect_timeout_s * 1000));
  if (config_.request_timeout_s > 0) {
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(config_.request_timeout_s * 1000));
  }
  if (config_.low_speed_time_s > 0) {  // a server that stops sending (or reading)
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(config_.low_speed_bytes_s));
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(config_.low_speed_time_s));
  }
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, config_.verify_tls ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, config_.verify_tls ? 2L : 0L);
  if (!config_.ca_bundle.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, config_.ca_bundle.c_str());
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  if (q.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (q.method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, &OnRead);
    curl_easy_setopt(curl, CURLOPT_READDATA, &read_state);
    curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, &OnSeek);
    curl_easy_setopt(curl, CURLOPT_SEEKDATA, &read_state);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(q.body.size()));
  } else if (q.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, q.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(q.body.size()));
  } else if (q.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, q.method.c_str());
  }
  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  // A 200 to a range GET is stopped by OnWrite once the range is in.
  if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && response.got_range)) {
    return TransferError(q, url, code, error, response);
  }
  if (q.out != nullptr) DLIO_RETURN_NOT_OK(CheckRangeAnswer(q, response));
  return response;
}

// The error of an attempt curl ended: kCancelled when worth repeating (Perform's signal).
Status S3Client::TransferError(const Request& q, const std::string& url, int curl_code,
                               const char* detail, const Response& r) const {
  const auto code = static_cast<CURLcode>(curl_code);
  if (r.header_too_large) {
    return Status::IOError(StrCat(What(q), " at ", url, ": the response's headers are larger than ",
                                  kMaxHeaderBytes >> 10, " KiB (S3 sends about 1 KiB)"));
  }
  const std::string_view what = curl_easy_strerror(code);
  const std::string_view more(detail);
  // curl refuses a header line longer than its own limit (100 KiB) as "Out of memory", saying
  // nothing more; before the end of the head, that is what it means.
  if (code == CURLE_OUT_OF_MEMORY && !r.head_done) {
    return Status::IOError(StrCat(What(q), " at ", url,
                                  ": a response header is too large (a line of more than the "
                                  "100 KiB curl accepts)"));
  }
  std::string text = StrCat(What(q), " at ", url, ": ", what);
  if (!more.empty() && more.find(what) == std::string_view::npos) {
    text += StrCat(" (", more, ")");  // curl's detail, e.g. the certificate problem
  }
  if (code == CURLE_OPERATION_TIMEDOUT && more.find("too slow") != std::string_view::npos) {
    text += StrCat(": no progress for ", config_.low_speed_time_s,
                   " s (storage.storage_options.s3_low_speed_time_s)");
  }
  if (TlsFailure(code)) text += TlsHint(config_);
  return RetryableCurl(code) ? Status::Cancelled(text) : Status::IOError(text);
}

S3RequestCounts S3Client::counts() const {
  S3RequestCounts c;
  c.attempts = attempts_.load(std::memory_order_relaxed);
  c.retries = retries_.load(std::memory_order_relaxed);
  c.parts_uploaded = parts_uploaded_.load(std::memory_order_relaxed);
  c.multipart_completed = multipart_completed_.load(std::memory_order_relaxed);
  return c;
}

Result<size_t> S3Client::GetRange(const std::string& bucket, const std::string& key,
                                  uint64_t offset, size_t n, void* buf, uint64_t object_size) {
  Request q = NewRequest(S3RequestKind::kGet, "GET", bucket, key);
  q.headers.emplace_back("range", StrCat("bytes=", offset, "-", offset + n - 1));
  q.out = buf;
  q.out_capacity = n;
  q.offset = offset;
  q.object_size = object_size;
  DLIO_ASSIGN_OR_RETURN(Response r, Perform(q));
  if (r.status == 416) return size_t{0};  // the range starts at or past the end
  if (r.status != 200 && r.status != 206) return Fail(q, r);
  return r.out_bytes;
}

Status S3Client::Put(const std::string& bucket, const std::string& key, std::string_view body) {
  Request q = NewRequest(S3RequestKind::kPut, "PUT", bucket, key);
  q.body = body;
  DLIO_ASSIGN_OR_RETURN(Response r, Perform(q));
  if (r.status / 100 != 2) return Fail(q, r);
  return Status::OK();
}

Result<std::string> S3Client::CreateMultipart(const std::string& bucket, const std::string& key) {
  Request q = NewRequest(S3RequestKind::kMultipart, "POST", bucket, key);
  q.query.emplace_back("uploads", "");
  DLIO_ASSIGN_OR_RETURN(Response r, Perform(q));
  if (r.status / 100 != 2) return Fail(q, r);
  auto id = XmlFirst(r.body, "UploadId");
  if (!id || id->empty())
    return Status::IOError(What(q) + ": CreateMultipartUpload answered no UploadId");
  return *id;
}

Result<std::string> S3Client::UploadPart(const std::string& bucket, const std::string& key,
                                         const std::string& upload_id, int part_number,
                                         std::string_view body) {
  Request q = NewRequest(S3RequestKind::kMultipart, "PUT", bucket, key);
  q.query = {{"partNumber", std::to_string(part_number)}, {"uploadId", upload_id}};
  q.body = body;
  DLIO_ASSIGN_OR_RETURN(Response r, Perform(q));
  if (r.status / 100 != 2) return Fail(q, r);
  parts_uploaded_.fetch_add(1, std::memory_order_relaxed);
  if (r.etag.empty())
    return Status::IOError(StrCat(What(q), ": part ", part_number, " answered no ETag"));
  return r.etag;
}

Status S3Client::CompleteMultipart(const std::string& bucket, const std::string& key,
                                   const std::string& upload_id,
                                   const std::vector<std::string>& etags) {
  std::string body = "<CompleteMultipartUpload>";
  for (size_t i = 0; i < etags.size(); ++i) {
    body += StrCat("<Part><PartNumber>", i + 1, "</PartNumber><ETag>", XmlEscape(etags[i]),
                   "</ETag></Part>");
  }
  body += "</CompleteMultipartUpload>";
  Request q = NewRequest(S3RequestKind::kMultipart, "POST", bucket, key);
  q.query.emplace_back("uploadId", upload_id);
  q.body = body;
  DLIO_ASSIGN_OR_RETURN(Response r, Perform(q));
  // S3 may answer 200 with an <Error> body when the completion fails late.
  if (r.status / 100 != 2 || !XmlElements(r.body, "Error").empty()) {
    if (r.status / 100 == 2) r.status = 500;
    return Fail(q, r);
  }
  multipart_completed_.fetch_add(1, std::memory_order_relaxed);
  return Status::OK();
}

Status S3Client::AbortMultipart(const std::string& bucket, const std::string& key,
                                const std::string& upload_id) {
  Request q = NewRequest(S3RequestKind::kMultipart, "DELETE", bucket, key);
  q.query.emplace_back("uploadId", upload_id);
  DLIO_ASSIGN_OR_RETURN(Response r, Perform(q));
  if (r.status / 100 != 2) return Fail(q, r);
  return Status::OK();
}

Result<std::optional<uint64_t>> S3Client::Head(const std::string& bucket, const std::string& key) {
  Request q = NewRequest(S3RequestKind::kHead, "HEAD", bucket, key);
  DLIO_ASSIGN_OR_RETURN(Response r, Perform(q));
  if (r.status == 404) return std::optional<uint64_t>();
  if (r.status / 100 != 2) return Fail(q, r);
  if (!r.has_content_length) return Status::IOError(What(q) + ": HEAD answered no Content-Length");
  return std::optional<uint64_t>(r.content_length);
}

Status S3Client::HeadBucket(const std::string& bucket) {
  Request q = NewRequest(S3RequestKind::kHead, "HEAD", bucket, "");
  DLIO_ASSIGN_OR_RETURN(Response r, Perform(q));
  if (r.status / 100 != 2) return Fail(q, r);
  return Status::OK();
}

Result<ObjectListing> S3Client::List(const std::string& bucket, const std::string& prefix,
                                     const std::string& delimiter, size_t limit, size_t page_size) {
  ObjectListing listing;
  std::string token;
  std::unordered_set<size_t> tokens_seen;  // hashes: a server's tokens may be long
  for (uint64_t pages = 1;; ++pages) {
    Request q = NewRequest(S3RequestKind::kList, "GET", bucket, "");
    q.query = {{"list-type", "2"}, {"prefix", prefix}};
    if (!delimiter.empty()) q.query.emplace_back("delimiter", delimiter);
    if (!token.empty()) q.query.emplace_back("continuation-token", token);
    const size_t page = std::clamp<size_t>(page_size, 1, 1000);
    q.query.emplace_back("max-keys", std::to_string(limit > 0 ? std::min(limit, page) : page));
    q.shown_key = prefix;
    DLIO_ASSIGN_OR_RETURN(Response r, Perform(q));
    if (r.status / 100 != 2) return Fail(q, r);
    auto parsed = r.body_truncated ? Status::InvalidArgument("the answer is larger than ",
                                                             kMaxBodyBytes >> 20, " MiB")
                                   : ParseListPage(r.body, prefix);
    if (!parsed.ok()) {
      stats_.CountError();
      return Status::IOError(
          StrCat(What(q), ": malformed listing (page ", pages, "): ", parsed.status().message()));
    }
    for (auto& o : parsed->objects) listing.objects.push_back(std::move(o));
    for (auto& p : parsed->prefixes) listing.prefixes.push_back(std::move(p));
    const size_t have = listing.objects.size() + listing.prefixes.size();
    if ((limit > 0 && have >= limit) || !parsed->truncated) break;
    token = std::move(parsed->next_token);
    if (!tokens_seen.insert(std::hash<std::string>()(token)).second) {
      stats_.CountError();
      return Status::IOError(StrCat(What(q), ": the server repeated the continuation token '",
                                    XmlShown(token), "' after ", pages,
                                    " pages (a listing that would never end)"));
    }
    if (pages >= config_.max_list_pages) {
      stats_.CountError();
      return Status::IOError(StrCat(What(q), ": more than ", config_.max_list_pages,
                                    " pages of keys; the listing is not followed further"));
    }
  }
  return listing;
}

Status S3Client::Delete(const std::string& bucket, const std::string& key) {
  Request q = NewRequest(S3RequestKind::kDelete, "DELETE", bucket, key);
  DLIO_ASSIGN_OR_RETURN(Response r, Perform(q));
  if (r.status / 100 != 2) return Fail(q, r);
  return Status::OK();
}

Status S3Client::Copy(const std::string& bucket, const std::string& from_key,
                      const std::string& to_key) {
  Request q = NewRequest(S3RequestKind::kCopy, "PUT", bucket, to_key);
  q.headers.emplace_back("x-amz-copy-source", UriEncode("/" + bucket + "/" + from_key, false));
  DLIO_ASSIGN_OR_RETURN(Response r, Perform(q));
  if (r.status / 100 != 2 || !XmlElements(r.body, "Error").empty()) {
    if (r.status / 100 == 2) r.status = 500;
    return Fail(q, r);
  }
  return Status::OK();
}

}  // namespace dlio::s3
