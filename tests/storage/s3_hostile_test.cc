// The s3 client against a hostile server: s3rver behind the fault proxy (fault_proxy.h), which
// answers listings with pages of the test's own (a continuation token that repeats, tokens
// without end, XML that is cut short, nested without end or declares entities, keys outside the
// prefix), falsifies range answers (another Content-Range, a short body, the whole object for a
// range), sends huge headers, or accepts a request and never answers. Every one ends in an error
// naming the request, or in the right bytes; none loops, hangs or trains on wrong bytes.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "dlio/storage.h"
#include "fault_proxy.h"
#include "s3_server.h"
#include "storage/s3/s3_client.h"
#include "storage/s3/s3_options.h"
#include "storage/s3/s3_storage.h"

namespace dlio {
namespace {

using testing::Fault;
using testing::FaultRule;
using testing::kS3Bucket;

// A client through `proxy` that gives up soon: 3 attempts, 1 ms apart.
std::shared_ptr<s3::S3Client> Through(const testing::FaultProxy& proxy,
                                      uint64_t max_list_pages = 100000) {
  s3::S3ClientConfig c;
  c.endpoint = proxy.endpoint();
  c.credentials = {testing::kS3rverKey, testing::kS3rverKey, ""};
  c.max_attempts = 3;
  c.retry_base_ms = 1;
  c.max_list_pages = max_list_pages;
  auto made = s3::S3Client::Make(c);
  REQUIRE(made.ok());
  return std::shared_ptr<s3::S3Client>(std::move(*made));
}

// s3rver, the proxy in front of it and a client through the proxy; the test is skipped (77)
// without s3rver.
struct Hostile {
  explicit Hostile(uint64_t max_list_pages = 100000)
      : proxy(server.port()), client(Through(proxy, max_list_pages)) {}
  bool skipped = (testing::SkipWithoutS3rver(), false);  // first: before the server starts
  testing::S3Server server;
  testing::FaultProxy proxy;
  std::shared_ptr<s3::S3Client> client;
};

FaultRule Canned(std::string body, int first = 50) {
  FaultRule r;
  r.fault = Fault::kCannedBody;
  r.first = first;  // then s3rver's own answers: a client that does not stop ends (and fails)
  r.path_contains = "list-type=2";
  r.body = std::move(body);
  return r;
}

FaultRule OnGets(Fault fault, int first) {
  FaultRule r;
  r.fault = fault;
  r.first = first;
  r.method = "GET";
  r.path_contains = "/obj";
  return r;
}

std::string Page(const std::string& inner) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>dlio-test"
         "</Name><Prefix>p/</Prefix>" +
         inner + "</ListBucketResult>";
}

std::string ListError(s3::S3Client* client) {
  auto listed = client->List(kS3Bucket, "p/", "");
  REQUIRE_FALSE(listed.ok());
  const std::string m = listed.status().message();
  CHECK_THAT(m, Catch::Contains("s3 LIST bucket 'dlio-test' prefix 'p/'"));
  return m;
}

TEST_CASE("s3 hostile: a listing that repeats its continuation token is an error, not a loop") {
  Hostile h;
  testing::FaultProxy& proxy = h.proxy;
  s3::S3Client* client = h.client.get();
  REQUIRE(client->Put(kS3Bucket, "p/a", "x").ok());
  proxy.SetRule(
      Canned(Page("<Contents><Key>p/a</Key><Size>1</Size></Contents>"
                  "<IsTruncated>true</IsTruncated>"
                  "<NextContinuationToken>same</NextContinuationToken>")));
  const std::string m = ListError(client);
  CHECK_THAT(m, Catch::Contains("repeated the continuation token 'same' after 2 pages"));
  CHECK(proxy.requests() == 2);
}

TEST_CASE("s3 hostile: a listing of more pages than max_list_pages is an error") {
  Hostile h(/*max_list_pages=*/10);
  testing::FaultProxy& proxy = h.proxy;
  s3::S3Client* client = h.client.get();
  FaultRule endless;
  endless.fault = Fault::kListEndless;
  endless.first = 50;
  proxy.SetRule(endless);
  CHECK_THAT(ListError(client), Catch::Contains("more than 10 pages of keys"));
  // 10 pages, then no more. A page's request may be retried once or twice (the client's 3
  // attempts) when its connection drops under a loaded host (seen once in a full-suite run).
  CHECK(proxy.requests() >= 10);
  CHECK(proxy.requests() <= 30);
}

TEST_CASE("s3 hostile: a malformed listing is an error saying what is malformed") {
  Hostile h;
  testing::FaultProxy& proxy = h.proxy;
  s3::S3Client* client = h.client.get();
  REQUIRE(client->Put(kS3Bucket, "p/a", "x").ok());
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "<a>";
  const std::string laughs =
      "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 "
      "\"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]><ListBucketResult><Contents><Key>p/&lol2;"
      "</Key><Size>1</Size></Contents><IsTruncated>false</IsTruncated></ListBucketResult>";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"this is no XML", "malformed XML at byte 0: text outside the root element"},
      {"<ListBucketResult><Contents><Key>p/a</Key>", "<Contents> is not closed (the body ends"},
      {Page("<Contents><Size>1</Size></Contents><IsTruncated>false</IsTruncated>"),
       "<Contents> 1 has no <Key>"},
      {Page("<Contents><Key>p/a</Key><Size>-1</Size></Contents><IsTruncated>false</IsTruncated>"),
       "the <Size> '-1', not a byte count"},
      {Page("<Contents><Key>p/a</Key><Size>99999999999999999999</Size></Contents>"
            "<IsTruncated>false</IsTruncated>"),
       "not a byte count"},
      {Page("<Contents><Key>elsewhere</Key><Size>1</Size></Contents>"
            "<IsTruncated>false</IsTruncated>"),
       "<Contents> 1's <Key> 'elsewhere' is not under the prefix asked for"},
      {Page("<IsTruncated>maybe</IsTruncated>"), "<IsTruncated> is 'maybe'"},
      {Page("<IsTruncated>true</IsTruncated>"), "without NextContinuationToken"},
      {Page(""), "no <IsTruncated>"},
      {"<Error><Code>x</Code></Error>", "the root element is <Error>"},
      {deep, "elements nested deeper than 16"},
      {laughs, "a DOCTYPE, entity declaration or CDATA section"},
  };
  for (const auto& [body, what] : cases) {
    INFO(body.substr(0, 200));
    proxy.SetRule(Canned(body));
    const std::string m = ListError(client);
    CHECK_THAT(m, Catch::Contains("malformed listing (page 1): "));
    CHECK_THAT(m, Catch::Contains(what));
    CHECK(m.size() < 400);
  }
}

