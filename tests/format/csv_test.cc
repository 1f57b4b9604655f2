#include <catch2/catch.hpp>
#include <cstring>

#include "dlio/data_source.h"
#include "format/csv/csv_options.h"
#include "format/format_test_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

std::vector<float> ExpectedRow(uint64_t seed, uint64_t row, uint64_t columns) {
  std::vector<float> v(columns);
  format_internal::FillSampleFloats(seed, row, 0, v.data(), v.size());
  return v;
}

std::vector<float> Floats(const SampleBuffer& b) {
  std::vector<float> v(b.size() / sizeof(float));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(float));
  return v;
}

void PutFile(Storage* storage, const std::string& path, const std::string& text) {
  auto file = storage->Open(path, OpenMode::kCreateNew);
  REQUIRE(file.ok());
  REQUIRE((*file)->WriteAt(0, text.data(), text.size()).ok());
  REQUIRE((*file)->Close().ok());
}

std::string FileText(Storage* storage, const std::string& path) {
  auto file = storage->Open(path, OpenMode::kRead);
  REQUIRE(file.ok());
  std::string s(static_cast<size_t>((*file)->Size().value()), '\0');
  REQUIRE((*file)->ReadExactAt(0, s.size(), s.data()).ok());
  return s;
}

Status DecodeText(const Format& csv, const std::string& row, SampleBuffer* out) {
  return csv.Decode(reinterpret_cast<const uint8_t*>(row.data()), row.size(), out);
}

TEST_CASE("csv rows round-trip exactly as float32, with and without a header", "[format][csv]") {
  TempDir tmp;
  auto memory = BoundMemoryStorage();
  auto posix = BoundPosixStorage();
  auto csv = MakeFormatByName("csv");
  REQUIRE(csv->has_decoder());
  REQUIRE_FALSE(csv->exact_sample_sizes());
  for (Storage* storage : {memory.get(), posix.get()}) {
    for (bool header : {false, true}) {
      INFO(storage->name() << " header " << header);
      const std::string path = (storage == posix.get() ? tmp.path() : std::string()) + "/h" +
                               (header ? "1" : "0") + ".csv";
      FileSpec spec;
      spec.seed = 7;
      spec.sample_sizes.assign(7, 1001);  // 250 columns (the odd byte is dropped)
      FormatOptions options;
      options.formats.Get<CsvOptions>().header = header;
      options.transfer_size = 777;
      REQUIRE(csv->Write(storage, path, spec, options).ok());

      const std::string text = FileText(storage, path);
      const std::string first = text.substr(0, text.find('\n'));
      if (header) {
        REQUIRE(first.rfind("c0,c1,c2,", 0) == 0);
        REQUIRE(first.size() > 4);
        REQUIRE(first.substr(first.size() - 5) == ",c249");
      } else {
        REQUIRE(first.rfind("c0", 0) != 0);
      }

      FormatOptions read_options;
      read_options.transfer_size = 777;
      auto reader = csv->Open(storage, path, read_options);
      INFO(reader.status().ToString());
      REQUIRE(reader.ok());
      REQUIRE((*reader)->num_samples() == 7);
      const std::string json = (*reader)->DescribeJson();
      REQUIRE(json.find("\"rows\":7") != std::string::npos);
      REQUIRE(json.find("\"columns\":250") != std::string::npos);
      REQUIRE(json.find(std::string("\"header\":") + (header ? "true" : "false")) !=
              std::string::npos);
      SampleBuffer row, values;
      uint64_t offset = header ? first.size() + 1 : 0;
      for (uint64_t i = 0; i < 7; ++i) {
        REQUIRE((*reader)->ReadSample(i, &row).ok());
        // The sample is the row's text without its line end.
        REQUIRE(BufferString(row) == text.substr(offset, row.size()));
        REQUIRE(text[offset + row.size()] == '\n');
        offset += row.size() + 1;
        REQUIRE(csv->Decode(row.data(), row.size(), &values).ok());
        REQUIRE(values.size() == 250 * sizeof(float));
        REQUIRE(Floats(values) == ExpectedRow(spec.seed, i, 250));
      }
      REQUIRE(offset == text.size());
    }
  }
}

