// AWS Signature Version 4 (the "AWS4-HMAC-SHA256" Authorization header) for S3 requests, with
// OpenSSL's SHA-256 and HMAC. Pure functions of their inputs (the time is an argument), so the
// tests check them against AWS's published examples.
#pragma once

#include <cstddef>
#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dlio::s3 {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // temporary credentials (STS); signed as x-amz-security-token
};

// One request as it is signed: the method, the Host header's value, the path before encoding,
// the query parameters before encoding, the headers to sign besides host, x-amz-date and
// x-amz-security-token (names in any case), and the hex SHA-256 of the payload (or
// "UNSIGNED-PAYLOAD").
struct SigV4Request {
  std::string method;
  std::string host;
  std::string path;
  HeaderList query;
  HeaderList headers;
  std::string payload_sha256;
};

// RFC 3986 encoding as SigV4 wants it: unreserved characters (A-Z a-z 0-9 - _ . ~) stay, '/'
// stays when !encode_slash, every other byte becomes %XX (upper-case hex).
std::string UriEncode(std::string_view text, bool encode_slash);
// Lower-case hex SHA-256 of the bytes.
std::string Sha256Hex(std::string_view bytes);
// "YYYYMMDDTHHMMSSZ" of a UTC time.
std::string AmzDate(std::time_t t);

// The canonical request of SigV4 (for tests and error messages): S3's rules, so the path's
// segments are encoded once.
std::string CanonicalRequest(const SigV4Request& request, const std::string& amz_date,
                             const std::string& session_token);

// The headers to add to the request: x-amz-date, x-amz-security-token (when the credentials have
// a session token) and Authorization, signed for `region` and `service` at `amz_date`.
HeaderList SignV4(const SigV4Request& request, const AwsCredentials& credentials,
                  const std::string& region, const std::string& service,
                  const std::string& amz_date);

}  // namespace dlio::s3
