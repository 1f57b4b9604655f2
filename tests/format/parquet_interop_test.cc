// parquet interop with an independent implementation: hyparquet (JavaScript, with
// hyparquet-compressors for snappy/gzip/zstd) reads dlio's files column by column (dictionary
// pages, index pages and PLAIN pages after a fallback, and PLAIN-only files), and dlio reads
// (inspect, train) a file hyparquet-writer wrote: OPTIONAL columns, dictionary pages, data pages
// v2, snappy, and columns in every value encoding hyparquet-writer has (BOOLEAN, DELTA_*,
// BYTE_STREAM_SPLIT). Values are compared as the bytes a PLAIN page stores (tests/format/
// parquet_interop.mjs). DuckDB (@duckdb/node-api, tests/format/parquet_duckdb.mjs) sums dlio's
// columns, and dlio reads files DuckDB's COPY wrote, PARQUET_VERSION v2 ones (DELTA_*,
// BYTE_STREAM_SPLIT, BOOLEAN) value by value under LZ4_RAW. Skipped (77) without node and
// `./setup.sh test`'s .tools/node_modules; the DuckDB cases warn and pass without DuckDB.
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "format/format_test_util.h"
#include "format/parquet_test_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

std::string Tools() { return std::string(DLIO_SOURCE_DIR) + "/.tools"; }

void SkipWithoutHyparquet() {
  struct stat st {};
  const bool node = RunCommand("command -v node >/dev/null 2>&1").exit_code == 0;
  const bool mods = stat((Tools() + "/node_modules/hyparquet-writer").c_str(), &st) == 0 &&
                    stat((Tools() + "/node_modules/hyparquet-compressors").c_str(), &st) == 0;
  if (node && mods) return;
  std::fprintf(stderr,
               "skipped: no %s (needs node and `npm install --prefix %s/.tools hyparquet "
               "hyparquet-compressors hyparquet-writer`, which `./setup.sh test` does)\n",
               node ? "hyparquet in .tools" : "node", DLIO_SOURCE_DIR);
  std::exit(77);
}

bool HaveDuckdb() {
  struct stat st {};
  if (stat((Tools() + "/node_modules/@duckdb/node-api").c_str(), &st) == 0) return true;
  WARN("no @duckdb/node-api in .tools (./setup.sh test installs it): DuckDB case not run");
  return false;
}

nlohmann::json Node(const std::string& mode, const std::string& file, const TempDir& tmp,
                    const char* script = "parquet_interop.mjs") {
  const std::string out = tmp / "node.json";
  const std::string cmd = "DLIO_TOOLS_DIR=" + Tools() + " node " + DLIO_SOURCE_DIR +
                          "/tests/format/" + script + " " + mode + " " + file + " > " + out;
  CommandResult r = RunCommand(cmd);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(ReadTextFile(out));
}

template <typename T>
T LoadAs(const uint8_t** p) {
  T v;
  std::memcpy(&v, *p, sizeof(T));
  *p += sizeof(T);
  return v;
}

std::string Hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}

// Writes `rows` rows of `o`'s columns with `seed` to `path` with dlio's writer.
void WriteRows(Storage* storage, const std::string& path, const FormatOptions& o, uint64_t rows,
               uint64_t seed) {
  FileSpec spec;
  spec.sample_sizes.assign(rows, 0);
  spec.seed = seed;
  REQUIRE(MakeFormatByName("parquet")->Write(storage, path, spec, o).ok());
}

// hyparquet reads the file dlio wrote at `path` with `o`: `rows` rows, every `step`th checked.
void CheckWithHyparquet(const std::string& path, const FormatOptions& o, uint64_t rows,
                        uint64_t seed, uint64_t step, const TempDir& tmp) {
  const nlohmann::json got = Node("read", path, tmp);
  CHECK(got["num_rows"] == rows);
  auto layout = format_internal::parquet::WriterLayout(ParquetOf(o), 0).value();
  REQUIRE(got["columns"].size() == layout.size());
  for (size_t c = 0; c < layout.size(); ++c) {
    const auto& values = got["columns"][layout[c].name];
    REQUIRE(values.size() == rows);
    std::string v(layout[c].width != 0 ? layout[c].width : layout[c].value_size, '\0');
    for (uint64_t row = 0; row < rows; row += step) {
      format_internal::parquet::FillColumnValue(layout[c], c, seed, row,
                                                reinterpret_cast<uint8_t*>(v.data()));
      INFO("column " << layout[c].name << " row " << row);
      CHECK(values[row] == Hex(reinterpret_cast<const uint8_t*>(v.data()), v.size()));
    }
  }
}

