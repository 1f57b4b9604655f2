// reader.io_model: pyio over raw files of records (dataset.num_samples_per_file > 1): each record
// read with `f.seek(i * size)` and one call on a Python file kept open, request for request
// against CPython under the preload tracer, for records under, at and over the 4 KiB buffer, in
// orders that make the buffer serve a seek and part of the next record; the samples are the
// records' bytes; a file that does not split into its records, or that shrank, is refused naming
// it and the offset.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/storage.h"
#include "dlio_reads.h"
#include "io_models/pyio_options.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::BuiltinFormat;
using io_model_test::CommaJoined;
using io_model_test::kOpenStatReadSeekClose;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ShuffledOrder;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::TempDir;

// `n` records of `size` bytes of varied bytes, written to `path`; returns them.
std::string WriteRecords(const std::string& path, uint64_t n, uint64_t size) {
  std::string bytes(n * size, '\0');
  for (size_t k = 0; k < bytes.size(); ++k) bytes[k] = static_cast<char>((k * 131 + k / 7) % 251);
  testing::WriteTextFile(path, bytes);
  return bytes;
}

// Records in an order a map-style loader makes: the first three in a row (the buffer serves the
// next seek), then shuffled, then the last one twice.
std::vector<uint64_t> RecordOrder(uint64_t n) {
  std::vector<uint64_t> order = {0, 1, 2};
  for (const uint64_t i : ShuffledOrder(n)) order.push_back(i);
  order.push_back(n - 1);
  order.push_back(n - 1);
  return order;
}

struct RecordsRun {
  std::vector<Request> requests;
  std::vector<std::string> samples;
};

// The records of `data`/`file` in `order` through dlio's raw reader under io_model pyio.
RecordsRun ReadRecordsWithDlio(const std::string& data, const std::string& file, uint64_t n,
                               const std::vector<uint64_t>& order, PyioCall call, bool costs) {
  FormatOptions options;
  options.io_model = IoModel::kPyio;
  options.samples_per_file = n;
  options.formats.Get<PyioOptions>().call = call;
  options.framework_client_costs = costs;
  MemoryTracer tracer;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), &tracer);
  RecordsRun run;
  {
    auto reader = BuiltinFormat("raw")->Open(storage.get(), data + "/" + file, options);
    INFO(reader.status().ToString());
    REQUIRE(reader.ok());
    REQUIRE((*reader)->num_samples() == n);
    SampleBuffer buf;
    for (const uint64_t i : order) {
      const Status read = (*reader)->ReadSample(i, &buf);
      INFO("record " << i << ": " << read.ToString());
      REQUIRE(read.ok());
      run.samples.emplace_back(reinterpret_cast<const char*>(buf.data()), buf.size());
    }
  }
  run.requests = RequestsOf(tracer, data, kOpenStatReadSeekClose);
  return run;
}

TEST_CASE("pyio model: records read with f.seek and one call, as measured") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  const std::string script = tmp / "records.py";
  testing::WriteTextFile(script,
                         "import sys\n"
                         "path, size, call = sys.argv[1], int(sys.argv[2]), sys.argv[3]\n"
                         "with open(path, 'rb') as f:\n"
                         "    for i in map(int, sys.argv[4].split(',')):\n"
                         "        f.seek(i * size)\n"
                         "        if call == 'read': f.read(size)\n"
                         "        else: f.readinto(bytearray(size))\n");
  // Under the buffer (a 4 KiB fill each, CIFAR-10's 3,073 bytes), many in one buffer, exactly one
  // buffer, and over it (whole buffers straight, then a fill, for read; one read for readinto).
  for (const uint64_t size : {uint64_t{3073}, uint64_t{100}, uint64_t{4096}, uint64_t{10000}}) {
    const uint64_t n = 37;
    const std::string file = "records_" + std::to_string(size) + ".bin";
    const std::string bytes = WriteRecords(data + "/" + file, n, size);
    const std::vector<uint64_t> order = RecordOrder(n);
    for (const PyioCall call : {PyioCall::kRead, PyioCall::kReadinto}) {
      INFO("records of " << size << " bytes, " << EnumName(call));
      const std::string args = "'" + script + "' '" + data + "/" + file + "' " +
                               std::to_string(size) + " " + std::string(EnumName(call)) + " " +
                               CommaJoined(order);
      const std::vector<Request> python = RequestsOf(
          TracePythonProgram(args, data,
                             tmp / ("prof-" + std::to_string(size) + std::string(EnumName(call)))),
          data, kOpenStatReadSeekClose);
      REQUIRE(python.size() >= 4);  // open, fstat, a seek and a read at least
      for (const bool costs : {false, true}) {
        const RecordsRun dlio = ReadRecordsWithDlio(data, file, n, order, call, costs);
        INFO((costs ? "client_costs framework\n" : "") << "Python:\n"
                                                       << ToString(python) << "dlio:\n"
                                                       << ToString(dlio.requests));
        CHECK(dlio.requests == python);
        REQUIRE(dlio.samples.size() == order.size());
        for (size_t k = 0; k < order.size(); ++k) {
          CHECK(dlio.samples[k] == bytes.substr(order[k] * size, size));
        }
      }
    }
  }
}

TEST_CASE("pyio model: a file that does not split into its records is refused naming it") {
  TempDir tmp;
  const std::string path = tmp / "odd.bin";
  WriteRecords(path, 10, 3073);
  testing::WriteTextFile(path, testing::ReadTextFile(path) + "xyz");
  FormatOptions options;
  options.io_model = IoModel::kPyio;
  options.samples_per_file = 10;
  auto storage = NewPosixStorage({});
  auto reader = BuiltinFormat("raw")->Open(storage.get(), path, options);
  REQUIRE_FALSE(reader.ok());
  CHECK(reader.status().code() == StatusCode::kCorruption);
  CHECK_THAT(reader.status().message(),
             Catch::Contains(path) && Catch::Contains("3 bytes left over at offset 30730"));
  // A whole-file key is refused by name, when the library is used without config validation.
  options.formats.Get<PyioOptions>().head_bytes = 128;
  reader = BuiltinFormat("raw")->Open(storage.get(), tmp / "odd.bin", options);
  REQUIRE_FALSE(reader.ok());
  CHECK_THAT(reader.status().message(), Catch::Contains("reader.pyio_head_bytes"));
}

TEST_CASE("pyio model: a records file that shrank while open fails naming the offset") {
  TempDir tmp;
  const std::string path = tmp / "shrinks.bin";
  WriteRecords(path, 8, 5000);
  FormatOptions options;
  options.io_model = IoModel::kPyio;
  options.samples_per_file = 8;
  auto storage = NewPosixStorage({});
  auto reader = BuiltinFormat("raw")->Open(storage.get(), path, options);
  REQUIRE(reader.ok());
  std::filesystem::resize_file(path, 5000 * 6 + 100);
  SampleBuffer buf;
  CHECK((*reader)->ReadSample(1, &buf).ok());
  const Status s = (*reader)->ReadSample(6, &buf);
  CHECK(s.code() == StatusCode::kCorruption);
  CHECK_THAT(s.message(), Catch::Contains(path) && Catch::Contains("ended at offset 30100") &&
                              Catch::Contains("inside record 6 of 8"));
  CHECK((*reader)->ReadSample(8, &buf).code() == StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace dlio