// Seed 7094272 makes value 0 of row 0 exactly 0 (top 24 bits zero): a one-column file without a
// header would start with "0", pandas' default header, and lose that row to it.
TEST_CASE("csv writer never starts a headerless file with pandas' default header",
          "[format][csv]") {
  auto storage = BoundMemoryStorage();
  auto csv = MakeFormatByName("csv");
  FileSpec spec;
  spec.seed = 7094272;
  spec.sample_sizes.assign(3, 4);  // one column
  REQUIRE(ExpectedRow(spec.seed, 0, 1)[0] == 0.0f);
  REQUIRE(csv->Write(storage.get(), "/one.csv", spec, {}).ok());
  CHECK(FileText(storage.get(), "/one.csv").rfind("0.0\n", 0) == 0);
  for (IoModel model : {IoModel::kNative, IoModel::kPandas}) {
    FormatOptions options;
    options.io_model = model;
    auto reader = csv->Open(storage.get(), "/one.csv", options);
    REQUIRE(reader.ok());
    REQUIRE((*reader)->num_samples() == 3);
    SampleBuffer row, value;
    REQUIRE((*reader)->ReadSample(0, &row).ok());
    REQUIRE(csv->Decode(row.data(), row.size(), &value).ok());
    CHECK(Floats(value) == std::vector<float>{0.0f});
  }
}

// reader.io_model native (csv's default, pandas, loads the file whole: tests/io_models).
TEST_CASE("csv sample and scan requests follow transfer_size", "[format][csv][transfer]") {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  auto csv = MakeFormatByName("csv");
  FileSpec spec;
  spec.seed = 1;
  spec.sample_sizes.assign(3, 256 << 10);  // 65536 columns, ~0.7 MB of text per row
  REQUIRE(csv->Write(storage.get(), "/big.csv", spec, {}).ok());
  const uint64_t file_size = storage->FileSize("/big.csv").value();
  REQUIRE(file_size > (1u << 20));  // ~2.7 bytes of text per float32 byte

  auto preads = [&](size_t from) {
    std::vector<TraceEvent> out;
    auto events = tracer.Events();
    for (size_t i = from; i < events.size(); ++i) {
      if (std::string(events[i].name) == "pread") out.push_back(events[i]);
    }
    return out;
  };

  SECTION("transfer_size 0: the scan reads 1 MiB requests, a row is one request") {
    FormatOptions options;
    options.io_model = IoModel::kNative;
    options.transfer_size = 0;
    size_t mark = tracer.Events().size();
    auto reader = csv->Open(storage.get(), "/big.csv", options);
    REQUIRE(reader.ok());
    auto scan = preads(mark);
    REQUIRE(scan.size() == (file_size + (1u << 20) - 1) / (1u << 20));
    for (size_t k = 0; k < scan.size(); ++k) {
      REQUIRE(scan[k].offset == static_cast<int64_t>(k << 20));
      if (k + 1 < scan.size()) REQUIRE(scan[k].count == (1 << 20));
    }
    mark = tracer.Events().size();
    SampleBuffer row;
    REQUIRE((*reader)->ReadSample(2, &row).ok());
    auto reads = preads(mark);
    REQUIRE(reads.size() == 1);
    REQUIRE(reads[0].count == static_cast<int64_t>(row.size()));
    REQUIRE(reads[0].offset + reads[0].count + 1 == static_cast<int64_t>(file_size));
  }

  SECTION("transfer_size 64 KiB: ceil(row / 64 KiB) requests at consecutive offsets") {
    FormatOptions options;
    options.io_model = IoModel::kNative;
    options.transfer_size = 64 << 10;
    size_t mark = tracer.Events().size();
    auto reader = csv->Open(storage.get(), "/big.csv", options);
    REQUIRE(reader.ok());
    auto scan = preads(mark);
    REQUIRE(scan.size() == (file_size + (64u << 10) - 1) / (64u << 10));
    for (const TraceEvent& e : scan) REQUIRE(e.count <= (64 << 10));
    mark = tracer.Events().size();
    const IoStats before = storage->stats();
    SampleBuffer row;
    REQUIRE((*reader)->ReadSample(1, &row).ok());
    const IoStats after = storage->stats();
    REQUIRE(after.read_bytes - before.read_bytes == row.size());
    auto reads = preads(mark);
    REQUIRE(reads.size() == (row.size() + (64u << 10) - 1) / (64u << 10));
    std::sort(reads.begin(), reads.end(),
              [](const TraceEvent& a, const TraceEvent& b) { return a.offset < b.offset; });
    for (size_t k = 0; k + 1 < reads.size(); ++k) {
      REQUIRE(reads[k].count == (64 << 10));
      REQUIRE(reads[k + 1].offset == reads[k].offset + reads[k].count);
    }
    SampleBuffer values;
    REQUIRE(csv->Decode(row.data(), row.size(), &values).ok());
    REQUIRE(Floats(values) == ExpectedRow(spec.seed, 1, 65536));
  }
}

