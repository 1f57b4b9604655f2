#include "storage/s3/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>

namespace dlio::s3 {
namespace {

constexpr char kHex[] = "0123456789abcdef";
constexpr char kUpperHex[] = "0123456789ABCDEF";
constexpr char kAlgorithm[] = "AWS4-HMAC-SHA256";

std::string Hex(const unsigned char* bytes, size_t n) {
  std::string out(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kHex[bytes[i] >> 4];
    out[2 * i + 1] = kHex[bytes[i] & 15];
  }
  return out;
}

std::string Hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Leading and trailing spaces removed, inner runs of spaces collapsed to one (SigV4's rule).
std::string TrimValue(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

// The headers that are signed, lower-case names sorted, with the host and the amz ones added.
HeaderList SignedHeaders(const SigV4Request& request, const std::string& amz_date,
                         const std::string& session_token) {
  HeaderList headers;
  headers.emplace_back("host", request.host);
  headers.emplace_back("x-amz-date", amz_date);
  if (!session_token.empty()) headers.emplace_back("x-amz-security-token", session_token);
  for (const auto& [name, value] : request.headers) headers.emplace_back(Lower(name), value);
  std::sort(headers.begin(), headers.end());
  return headers;
}

std::string SignedHeaderNames(const HeaderList& headers) {
  std::string out;
  for (const auto& [name, value] : headers) {
    if (!out.empty()) out += ';';
    out += name;
  }
  return out;
}

}  // namespace

std::string UriEncode(std::string_view text, bool encode_slash) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (c == '/' && !encode_slash)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kUpperHex[c >> 4]);
      out.push_back(kUpperHex[c & 15]);
    }
  }
  return out;
}

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  return Hex(digest, sizeof digest);
}

std::string AmzDate(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string CanonicalRequest(const SigV4Request& request, const std::string& amz_date,
                             const std::string& session_token) {
  std::vector<std::pair<std::string, std::string>> query;
  for (const auto& [k, v] : request.query)
    query.emplace_back(UriEncode(k, true), UriEncode(v, true));
  std::sort(query.begin(), query.end());
  std::string canonical_query;
  for (const auto& [k, v] : query) {
    if (!canonical_query.empty()) canonical_query += '&';
    canonical_query += k + "=" + v;
  }
  const HeaderList headers = SignedHeaders(request, amz_date, session_token);
  std::string canonical_headers;
  for (const auto& [name, value] : headers)
    canonical_headers += name + ":" + TrimValue(value) + "\n";
  const std::string path = request.path.empty() ? "/" : request.path;
  return request.method + "\n" + UriEncode(path, false) + "\n" + canonical_query + "\n" +
         canonical_headers + "\n" + SignedHeaderNames(headers) + "\n" + request.payload_sha256;
}

HeaderList SignV4(const SigV4Request& request, const AwsCredentials& credentials,
                  const std::string& region, const std::string& service,
                  const std::string& amz_date) {
  const std::string date = amz_date.substr(0, 8);
  const std::string scope = date + "/" + region + "/" + service + "/aws4_request";
  const std::string canonical = CanonicalRequest(request, amz_date, credentials.session_token);
  const std::string to_sign =
      std::string(kAlgorithm) + "\n" + amz_date + "\n" + scope + "\n" + Sha256Hex(canonical);
  std::string key = Hmac("AWS4" + credentials.secret_access_key, date);
  key = Hmac(key, region);
  key = Hmac(key, service);
  key = Hmac(key, "aws4_request");
  const std::string mac = Hmac(key, to_sign);
  const std::string signature = Hex(reinterpret_cast<const unsigned char*>(mac.data()), mac.size());
  HeaderList out;
  out.emplace_back("x-amz-date", amz_date);
  if (!credentials.session_token.empty()) {
    out.emplace_back("x-amz-security-token", credentials.session_token);
  }
  out.emplace_back(
      "Authorization",
      std::string(kAlgorithm) + " Credential=" + credentials.access_key_id + "/" + scope +
          ",SignedHeaders=" +
          SignedHeaderNames(SignedHeaders(request, amz_date, credentials.session_token)) +
          ",Signature=" + signature);
  return out;
}

}  // namespace dlio::s3
