// SigV4 against AWS's published examples (the S3 API reference's "Examples: Signature
// Calculations" and the Signature Version 4 test suite), and the XML helpers S3 answers need.
#include <catch2/catch.hpp>

#include "core/xml_escape.h"
#include "storage/s3/s3_client.h"
#include "storage/s3/s3_xml.h"
#include "storage/s3/sigv4.h"

namespace dlio::s3 {
namespace {

// The S3 reference's examples: bucket examplebucket, 2013-05-24, us-east-1.
AwsCredentials S3DocCredentials() {
  return {"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
}
const std::string kEmptySha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string Authorization(const HeaderList& headers) {
  for (const auto& [k, v] : headers)
    if (k == "Authorization") return v;
  return "";
}

// A request of the S3 reference's examples: examplebucket's host, the payload's hash signed as
// x-amz-content-sha256 after `headers`.
SigV4Request DocRequest(const std::string& method, const std::string& path,
                        const std::string& payload_sha256, HeaderList headers = {}) {
  SigV4Request r;
  r.method = method;
  r.host = "examplebucket.s3.amazonaws.com";
  r.path = path;
  r.headers = std::move(headers);
  r.headers.emplace_back("x-amz-content-sha256", payload_sha256);
  r.payload_sha256 = payload_sha256;
  return r;
}

// Its Authorization header, signed at the examples' time with their keys.
std::string DocAuthorization(const SigV4Request& r) {
  return Authorization(SignV4(r, S3DocCredentials(), "us-east-1", "s3", "20130524T000000Z"));
}

const std::string kDocCredential =
    "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,";

TEST_CASE("SigV4: S3 GET Object with a Range (virtual-host addressing)") {
  const SigV4Request r = DocRequest("GET", "/test.txt", kEmptySha, {{"Range", "bytes=0-9"}});
  CHECK(CanonicalRequest(r, "20130524T000000Z", "") ==
        "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
        "x-amz-content-sha256:" +
            kEmptySha + "\nx-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;" +
            "x-amz-date\n" + kEmptySha);
  CHECK(DocAuthorization(r) ==
        kDocCredential +
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST_CASE("SigV4: S3 PUT Object (a key with '$', a body hash, extra headers)") {
  const std::string body_sha = Sha256Hex("Welcome to Amazon S3.");
  CHECK(body_sha == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  const SigV4Request r = DocRequest(
      "PUT", "/test$file.text", body_sha,
      {{"Date", "Fri, 24 May 2013 00:00:00 GMT"}, {"x-amz-storage-class", "REDUCED_REDUNDANCY"}});
  CHECK(DocAuthorization(r) ==
        kDocCredential +
            "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,"
            "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST_CASE("SigV4: S3 GET Bucket lifecycle and ListObjects (query parameters, sorted)") {
  SigV4Request r = DocRequest("GET", std::string(1, '/'), kEmptySha);
  r.query.emplace_back("lifecycle", "");
  CHECK(DocAuthorization(r) ==
        kDocCredential +
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
            "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
  r.query.clear();
  r.query.emplace_back("prefix", "J");
  r.query.emplace_back("max-keys", "2");
  CHECK(DocAuthorization(r) ==
        kDocCredential +
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
            "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST_CASE("SigV4 test suite: get-vanilla-query-order-key-case (service 'service')") {
  SigV4Request r;
  r.method = "GET";
  r.host = "example.amazonaws.com";
  r.path.assign(1, '/');  // (not = "/": GCC 12 warns, PR 105651)
  r.query.emplace_back("Param2", "value2");
  r.query.emplace_back("Param1", "value1");
  r.payload_sha256 = kEmptySha;
  const AwsCredentials suite{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
  const HeaderList out = SignV4(r, suite, "us-east-1", "service", "20150830T123600Z");
  CHECK(Authorization(out) ==
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request,"
        "SignedHeaders=host;x-amz-date,"
        "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}

TEST_CASE("SigV4: a session token is sent and signed, path-style keys are encoded once") {
  SigV4Request r;
  r.method = "GET";
  r.host = "127.0.0.1:9000";
  r.path = "/bucket/dir/a b+c.npz";
  r.payload_sha256 = kEmptySha;
  AwsCredentials c = S3DocCredentials();
  c.session_token = "token/with+chars=";
  const std::string canonical = CanonicalRequest(r, "20130524T000000Z", c.session_token);
  CHECK(canonical.find("\n/bucket/dir/a%20b%2Bc.npz\n") != std::string::npos);
  CHECK(canonical.find("host:127.0.0.1:9000\n") != std::string::npos);
  CHECK(canonical.find("x-amz-security-token:token/with+chars=\n") != std::string::npos);
  const HeaderList out = SignV4(r, c, "eu-west-1", "s3", "20130524T000000Z");
  REQUIRE(out.size() == 3);
  CHECK(out[1] == std::make_pair(std::string("x-amz-security-token"), c.session_token));
  CHECK(Authorization(out).find("/eu-west-1/s3/aws4_request,SignedHeaders=host;x-amz-date;"
                                "x-amz-security-token,") != std::string::npos);
  // Changing the token changes the signature.
  c.session_token = "other";
  CHECK(Authorization(SignV4(r, c, "eu-west-1", "s3", "20130524T000000Z")) != Authorization(out));
}

TEST_CASE("S3Client: endpoints with a path prefix, bad endpoints refused, errors name the URL") {
  S3ClientConfig c;
  c.credentials = S3DocCredentials();
  c.max_attempts = 2;
  c.retry_base_ms = 1;
  c.endpoint = "ftp://127.0.0.1";
  CHECK(S3Client::Make(c).status().code() == StatusCode::kInvalidArgument);
  c.endpoint = "127.0.0.1:9000";
  CHECK(S3Client::Make(c).status().code() == StatusCode::kInvalidArgument);
  c.endpoint = "http://127.0.0.1:1/s3/";  // nothing listens on port 1
  auto client = S3Client::Make(c);
  REQUIRE(client.ok());
  const Status put = (*client)->Put("bkt", "dir/a b", "x");
  CHECK_THAT(put.message(),
             Catch::Contains("s3 PUT bucket 'bkt' key 'dir/a b' at "
                             "http://127.0.0.1:1/s3/bkt/dir/a%20b: Couldn't connect to server "
                             "(after 2 attempts)"));
  CHECK((*client)->counts().retries == 1);
  c.path_style = false;  // virtual-host: the bucket in the host name (not resolvable here)
  c.connect_timeout_s = 2;
  client = S3Client::Make(c);
  REQUIRE(client.ok());
  CHECK_THAT((*client)->Delete("bkt", "k").message(),
             Catch::Contains("at http://bkt.127.0.0.1:1/s3/k:"));
}

TEST_CASE("UriEncode and AmzDate") {
  CHECK(UriEncode("a/b c~d_e.f-g*", false) == "a/b%20c~d_e.f-g%2A");
  CHECK(UriEncode("a/b", true) == "a%2Fb");
  CHECK(UriEncode("\xc3\xa9", true) == "%C3%A9");
  CHECK(AmzDate(1369353600) == "20130524T000000Z");
}

TEST_CASE("XML: elements by exact tag name, entities decoded") {
  const std::string xml =
      "<?xml version=\"1.0\"?><ListBucketResult xmlns=\"http://s3\"><KeyCount>2</KeyCount>"
      "<IsTruncated>true</IsTruncated><Contents><Key>a&amp;b&lt;c&gt;&quot;&apos;.npz</Key>"
      "<Size>10</Size></Contents><Contents><Key>caf&#233;&#x2F;x</Key><Size>3</Size>"
      "</Contents><NextContinuationToken>t&#43;1</NextContinuationToken><Empty/>"
      "<Prefix attr=\"1\">p/</Prefix></ListBucketResult>";
  const auto contents = XmlElements(xml, "Contents");
  REQUIRE(contents.size() == 2);
  CHECK(XmlFirst(contents[0], "Key") == "a&b<c>\"'.npz");
  CHECK(XmlFirst(contents[1], "Key") == "caf\xc3\xa9/x");
  CHECK(XmlFirst(xml, "Key") == "a&b<c>\"'.npz");  // not <KeyCount>
  CHECK(XmlFirst(xml, "KeyCount") == "2");
  CHECK(XmlFirst(xml, "NextContinuationToken") == "t+1");
  CHECK(XmlFirst(xml, "Empty") == "");
  CHECK(XmlFirst(xml, "Prefix") == "p/");
  CHECK(!XmlFirst(xml, "Missing").has_value());
  CHECK(XmlUnescape("&bogus; & &#xZZ;") == "&bogus; & &#xZZ;");
  CHECK(XmlEscape("\"a\"&<b>'") == "&quot;a&quot;&amp;&lt;b&gt;&#39;");
  CHECK(XmlUnescape(XmlEscape("<a b='c'>&")) == "<a b='c'>&");
}

}  // namespace
}  // namespace dlio::s3
