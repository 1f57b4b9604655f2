#include "storage/s3/s3_transfer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <optional>

#include "dlio/str_cat.h"
#include "storage/s3/s3_xml.h"

namespace dlio::s3 {
namespace {

bool IsGetWithBuffer(const S3Client::Request& q, const S3Client::Response& r) {
  return q.out != nullptr && (r.status == 200 || r.status == 206);
}

// Copies what of `data` falls in the range into the request's buffer.
void TakeRangeBytes(const S3Client::Request& q, S3Client::Response* r, const char* data, size_t n) {
  size_t from = 0;
  if (r->status == 200 && r->skip < q.offset) {  // the server ignored the Range header
    from = static_cast<size_t>(std::min<uint64_t>(n, q.offset - r->skip));
    r->skip += from;
  }
  const size_t take = std::min(q.out_capacity - r->out_bytes, n - from);
  std::memcpy(static_cast<char*>(q.out) + r->out_bytes, data + from, take);
  r->out_bytes += take;
}

// "bytes <first>-<last>/<size or *>"; false when `text` is not that.
bool ParseContentRange(std::string_view text, uint64_t* first, uint64_t* last,
                       std::optional<uint64_t>* size) {
  if (text.rfind("bytes ", 0) != 0) return false;
  text.remove_prefix(6);
  const size_t dash = text.find('-'), slash = text.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash ||
      !ParseUint64(text.substr(0, dash), first) ||
      !ParseUint64(text.substr(dash + 1, slash - dash - 1), last)) {
    return false;
  }
  const std::string_view total = text.substr(slash + 1);
  uint64_t n = 0;
  if (total == "*") {
    size->reset();
  } else if (ParseUint64(total, &n)) {
    *size = n;
  } else {
    return false;
  }
  return true;
}

}  // namespace

std::string What(const S3Client::Request& q) {
  if (q.kind == S3RequestKind::kList) {
    return StrCat("s3 LIST bucket '", q.bucket, "' prefix '", q.shown_key, "'");
  }
  return StrCat("s3 ", q.method, " bucket '", q.bucket, "' key '", q.key, "'");
}

size_t OnWrite(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<WriteState*>(user);
  const size_t n = size * count;
  S3Client::Response& r = *state->response;
  if (r.status == 0)
    curl_easy_getinfo(static_cast<CURL*>(state->curl), CURLINFO_RESPONSE_CODE, &r.status);
  const S3Client::Request& q = *state->request;
  if (IsGetWithBuffer(q, r)) {
    r.body_bytes += n;
    TakeRangeBytes(q, &r, data, n);
    // A 200 carries the whole object: once the range is in, the rest is not worth waiting for.
    if (r.status == 200 && r.out_bytes == q.out_capacity) {
      r.got_range = true;
      return 0;  // curl stops with CURLE_WRITE_ERROR, which PerformOnce takes as success
    }
    return n;
  }
  if (r.body.size() + n > kMaxBodyBytes) r.body_truncated = true;
  if (r.body.size() < kMaxBodyBytes) {
    r.body.append(data, std::min(n, kMaxBodyBytes - r.body.size()));
  }
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* r = static_cast<S3Client::Response*>(user);
  const size_t n = size * count;
  std::string_view line(data, n);
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos && line.rfind("HTTP/", 0) == 0) {
    // A new response (after a redirect or 100-continue).
    r->etag.clear();
    r->has_content_length = false;
    r->content_range.clear();
    r->header_bytes = 0;
    r->head_done = false;
  }
  if (line == "\r\n" || line == "\n") r->head_done = true;
  r->header_bytes += n;
  if (r->header_bytes > kMaxHeaderBytes) {
    r->header_too_large = true;
    return 0;  // curl stops with CURLE_WRITE_ERROR
  }
  if (colon == std::string_view::npos) return n;
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
  if (name == "content-range") r->content_range = std::string(value);
  return n;
}

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

Status CheckRangeAnswer(const S3Client::Request& q, const S3Client::Response& r) {
  const uint64_t want_last = q.offset + q.out_capacity - 1;
  const std::string where =
      StrCat(What(q), " range bytes=", q.offset, "-", want_last, ": the server's ", r.status, " ");
  if (r.status == 200) {  // the whole object, whose slice TakeRangeBytes took
    if (q.object_size == S3Client::kUnknownSize || !r.has_content_length ||
        r.content_length == q.object_size) {
      return Status::OK();
    }
    return Status::Cancelled(StrCat(where, "(the whole object, the range ignored) has ",
                                    r.content_length, " bytes, the object ", q.object_size,
                                    " (its HEAD)"));
  }
  if (r.status != 206) return Status::OK();
  uint64_t first = 0, last = 0;
  std::optional<uint64_t> size;
  if (r.content_range.empty()) return Status::Cancelled(where + "has no Content-Range");
  const std::string shown = XmlShown(r.content_range);
  if (!ParseContentRange(r.content_range, &first, &last, &size) || last < first) {
    return Status::Cancelled(
        StrCat(where, "has the Content-Range '", shown, "', not bytes <first>-<last>/<size>"));
  }
  const bool object_ends = size && last + 1 == *size;
  if (first != q.offset || last > want_last || (last < want_last && !object_ends)) {
    return Status::Cancelled(StrCat(where, "is for another range: Content-Range '", shown, "'"));
  }
  if (r.body_bytes != last - first + 1) {
    return Status::Cancelled(StrCat(where, "body holds ", r.body_bytes,
                                    " bytes, its Content-Range '", shown, "' ", last - first + 1));
  }
  return Status::OK();
}

}  // namespace dlio::s3
