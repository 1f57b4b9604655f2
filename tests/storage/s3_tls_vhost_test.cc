// The s3 storage over https and with virtual-host addressing, against s3rver: TLS verification is
// on by default and fails against a CA the system does not know, naming the endpoint; the CA
// bundle option (or $AWS_CA_BUNDLE) makes it pass; s3_verify_tls: false skips it. Virtual-host
// requests go to <bucket>.s3.localhost (curl resolves *.localhost to the loopback address).
#include <stdlib.h>

#include <catch2/catch.hpp>

#include "dlio/s3_stats.h"
#include "dlio/str_cat.h"
#include "s3_server.h"
#include "storage/s3/s3_options.h"
#include "storage/s3/s3_storage.h"

namespace dlio {
namespace {

using testing::kS3Bucket;
using testing::kS3rverKey;
using testing::S3Server;
using testing::S3ServerOptions;

StorageOptions Options(const std::string& endpoint) {
  StorageOptions o;
  o.name = "s3";
  o.backends.Get<S3Options>().endpoint_url = endpoint;
  o.backends.Get<S3Options>().access_key_id = kS3rverKey;
  o.backends.Get<S3Options>().secret_access_key = kS3rverKey;
  o.backends.Get<S3Options>().max_attempts = 2;
  return o;
}

std::unique_ptr<Storage> Make(const StorageOptions& o) {
  auto s = NewS3Storage(o);
  REQUIRE(s.ok());
  return std::move(*s);
}

// s3rver over https with a certificate the system's CAs do not vouch for; $AWS_CA_BUNDLE unset.
S3Server TlsServer() {
  unsetenv("AWS_CA_BUNDLE");
  S3ServerOptions tls;
  tls.tls = true;
  return S3Server(tls);
}

// Writes `objects` small objects under `dir`, reads each back and lists the folder.
void RoundTrip(Storage* s, const std::string& dir, int objects) {
  std::vector<std::string> names;
  for (int i = 0; i < objects; ++i) {
    const std::string name = StrCat("f", i, ".bin");
    const std::string bytes = StrCat("object ", i, " of ", dir);
    auto f = s->Open(dir + "/" + name, OpenMode::kWrite);
    REQUIRE(f.ok());
    REQUIRE((*f)->WriteAt(0, bytes.data(), bytes.size()).ok());
    REQUIRE((*f)->Close().ok());
    auto r = s->Open(dir + "/" + name, OpenMode::kRead);
    INFO(r.status().message());
    REQUIRE(r.ok());
    std::string back(bytes.size(), '\0');
    REQUIRE((*r)->ReadExactAt(0, back.size(), back.data()).ok());
    CHECK(back == bytes);
    names.push_back(name);
  }
  auto listed = s->List(dir);
  INFO(listed.status().message());
  REQUIRE(listed.ok());
  CHECK(*listed == names);
}

TEST_CASE("s3 tls: verification is on by default and names the endpoint when it fails") {
  testing::SkipWithoutS3rver();
  S3Server server = TlsServer();
  REQUIRE(server.endpoint().rfind("https://127.0.0.1:", 0) == 0);
  auto s = Make(Options(server.endpoint()));
  auto f = s->Open(std::string(kS3Bucket) + "/obj", OpenMode::kRead);
  REQUIRE(!f.ok());
  const std::string m = f.status().message();
  CHECK_THAT(m, Catch::Contains("bucket 'dlio-test' key 'obj'"));
  CHECK_THAT(m, Catch::Contains("at " + server.endpoint() + "/dlio-test/obj"));
  CHECK_THAT(m, Catch::Contains("TLS certificate verification"));
  CHECK_THAT(m, Catch::Contains("certificate"));
  CHECK_THAT(m, Catch::Contains("s3_ca_bundle"));
}

TEST_CASE("s3 tls: the CA bundle option, or $AWS_CA_BUNDLE, makes verification pass") {
  testing::SkipWithoutS3rver();
  S3Server server = TlsServer();
  StorageOptions o = Options(server.endpoint());
  o.backends.Get<S3Options>().ca_bundle = server.ca_file();
  auto s = Make(o);
  RoundTrip(s.get(), std::string(kS3Bucket) + "/tls", 3);
  // The environment variable, as the AWS CLI reads it.
  setenv("AWS_CA_BUNDLE", server.ca_file().c_str(), 1);
  auto from_env = Make(Options(server.endpoint()));
  unsetenv("AWS_CA_BUNDLE");
  RoundTrip(from_env.get(), std::string(kS3Bucket) + "/env", 2);
  // A bundle that does not exist is an error naming the file.
  o.backends.Get<S3Options>().ca_bundle = server.directory() + "/no-such-ca.pem";
  auto missing = Make(o);
  const Status st = missing->Open(std::string(kS3Bucket) + "/tls/f0.bin", OpenMode::kRead).status();
  CHECK(!st.ok());
  CHECK_THAT(st.message(), Catch::Contains("no-such-ca.pem"));
}

TEST_CASE("s3 tls: s3_verify_tls false talks to a server whose CA is unknown") {
  testing::SkipWithoutS3rver();
  S3Server server = TlsServer();
  StorageOptions o = Options(server.endpoint());
  o.backends.Get<S3Options>().verify_tls = false;
  auto s = Make(o);
  RoundTrip(s.get(), std::string(kS3Bucket) + "/noverify", 2);
}

TEST_CASE("s3 virtual-host addressing: requests go to <bucket>.s3.localhost") {
  testing::SkipWithoutS3rver();
  S3ServerOptions so;
  so.service_endpoint = "localhost";
  S3Server server(so);
  StorageOptions o = Options("http://s3.localhost:" + std::to_string(server.port()));
  o.backends.Get<S3Options>().force_path_style = false;
  auto s = Make(o);
  RoundTrip(s.get(), std::string(kS3Bucket) + "/vhost/data", 4);
  CHECK(*s->List(std::string(kS3Bucket) + "/vhost") == std::vector<std::string>{"data"});
  // The objects landed in the bucket (path style, by another client, sees them).
  StorageOptions path = Options(server.endpoint());
  auto p = Make(path);
  CHECK(*p->FileSize(std::string(kS3Bucket) + "/vhost/data/f3.bin") ==
        std::string("object 3 of dlio-test/vhost/data").size());
  // Every request went through the virtual-host client: 4 PUTs, 4 HEADs at open, 4 GETs.
  const S3Stats st = S3StatsOf(s.get())->TakeS3Stats();
  CHECK(st.put == 4);
  CHECK(st.get == 4);
  CHECK(st.head == 4);
  CHECK(st.errors == 0);
}

}  // namespace
}  // namespace dlio