TEST_CASE("s3 hostile: the storage's listing of a malformed page is an error, not a crash") {
  testing::SkipWithoutS3rver();
  testing::S3Server server;
  testing::FaultProxy proxy(server.port());
  auto storage = NewS3StorageOn(Through(proxy), uint64_t{5} << 20);
  REQUIRE(storage->CreateDirs(std::string(kS3Bucket) + "/deep/er").ok());
  // A prefix shorter than the folder's: its name was cut out of the key with substr (throws).
  proxy.SetRule(
      Canned(Page("<CommonPrefixes><Prefix>d</Prefix></CommonPrefixes>"
                  "<IsTruncated>false</IsTruncated>")));
  auto listed = storage->List(std::string(kS3Bucket) + "/deep/er");
  REQUIRE_FALSE(listed.ok());
  CHECK_THAT(listed.status().message(),
             Catch::Contains("s3 LIST bucket 'dlio-test' prefix 'deep/er/': malformed listing"));
  CHECK_THAT(listed.status().message(), Catch::Contains("<Prefix> 'd' is not under the prefix"));
}

TEST_CASE("s3 hostile: dlio-run's generation fails at a malformed listing, naming the listing") {
  testing::SkipWithoutS3rver();
  testing::S3Server server;
  testing::FaultProxy proxy(server.port());
  testing::TempDir dir;
  proxy.SetRule(
      Canned(Page("<Contents><Size>1</Size></Contents><IsTruncated>false</IsTruncated>"), 1000));
  auto r = testing::RunCommand(
      "timeout 60 " + std::string(DLIO_BINARY_DIR) +
      "/apps/dlio-run/dlio-run --quiet --generate --no-train --set storage.storage_type=s3"
      " --set storage.storage_root=dlio-test/gen --set storage.storage_options.endpoint_url=" +
      proxy.endpoint() +
      " --set storage.storage_options.access_key_id=S3RVER"
      " --set storage.storage_options.secret_access_key=S3RVER --set dataset.format=npy"
      " --set dataset.data_folder=data --set output.folder=" +
      dir / "out" +
      " --set dataset.num_files_train=2 --set dataset.num_samples_per_file=1"
      " --set dataset.record_length_bytes=4096 2>&1");
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(r.exit_code != 124);  // not the timeout
  CHECK_THAT(r.output, Catch::Contains("s3 LIST bucket 'dlio-test' prefix 'gen/data/"));
  CHECK_THAT(r.output, Catch::Contains("malformed listing (page 1): <Contents> 1 has no <Key>"));
  CHECK_THAT(r.output, !Catch::Contains(".tmp"));
}