TEST_CASE("csv rejects ragged rows naming file, line and offset", "[format][csv]") {
  auto storage = BoundMemoryStorage();
  auto csv = MakeFormatByName("csv");
  PutFile(storage.get(), "/ragged.csv", "1,2,3\n4,5,6\n7,8\n");
  auto reader = csv->Open(storage.get(), "/ragged.csv", {});
  REQUIRE(reader.status().code() == StatusCode::kCorruption);
  const std::string msg = reader.status().message();
  INFO(msg);
  REQUIRE(msg.find("/ragged.csv") != std::string::npos);
  REQUIRE(msg.find("line 3") != std::string::npos);
  REQUIRE(msg.find("offset 12") != std::string::npos);
  REQUIRE(msg.find("2 columns") != std::string::npos);
}

TEST_CASE("csv Decode names the non-numeric column", "[format][csv]") {
  auto storage = BoundMemoryStorage();
  auto csv = MakeFormatByName("csv");
  PutFile(storage.get(), "/text.csv", "1,2,3\n4,oops,6\n");
  auto reader = csv->Open(storage.get(), "/text.csv", {});
  REQUIRE(reader.ok());
  REQUIRE((*reader)->num_samples() == 2);
  SampleBuffer row, values;
  REQUIRE((*reader)->ReadSample(1, &row).ok());
  Status st = csv->Decode(row.data(), row.size(), &values);
  REQUIRE(st.code() == StatusCode::kCorruption);
  INFO(st.message());
  REQUIRE(st.message().find("column 1") != std::string::npos);
  REQUIRE(st.message().find("'oops'") != std::string::npos);

  REQUIRE(DecodeText(*csv, "1,,3", &values).message().find("column 1") != std::string::npos);
  REQUIRE(DecodeText(*csv, "1,2,1e50", &values).message().find("column 2") != std::string::npos);
  REQUIRE(DecodeText(*csv, "1,2.5.5", &values).code() == StatusCode::kCorruption);
  REQUIRE(DecodeText(*csv, "", &values).code() == StatusCode::kCorruption);
  // What pandas accepts: blanks around fields, a leading '+', exponents, nan and inf.
  REQUIRE(DecodeText(*csv, " +1.5 ,\t-2e-3,nan,inf,7\r", &values).ok());
  const auto v = Floats(values);
  REQUIRE(v.size() == 5);
  REQUIRE(v[0] == 1.5f);
  REQUIRE(v[1] == -2e-3f);
  REQUIRE(v[2] != v[2]);
  REQUIRE(v[3] == std::numeric_limits<float>::infinity());
  REQUIRE(v[4] == 7.0f);
}