TEST_CASE("hyparquet reads dlio's files column by column", "[format][parquet][interop]") {
  SkipWithoutHyparquet();
  TempDir tmp;
  auto storage = BoundPosixStorage();
  for (const bool dictionary : {true, false}) {
    for (const char* codec : {"none", "snappy", "gzip", "zstd"}) {
      INFO("codec " << codec << ", use_dictionary " << dictionary);
      FormatOptions o = AllKindsOptions(codec, 64);
      ParquetOf(o).use_dictionary = dictionary;
      const std::string path = tmp / (std::string(codec) + (dictionary ? "_d" : "_p") + ".parquet");
      WriteRows(storage.get(), path, o, 300, 77);
      CheckWithHyparquet(path, o, 300, 77, 13, tmp);
    }
  }
}

// One row group of 140,000 rows: column s (16-byte dictionary entries) falls back to PLAIN after
// row 66,144, column x (8 bytes) after row 131,264 (parquet_layout_test.cc computes such cases):
// dictionary page, index pages and PLAIN pages in each chunk.
FormatOptions FallbackOptions(const char* codec) {
  FormatOptions o;
  o.compression = codec;
  ParquetOf(o).row_group_size = 140000;
  ParquetOf(o).columns = {{"x", "int64", 1, true}, {"s", "string", 12, true}};
  return o;
}

TEST_CASE("hyparquet reads chunks whose dictionary fell back to PLAIN",
          "[format][parquet][interop]") {
  SkipWithoutHyparquet();
  TempDir tmp;
  auto storage = BoundPosixStorage();
  for (const char* codec : {"none", "zstd"}) {
    INFO("codec " << codec);
    const FormatOptions o = FallbackOptions(codec);
    const std::string path = tmp / (std::string(codec) + ".parquet");
    WriteRows(storage.get(), path, o, 140000, 19);
    CheckWithHyparquet(path, o, 140000, 19, 997, tmp);
  }
}

// Reads each column of `wrote["columns"]` alone with dlio (the row is then that column's value)
// and compares every `step`th row's bytes with the hex the writer printed; a null ("") is
// `null_width[name]` zero bytes (0 for byte arrays).
void CheckColumns(const std::string& path, const nlohmann::json& wrote, uint64_t rows,
                  uint64_t step, const std::map<std::string, size_t>& null_width = {}) {
  auto storage = BoundPosixStorage();
  auto format = MakeFormatByName("parquet");
  for (const auto& [name, values] : wrote["columns"].items()) {
    FormatOptions o;
    ParquetOf(o).columns.push_back({name, "float32", 1, true});
    auto r = format->Open(storage.get(), path, o);
    INFO("column " << name << ": " << r.status().ToString());
    REQUIRE(r.ok());
    REQUIRE((*r)->num_samples() == rows);
    REQUIRE(values.size() == rows);
    SampleBuffer buf;
    for (uint64_t row = 0; row < rows; row += step) {
      const Status st = (*r)->ReadSample(row, &buf);
      INFO("row " << row << ": " << st.ToString());
      REQUIRE(st.ok());
      std::string want = values[row];
      if (want.empty() && null_width.count(name)) want.assign(2 * null_width.at(name), '0');
      CHECK(Hex(buf.data(), buf.size()) == want);
    }
  }
}

TEST_CASE("dlio reads hyparquet-writer's file: values, inspect and a short train",
          "[format][parquet][interop]") {
  SkipWithoutHyparquet();
  TempDir tmp;
  const std::string dir = tmp / "data/train";
  REQUIRE(RunCommand("mkdir -p " + dir).exit_code == 0);
  const std::string path = dir + "/img_0_of_1.parquet";
  const nlohmann::json wrote = Node("write", path, tmp);
  CheckColumns(path, wrote, 2500, 7, {{"opt", 4}});
  CommandResult inspect = RunCommand(DlioRun() + " inspect " + path + " 2>&1");
  INFO(inspect.output);
  CHECK(inspect.exit_code == 0);
  CHECK(inspect.output.find("\"created_by\":\"hyparquet\"") != std::string::npos);
  CHECK(inspect.output.find("\"num_rows\":2500") != std::string::npos);
  CommandResult train = RunCommand(
      DlioRun() + " --no-generate -q -o " + tmp.path() + "/out --set dataset.format=parquet" +
      " --set dataset.data_folder=" + tmp.path() + "/data --set dataset.num_files_train=1" +
      " --set dataset.num_samples_per_file=2500 --set reader.batch_size=100" +
      " --set train.epochs=1 --set train.computation_time=0 --set workflow.train=true 2>&1");
  INFO(train.output);
  CHECK(train.exit_code == 0);
  CHECK(train.output.find("25 steps") != std::string::npos);
}

