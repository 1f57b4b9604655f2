// Parsing of the storage section's keys: DLIO's configs for other storage systems, and the s3
// backend's storage.storage_options (declared by the backend, storage/s3/s3_keys.cc).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "dlio/config.h"
#include "storage/s3/s3_options.h"

namespace dlio {
namespace {

TEST_CASE("DLIO configs for other storage systems parse (daos, fsspec, s3dlio)") {
  const char* daos = R"(model:
  name: default
framework: pytorch
storage:
  storage_type: "daos_pytorch"
  storage_root: "/"
  fsspec_plugin: local_fs
  fsspec_extra_params: {param1: abc}
dataset:
  data_folder: /data/default
  format: npz
  record_length: 4096
  daos_pool: default-pool
  daos_cont: samples
reader: {data_loader: daos_pytorch, batch_size: 32, read_threads: 4, prefetch_size: 0,
         read_type: on_demand}
checkpoint:
  checkpoint_folder: /checkpoints
  checkpoint_daos_pool: default-pool
  checkpoint_mechanism: pt_adls_save
  checkpoint_mechanism_classname: a.b.C
profiling:
  profiler: none
logging:
  verbosity: INFO
)";
  std::vector<std::string> warnings;
  auto c = ParseConfig(daos, "daos_pytorch.yaml", WorkloadConfig(), &warnings);
  REQUIRE(c.ok());
  CHECK(c->storage.storage_type == "daos_pytorch");  // the storage registry rejects it at run time
  CHECK(c->storage.storage_root == "/");
  CHECK(c->reader.prefetch_size == 0);
  CHECK(warnings.size() == 8);  // profiling.profiler is a key of its own (none): no warning

  WorkloadConfig o;
  warnings.clear();
  REQUIRE(ApplyOverride(&o, "++workload.storage.storage_options.storage_library=direct", &warnings)
              .ok());
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("part of 'storage.storage_options'") != std::string::npos);
}

TEST_CASE("storage.storage_options: the s3 keys are set, DLIO's others warn") {
  const char* text = R"(storage:
  storage_type: s3
  storage_root: bucket/prefix
  storage_options:
    endpoint_url: http://127.0.0.1:9000
    access_key_id: AK
    secret_access_key: SK
    region: eu-west-1
    s3_force_path_style: false
    s3_part_size_mib: 16
    storage_library: s3torchconnector
)";
  std::vector<std::string> warnings;
  auto c = ParseConfig(text, "s3.yaml", WorkloadConfig(), &warnings);
  REQUIRE(c.ok());
  CHECK(c->storage.storage_type == "s3");
  const S3Options s3 = c->storage.backends.Value<S3Options>();
  CHECK(s3.endpoint_url == "http://127.0.0.1:9000");
  CHECK(s3.access_key_id == "AK");
  CHECK(s3.secret_access_key == "SK");
  CHECK(s3.region == "eu-west-1");
  CHECK(!s3.force_path_style);
  CHECK(s3.part_size_mib == 16);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("'storage.storage_options.storage_library'") != std::string::npos);
  // Exported configs (the run's config.json) name the key id but not the secret.
  const std::string json = ConfigToJson(*c);
  CHECK(json.find("\"access_key_id\": \"AK\"") != std::string::npos);
  CHECK(json.find("\"secret_access_key\": \"<redacted>\"") != std::string::npos);
  CHECK(json.find("\"SK\"") == std::string::npos);
  auto bad = ParseConfig("storage: {storage_options: {s3_part_size_mib: 1}}", "bad.yaml",
                         WorkloadConfig(), &warnings);
  REQUIRE(!bad.ok());
  CHECK(bad.status().message().find("storage.storage_options.s3_part_size_mib") !=
        std::string::npos);
}

}  // namespace
}  // namespace dlio
