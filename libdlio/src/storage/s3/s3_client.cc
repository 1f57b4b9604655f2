#include "storage/s3/s3_client.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "core/xml_escape.h"
#include "dlio/str_cat.h"
#include "storage/s3/s3_xml.h"

namespace dlio::s3 {

struct S3Client::Request {
  S3RequestKind kind = S3RequestKind::kGet;
  std::string method;  // GET PUT POST HEAD DELETE
  std::string bucket, key;
  HeaderList query;
  HeaderList headers;  // signed and sent
  std::string_view body;
  // GET: the bytes go here (the range starting at `offset` of the object), else into the body.
  void* out = nullptr;
  size_t out_capacity = 0;
  uint64_t offset = 0;
  std::string shown_key;  // named in errors instead of `key` (a listing's prefix)
};

struct S3Client::Response {
  long status = 0;
  std::string body;  // error bodies and XML answers (capped)
  std::string etag;
  uint64_t content_length = 0;
  bool has_content_length = false;
  size_t out_bytes = 0;  // bytes copied into Request::out
  uint64_t skip = 0;     // bytes of a 200 answer to a range GET before the range
};

namespace {

constexpr size_t kMaxBodyBytes = size_t{16} << 20;  // XML listings of 1000 keys fit well within
constexpr double kMaxBackoffMs = 5000;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct WriteState {
  CURL* curl;
  const S3Client::Request* request;
  S3Client::Response* response;
};

size_t OnWrite(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<WriteState*>(user);
  const size_t n = size * count;
  S3Client::Response& r = *state->response;
  if (r.status == 0) curl_easy_getinfo(state->curl, CURLINFO_RESPONSE_CODE, &r.status);
  const S3Client::Request& q = *state->request;
  if (q.out != nullptr && (r.status == 200 || r.status == 206)) {
    size_t from = 0;
    if (r.status == 200 && r.skip < q.offset) {  // the server ignored the Range header
      from = static_cast<size_t>(std::min<uint64_t>(n, q.offset - r.skip));
      r.skip += from;
    }
    const size_t room = q.out_capacity - r.out_bytes;
    const size_t take = std::min(room, n - from);
    std::memcpy(static_cast<char*>(q.out) + r.out_bytes, data + from, take);
    r.out_bytes += take;
    return n;
  }
  if (r.body.size() < kMaxBodyBytes)
    r.body.append(data, std::min(n, kMaxBodyBytes - r.body.size()));
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* r = static_cast<S3Client::Response*>(user);
  const size_t n = size * count;
  std::string_view line(data, n);
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a redirect or 100-continue)
      r->etag.clear();
      r->has_content_length = false;
    }
    return n;
  }
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
    value.remove_suffix(1);
  if (name == "etag") r->etag = std::string(value);
  if (name == "content-length") {
    r->content_length = std::strtoull(std::string(value).c_str(), nullptr, 10);
    r->has_content_length = true;
  }
  return n;
}

struct ReadState {
  std::string_view body;
  size_t pos = 0;
};

size_t OnRead(char* buffer, size_t size, size_t count, void* user) {
  auto* s = static_cast<ReadState*>(user);
  const size_t n = std::min(size * count, s->body.size() - s->pos);
  std::memcpy(buffer, s->body.data() + s->pos, n);
  s->pos += n;
  return n;
}

// curl rewinds a PUT's body to send it again on a new connection when the reused one turns out
// dead (the server closed it or went away mid-request); without this it fails the request with
// CURLE_SEND_FAIL_REWIND.
int OnSeek(void* user, curl_off_t offset, int origin) {
  auto* s = static_cast<ReadState*>(user);
  if (origin != SEEK_SET || offset < 0 || static_cast<size_t>(offset) > s->body.size()) {
    return CURL_SEEKFUNC_CANTSEEK;
  }
  s->pos = static_cast<size_t>(offset);
  return CURL_SEEKFUNC_OK;
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

std::string What(const S3Client::Request& q) {
  if (!q.shown_key.empty()) {
    return StrCat("s3 ", q.method, " bucket '", q.bucket, "' prefix '", q.shown_key, "'");
  }
  return StrCat("s3 ", q.method, " bucket '", q.bucket, "' key '", q.key, "'");
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
  if (!code.empty()) text += " " + code;
  if (!message.empty()) text += " (" + message + ")";
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
  if (code != CURLE_OK) {
    const std::string_view what = curl_easy_strerror(code);
    std::string text = StrCat(What(q), " at ", url, ": ", what);
    if (error[0] != '\0' && std::string_view(error).find(what) == std::string_view::npos) {
      text += StrCat(" (", error, ")");  // curl's detail, e.g. the certificate problem
    }
    if (TlsFailure(code)) text += TlsHint(config_);
    return RetryableCurl(code) ? Status::Cancelled(text) : Status::IOError(text);
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
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
                                  uint64_t offset, size_t n, void* buf) {
  Request q = NewRequest(S3RequestKind::kGet, "GET", bucket, key);
  q.headers.emplace_back("range", StrCat("bytes=", offset, "-", offset + n - 1));
  q.out = buf;
  q.out_capacity = n;
  q.offset = offset;
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
  while (true) {
    Request q = NewRequest(S3RequestKind::kList, "GET", bucket, "");
    q.query = {{"list-type", "2"}, {"prefix", prefix}};
    if (!delimiter.empty()) q.query.emplace_back("delimiter", delimiter);
    if (!token.empty()) q.query.emplace_back("continuation-token", token);
    const size_t page = std::clamp<size_t>(page_size, 1, 1000);
    q.query.emplace_back("max-keys", std::to_string(limit > 0 ? std::min(limit, page) : page));
    q.shown_key = prefix.empty() ? "/" : prefix;
    DLIO_ASSIGN_OR_RETURN(Response r, Perform(q));
    if (r.status / 100 != 2) return Fail(q, r);
    for (std::string_view item : XmlElements(r.body, "Contents")) {
      const std::string key = XmlFirst(item, "Key").value_or("");
      const uint64_t size =
          std::strtoull(XmlFirst(item, "Size").value_or("0").c_str(), nullptr, 10);
      listing.objects.emplace_back(key, size);
    }
    for (std::string_view item : XmlElements(r.body, "CommonPrefixes")) {
      listing.prefixes.push_back(XmlFirst(item, "Prefix").value_or(""));
    }
    const size_t have = listing.objects.size() + listing.prefixes.size();
    if (limit > 0 && have >= limit) break;
    if (XmlFirst(r.body, "IsTruncated").value_or("false") != "true") break;
    token = XmlFirst(r.body, "NextContinuationToken").value_or("");
    if (token.empty()) {
      return Status::IOError(What(q) + ": a truncated listing without NextContinuationToken");
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
