// dataset.parquet.*: the MLPerf Storage v3.0 configs' keys parse into the config and reach the
// format's options; what dlio cannot honour is refused by name, by the config (the keys) or by
// the parquet format's registry entry (its codecs and columns, run by ValidateCapabilities).
#include <catch2/catch.hpp>

#include "dlio/config.h"
#include "dlio/registries.h"
#include "format/parquet/parquet_options.h"

namespace dlio {
namespace {

constexpr char kFlux[] = R"(
dataset:
  format: parquet
  num_files_train: 2
  num_samples_per_file: 288
  compression: zstd
  parquet:
    row_group_size: 48
    read_mode: row_group
    generation_batch_size: 96
    columns:
      - name: t5_encodings
        dtype: float32
        size: 524328
      - name: timestamp
        dtype: float32
        size: 7
        read: false
)";

TEST_CASE("dataset.parquet keys parse as the v3.0 configs spell them", "[config][parquet]") {
  auto c = ParseConfig(kFlux, "flux.yaml");
  REQUIRE(c.ok());
  const ParquetOptions d = c->dataset.formats.Value<ParquetOptions>();
  CHECK(d.row_group_size == 48);
  CHECK(d.read_mode == "row_group");
  CHECK(d.generation_batch_size == 96);
  REQUIRE(d.columns.size() == 2);
  CHECK(d.columns[0].name == "t5_encodings");
  CHECK(d.columns[0].dtype == "float32");
  CHECK(d.columns[0].size == 524328);
  CHECK(d.columns[0].read);
  CHECK_FALSE(d.columns[1].read);
  CHECK(c->Validate().ok());
}

TEST_CASE("dataset.parquet.use_dictionary defaults to pyarrow's true", "[config][parquet]") {
  auto c = ParseConfig(kFlux, "flux.yaml");
  REQUIRE(c.ok());
  CHECK(c->dataset.formats.Value<ParquetOptions>().use_dictionary);
  auto off =
      ParseConfig("dataset:\n  format: parquet\n  parquet:\n    use_dictionary: false\n", "p.yaml");
  REQUIRE(off.ok());
  CHECK_FALSE(off->dataset.formats.Value<ParquetOptions>().use_dictionary);
}

// The first refusal of a run's checks: parsing, Validate, then ValidateCapabilities.
std::string Error(const std::string& yaml) {
  auto c = ParseConfig(yaml, "p.yaml");
  if (!c.ok()) return c.status().message();
  Status st = c->Validate();
  if (!st.ok()) return st.message();
  Registries registries;
  REQUIRE(RegisterBuiltins(&registries).ok());
  st = ValidateCapabilities(*c, registries);
  return st.ok() ? "" : st.message();
}

TEST_CASE("dataset.parquet refusals name the key", "[config][parquet]") {
  const std::string head = "dataset:\n  format: parquet\n  parquet:\n";
  CHECK(Error(head + "    columns:\n      - {name: a, dims: [2, 3]}\n") ==
        "unknown key 'dataset.parquet.columns[0].dims' (in p.yaml line 5) (a parquet column "
        "takes name, dtype, size, read)");
  CHECK(Error(head + "    columns:\n      - {name: a, dtype: bool}\n") ==
        "dataset.parquet.columns[0].dtype: 'bool' is not one of uint8/16/32/64, int8/16/32/64, "
        "float16/32/64, binary, string (in p.yaml line 5)");
  CHECK(Error(head + "    columns:\n      - {name: a}\n      - {name: a}\n") ==
        "dataset.parquet.columns[1].name: 'a' repeats (in p.yaml line 5)");
  CHECK(Error(head + "    columns:\n      - {name: a, size: 0}\n") ==
        "dataset.parquet.columns[0].size must be at least 1 (in p.yaml line 5)");
  CHECK(Error(head + "    columns:\n      - {name: a, read: false}\n") ==
        "dataset.parquet.columns: no column has read: true");
  CHECK(Error(head + "    partition_by: day\n") ==
        "dataset.parquet.partition_by 'day': hive-partitioned parquet datasets are not supported");
  CHECK(Error(head + "    read_mode: streaming\n").find("dataset.parquet.read_mode") == 0);
  CHECK(Error(head + "    use_dictionary: sometimes\n").find("dataset.parquet.use_dictionary") ==
        0);
  CHECK(Error("dataset:\n  format: parquet\n  compression: lz4\n") ==
        "dataset.compression 'lz4' is not supported by format parquet (none, snappy, gzip, zstd)");
  // Those two are the parquet entry's rules: a config naming another format is not asked them.
  CHECK(Error("dataset:\n  format: npy\n  parquet:\n    columns:\n      - {name: a, read: false}\n")
            .empty());
}

}  // namespace
}  // namespace dlio