// Sums of each column of `path` as dlio's reader returns them: a row is its columns' values
// concatenated, each `widths[c]` bytes, int32/int64 exact, float/double as doubles.
// Exact sums of 3,000 int64 values (GCC's 128-bit integer, as DuckDB's HUGEINT).
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

struct Sums {
  std::vector<Int128> ints;
  std::vector<double> floats;
};
Sums SumWithDlio(const std::string& path, const std::vector<std::string>& kinds) {
  auto storage = BoundPosixStorage();
  auto r = MakeFormatByName("parquet")->Open(storage.get(), path, FormatOptions());
  REQUIRE(r.ok());
  Sums s{std::vector<Int128>(kinds.size(), 0), std::vector<double>(kinds.size(), 0)};
  SampleBuffer buf;
  for (uint64_t row = 0; row < (*r)->num_samples(); ++row) {
    REQUIRE((*r)->ReadSample(row, &buf).ok());
    const uint8_t* p = buf.data();
    for (size_t c = 0; c < kinds.size(); ++c) {
      if (kinds[c] == "i32") s.ints[c] += LoadAs<int32_t>(&p);
      if (kinds[c] == "i64") s.ints[c] += LoadAs<int64_t>(&p);
      if (kinds[c] == "f32") s.floats[c] += LoadAs<float>(&p);
      if (kinds[c] == "f64") s.floats[c] += LoadAs<double>(&p);
    }
  }
  return s;
}

