// The sqlite format against CPython's sqlite3 module (the same libsqlite3): the page reads dlio's
// reader makes through its VFS over dlio's storage equal, row by row, the reads Python's
// `sqlite3.connect(path)` and one `SELECT label, data FROM samples WHERE id = ?` per sample make
// (under the preload tracer), on a database Python wrote and on one dlio wrote; Python reads
// dlio's database (integrity check, rows, labels, bytes) and dlio reads Python's (ids from 0 or
// from 1); a file that is not a database, a database without the rows, and a file in the way of
// the writer are refused naming the file.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio_reads.h"
#include "format/content.h"
#include "format/format_test_util.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::BuiltinFormat;
using io_model_test::KindFilter;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::TempDir;

const KindFilter kReads{{OpKind::kRead}};

std::string Python(const std::string& script, const std::string& args) {
  const auto run =
      testing::RunCommand("'" + testing::SystemPython() + "' '" + script + "' " + args);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  return run.output;
}

// Python writes `path` as a Dataset's make step does: ids from `first`, labels i % 10.
void WriteWithPython(const TempDir& tmp, const std::string& path, int rows, int size, int first) {
  const std::string script = tmp / "make_db.py";
  testing::WriteTextFile(script,
                         "import sqlite3, sys\n"
                         "path, n, size, first = sys.argv[1], *map(int, sys.argv[2:])\n"
                         "db = sqlite3.connect(path)\n"
                         "db.execute('CREATE TABLE samples (id INTEGER PRIMARY KEY, label INTEGER, "
                         "data BLOB)')\n"
                         "db.executemany('INSERT INTO samples VALUES (?, ?, ?)', ((first + i, i % "
                         "10, bytes((i + k) % 251 for k in range(size))) for i in range(n)))\n"
                         "db.commit()\n");
  Python(script, "'" + path + "' " + std::to_string(rows) + " " + std::to_string(size) + " " +
                     std::to_string(first));
}

std::vector<uint64_t> Shuffled(uint64_t n) {
  std::vector<uint64_t> order;
  for (uint64_t i = 0; i < n; ++i) order.push_back((7 + i * 13) % n);  // 13 is coprime with n
  return order;
}

std::string Joined(const std::vector<uint64_t>& v) {
  std::string s;
  for (const uint64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// The reads of a Dataset's __getitem__ over `order` (ids from 0), under the tracer.
std::vector<Request> ReadsOfPython(const TempDir& tmp, const std::string& data,
                                   const std::string& name, const std::vector<uint64_t>& order) {
  const std::string script = tmp / "select.py";
  testing::WriteTextFile(script,
                         "import sqlite3, sys\n"
                         "db = sqlite3.connect(sys.argv[1])\n"
                         "for i in map(int, sys.argv[2].split(',')):\n"
                         "    label, blob = db.execute('SELECT label, data FROM samples WHERE id = "
                         "?', (i,)).fetchone()\n");
  const std::string args = "'" + script + "' '" + data + "/" + name + "' " + Joined(order);
  return RequestsOf(TracePythonProgram(args, data, tmp / ("prof-" + name)), data, kReads);
}

// dlio's reads of the same samples (a Dataset knows its length: num_samples_per_file).
std::vector<Request> ReadsOfDlio(const std::string& data, const std::string& name,
                                 const std::vector<uint64_t>& order,
                                 std::vector<std::string>* samples = nullptr) {
  MemoryTracer tracer;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), &tracer);
  FormatOptions options;
  options.samples_per_file = order.size();
  {
    auto reader = BuiltinFormat("sqlite")->Open(storage.get(), data + "/" + name, options);
    INFO(reader.status().ToString());
    REQUIRE(reader.ok());
    SampleBuffer buf;
    for (const uint64_t i : order) {
      const Status st = (*reader)->ReadSample(i, &buf);
      INFO(st.ToString());
      REQUIRE(st.ok());
      if (samples) samples->emplace_back(reinterpret_cast<const char*>(buf.data()), buf.size());
    }
  }
  return RequestsOf(tracer, data, kReads);
}

Status WriteWithDlio(const std::string& path, const FileSpec& spec) {
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  return BuiltinFormat("sqlite")->Write(storage.get(), path, spec, {});
}

FileSpec Spec(uint64_t rows, uint64_t size) {
  FileSpec spec;
  spec.seed = 3;
  spec.sample_sizes.assign(rows, size);
  return spec;
}

TEST_CASE("sqlite: the page reads of Python's sqlite3, row by row") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  WriteWithPython(tmp, data + "/python.db", 300, 24 * 1024, 0);
  REQUIRE(WriteWithDlio(data + "/dlio.db", Spec(300, 24 * 1024)).ok());
  REQUIRE(WriteWithDlio(data + "/small.db", Spec(500, 700)).ok());
  for (const std::string name : {"python.db", "dlio.db", "small.db"}) {
    const uint64_t rows = name == "small.db" ? 500 : 300;
    const std::vector<uint64_t> order = Shuffled(rows);
    const std::vector<Request> python = ReadsOfPython(tmp, data, name, order);
    REQUIRE(python.size() >= rows);  // a change-counter read per SELECT at least
    const std::vector<Request> dlio = ReadsOfDlio(data, name, order);
    INFO(name << "\nPython:\n" << ToString(python) << "dlio:\n" << ToString(dlio));
    CHECK(dlio == python);
  }
}