TEST_CASE("csv detects a header line, or takes csv_header's word for it", "[format][csv]") {
  auto storage = BoundMemoryStorage();
  auto csv = MakeFormatByName("csv");
  PutFile(storage.get(), "/named.csv", "a,b,c\n1,2,3\n4,5,6\n");
  PutFile(storage.get(), "/plain.csv", "1,2,3\n4,5,6\n");
  PutFile(storage.get(), "/numbered.csv", "0,1,2\n1.5,2.5,3.5\n");  // pandas' default names
  SampleBuffer row;

  auto named = csv->Open(storage.get(), "/named.csv", {});
  REQUIRE(named.ok());
  REQUIRE((*named)->num_samples() == 2);
  REQUIRE((*named)->ReadSample(0, &row).ok());
  REQUIRE(BufferString(row) == "1,2,3");
  REQUIRE((*named)->DescribeJson().find("\"header\":true") != std::string::npos);

  auto plain = csv->Open(storage.get(), "/plain.csv", {});
  REQUIRE(plain.ok());
  REQUIRE((*plain)->num_samples() == 2);
  REQUIRE((*plain)->DescribeJson().find("\"header\":false") != std::string::npos);

  // pandas' default column names are a header (they were read as a data row), with or without
  // its index column; other all-numeric first lines are data unless csv_header says otherwise.
  auto numbered = csv->Open(storage.get(), "/numbered.csv", {});
  REQUIRE(numbered.ok());
  REQUIRE((*numbered)->num_samples() == 1);
  REQUIRE((*numbered)->ReadSample(0, &row).ok());
  REQUIRE(BufferString(row) == "1.5,2.5,3.5");
  CHECK((*numbered)->DescribeJson().find("\"header\":true,\"index_column\":false") !=
        std::string::npos);
  PutFile(storage.get(), "/indexed.csv", ",0,1\n0,1.5,2.5\n1,3.5,4.5\n");
  auto indexed = csv->Open(storage.get(), "/indexed.csv", {});
  REQUIRE(indexed.ok());
  REQUIRE((*indexed)->num_samples() == 2);
  REQUIRE((*indexed)->ReadSample(1, &row).ok());
  REQUIRE(BufferString(row) == "1,3.5,4.5");  // the index stays in the row, as DLIO reads it
  CHECK((*indexed)->DescribeJson().find("\"header\":true,\"index_column\":true") !=
        std::string::npos);
  int k = 0;
  for (const std::string first : {"0,1,3", "1,2,3", "0,01,2", "0, 1,2", "0,1,2.0", "0,1,2,"}) {
    INFO(first);
    const std::string path = "/data" + std::to_string(k++) + ".csv";
    PutFile(storage.get(), path, first + "\n5,6,7" + (first.back() == ',' ? ",\n" : "\n"));
    auto r = csv->Open(storage.get(), path, {});
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    CHECK((*r)->num_samples() == (first.back() == ',' ? 1 : 2));  // an empty field: a header
  }
  FormatOptions with_header;
  with_header.formats.Get<CsvOptions>().header = true;
  auto told = csv->Open(storage.get(), "/plain.csv", with_header);  // a header on csv_header's word
  REQUIRE(told.ok());
  REQUIRE((*told)->num_samples() == 1);
  REQUIRE((*told)->ReadSample(0, &row).ok());
  REQUIRE(BufferString(row) == "4,5,6");

  PutFile(storage.get(), "/short_header.csv", "a,b\n1,2,3\n");
  auto mismatch = csv->Open(storage.get(), "/short_header.csv", {});
  REQUIRE(mismatch.status().code() == StatusCode::kCorruption);
  REQUIRE(mismatch.status().message().find("line 2") != std::string::npos);
}

TEST_CASE("csv handles CRLF, blank lines, a missing final newline and empty files",
          "[format][csv]") {
  auto storage = BoundMemoryStorage();
  auto csv = MakeFormatByName("csv");
  PutFile(storage.get(), "/crlf.csv", "\r\nx,y\r\n1,2\r\n\r\n\n3.25,4");
  FormatOptions options;
  options.transfer_size = 3;  // lines and CRLFs straddle the scan requests
  auto reader = csv->Open(storage.get(), "/crlf.csv", options);
  INFO(reader.status().ToString());
  REQUIRE(reader.ok());
  REQUIRE((*reader)->num_samples() == 2);
  SampleBuffer row, values;
  REQUIRE((*reader)->ReadSample(0, &row).ok());
  REQUIRE(BufferString(row) == "1,2");
  REQUIRE((*reader)->sample_size(1) == 6);
  REQUIRE((*reader)->ReadSample(1, &row).ok());
  REQUIRE(BufferString(row) == "3.25,4");
  REQUIRE(csv->Decode(row.data(), row.size(), &values).ok());
  REQUIRE(Floats(values) == std::vector<float>{3.25f, 4.0f});
  REQUIRE((*reader)->ReadSample(2, &row).code() == StatusCode::kOutOfRange);

  PutFile(storage.get(), "/empty.csv", "");
  auto empty = csv->Open(storage.get(), "/empty.csv", {});
  REQUIRE(empty.ok());
  REQUIRE((*empty)->num_samples() == 0);
  // inspect exits 1 on it: the description lists the problem.
  CHECK((*empty)->DescribeJson().find("\"problems\":[\"/empty.csv: no data rows (samples)\"]") !=
        std::string::npos);
  CHECK((*reader)->DescribeJson().find("problems") == std::string::npos);
  FileSpec none;
  REQUIRE(csv->Write(storage.get(), "/none.csv", none, {}).ok());
  REQUIRE(storage->FileSize("/none.csv").value() == 0);
}