std::string Text(Int128 v) {
  const bool neg = v < 0;
  std::string out;
  UInt128 u = neg ? -static_cast<UInt128>(v) : static_cast<UInt128>(v);
  do {
    out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  return neg ? "-" + out : out;
}

TEST_CASE("DuckDB reads dlio's files: row counts and column sums", "[format][parquet][interop]") {
  SkipWithoutHyparquet();
  if (!HaveDuckdb()) return;
  TempDir tmp;
  auto storage = BoundPosixStorage();
  for (const char* codec : {"none", "snappy", "zstd"}) {
    INFO("codec " << codec);
    FormatOptions o;
    o.compression = codec;
    ParquetOf(o).row_group_size = 512;
    ParquetOf(o).columns = {{"a", "int32", 1, true},
                            {"b", "int64", 1, true},
                            {"c", "float32", 1, true},
                            {"d", "float64", 1, true}};
    const std::string path = tmp / (std::string(codec) + ".parquet");
    WriteRows(storage.get(), path, o, 3000, 5);
    const Sums want = SumWithDlio(path, {"i32", "i64", "f32", "f64"});
    const nlohmann::json got = Node("sums", path, tmp, "parquet_duckdb.mjs");
    CHECK(got["rows"] == 3000);
    CHECK(got["sums"]["a"] == Text(want.ints[0]));
    CHECK(got["sums"]["b"] == Text(want.ints[1]));
    CHECK(std::stod(got["sums"]["c"].get<std::string>()) == Approx(want.floats[2]).epsilon(1e-6));
    CHECK(std::stod(got["sums"]["d"].get<std::string>()) == Approx(want.floats[3]).epsilon(1e-12));
  }
}

TEST_CASE("DuckDB sums chunks whose dictionary fell back to PLAIN", "[format][parquet][interop]") {
  SkipWithoutHyparquet();
  if (!HaveDuckdb()) return;
  TempDir tmp;
  auto storage = BoundPosixStorage();
  // x (int64) falls back after row 131,264; y (int32, 4-byte entries) keeps its dictionary.
  FormatOptions o = FallbackOptions("snappy");
  ParquetOf(o).columns = {{"x", "int64", 1, true}, {"y", "int32", 1, true}};
  const std::string path = tmp / "fallback.parquet";
  WriteRows(storage.get(), path, o, 140000, 23);
  const Sums want = SumWithDlio(path, {"i64", "i32"});
  const nlohmann::json got = Node("sums", path, tmp, "parquet_duckdb.mjs");
  CHECK(got["rows"] == 140000);
  CHECK(got["sums"]["x"] == Text(want.ints[0]));
  CHECK(got["sums"]["y"] == Text(want.ints[1]));
}

TEST_CASE("dlio reads a file DuckDB's COPY wrote", "[format][parquet][interop]") {
  SkipWithoutHyparquet();
  if (!HaveDuckdb()) return;
  TempDir tmp;
  const std::string path = tmp / "duck.parquet";
  const nlohmann::json wrote = Node("write", path, tmp, "parquet_duckdb.mjs");
  REQUIRE(wrote["rows"] == 5000);
  const Sums got = SumWithDlio(path, {"i32", "i64", "f32", "f64"});
  CHECK(Text(got.ints[0]) == wrote["sums"]["i32"]);
  CHECK(Text(got.ints[1]) == wrote["sums"]["i64"]);
  CHECK(got.floats[2] == Approx(std::stod(wrote["sums"]["f32"].get<std::string>())));
  CHECK(got.floats[3] == Approx(std::stod(wrote["sums"]["f64"].get<std::string>())));
  CommandResult inspect = RunCommand(DlioRun() + " inspect " + path + " 2>&1");
  INFO(inspect.output);
  CHECK(inspect.exit_code == 0);
  CHECK(inspect.output.find("\"num_rows\":5000") != std::string::npos);
}

TEST_CASE("dlio reads hyparquet-writer's columns in every value encoding",
          "[format][parquet][interop]") {
  SkipWithoutHyparquet();
  TempDir tmp;
  const std::string path = tmp / "encodings.parquet";
  // BOOLEAN RLE and PLAIN, DELTA_BYTE_ARRAY, DELTA_LENGTH_BYTE_ARRAY, DELTA_BINARY_PACKED and
  // BYTE_STREAM_SPLIT of INT32, INT64, FLOAT and FIXED_LEN_BYTE_ARRAY(3), in data pages v2.
  const nlohmann::json wrote = Node("encodings", path, tmp);
  REQUIRE(wrote["columns"].size() == 13);
  CheckColumns(path, wrote, 3000, 1, {{"ob_rle", 1}});
}

TEST_CASE("dlio reads DuckDB's PARQUET_VERSION v2 files under LZ4_RAW, LZ4 and SNAPPY",
          "[format][parquet][interop]") {
  SkipWithoutHyparquet();
  if (!HaveDuckdb()) return;
  TempDir tmp;
  for (const std::string codec : {"lz4_raw", "lz4", "snappy"}) {
    INFO("codec " << codec);
    const std::string path = tmp / (codec + ".parquet");
    const nlohmann::json wrote = Node("v2", path + " " + codec, tmp, "parquet_duckdb.mjs");
    REQUIRE(wrote["rows"] == 5000);
    // What DuckDB 1.5 writes (its footer, row group 0): the encodings this test is about.
    const std::string c = codec == "snappy" ? "SNAPPY" : "LZ4_RAW";  // its lz4 is LZ4_RAW
    const std::vector<std::string> chunks = wrote["chunks"];
    for (const std::string want :
         {"i32 DELTA_BINARY_PACKED ", "i64 DELTA_BINARY_PACKED ", "f32 BYTE_STREAM_SPLIT ",
          "f64 BYTE_STREAM_SPLIT ", "b PLAIN ", "ob PLAIN ", "s DELTA_LENGTH_BYTE_ARRAY "}) {
      CHECK(std::find(chunks.begin(), chunks.end(), want + c) != chunks.end());
    }
    CheckColumns(path, wrote, 5000, 1,
                 {{"oi32", 4}, {"ob", 1}, {"i32", 4}, {"i64", 8}, {"f32", 4}, {"f64", 8}});
    if (codec != "lz4_raw") continue;
    CommandResult inspect = RunCommand(DlioRun() + " inspect " + path + " 2>&1");
    INFO(inspect.output);
    CHECK(inspect.exit_code == 0);
    CHECK(inspect.output.find("\"codec\":\"LZ4_RAW\"") != std::string::npos);
    CHECK(inspect.output.find("{\"name\":\"b\",\"type\":\"BOOLEAN\",\"width\":1,"
                              "\"optional\":true") != std::string::npos);
  }
}

}  // namespace
}  // namespace dlio::testing
