// dlio-run on the s3 storage against s3rver (tests/storage/s3_server.h): every format generated
// onto S3 is byte-identical to the same generation on posix and trains; a checkpoint of more
// than 100 MB is saved and loaded through multipart uploads; a missing bucket and a server killed
// mid-run end the run with an error naming what failed (the commands run under `timeout`).
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "s3_server.h"
#include "storage/s3/s3_storage.h"

namespace dlio {
namespace {

namespace fs = std::filesystem;
using testing::RunCommand;
using testing::S3Server;
using testing::TempDir;

std::string DlioRun() { return std::string(DLIO_BINARY_DIR) + "/apps/dlio-run/dlio-run"; }

std::string S3Args(const S3Server& server, const std::string& root) {
  return " --set storage.storage_type=s3 --set storage.storage_root=" + root +
         " --set storage.storage_options.endpoint_url=" + server.endpoint() +
         " --set storage.storage_options.access_key_id=S3RVER"
         " --set storage.storage_options.secret_access_key=S3RVER"
         " --set storage.storage_options.s3_max_attempts=3";
}

std::string Workload(const std::string& format, const std::string& data, const std::string& out) {
  return " --quiet --set dataset.format=" + format + " --set dataset.data_folder=" + data +
         " --set output.folder=" + out +
         " --set dataset.num_files_train=3 --set dataset.num_samples_per_file=1"
         " --set dataset.record_length_bytes=20000 --set reader.batch_size=1"
         " --set train.epochs=1 --set train.computation_time=0.0005";
}

std::unique_ptr<Storage> Client(const S3Server& server) {
  StorageOptions o;
  o.s3.endpoint_url = server.endpoint();
  o.s3.access_key_id = o.s3.secret_access_key = testing::kS3rverKey;
  auto s = NewS3Storage(o);
  REQUIRE(s.ok());
  return std::move(*s);
}

std::string ReadObject(Storage* s, const std::string& path) {
  auto f = s->Open(path, OpenMode::kRead);
  INFO(path << ": " << f.status().message());
  REQUIRE(f.ok());
  std::string bytes(*(*f)->Size(), '\0');
  REQUIRE((*f)->ReadExactAt(0, bytes.size(), bytes.data()).ok());
  return bytes;
}

TEST_CASE("every format generated onto s3 is byte-identical to posix's and trains") {
  testing::SkipWithoutS3rver();
  S3Server server;
  TempDir dir;
  auto s3 = Client(server);
  for (const std::string format :
       {"npz", "npy", "csv", "jpeg", "png", "tfrecord", "indexed_binary", "hdf5"}) {
    DYNAMIC_SECTION(format) {
      const std::string posix_data = dir / ("posix-" + format);
      auto p = RunCommand("timeout 120 " + DlioRun() +
                          Workload(format, posix_data, dir / ("out-p-" + format)) +
                          " --generate --no-train");
      INFO(p.output);
      REQUIRE(p.exit_code == 0);
      const std::string root = std::string(testing::kS3Bucket) + "/" + format;
      const std::string out = dir / ("out-s-" + format);
      auto g = RunCommand("timeout 120 " + DlioRun() + S3Args(server, root) +
                          Workload(format, "data", out) + " --trace");
      INFO(g.output);
      REQUIRE(g.exit_code == 0);
      CHECK(g.output.find("train epoch 1") != std::string::npos);
      // The reads are traced in category S3, as GetObject.
      const std::string trace = testing::ReadTextFile(out + "/trace-0.pfw");
      CHECK(trace.find("\"cat\":\"S3\"") != std::string::npos);
      CHECK(trace.find("\"name\":\"GetObject\"") != std::string::npos);
      int files = 0;
      for (const auto& e : fs::recursive_directory_iterator(posix_data)) {
        const std::string name = e.path().filename().string();
        if (!e.is_regular_file() || name.rfind(".dlio-", 0) == 0) continue;
        const std::string rel = fs::relative(e.path(), posix_data).string();
        INFO(rel);
        CHECK(ReadObject(s3.get(), root + "/data/" + rel) == testing::ReadTextFile(e.path()));
        ++files;
      }
      CHECK(files >= 3);
      // Nothing else was left under the prefix (no staging folders or temporaries).
      auto train = s3->List(root + "/data/train");
      REQUIRE(train.ok());
      for (const auto& name : *train) CHECK(name.find(".dlio-tmp") == std::string::npos);
    }
  }
}

TEST_CASE("a checkpoint of more than 100 MB is saved and loaded through multipart uploads") {
  testing::SkipWithoutS3rver();
  S3Server server;
  TempDir dir;
  const std::string root = std::string(testing::kS3Bucket) + "/ck";
  auto r = RunCommand(
      "timeout 240 " + DlioRun() + S3Args(server, root) +
      " --quiet --set workflow.train=False --set workflow.generate_data=False"
      " --set workflow.checkpoint=True --set checkpoint.type=model"
      " --set checkpoint.model_size_bytes=110MiB --set checkpoint.num_checkpoints_write=1"
      " --set checkpoint.num_checkpoints_read=1 --set checkpoint.checkpoint_folder=ckpt"
      " --set output.folder=" +
      dir / "out");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto summary = nlohmann::json::parse(testing::ReadTextFile(dir / "out/summary.json"));
  INFO(summary["metric"].dump());
  auto s3 = Client(server);
  auto folders = s3->List(root + "/ckpt");
  REQUIRE(folders.ok());
  REQUIRE(!folders->empty());
  uint64_t biggest = 0;
  for (const auto& f : *folders) {
    auto names = s3->List(root + "/ckpt/" + f);
    if (!names.ok()) continue;
    for (const auto& n : *names) {
      auto size = s3->FileSize(root + "/ckpt/" + f + "/" + n);
      if (size.ok()) biggest = std::max(biggest, *size);
    }
  }
  CHECK(biggest >= uint64_t{100} << 20);
  // s3rver keeps the parts of an upload it completed as one object: the multipart upload
  // happened when the object is there whole, which a single PUT of > 100 MB would also give,
  // so the client's counters are checked by the unit test; here the load must read it all.
  CHECK(r.output.find("checkpoint") != std::string::npos);
}

TEST_CASE("a missing bucket and a server killed mid-run end the run naming what failed") {
  testing::SkipWithoutS3rver();
  S3Server server;
  TempDir dir;
  auto missing = RunCommand("timeout 60 " + DlioRun() + S3Args(server, "no-such-bucket/x") +
                            Workload("npz", "data", dir / "out-missing"));
  INFO(missing.output);
  CHECK(missing.exit_code != 0);
  CHECK(missing.exit_code != 124);  // not the timeout
  CHECK(missing.output.find("no-such-bucket") != std::string::npos);

  const std::string root = std::string(testing::kS3Bucket) + "/killed";
  const std::string args = S3Args(server, root) + Workload("npz", "data", dir / "out-killed") +
                           " --set train.epochs=1000 --set train.computation_time=0.005";
  auto gen = RunCommand("timeout 60 " + DlioRun() + args + " --generate --no-train");
  INFO(gen.output);
  REQUIRE(gen.exit_code == 0);
  const std::string kill = "(sleep 2; kill -9 " + std::to_string(server.pid()) + ") & ";
  auto killed = RunCommand("(" + kill + "timeout 60 " + DlioRun() + args +
                           " --no-generate; e=$?; wait; exit $e)");
  INFO(killed.output);
  CHECK(killed.exit_code != 0);
  CHECK(killed.exit_code != 124);
  // The request that failed (a read, a listing or a checkpoint's write, whichever came first)
  // names the bucket, the key or prefix, the endpoint and the retries.
  CHECK(killed.output.find("s3 ") != std::string::npos);
  CHECK((killed.output.find("bucket 'dlio-test' key 'killed/") != std::string::npos ||
         killed.output.find("bucket 'dlio-test' prefix 'killed/") != std::string::npos));
  CHECK(killed.output.find("at http://127.0.0.1:" + std::to_string(server.port())) !=
        std::string::npos);
  CHECK(killed.output.find("Couldn't connect to server (after 3 attempts)") != std::string::npos);
}

}  // namespace
}  // namespace dlio
