// The s3 storage against a real S3 server (s3rver on 127.0.0.1, tests/storage/s3_server.h):
// objects, range reads, listing with pagination, multipart uploads, renames, and the errors for
// a missing bucket, a wrong key and a server that went away.
#include "storage/s3/s3_storage.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <numeric>

#include "dlio/registries.h"
#include "s3_server.h"
#include "storage/s3/s3_client.h"
#include "storage/s3/s3_options.h"

namespace dlio {
namespace {

using testing::kS3Bucket;
using testing::kS3rverKey;
using testing::S3Server;

StorageOptions Options(const S3Server& server) {
  StorageOptions o;
  o.name = "s3";
  S3Options& s3 = o.backends.Get<S3Options>();
  s3.endpoint_url = server.endpoint();
  s3.access_key_id = kS3rverKey;
  s3.secret_access_key = kS3rverKey;
  s3.max_attempts = 3;
  s3.part_size_mib = 5;
  return o;
}

std::unique_ptr<Storage> Make(const StorageOptions& o) {
  auto s = NewS3Storage(o);
  REQUIRE(s.ok());
  return std::move(*s);
}

Status Put(Storage* s, const std::string& path, const std::string& bytes) {
  DLIO_ASSIGN_OR_RETURN(auto f, s->Open(path, OpenMode::kWrite));
  DLIO_RETURN_NOT_OK(f->WriteAt(0, bytes.data(), bytes.size()));
  return f->Close();
}

std::string Get(Storage* s, const std::string& path) {
  auto f = s->Open(path, OpenMode::kRead);
  REQUIRE(f.ok());
  auto size = (*f)->Size();
  REQUIRE(size.ok());
  std::string out(*size, '\0');
  REQUIRE((*f)->ReadExactAt(0, out.size(), out.data()).ok());
  return out;
}

TEST_CASE("s3: write, range reads, size, exists, list, rename, remove") {
  testing::SkipWithoutS3rver();
  S3Server server;
  auto s = Make(Options(server));
  const std::string root = std::string(kS3Bucket) + "/run";
  REQUIRE(s->CreateDirs(root + "/train").ok());
  CHECK(*s->IsDirectory(root + "/train"));
  const std::string bytes = testing::PatternBytes(100000, 1);
  REQUIRE(Put(s.get(), root + "/train/a b&c.npz", bytes).ok());
  CHECK(*s->FileSize(root + "/train/a b&c.npz") == bytes.size());
  CHECK(*s->Exists(root + "/train/a b&c.npz"));
  CHECK(!*s->Exists(root + "/train/missing"));
  {
    auto f = s->Open(root + "/train/a b&c.npz", OpenMode::kRead);
    REQUIRE(f.ok());
    std::string part(1000, '\0');
    REQUIRE((*f)->ReadExactAt(12345, part.size(), part.data()).ok());
    CHECK(part == bytes.substr(12345, 1000));
    auto got = (*f)->ReadAt(bytes.size() - 10, 100, part.data());  // short at the end
    REQUIRE(got.ok());
    CHECK(*got == 10);
    CHECK(*(*f)->ReadAt(bytes.size() + 5, 10, part.data()) == 0);
  }
  REQUIRE(Put(s.get(), root + "/train/b.npz", "b").ok());
  REQUIRE(Put(s.get(), root + "/train/sub/c.npz", "c").ok());
  CHECK(*s->List(root + "/train") == std::vector<std::string>{"a b&c.npz", "b.npz", "sub"});
  CHECK(*s->List(root) == std::vector<std::string>{"train"});
  REQUIRE(s->Rename(root + "/train/b.npz", root + "/train/d.npz").ok());
  CHECK(!*s->Exists(root + "/train/b.npz"));
  CHECK(Get(s.get(), root + "/train/d.npz") == "b");
  CHECK(s->Open(root + "/train/d.npz", OpenMode::kCreateNew).status().code() ==
        StatusCode::kAlreadyExists);
  REQUIRE(s->Remove(root + "/train/d.npz").ok());
  CHECK(s->Remove(root + "/train/d.npz").code() == StatusCode::kNotFound);
  CHECK(s->Open(root + "/train/d.npz", OpenMode::kRead).status().code() == StatusCode::kNotFound);
  CHECK(s->RemoveEmptyDir(root + "/train").code() == StatusCode::kIOError);  // not empty
  // Counters and the trace category.
  const IoStats st = s->stats();
  CHECK(st.read_bytes >= 1000 + 10);
  CHECK(st.write_bytes >= bytes.size());
}

TEST_CASE("s3: listing follows continuation tokens across pages") {
  testing::SkipWithoutS3rver();
  S3Server server;
  const StorageOptions o = Options(server);
  s3::S3ClientConfig c;
  c.endpoint = o.backends.Value<S3Options>().endpoint_url;
  c.credentials = {kS3rverKey, kS3rverKey, ""};
  auto client = s3::S3Client::Make(c);
  REQUIRE(client.ok());
  for (int i = 0; i < 7; ++i) {
    REQUIRE((*client)->Put(kS3Bucket, "p/k" + std::to_string(i), "x").ok());
  }
  auto all = (*client)->List(kS3Bucket, "p/", "", 0, /*page_size=*/2);
  INFO(all.status().message());
  REQUIRE(all.ok());
  REQUIRE(all->objects.size() == 7);
  CHECK(all->objects[6].first == "p/k6");
  CHECK(all->objects[6].second == 1);
}

TEST_CASE("s3: a file larger than a part goes up as a multipart upload, read back exactly") {
  testing::SkipWithoutS3rver();
  S3Server server;
  auto s = Make(Options(server));
  const std::string path = std::string(kS3Bucket) + "/ckpt/model.pt";
  const std::string bytes =
      testing::PatternBytes((size_t{23} << 20) + 12345, 7);  // 4 full parts and a tail
  {
    auto f = s->Open(path, OpenMode::kWrite);
    REQUIRE(f.ok());
    const size_t chunk = size_t{1} << 20;
    for (size_t at = 0; at < bytes.size(); at += chunk) {
      const size_t n = std::min(chunk, bytes.size() - at);
      REQUIRE((*f)->WriteAt(at, bytes.data() + at, n).ok());
    }
    REQUIRE((*f)->WriteAt(3, "HDR", 3).ok());  // a header patched at the end (part 1 is kept)
    REQUIRE((*f)->Close().ok());
  }
  std::string expect = bytes;
  expect.replace(3, 3, "HDR");
  CHECK(*s->FileSize(path) == expect.size());
  CHECK(Get(s.get(), path) == expect);

  // The same through a client whose requests are counted: 5 parts (5 MiB x 4 + the tail), two of
  // them sent while the file was being written (part 1 and one part of slack stay in memory),
  // and one completion.
  s3::S3ClientConfig c;
  c.endpoint = server.endpoint();
  c.credentials = {kS3rverKey, kS3rverKey, ""};
  auto made = s3::S3Client::Make(c);
  REQUIRE(made.ok());
  std::shared_ptr<s3::S3Client> client = std::move(*made);
  auto counted = NewS3StorageOn(client, uint64_t{5} << 20);
  auto opened = counted->Open(std::string(kS3Bucket) + "/ckpt/counted", OpenMode::kWrite);
  REQUIRE(opened.ok());
  File* f = opened->get();
  const size_t half = bytes.size() / 2;
  REQUIRE(f->WriteAt(0, bytes.data(), half).ok());
  CHECK(client->counts().parts_uploaded == 0);  // 11.5 MiB: part 1 and < 2 parts of tail
  REQUIRE(f->WriteAt(half, bytes.data() + half, bytes.size() - half).ok());
  CHECK(client->counts().parts_uploaded == 2);  // parts 2 and 3 went while writing
  REQUIRE(f->Close().ok());
  CHECK(client->counts().parts_uploaded == 5);
  CHECK(client->counts().multipart_completed == 1);
  CHECK(client->counts().retries == 0);
  CHECK(Get(s.get(), std::string(kS3Bucket) + "/ckpt/counted") == bytes);
  // A write into a part already sent is refused, naming the object and the offset.
  auto opened_g = counted->Open(std::string(kS3Bucket) + "/ckpt/g", OpenMode::kWrite);
  REQUIRE(opened_g.ok());
  File* g = opened_g->get();
  REQUIRE(g->WriteAt(0, bytes.data(), bytes.size()).ok());
  const Status back = g->WriteAt(uint64_t{6} << 20, "x", 1);
  CHECK(back.code() == StatusCode::kUnimplemented);
  CHECK_THAT(back.message(), Catch::Contains("s3://dlio-test/ckpt/g at offset 6291456"));
}

TEST_CASE("s3: a missing bucket is named") {
  testing::SkipWithoutS3rver();
  S3Server server;
  auto s = Make(Options(server));
  const Status st = s->CreateDirs("no-such-bucket/data");
  CHECK(st.code() == StatusCode::kNotFound);
  CHECK_THAT(st.message(), Catch::Contains("bucket 'no-such-bucket' does not exist"));
  auto f = s->Open("no-such-bucket/x", OpenMode::kWrite);
  REQUIRE(f.ok());
  const Status put = (*f)->Close();
  CHECK_THAT(put.message(), Catch::Contains("bucket 'no-such-bucket' key 'x'"));
  CHECK_THAT(put.message(), Catch::Contains("NoSuchBucket"));
}

// s3rver checks the access key id but not V4 signatures (its authentication.js: "Signature
// version 4 calculation is unimplemented"), so a wrong secret passes there; the signatures
// themselves are checked against AWS's examples in s3_sigv4_test.
TEST_CASE("s3: a wrong access key is refused with the HTTP status and S3's code") {
  testing::SkipWithoutS3rver();
  S3Server server;
  StorageOptions o = Options(server);
  o.backends.Get<S3Options>().access_key_id = "NOSUCHKEY";
  auto s = Make(o);
  const Status put = Put(s.get(), std::string(kS3Bucket) + "/k", "bytes");
  CHECK(put.code() == StatusCode::kIOError);
  CHECK_THAT(put.message(), Catch::Contains("s3 PUT bucket 'dlio-test' key 'k': HTTP 403"));
  CHECK_THAT(put.message(), Catch::Contains("InvalidAccessKeyId"));
  auto listing = s->List(std::string(kS3Bucket) + "/dir");
  CHECK_THAT(listing.status().message(),
             Catch::Contains("s3 LIST bucket 'dlio-test' prefix 'dir/': HTTP 403"));
  CHECK_THAT(listing.status().message(), Catch::Contains("InvalidAccessKeyId"));
}

TEST_CASE("s3: a server that went away mid-run is an error after the retries, not a hang") {
  testing::SkipWithoutS3rver();
  S3Server server;
  auto s = Make(Options(server));
  const std::string path = std::string(kS3Bucket) + "/obj";
  REQUIRE(Put(s.get(), path, testing::PatternBytes(4096, 3)).ok());
  auto f = s->Open(path, OpenMode::kRead);
  REQUIRE(f.ok());
  server.Stop();
  const auto start = std::chrono::steady_clock::now();
  char buf[16];
  auto got = (*f)->ReadAt(0, sizeof buf, buf);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(!got.ok());
  CHECK_THAT(got.status().message(), Catch::Contains("s3 GET bucket 'dlio-test' key 'obj'"));
  CHECK_THAT(got.status().message(), Catch::Contains("after 3 attempts"));
  CHECK(seconds < 10);
}

TEST_CASE("s3: registered, declares no host files or mapping, refuses a bad part size") {
  Registries registries;
  REQUIRE(RegisterBuiltins(&registries).ok());
  StorageOptions o;
  o.name = "s3";
  auto caps = StorageCapabilitiesFor(o, registries.storages);
  REQUIRE(caps.ok());
  CHECK(!caps->host_files);
  CHECK(!caps->map_files);
  CHECK(!caps->shared_write);
  o.backends.Get<S3Options>().access_key_id = o.backends.Get<S3Options>().secret_access_key = "k";
  o.backends.Get<S3Options>().part_size_mib = 1;
  CHECK_THAT(NewS3Storage(o).status().message(), Catch::Contains("s3_part_size_mib"));
}

}  // namespace
}  // namespace dlio