TEST_CASE("csv writer needs one sample size per file and cleans up", "[format][csv]") {
  auto storage = BoundMemoryStorage();
  auto csv = MakeFormatByName("csv");
  FileSpec spec;
  spec.sample_sizes = {400, 404};
  Status st = csv->Write(storage.get(), "/mixed.csv", spec, {});
  REQUIRE(st.code() == StatusCode::kInvalidArgument);
  REQUIRE_FALSE(storage->Exists("/mixed.csv").value());
  spec.sample_sizes = {3, 3};  // less than one float: one column
  REQUIRE(csv->Write(storage.get(), "/tiny.csv", spec, {}).ok());
  auto reader = csv->Open(storage.get(), "/tiny.csv", {});
  REQUIRE(reader.ok());
  REQUIRE((*reader)->DescribeJson().find("\"columns\":1") != std::string::npos);
}

TEST_CASE("csv rows read in order through a DataSource, as the preload pipeline does",
          "[format][csv]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto csv = MakeFormatByName("csv");
  std::vector<std::string> paths;
  FileSpec spec;
  spec.sample_sizes.assign(20, 2048);
  for (int f = 0; f < 3; ++f) {
    spec.seed = 100 + f;
    paths.push_back(tmp / "f");
    paths.back() += std::to_string(f) + ".csv";
    REQUIRE(csv->Write(storage.get(), paths.back(), spec, {}).ok());
  }
  FormatDataSourceOptions options;
  options.format.transfer_size = 4096;
  auto source = MakeFormatDataSource(storage.get(), csv.get(), paths, options);
  REQUIRE(source.ok());
  REQUIRE((*source)->samples_per_file() == std::vector<uint64_t>{20, 20, 20});
  SampleBuffer row, values;
  for (uint32_t f = 0; f < 3; ++f) {
    for (uint64_t i = 0; i < 20; ++i) {
      REQUIRE((*source)->Read({f, i}, &row).ok());
      REQUIRE(csv->Decode(row.data(), row.size(), &values).ok());
      REQUIRE(Floats(values) == ExpectedRow(100 + f, i, 512));
    }
  }
}

TEST_CASE("csv reads with O_DIRECT on posix storage", "[format][csv][direct]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto csv = MakeFormatByName("csv");
  FileSpec spec;
  spec.seed = 4;
  spec.sample_sizes.assign(5, 3000);
  REQUIRE(csv->Write(storage.get(), tmp / "d.csv", spec, {}).ok());
  FormatOptions options;
  options.direct = true;
  options.transfer_size = 4096;
  auto reader = csv->Open(storage.get(), tmp / "d.csv", options);
  INFO(reader.status().ToString());
  REQUIRE(reader.ok());
  SampleBuffer row, values;
  for (uint64_t i : {4, 0, 2}) {
    REQUIRE((*reader)->ReadSample(i, &row).ok());
    REQUIRE(csv->Decode(row.data(), row.size(), &values).ok());
    REQUIRE(Floats(values) == ExpectedRow(4, i, 750));
  }
}

TEST_CASE("csv decides the header of a huge first line from its first MiB", "[format][csv]") {
  auto storage = BoundMemoryStorage();
  auto csv = MakeFormatByName("csv");
  std::string names, values;
  for (int c = 0; c < 400000; ++c) {  // ~3 MB lines
    names += (c ? ",name" : "name") + std::to_string(c);
    values += (c ? ",0." : "0.") + std::to_string(c);
  }
  PutFile(storage.get(), "/named.csv", names + "\n" + values + "\n");
  PutFile(storage.get(), "/plain.csv", values + "\n" + values + "\n");
  auto named = csv->Open(storage.get(), "/named.csv", {});
  REQUIRE(named.ok());
  CHECK((*named)->num_samples() == 1);
  auto plain = csv->Open(storage.get(), "/plain.csv", {});
  REQUIRE(plain.ok());
  CHECK((*plain)->num_samples() == 2);
  CHECK((*plain)->sample_size(1) == values.size());
  CHECK((*plain)->sample_size(2) == 0);  // past the end: 0, not out of bounds
}

}  // namespace
}  // namespace dlio::testing