TEST_CASE("s3 hostile: an error body's code and message are bounded and control characters shown") {
  Hostile h;
  testing::FaultProxy& proxy = h.proxy;
  s3::S3Client* client = h.client.get();
  FaultRule r = Canned("<Error><Code>Access\x1b[31mDenied</Code><Message>" +
                       std::string(100000, 'm') + "\nforged log line</Message></Error>");
  r.status = 403;
  proxy.SetRule(r);
  auto listed = client->List(kS3Bucket, "p/", "");
  REQUIRE_FALSE(listed.ok());
  const std::string m = listed.status().message();
  CHECK_THAT(m, Catch::Contains("HTTP 403 Access\\x1b[31mDenied (mmm"));
  CHECK(m.find('\x1b') == std::string::npos);
  CHECK(m.find('\n') == std::string::npos);
  CHECK(m.size() < 800);
}

std::string Object() { return testing::PatternBytes(300000, 7); }

TEST_CASE(
    "s3 hostile: a 206 for other bytes than asked is retried, then an error naming the range") {
  Hostile h;
  testing::FaultProxy& proxy = h.proxy;
  s3::S3Client* client = h.client.get();
  const std::string bytes = Object();
  REQUIRE(client->Put(kS3Bucket, "obj", bytes).ok());
  for (const Fault fault : {Fault::kShiftRange, Fault::kShortBody}) {
    std::string buf(100, '\0');
    proxy.SetRule(OnGets(fault, 1));  // once: the retry gets the right bytes
    auto got = client->GetRange(kS3Bucket, "obj", 1000, buf.size(), buf.data());
    REQUIRE(got.ok());
    CHECK(*got == buf.size());
    CHECK(buf == bytes.substr(1000, 100));
    CHECK(proxy.injected() == 1);
    CHECK(proxy.requests() == 2);

    proxy.SetRule(OnGets(fault, 1000));  // every time
    got = client->GetRange(kS3Bucket, "obj", 1000, buf.size(), buf.data());
    REQUIRE_FALSE(got.ok());
    const std::string m = got.status().message();
    CHECK_THAT(m, Catch::Contains("s3 GET bucket 'dlio-test' key 'obj' range bytes=1000-1099: "
                                  "the server's 206 "));
    CHECK_THAT(m, Catch::Contains(fault == Fault::kShiftRange
                                      ? "is for another range: Content-Range 'bytes 1001-1100/"
                                      : "body holds 50 bytes, its Content-Range 'bytes "
                                        "1000-1099/300000' 100"));
    CHECK_THAT(m, Catch::Contains("(after 3 attempts)"));
    CHECK(proxy.injected() == 3);
  }
}

TEST_CASE(
    "s3 hostile: a 200 to a range GET: the slice of the whole object, an error if not whole") {
  Hostile h;
  testing::FaultProxy& proxy = h.proxy;
  s3::S3Client* client = h.client.get();
  const std::string bytes = Object();
  REQUIRE(client->Put(kS3Bucket, "obj", bytes).ok());
  proxy.SetRule(OnGets(Fault::kIgnoreRange, 1000));
  struct Case {
    uint64_t offset;
    size_t n, expect;
  };
  for (const Case c :
       {Case{0, 10, 10}, Case{123456, 50000, 50000}, Case{299990, 100, 10}, Case{300000, 10, 0}}) {
    std::string buf(c.n, '\0');
    auto got = client->GetRange(kS3Bucket, "obj", c.offset, c.n, buf.data());
    INFO(c.offset << " " << got.status().message());
    REQUIRE(got.ok());
    CHECK(*got == c.expect);
    CHECK(buf.substr(0, c.expect) == bytes.substr(c.offset, c.expect));
  }
  CHECK(proxy.injected() == 4);
  CHECK(client->counts().retries == 0);
  // A server that sends a range's bytes as "200 OK": not the whole object (its Content-Length is
  // not the object's size, known from the HEAD of an opened file), so not taken for it.
  proxy.SetRule(OnGets(Fault::kRangeAs200, 1000));
  auto storage = NewS3StorageOn(h.client, uint64_t{5} << 20);
  auto file = storage->Open(std::string(kS3Bucket) + "/obj", OpenMode::kRead);
  REQUIRE(file.ok());
  std::string buf(100, '\0');
  auto got = (*file)->ReadAt(1000, buf.size(), buf.data());
  REQUIRE_FALSE(got.ok());
  CHECK_THAT(got.status().message(),
             Catch::Contains("s3 GET bucket 'dlio-test' key 'obj' range bytes=1000-1099: the "
                             "server's 200 (the whole object, the range ignored) has 100 bytes, "
                             "the object 300000 (its HEAD) (after 3 attempts)"));
}

