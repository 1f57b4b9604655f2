// reader.io_model: pandas. dlio's csv reader under the pandas model issues the requests
// pandas.read_csv(path) issues (opens, fstat, reads, closes), row by row, for files smaller than
// a chunk, of several chunks, of exact multiples of a chunk, with CRLF line ends and multi-byte
// characters at chunk ends, written by dlio and by pandas; its samples equal the native reader's.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio_reads.h"
#include "format/csv/csv_options.h"
#include "io_models/pandas_read.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::BuiltinFormat;
using io_model_test::DlioRun;
using io_model_test::kOpenStatReadSeekClose;
using io_model_test::PythonHas;
using io_model_test::ReadWithDlio;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::TempDir;

constexpr int kSkipped = 77;  // the ctest SKIP_RETURN_CODE of this executable
constexpr uint64_t kChunk = format_internal::kPandasChunkChars;

void SkipWithoutPandas() {
  if (PythonHas("pandas")) return;
  std::fprintf(stderr, "SKIPPED: %s cannot import pandas (Debian package python3-pandas)\n",
               testing::SystemPython().c_str());
  std::exit(kSkipped);
}

// Rows "i.25,<i+1>.25,...": `columns` values each, exactly `bytes` bytes (the last value padded
// with zeros).
std::string Rows(uint64_t bytes, int columns, const std::string& eol) {
  std::string s, row;
  for (uint64_t i = 0;; ++i) {
    row.clear();
    for (int c = 0; c < columns; ++c) {
      if (c > 0) row += ',';
      row += std::to_string(i + c);
      row += ".25";
    }
    if (s.size() + row.size() + eol.size() > bytes) break;
    s += row;
    s += eol;
  }
  REQUIRE(!s.empty());
  s.insert(s.size() - eol.size(), std::string(bytes - s.size(), '0'));  // widen the last row
  return s;
}

// A file of `bytes` bytes whose byte `at` is the first of `piece`, which ends a row.
std::string WithPieceAt(uint64_t bytes, uint64_t at, const std::string& piece) {
  std::string s = Rows(at, 1, "\n");
  while (!s.empty() && s.back() != '\n') s.pop_back();
  s += std::string(at - s.size(), '7') + piece;
  s += Rows(bytes - s.size(), 1, "\n");
  return s;
}

// pandas.read_csv(path) of each file, under the interposer.
std::vector<Request> ReadWithPandas(const std::vector<std::string>& files, const std::string& data,
                                    const TempDir& tmp) {
  const std::string script = tmp / "read_csv.py";
  testing::WriteTextFile(script,
                         "import sys, pandas\n"
                         "for p in sys.argv[2:]:\n"
                         "    pandas.read_csv(sys.argv[1] + '/' + p)\n");
  std::string args = "'" + script + "' '" + data + "'";
  for (const std::string& f : files) args += " '" + f + "'";
  return RequestsOf(TracePythonProgram(args, data, tmp / "prof"), data, kOpenStatReadSeekClose);
}

void ExpectSameAsPandas(const std::vector<std::string>& files, const std::string& data,
                        const TempDir& tmp) {
  auto csv = BuiltinFormat("csv");
  const std::vector<Request> python = ReadWithPandas(files, data, tmp);
  const DlioRun pandas_model = ReadWithDlio(*csv, files, data, IoModel::kPandas);
  INFO("pandas.read_csv:\n" << ToString(python) << "dlio:\n" << ToString(pandas_model.requests));
  CHECK(pandas_model.requests == python);
  // The samples are the native reader's, byte for byte, and so is auto (pandas is csv's default).
  const DlioRun native = ReadWithDlio(*csv, files, data, IoModel::kNative);
  CHECK(pandas_model.samples == native.samples);
  CHECK(ReadWithDlio(*csv, files, data, IoModel::kAuto).requests == pandas_model.requests);
}

