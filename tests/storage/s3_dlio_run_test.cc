// dlio-run on the s3 storage against s3rver (tests/storage/s3_server.h): every format generated
// onto S3 is byte-identical to the same generation on posix and trains; a checkpoint of more
// than 100 MB is saved and loaded through multipart uploads; a missing bucket and a server killed
// mid-run end the run with an error naming what failed (the commands run under `timeout`); the
// per-epoch s3 statistics count what a tiny run must send; a run through a proxy that throttles
// every 10th request (fault_proxy.h) does the same work; https with a CA bundle or without
// verification.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "fault_proxy.h"
#include "s3_server.h"
#include "storage/s3/s3_options.h"
#include "storage/s3/s3_storage.h"
#include "test_util.h"

namespace dlio {
namespace {

namespace fs = std::filesystem;
using testing::RunCommand;
using testing::S3Server;
using testing::TempDir;

using dlio::testing::DlioRun;

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
  S3Options& s3 = o.backends.Get<S3Options>();
  s3.endpoint_url = server.endpoint();
  s3.access_key_id = s3.secret_access_key = testing::kS3rverKey;
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
      const std::string trace = testing::ReadTextFile(out + "/trace-0-of-1.pfw");
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

// Three npy files of one 20000-byte sample, read with the native model. In epoch 1, per file one
// HEAD (the open) and two GETs (the npy header's first 4096 bytes, then the sample); in epoch 2
// the files are still open, their headers known: one GET of the sample each. No listing in an
// epoch (the files were listed before).
std::string TinyNpy(const std::string& out) {
  return " --quiet --set dataset.format=npy --set dataset.data_folder=data --set output.folder=" +
         out +
         " --set dataset.num_files_train=3 --set dataset.num_samples_per_file=1"
         " --set dataset.record_length_bytes=20000 --set reader.batch_size=1"
         " --set reader.io_model=native --set train.epochs=2 --set train.computation_time=0.0005";
}

TEST_CASE("per-epoch s3 statistics count the epoch's requests, bytes and GET latencies") {
  testing::SkipWithoutS3rver();
  S3Server server;
  TempDir dir;
  const std::string args = S3Args(server, std::string(testing::kS3Bucket) + "/stats");
  auto gen = RunCommand("timeout 60 " + DlioRun() + args + TinyNpy(dir / "gen") +
                        " --generate --no-train");
  INFO(gen.output);
  REQUIRE(gen.exit_code == 0);
  auto r = RunCommand("timeout 60 " + DlioRun() + args + TinyNpy(dir / "out") + " --trace");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("train epoch 1: 3 steps") != std::string::npos);
  CHECK(r.output.find("train epoch 1: 3 steps") != std::string::npos);
  CHECK(r.output.find(", s3 9 requests (0 retries)") != std::string::npos);
  CHECK(r.output.find(", s3 3 requests (0 retries)") != std::string::npos);
  // The trace's GetObject events of the training files: both epochs' GETs and bytes.
  int traced_gets = 0;
  uint64_t traced_bytes = 0;
  std::istringstream trace(testing::ReadTextFile(dir / "out/trace-0-of-1.pfw"));
  for (std::string line; std::getline(trace, line);) {
    if (line.find("\"GetObject\"") == std::string::npos) continue;
    if (line.find("/train/") == std::string::npos) continue;
    ++traced_gets;
    traced_bytes +=
        nlohmann::json::parse(line.substr(0, line.rfind('}') + 1))["args"]["ret"].get<uint64_t>();
  }
  CHECK(traced_gets == 6 + 3);
  CHECK(traced_bytes == 3 * (4096 + 20000) + 3 * 20000);
  auto per_epoch = nlohmann::json::parse(testing::ReadTextFile(dir / "out/0_per_epoch_stats.json"));
  auto summary = nlohmann::json::parse(testing::ReadTextFile(dir / "out/summary.json"));
  REQUIRE(summary["s3"]["epochs"].size() == 2);
  for (const int epoch : {1, 2}) {
    const auto& s = per_epoch[std::to_string(epoch)]["s3"];
    INFO(epoch << ": " << s.dump());
    const uint64_t gets = epoch == 1 ? 6 : 3, heads = epoch == 1 ? 3 : 0;
    CHECK(s["get"] == gets);
    CHECK(s["head"] == heads);
    CHECK(s["list"] == 0);
    CHECK(s["put"] == 0);
    CHECK(s["multipart"] == 0);
    CHECK(s["requests"] == gets + heads);
    CHECK(s["retries"] == 0);
    CHECK(s["errors"] == 0);
    CHECK(s["bytes_down"] == (epoch == 1 ? 3 * (4096 + 20000) : 3 * 20000));
    CHECK(s["bytes_up"] == 0);
    const double p50 = s["get_latency_ms"]["p50"], p90 = s["get_latency_ms"]["p90"],
                 p99 = s["get_latency_ms"]["p99"];
    CHECK(p50 > 0);
    CHECK(p50 <= p90);
    CHECK(p90 <= p99);
    auto same = summary["s3"]["epochs"][epoch - 1];
    CHECK(same["epoch"] == epoch);
    same.erase("epoch");
    CHECK(same == s);
  }
}

TEST_CASE("a training run through a proxy that throttles every 10th request completes") {
  testing::SkipWithoutS3rver();
  S3Server server;
  testing::FaultProxy proxy(server.port());
  TempDir dir;
  const std::string root = std::string(testing::kS3Bucket) + "/throttled";
  const std::string many = " --set dataset.num_files_train=20 --set train.epochs=2";
  auto gen = RunCommand("timeout 60 " + DlioRun() + S3Args(server, root) + TinyNpy(dir / "gen") +
                        many + " --generate --no-train");
  INFO(gen.output);
  REQUIRE(gen.exit_code == 0);
  auto clean = RunCommand("timeout 120 " + DlioRun() + S3Args(server, root) +
                          TinyNpy(dir / "clean") + many + " --no-generate");
  INFO(clean.output);
  REQUIRE(clean.exit_code == 0);
  testing::FaultRule every10th;
  every10th.fault = testing::Fault::kSlowDown503;
  every10th.every = 10;
  proxy.SetRule(every10th);
  // Through the proxy (the endpoint given last wins), with backoff from 50 ms as configured.
  auto throttled = RunCommand(
      "timeout 300 " + DlioRun() + S3Args(server, root) + TinyNpy(dir / "throttled") + many +
      " --no-generate --set storage.storage_options.endpoint_url=" + proxy.endpoint() +
      " --set storage.storage_options.s3_max_attempts=5");
  INFO(throttled.output);
  REQUIRE(throttled.exit_code == 0);
  CHECK(proxy.requests() > 80);
  CHECK(proxy.injected() == proxy.requests() / 10);
  auto a = nlohmann::json::parse(testing::ReadTextFile(dir / "clean/summary.json"));
  auto b = nlohmann::json::parse(testing::ReadTextFile(dir / "throttled/summary.json"));
  // The same work: the same bytes and logical requests per epoch, the same samples; only the
  // throttled run retried.
  uint64_t retries = 0;
  for (size_t e = 0; e < 2; ++e) {
    const auto& x = a["s3"]["epochs"][e];
    const auto& y = b["s3"]["epochs"][e];
    INFO(x.dump() << " vs " << y.dump());
    CHECK(y["bytes_down"] == x["bytes_down"]);
    CHECK(y["bytes_down"] == (e == 0 ? 20 * (4096 + 20000) : 20 * 20000));
    CHECK(y["requests"].get<uint64_t>() - y["retries"].get<uint64_t>() == x["requests"]);
    CHECK(y["errors"] == 0);
    CHECK(x["retries"] == 0);
    retries += y["retries"].get<uint64_t>();
  }
  CHECK(retries > 0);
  CHECK(retries <= static_cast<uint64_t>(proxy.injected()));
  CHECK(b["io"]["read_bytes"] == a["io"]["read_bytes"]);
  CHECK(throttled.output.find("train epoch 2: 20 steps") != std::string::npos);
}

TEST_CASE("dlio-run over https: the CA bundle key, and verification off with a warning") {
  testing::SkipWithoutS3rver();
  testing::S3ServerOptions tls;
  tls.tls = true;
  S3Server server(tls);
  TempDir dir;
  const std::string root = std::string(testing::kS3Bucket) + "/tls";
  const std::string gen = " --generate --no-train --set train.epochs=1";
  auto unknown =
      RunCommand("timeout 60 " + DlioRun() + S3Args(server, root) + TinyNpy(dir / "unknown") + gen);
  INFO(unknown.output);
  CHECK(unknown.exit_code != 0);
  CHECK(unknown.output.find("TLS certificate verification") != std::string::npos);
  CHECK(unknown.output.find(server.endpoint()) != std::string::npos);
  auto bundle =
      RunCommand("timeout 60 " + DlioRun() + S3Args(server, root) + TinyNpy(dir / "bundle") + gen +
                 " --set storage.storage_options.s3_ca_bundle=" + server.ca_file());
  INFO(bundle.output);
  CHECK(bundle.exit_code == 0);
  auto off = RunCommand("timeout 60 " + DlioRun() + S3Args(server, root) + TinyNpy(dir / "off") +
                        " --set train.epochs=1 --set storage.storage_options.s3_verify_tls=false");
  INFO(off.output);
  REQUIRE(off.exit_code == 0);
  auto summary = nlohmann::json::parse(testing::ReadTextFile(dir / "off/summary.json"));
  CHECK(summary["warnings"].dump().find("s3_verify_tls is false") != std::string::npos);
  CHECK(summary["s3"]["epochs"][0]["get"] == 6);
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
  // The server is killed once the run has written its first checkpoint object (seen in
  // s3rver's directory), so the run is training whatever the load: a kill after a fixed delay
  // could land before training on a loaded machine. Requests then meet reused connections the
  // server dropped under them (a PUT must rewind its body to be sent again) and, after that,
  // refused connections.
  const fs::path checkpoints = fs::path(server.directory()) / testing::kS3Bucket / "killed";
  std::atomic<bool> run_over{false}, checkpoint_seen{false};
  std::thread killer([&] {
    while (!run_over && !checkpoint_seen) {
      std::error_code ec;
      for (fs::recursive_directory_iterator it(checkpoints, ec), end; !ec && it != end;
           it.increment(ec)) {
        if (it->path().string().find("ckpt-") != std::string::npos) checkpoint_seen = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    server.Stop();
  });
  auto killed = RunCommand("timeout 60 " + DlioRun() + args + " --no-generate");
  run_over = true;
  killer.join();
  INFO(killed.output);
  REQUIRE(checkpoint_seen);
  CHECK(killed.exit_code != 0);
  CHECK(killed.exit_code != 124);
  // The request that failed (a read or a checkpoint's write) names the bucket, the key, the
  // endpoint and the retries.
  CHECK(killed.output.find("s3 ") != std::string::npos);
  CHECK(killed.output.find("bucket 'dlio-test' key 'killed/") != std::string::npos);
  CHECK(killed.output.find("at http://127.0.0.1:" + std::to_string(server.port())) !=
        std::string::npos);
  CHECK(killed.output.find("Couldn't connect to server (after 3 attempts)") != std::string::npos);
}

// The layout of DLIO's *_s3.yaml (unet3d_h100_s3.yaml and its siblings), shrunk: data_folder
// s3://<bucket>, storage_root the same bucket, DLIO's storage_options keys.
std::string UpstreamS3Yaml(const S3Server& server, const std::string& type) {
  const std::string bucket = testing::kS3Bucket;
  return "model: {name: unet3d, type: cnn, model_size: 499153191}\n"
         "framework: pytorch\n"
         "workflow: {generate_data: True, train: True, checkpoint: False}\n"
         "dataset:\n"
         "  data_folder: s3://" +
         bucket + "/" + type +
         "\n"
         "  format: npz\n  num_files_train: 168\n  num_samples_per_file: 1\n"
         "  record_length_bytes: 146600628\n  record_length_bytes_stdev: 0\n"
         "  record_length_bytes_resize: 2097152\n"
         "storage:\n  storage_type: " +
         type + "\n  storage_root: " + bucket +
         "\n"
         "  storage_options:\n    access_key_id: S3RVER\n    secret_access_key: S3RVER\n"
         "    endpoint_url: " +
         server.endpoint() +
         "\n    region: us-east-1\n"
         "    s3_force_path_style: True\n    s3_max_attempts: 5\n"
         "reader: {data_loader: pytorch, batch_size: 7, read_threads: 4, file_shuffle: seed, "
         "sample_shuffle: seed}\n"
         "train: {epochs: 5, computation_time: 0.636}\n"
         "metric: {au: 0.90}\n";
}

TEST_CASE(
    "DLIO's upstream S3 configs (data_folder s3://bucket) generate and train on s3 and aistore") {
  testing::SkipWithoutS3rver();
  S3Server server;
  TempDir dir;
  auto s3 = Client(server);
  for (const std::string type : {"s3", "aistore"}) {
    DYNAMIC_SECTION(type) {
      const std::string yaml = dir / (type + ".yaml");
      testing::WriteTextFile(yaml, UpstreamS3Yaml(server, type));
      const std::string shrink =
          " --quiet --set dataset.num_files_train=4 --set dataset.record_length_bytes=4096"
          " --set dataset.record_length_bytes_resize=4096 --set reader.batch_size=2"
          " --set reader.read_threads=1 --set train.epochs=1 --set train.computation_time=0";
      auto r = RunCommand("timeout 120 " + DlioRun() + " --config " + yaml + shrink +
                          " --set output.folder=" + dir / ("out-" + type));
      INFO(r.output);
      REQUIRE(r.exit_code == 0);
      CHECK(r.output.find("train epoch 1: 2 steps") != std::string::npos);
      // The bucket is the URL's, the keys DLIO's file names under its prefix (not "s3:/...").
      const std::string train = std::string(testing::kS3Bucket) + "/" + type + "/train";
      auto names = s3->List(train);
      REQUIRE(names.ok());
      CHECK(*names == std::vector<std::string>{"img_0_of_4.npz", "img_1_of_4.npz", "img_2_of_4.npz",
                                               "img_3_of_4.npz"});
      // A subset of the dataset on S3, found by listing, a stray object beside it ignored.
      auto stray = s3->Open(train + "/notes.txt", OpenMode::kWrite);
      REQUIRE(stray.ok());
      REQUIRE((*stray)->Close().ok());
      auto subset = RunCommand("timeout 120 " + DlioRun() + " --config " + yaml + shrink +
                               " --set dataset.num_files_train=2 --no-generate --set "
                               "output.folder=" +
                               dir / ("subset-" + type));
      INFO(subset.output);
      REQUIRE(subset.exit_code == 0);
      CHECK(subset.output.find("train epoch 1: 1 steps") != std::string::npos);
    }
  }
}

}  // namespace
}  // namespace dlio