TEST_CASE("s3 hostile: oversized response headers are an error saying so") {
  Hostile h;
  testing::FaultProxy& proxy = h.proxy;
  s3::S3Client* client = h.client.get();
  REQUIRE(client->Put(kS3Bucket, "obj", "bytes").ok());
  for (const Fault fault : {Fault::kHugeHeader, Fault::kManyHeaders}) {
    proxy.SetRule(OnGets(fault, 1000));
    char buf[5];
    auto got = client->GetRange(kS3Bucket, "obj", 0, sizeof buf, buf);
    REQUIRE_FALSE(got.ok());
    const std::string m = got.status().message();
    INFO(m);
    CHECK_THAT(m, Catch::Contains("s3 GET bucket 'dlio-test' key 'obj'"));
    CHECK_THAT(m, Catch::Contains(fault == Fault::kHugeHeader
                                      ? "a response header is too large"
                                      : "the response's headers are larger than 64 KiB"));
    CHECK_THAT(m, !Catch::Contains("Out of memory"));
    CHECK(proxy.injected() == 1);  // not retried: a server that does this does it again
  }
}

TEST_CASE(
    "s3 hostile: a server that accepts a request and never answers trips the low-speed limit") {
  testing::SkipWithoutS3rver();
  testing::S3Server server;
  testing::FaultProxy proxy(server.port());
  s3::S3ClientConfig c;
  c.endpoint = proxy.endpoint();
  c.credentials = {testing::kS3rverKey, testing::kS3rverKey, ""};
  c.max_attempts = 2;
  c.retry_base_ms = 1;
  c.request_timeout_s = 120;  // far longer than the limit: the limit must end each attempt
  c.low_speed_time_s = 1;
  auto client = s3::S3Client::Make(c);
  REQUIRE(client.ok());
  FaultRule stall;
  stall.fault = Fault::kStall;
  stall.first = 1000;
  proxy.SetRule(stall);
  const auto start = std::chrono::steady_clock::now();
  auto head = (*client)->Head(kS3Bucket, "obj");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE_FALSE(head.ok());
  const std::string m = head.status().message();
  INFO(m);
  CHECK_THAT(m, Catch::Contains("s3 HEAD bucket 'dlio-test' key 'obj'"));
  CHECK_THAT(m,
             Catch::Contains("no progress for 1 s (storage.storage_options.s3_low_speed_time_s)"));
  CHECK_THAT(m, Catch::Contains("(after 2 attempts)"));
  CHECK(proxy.injected() == 2);
  CHECK(s >= 2);  // a lower bound: each attempt waited out its second
}

TEST_CASE("s3 hostile: the storage's timeouts and low-speed limit are checked, naming the key") {
  StorageOptions o;
  S3Options& s3 = o.backends.Get<S3Options>();
  s3.access_key_id = s3.secret_access_key = "k";
  s3.endpoint_url = "http://127.0.0.1:1";
  auto refused = [&](const char* key) {
    auto s = NewS3Storage(o);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.status().message(),
               Catch::Contains(std::string("storage.storage_options.") + key));
    s3 = S3Options{};
    s3.access_key_id = s3.secret_access_key = "k";
  };
  s3.low_speed_bytes_s = 0;
  refused("s3_low_speed_bytes_s: 0 is outside 1 to 2^30 bytes per second");
  s3.low_speed_time_s = 7200;
  refused("s3_low_speed_time_s: 7200 is outside 0 to 3600 seconds");
  s3.connect_timeout_s = 0;
  refused("s3_connect_timeout_s: 0 is outside (0, 3600] seconds");
  s3.request_timeout_s = -1;
  refused("s3_request_timeout_s: -1 is outside [0, 86400] seconds");
  CHECK(NewS3Storage(o).ok());
}

}  // namespace
}  // namespace dlio