// Without Python: the rows measured for pandas 1.5.3 (tests above) for three small files.
TEST_CASE("pandas model: the requests of small files, as measured") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  testing::WriteTextFile(data + "/a.csv", Rows(97, 3, "\n"));
  testing::WriteTextFile(data + "/b.csv", Rows(kChunk, 5, "\n"));
  testing::WriteTextFile(data + "/c.csv", Rows(300, 2, "\r\n").substr(0, 299));
  const std::vector<std::string> files{"a.csv", "b.csv", "c.csv"};
  const DlioRun run = ReadWithDlio(*BuiltinFormat("csv"), files, data, IoModel::kPandas);
  const std::vector<Request> expected{{"a.csv", OpKind::kOpen},
                                      {"a.csv", OpKind::kStat},
                                      {"a.csv", OpKind::kSeek, 0, -1},  // open's tell
                                      {"a.csv", OpKind::kRead, 0, 262144},
                                      {"a.csv", OpKind::kRead, 97, 262047},
                                      {"a.csv", OpKind::kRead, 97, 262144},
                                      {"a.csv", OpKind::kClose},
                                      {"b.csv", OpKind::kOpen},
                                      {"b.csv", OpKind::kStat},
                                      {"b.csv", OpKind::kSeek, 0, -1},  // open's tell
                                      {"b.csv", OpKind::kRead, 0, 262144},
                                      {"b.csv", OpKind::kRead, 262144, 262144},
                                      {"b.csv", OpKind::kClose},
                                      {"c.csv", OpKind::kOpen},
                                      {"c.csv", OpKind::kStat},
                                      {"c.csv", OpKind::kSeek, 0, -1},  // open's tell
                                      {"c.csv", OpKind::kRead, 0, 262144},
                                      {"c.csv", OpKind::kRead, 299, 262724},
                                      {"c.csv", OpKind::kRead, 299, 261845},
                                      {"c.csv", OpKind::kRead, 299, 262144},
                                      {"c.csv", OpKind::kClose}};
  INFO(ToString(run.requests));
  CHECK(run.requests == expected);
  CHECK(run.samples == ReadWithDlio(*BuiltinFormat("csv"), files, data, IoModel::kNative).samples);
}

TEST_CASE("pandas model: read_csv's requests for files of several sizes") {
  SkipWithoutPandas();
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  const std::vector<std::pair<std::string, std::string>> files{
      {"tiny.csv", Rows(97, 3, "\n")},
      {"one_chunk.csv", Rows(kChunk, 5, "\n")},
      {"chunk_less_one.csv", Rows(kChunk - 1, 2, "\n")},
      {"three_chunks.csv", Rows(3 * kChunk, 7, "\n")},
      {"several.csv", Rows(2 * kChunk + 12345, 4, "\n")},
      {"crlf.csv", Rows(kChunk + 999, 3, "\r\n")},
      {"cr_at_chunk_end.csv", WithPieceAt(kChunk + 5000, kChunk - 1, "\r\n")},
      {"ends_with_cr.csv", Rows(300, 2, "\r\n").substr(0, 299)},
      {"utf8_at_chunk_end.csv",
       "h\xc3\xa9\n" + WithPieceAt(2 * kChunk, kChunk - 5, "\xe2\x82\xac\n")},
  };
  std::vector<std::string> names;
  for (const auto& [name, text] : files) {
    testing::WriteTextFile(data + "/" + name, text);
    names.push_back(name);
  }
  ExpectSameAsPandas(names, data, tmp);
}

TEST_CASE("pandas model: files written by dlio and by pandas, with and without a header") {
  SkipWithoutPandas();
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  auto csv = BuiltinFormat("csv");
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  std::vector<std::string> names;
  for (const bool header : {false, true}) {
    for (const uint64_t rows : {3, 40, 400}) {  // ~2 KiB rows: one chunk to three
      FileSpec spec;
      spec.seed = rows;
      spec.sample_sizes.assign(rows, 800);
      FormatOptions options;
      options.formats.Get<CsvOptions>().header = header;
      names.push_back("dlio_h" + std::to_string(header) + "_" + std::to_string(rows) + ".csv");
      REQUIRE(csv->Write(storage.get(), data + "/" + names.back(), spec, options).ok());
    }
  }
  // Frames with pandas' default column names: header "0,1,...", with the index ",0,1,...".
  const std::string script = tmp / "write.py";
  testing::WriteTextFile(
      script,
      "import sys, numpy, pandas\n"
      "d = sys.argv[1]\n"
      "for rows in (5, 3000):\n"
      "    f = pandas.DataFrame(numpy.random.default_rng(rows).random((rows, 40),"
      " dtype=numpy.float32))\n"
      "    f.to_csv(f'{d}/pd_noindex_{rows}.csv', index=False)\n"
      "    f.to_csv(f'{d}/pd_index_{rows}.csv')\n"
      "    f.to_csv(f'{d}/pd_noheader_{rows}.csv', index=False, header=False)\n");
  const auto wrote =
      testing::RunCommand("'" + testing::SystemPython() + "' '" + script + "' '" + data + "'");
  INFO(wrote.output);
  REQUIRE(wrote.exit_code == 0);
  for (const char* kind : {"noindex", "index", "noheader"}) {
    for (const char* rows : {"5", "3000"}) {
      names.push_back(std::string("pd_") + kind + "_" + rows + ".csv");
    }
  }
  ExpectSameAsPandas(names, data, tmp);
  // pandas' header lines are headers to both models: every frame row is a sample.
  for (const std::string& name : names) {
    if (name.rfind("pd_", 0) != 0) continue;
    FormatOptions options;
    options.io_model = IoModel::kPandas;
    auto reader = csv->Open(storage.get(), data + "/" + name, options);
    REQUIRE(reader.ok());
    INFO(name);
    CHECK((*reader)->num_samples() == (name.find("_5.") != std::string::npos ? 5u : 3000u));
  }
}

}  // namespace
}  // namespace dlio
