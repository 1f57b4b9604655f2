// What one HTTP exchange of the S3 client carries (S3Client::Request and Response) and the curl
// callbacks that fill a Response from what the server sends. Everything a server sends is bounded
// here: the headers (kMaxHeaderBytes), an XML body (kMaxBodyBytes) and a GET's object bytes (the
// caller's buffer). Used by s3_client.cc only.
#pragma once

#include <curl/curl.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dlio/status.h"
#include "storage/s3/s3_client.h"

namespace dlio::s3 {

// More response headers than this (S3 sends about 1 KiB) end the attempt with an error.
inline constexpr size_t kMaxHeaderBytes = size_t{64} << 10;
// XML answers and error bodies are kept up to this (a page of 1000 keys is well within).
inline constexpr size_t kMaxBodyBytes = size_t{16} << 20;

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
  uint64_t object_size = kUnknownSize;  // a GET's object's, from its HEAD
  std::string shown_key;                // a listing's prefix, named in errors instead of `key`
};

struct S3Client::Response {
  long status = 0;
  std::string body;             // error bodies and XML answers (up to kMaxBodyBytes)
  bool body_truncated = false;  // the body was longer than kMaxBodyBytes
  std::string etag;
  uint64_t content_length = 0;
  bool has_content_length = false;
  std::string content_range;  // as sent ("" when absent)
  size_t header_bytes = 0;    // of the current response's head
  bool header_too_large = false;
  bool head_done = false;   // the blank line that ends the head arrived
  size_t out_bytes = 0;     // bytes copied into Request::out
  uint64_t body_bytes = 0;  // a GET's body bytes received (copied or not)
  uint64_t skip = 0;        // bytes of a 200 answer to a range GET before the range
  bool got_range = false;   // a 200 answer to a range GET: the range is in, the rest not awaited
};

// "s3 GET bucket 'b' key 'k'" (or "s3 LIST bucket 'b' prefix 'p'"): a request in messages.
std::string What(const S3Client::Request& q);

// curl's CURLOPT_WRITEFUNCTION, HEADERFUNCTION, READFUNCTION and SEEKFUNCTION.
struct WriteState {
  void* curl;
  const S3Client::Request* request;
  S3Client::Response* response;
};
size_t OnWrite(char* data, size_t size, size_t count, void* write_state);
size_t OnHeader(char* data, size_t size, size_t count, void* response);
struct ReadState {
  std::string_view body;
  size_t pos = 0;
};
size_t OnRead(char* buffer, size_t size, size_t count, void* read_state);
int OnSeek(void* read_state, curl_off_t offset, int origin);

// A GET's answer (200 or 206) against the range asked for: a 206 must carry the Content-Range of
// exactly that range (shorter only where the object ends) and a body of its length; a 200 (the
// whole object), when the object's size is known, a Content-Length of that size. kCancelled (the
// attempt is worth repeating) naming bucket, key and range when not.
Status CheckRangeAnswer(const S3Client::Request& q, const S3Client::Response& r);

}  // namespace dlio::s3
