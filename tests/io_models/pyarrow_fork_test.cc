// reader.io_model pyarrow, reader.pyarrow_read fork: the row-group reads of MLPerf's DLIO fork
// (`with open(path, "rb") as fh: fh.seek(start); fh.read(length)` per row group,
// parquet_reader_file_iterable.py) run for real with Debian's python3 under the interposer, over
// the spans dlio's footer gives, against dlio's reader on the same file: the opens, reads and
// closes, row by row. (pyarrow's footer reads are held against arrow's source in
// tests/format/parquet_pyarrow_test.cc: pyarrow is not installable here.)
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "format/format_test_util.h"
#include "format/parquet_test_util.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

namespace rl = io_model_test;  // request_log.h
using rl::Request;
using testing::ParquetOf;
using testing::TempDir;

const rl::KindFilter kCalls{{OpKind::kOpen, OpKind::kRead, OpKind::kClose}};

// dlrm-like: b and d read, c between them of `c_size` float64 a row.
FormatOptions Options(uint64_t c_size) {
  FormatOptions o;
  ParquetOf(o).row_group_size = 10;
  ParquetOf(o).columns = {{"a", "float32", 1, false},
                          {"b", "float64", 4, true},
                          {"c", "float64", c_size, false},
                          {"d", "int32", 2, true}};
  o.io_model = IoModel::kPyarrow;
  ParquetOf(o).pyarrow_read = PyarrowRead::kFork;
  return o;
}

// dlio's requests after the open (its footer read): every row of the file read in order.
std::vector<Request> ReadWithDlio(const std::string& path, const std::string& data,
                                  const FormatOptions& o) {
  MemoryTracer tracer;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), &tracer);
  auto reader = testing::MakeFormatByName("parquet")->Open(storage.get(), path, o);
  REQUIRE(reader.ok());
  const size_t after_open = rl::RequestsOf(tracer, data, kCalls).size();
  SampleBuffer buf;
  for (uint64_t i = 0; i < (*reader)->num_samples(); ++i) {
    REQUIRE((*reader)->ReadSample(i, &buf).ok());
  }
  std::vector<Request> all = rl::RequestsOf(tracer, data, kCalls);
  REQUIRE(after_open == 2);  // the open and pyarrow's one footer read of this small file
  return std::vector<Request>(all.begin() + 2, all.end());
}

// The fork's reads of each row group's span, in Python.
std::vector<Request> ReadWithPython(const std::string& path, const std::string& data,
                                    const testing::ParquetLayout& layout, const TempDir& tmp) {
  const std::string script = tmp / "fork_spans.py";
  testing::WriteTextFile(script,
                         "import sys\n"
                         "path = sys.argv[1]\n"
                         "for span in sys.argv[2:]:\n"
                         "    start, length = map(int, span.split(':'))\n"
                         "    with open(path, 'rb') as fh:\n"
                         "        fh.seek(start)\n"
                         "        fh.read(length)\n");
  std::string args = "'" + script + "' '" + path + "'";
  for (size_t g = 0; g < layout.meta.row_groups.size(); ++g) {
    const io_models::ByteRange b = layout.Chunk(g, 1), d = layout.Chunk(g, 3);
    args += " " + std::to_string(b.offset) + ":" + std::to_string(d.offset + d.length - b.offset);
  }
  return rl::RequestsOf(rl::TracePythonProgram(args, data, tmp / "prof"), data, kCalls);
}

}  // namespace

TEST_CASE("pyarrow fork: dlio's row-group reads are Python's open/seek/read, call for call") {
  // c of 1 value: spans under one 4 KiB block; of 200: spans of several blocks and a remainder.
  for (const uint64_t c_size : {uint64_t{1}, uint64_t{200}}) {
    INFO("c of " << c_size << " values a row");
    TempDir tmp;
    const std::string data = tmp / "data";
    std::filesystem::create_directories(data);
    const std::string path = data + "/f.parquet";
    auto storage = NewPosixStorage({});
    FileSpec spec;
    spec.sample_sizes.assign(30, 0);
    spec.seed = 3;
    const FormatOptions o = Options(c_size);
    REQUIRE(testing::MakeFormatByName("parquet")->Write(storage.get(), path, spec, o).ok());
    const testing::ParquetLayout layout = testing::ReadParquetLayout(storage.get(), path);
    const std::vector<Request> python = ReadWithPython(path, data, layout, tmp);
    const std::vector<Request> dlio = ReadWithDlio(path, data, o);
    INFO("python:\n" << rl::ToString(python) << "dlio:\n" << rl::ToString(dlio));
    REQUIRE(python.size() >= 9);  // 3 row groups: open, read(s), close each
    CHECK(dlio == python);
  }
}

}  // namespace dlio