TEST_CASE("sqlite: Python reads dlio's database and dlio reads Python's") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  const FileSpec spec = Spec(40, 9000);
  REQUIRE(WriteWithDlio(data + "/dlio.db", spec).ok());
  const std::string script = tmp / "check.py";
  testing::WriteTextFile(script,
                         "import sqlite3, sys\n"
                         "db = sqlite3.connect(sys.argv[1])\n"
                         "print(db.execute('PRAGMA integrity_check').fetchone()[0])\n"
                         "for i, label, data in db.execute('SELECT id, label, data FROM samples "
                         "ORDER BY id'):\n"
                         "    print(i, label, data.hex())\n");
  const std::string out = Python(script, "'" + data + "/dlio.db'");
  std::string expected = "ok\n";
  for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
    const std::string bytes = testing::ExpectedSample(spec, i);
    std::string hex;
    for (unsigned char c : bytes) {
      static const char* d = "0123456789abcdef";
      hex += d[c >> 4];
      hex += d[c & 15];
    }
    expected += std::to_string(i) + " " +
                std::to_string(format_internal::SampleLabel(spec.seed, i)) + " " + hex + "\n";
  }
  CHECK(out == expected);
  // Python's databases: ids from 0, and from 1 (inspect counts from the smallest id).
  for (const int first : {0, 1}) {
    const std::string path = data + "/py" + std::to_string(first) + ".db";
    WriteWithPython(tmp, path, 25, 5000, first);
    auto storage = NewPosixStorage({});
    storage->Bind(SystemClock(), nullptr);
    auto reader = BuiltinFormat("sqlite")->Open(storage.get(), path, {});
    REQUIRE(reader.ok());
    REQUIRE((*reader)->num_samples() == 25);
    SampleBuffer buf;
    REQUIRE((*reader)->ReadSample(24, &buf).ok());
    REQUIRE(buf.size() == 5000);
    CHECK(buf.data()[0] == 24 % 251);
    CHECK((*reader)->DescribeJson().find("\"page_size\":4096") != std::string::npos);
  }
}

TEST_CASE("sqlite: what is not a database, or lacks the rows, is refused naming the file") {
  TempDir tmp;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  auto format = BuiltinFormat("sqlite");
  const std::string text = tmp / "text.db";
  testing::WriteTextFile(text, std::string(8192, 'x'));
  auto opened = format->Open(storage.get(), text, {});
  REQUIRE(!opened.ok());
  CHECK(opened.status().code() == StatusCode::kCorruption);
  CHECK_THAT(opened.status().ToString(), Catch::Contains(text));
  // More samples than rows: the missing id is named at its read.
  const std::string few = tmp / "few.db";
  REQUIRE(WriteWithDlio(few, Spec(3, 100)).ok());
  FormatOptions options;
  options.samples_per_file = 5;
  auto reader = format->Open(storage.get(), few, options);
  REQUIRE(reader.ok());
  SampleBuffer buf;
  CHECK((*reader)->ReadSample(2, &buf).ok());
  const Status missing = (*reader)->ReadSample(4, &buf);
  CHECK(missing.code() == StatusCode::kCorruption);
  CHECK_THAT(missing.ToString(), Catch::Contains(few) && Catch::Contains("no row with id 4"));
  // A row whose data is text (length() counts its characters, not its bytes) is no sample.
  const std::string texts = tmp / "texts.db";
  const std::string script = tmp / "texts.py";
  testing::WriteTextFile(script,
                         "import sqlite3, sys\n"
                         "db = sqlite3.connect(sys.argv[1])\n"
                         "db.execute('CREATE TABLE samples (id INTEGER PRIMARY KEY, label INTEGER, "
                         "data BLOB)')\n"
                         "db.execute(\"INSERT INTO samples VALUES (0, 1, x'00ff'), (1, 2, "
                         "'\u00e9t\u00e9')\")\n"
                         "db.commit()\n");
  Python(script, "'" + texts + "'");
  auto counted = format->Open(storage.get(), texts, {});
  REQUIRE(!counted.ok());
  CHECK(counted.status().code() == StatusCode::kCorruption);
  CHECK_THAT(counted.status().ToString(),
             Catch::Contains(texts) && Catch::Contains("row id 1 holds a text"));
  FormatOptions two;
  two.samples_per_file = 2;
  auto trusted = format->Open(storage.get(), texts, two);
  REQUIRE(trusted.ok());
  CHECK((*trusted)->ReadSample(0, &buf).ok());
  CHECK(buf.size() == 2);
  const Status not_blob = (*trusted)->ReadSample(1, &buf);
  CHECK(not_blob.code() == StatusCode::kCorruption);
  CHECK_THAT(not_blob.ToString(), Catch::Contains("row id 1 holds a text"));
  // The writer never clobbers a file it did not create, and leaves it as it was.
  const Status clobber = WriteWithDlio(text, Spec(2, 10));
  CHECK(clobber.code() == StatusCode::kAlreadyExists);
  CHECK(testing::ReadTextFile(text) == std::string(8192, 'x'));
}

}  // namespace
}  // namespace dlio
