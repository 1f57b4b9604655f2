// reader.io_model: pyio. dlio's npy and jpeg readers under the pyio model issue the requests a
// Python program makes reading each file through `open(path, "rb")` (open, fstat, reads, close),
// row by row, for every way reader.pyio_* describe (f.read(), a head then f.read() or
// f.readinto of the rest, or of all but a tail read last in one call or in small ones, chunked
// read, readinto and read1 loops, a text file's lines), on files smaller than the 4 KiB buffer, of
// exactly one buffer, of exact multiples of a chunk and of odd sizes; the sample is the file's
// bytes; a file that does not parse or changed size is refused naming it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "dlio/clock.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio_reads.h"
#include "io_models/pyio_options.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::BuiltinFormat;
using io_model_test::DlioRun;
using io_model_test::kOpenStatReadSeekClose;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::TempDir;

// One way of reading a file: reader.pyio_* and the Python code they stand for.
// `text`: the Python program iterates over the lines of open(path, encoding='latin-1') instead,
// TextIOWrapper's read1 chunks, which read1 of read_size stands for. `tail_call`: the tail's
// calls' size (reader.pyio_tail_read_size; 0: one call). `end`: f.read(1) calls after the others
// (reader.pyio_end_reads).
struct Calls {
  uint64_t head = 0, read_size = 0;
  PyioCall call = PyioCall::kRead;
  uint64_t tail = 0;
  bool text = false;
  uint64_t tail_call = 0;
  uint64_t end = 0;
  std::string CallName() const { return text ? "text" : std::string(EnumName(call)); }
  std::string Describe() const {
    return "head " + std::to_string(head) + ", read_size " + std::to_string(read_size) + ", " +
           CallName() + ", tail " + std::to_string(tail) + " in calls of " +
           std::to_string(tail_call) + ", " + std::to_string(end) + " end reads";
  }
};

// A .npy file of uint8 data, `size` bytes in all (the header is numpy's 128 bytes), ending in a
// newline.
std::string NpyBytes(uint64_t size) {
  std::string bytes = "\x93NUMPY\x01";
  bytes.push_back('\0');
  std::string dict =
      "{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(size - 128) + ",), }";
  dict.resize(128 - 10 - 1, ' ');
  dict += '\n';
  bytes.push_back(static_cast<char>(dict.size() & 0xff));
  bytes.push_back(static_cast<char>(dict.size() >> 8));
  bytes += dict;
  for (uint64_t i = 0; bytes.size() < size; ++i) bytes.push_back(static_cast<char>(i * 7 + 3));
  // A text file's last line ends with a newline, else iterating over its lines finds the end
  // twice (one more empty read); binary reads do not look at the bytes.
  bytes.back() = '\n';
  return bytes;
}

// .npy files of `sizes` bytes under `data`; their names.
std::vector<std::string> WriteNpys(const std::string& data, const std::vector<uint64_t>& sizes) {
  std::vector<std::string> names;
  for (const uint64_t size : sizes) {
    names.push_back("f" + std::to_string(size) + ".npy");
    testing::WriteTextFile(data + "/" + names.back(), NpyBytes(size));
  }
  return names;
}

// The Python program `calls` stand for, over `files` (each "name:size"), under the interposer.
std::vector<Request> ReadWithPython(const Calls& calls, const std::vector<std::string>& files,
                                    const std::vector<uint64_t>& sizes, const std::string& data,
                                    const TempDir& tmp) {
  const std::string script = tmp / "pyio_read.py";
  testing::WriteTextFile(script,
                         "import sys\n"
                         "head, n, call = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]\n"
                         "tail, tail_call, end = int(sys.argv[5]), int(sys.argv[6]), "
                         "int(sys.argv[7])\n"
                         "for arg in sys.argv[8:]:\n"
                         "    name, size = arg.split(':')\n"
                         "    body = int(size) - min(head, int(size)) - tail\n"
                         "    if call == 'text':\n"
                         "        with open(sys.argv[1] + '/' + name, encoding='latin-1') as f:\n"
                         "            for line in f: pass\n"
                         "        continue\n"
                         "    with open(sys.argv[1] + '/' + name, 'rb') as f:\n"
                         "        if head: f.read(head)\n"
                         "        if tail:\n"
                         "            while body > 0:\n"
                         "                k = min(n or body, body)\n"
                         "                if call == 'read': got = len(f.read(k))\n"
                         "                else: got = f.readinto(bytearray(k))\n"
                         "                if not got: break\n"
                         "                body -= got\n"
                         "            left = tail\n"
                         "            while left:\n"
                         "                got = len(f.read(min(tail_call or tail, left)))\n"
                         "                if not got: break\n"
                         "                left -= got\n"
                         "        elif n == 0 and call == 'read': f.read()\n"
                         "        elif n == 0: f.readinto(bytearray(int(size) - min(head, "
                         "int(size))))\n"
                         "        elif call == 'read':\n"
                         "            while f.read(n): pass\n"
                         "        elif call == 'read1':\n"
                         "            while f.read1(n): pass\n"
                         "        else:\n"
                         "            buf = bytearray(n)\n"
                         "            while f.readinto(buf): pass\n"
                         "        for _ in range(end): f.read(1)\n");
  std::string args = "'" + script + "' '" + data + "' " + std::to_string(calls.head) + " " +
                     std::to_string(calls.read_size) + " " + calls.CallName() + " " +
                     std::to_string(calls.tail) + " " + std::to_string(calls.tail_call) + " " +
                     std::to_string(calls.end);
  for (size_t i = 0; i < files.size(); ++i) {
    args += " '" + files[i] + ":" + std::to_string(sizes[i]) + "'";
  }
  return RequestsOf(TracePythonProgram(args, data, tmp / ("prof-" + calls.Describe())), data,
                    kOpenStatReadSeekClose);
}

DlioRun ReadWithPyio(const std::string& format, const Calls& calls,
                     const std::vector<std::string>& files, const std::string& data,
                     bool client_costs) {
  FormatOptions options;
  options.io_model = IoModel::kPyio;
  options.formats.Get<PyioOptions>() = {
      calls.head, calls.read_size, calls.call, calls.tail, calls.tail_call, 0, calls.end};
  options.framework_client_costs = client_costs;
  return io_model_test::ReadWithDlio(*BuiltinFormat(format), files, data, options);
}

// The Python program `calls` stand for and the pyio model read `files` (.npy files of `sizes`
// under `data`), without and with client costs: the same requests, at least `min_requests` a file
// in Python's trace, and each file's bytes as the sample.
void CheckAgainstPython(const Calls& calls, const std::vector<std::string>& files,
                        const std::vector<uint64_t>& sizes, const std::string& data,
                        const TempDir& tmp, size_t min_requests) {
  const std::vector<Request> python = ReadWithPython(calls, files, sizes, data, tmp);
  REQUIRE(python.size() >= min_requests * files.size());
  for (const bool costs : {false, true}) {
    const DlioRun pyio = ReadWithPyio("npy", calls, files, data, costs);
    INFO(calls.Describe() << (costs ? ", client_costs framework" : "") << "\nPython:\n"
                          << ToString(python) << "dlio:\n"
                          << ToString(pyio.requests));
    CHECK(pyio.requests == python);
    REQUIRE(pyio.samples.size() == files.size());
    for (size_t i = 0; i < files.size(); ++i) {
      CHECK(pyio.samples[i] == testing::ReadTextFile(data + "/" + files[i]));
    }
  }
}

TEST_CASE("pyio model: the requests of Python's read, readinto and read1 calls, as measured") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  const std::vector<uint64_t> sizes = {300, 4096, 3 * 65536, 1048576 + 77, 2 * 10240};
  const std::vector<std::string> files = WriteNpys(data, sizes);
  constexpr PyioCall kRead = PyioCall::kRead, kReadinto = PyioCall::kReadinto,
                     kRead1 = PyioCall::kRead1;
  for (const Calls& calls : std::vector<Calls>{{0, 0, kRead},
                                               {128, 0, kRead},
                                               {128, 0, kReadinto},
                                               {0, 10240, kRead},
                                               {128, 65536, kReadinto},
                                               {100, 4096, kRead},
                                               {0, 3000, kReadinto},
                                               // pickle-style: a head, the array, the opcodes
                                               {128, 0, kReadinto, 92},
                                               {9, 0, kRead, 200},
                                               // read1: below and above the 4 KiB buffer
                                               {100, 3000, kRead1},
                                               {0, 8192, kRead1},
                                               // for line in a text file: read1(8192) chunks
                                               {0, 8192, kRead1, 0, true}}) {
    // open, fstat, a read and close each at least
    CheckAgainstPython(calls, files, sizes, data, tmp, 4);
  }
}

// A pickle whose array is followed by many small opcodes (a list of labels or file names, as
// CIFAR-10's batches): the tail is read in calls smaller than the buffer, one 4 KiB fill each
// time the buffer runs out; calls larger than the buffer read straight, as CPython does.
TEST_CASE("pyio model: a tail read in small calls, as measured") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  const std::vector<uint64_t> sizes = {3 * 4096 + 9000, 1048576 + 77, 2 * 65536};
  const std::vector<std::string> files = WriteNpys(data, sizes);
  for (const Calls& calls : std::vector<Calls>{{128, 0, PyioCall::kReadinto, 9000, false, 64},
                                               {128, 0, PyioCall::kReadinto, 9000, false, 1},
                                               {9, 0, PyioCall::kRead, 12000, false, 100},
                                               {128, 0, PyioCall::kReadinto, 20000, false, 5000}}) {
    // open, fstat, 3 reads or more and close each
    CheckAgainstPython(calls, files, sizes, data, tmp, 6);
  }
}

// A body of known length read in chunks, then a tail (scipy.io.loadmat: a variable's data in
// 128 KiB calls after its tags, then the next variable's few bytes): the last chunk is what is
// left of the body, and no call finds the end; with end reads, f.read(1) calls after the others,
// each a fill that finds the end (reader.pyio_end_reads).
TEST_CASE("pyio model: a body read in chunks before a tail, as measured") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  const std::vector<uint64_t> sizes = {196920, 1048576 + 77, 3 * 4096 + 9000};
  const std::vector<std::string> files = WriteNpys(data, sizes);
  for (const Calls& calls :
       std::vector<Calls>{{192, 131072, PyioCall::kRead, 312},
                          {128, 65536, PyioCall::kReadinto, 92},
                          {9, 10000, PyioCall::kRead, 5000, false, 100},
                          // then looking for another variable: a fill that finds the end
                          {192, 131072, PyioCall::kRead, 312, false, 0, 1},
                          // gzip.open's probes of the end after read(8192) calls
                          {128, 8192, PyioCall::kRead, 0, false, 0, 4}}) {
    // open, fstat, 3 reads or more and close each
    CheckAgainstPython(calls, files, sizes, data, tmp, 6);
  }
}

// A random crop (reader.pyio_crop_bytes): a head, f.seek to an offset, one call of the crop's
// bytes, as the wave module's setpos and readframes read a clip of a WAV file. dlio draws each
// file's offset; the Python program seeks to the same one and must make the same requests,
// seeks included, and the sample holds the file's bytes where the head and the crop read them.
TEST_CASE("pyio model: a random crop, as measured") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  const std::vector<uint64_t> sizes = {70'000, 200'000, 1048576 + 77};
  const std::vector<std::string> files = WriteNpys(data, sizes);
  struct Crop {
    uint64_t head;
    PyioCall call;
    uint64_t crop;
  };
  for (const Crop& c : {Crop{44, PyioCall::kRead, 32'000}, Crop{0, PyioCall::kReadinto, 28'672},
                        Crop{128, PyioCall::kRead, 5'000}, Crop{44, PyioCall::kReadinto, 60'000}}) {
    INFO("head " << c.head << ", " << EnumName(c.call) << ", crop " << c.crop);
    FormatOptions options;
    options.io_model = IoModel::kPyio;
    PyioOptions& pyio = options.formats.Get<PyioOptions>();
    pyio.head_bytes = c.head;
    pyio.call = c.call;
    pyio.crop_bytes = c.crop;
    const DlioRun dlio = io_model_test::ReadWithDlio(*BuiltinFormat("raw"), files, data, options);
    // Each file's crop offset, as the reader drew it (its first crop of the file).
    std::vector<int64_t> at;
    for (size_t i = 0; i < files.size(); ++i) {
      at.push_back(static_cast<int64_t>(
          PyioCropOffset(data + "/" + files[i], 0, sizes[i], std::min(c.head, sizes[i]), c.crop)));
    }
    const std::string script = tmp / "pyio_crop.py";
    testing::WriteTextFile(script,
                           "import sys\n"
                           "head, call, crop = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])\n"
                           "for arg in sys.argv[5:]:\n"
                           "    name, at = arg.split(':')\n"
                           "    with open(sys.argv[1] + '/' + name, 'rb') as f:\n"
                           "        if head: f.read(head)\n"
                           "        f.seek(int(at))\n"
                           "        if call == 'read': f.read(crop)\n"
                           "        else: f.readinto(bytearray(crop))\n");
    std::string args = "'" + script + "' '" + data + "' " + std::to_string(c.head) + " " +
                       std::string(EnumName(c.call)) + " " + std::to_string(c.crop);
    for (size_t i = 0; i < files.size(); ++i) {
      REQUIRE(at[i] >= static_cast<int64_t>(c.head));
      REQUIRE(at[i] + c.crop <= sizes[i]);
      args += " '" + files[i] + ":" + std::to_string(at[i]) + "'";
    }
    const std::vector<Request> python =
        RequestsOf(TracePythonProgram(args, data, tmp / ("prof-crop-" + std::to_string(c.crop))),
                   data, kOpenStatReadSeekClose);
    INFO("Python:\n" << ToString(python) << "dlio:\n" << ToString(dlio.requests));
    CHECK(dlio.requests == python);
    // No request reads past the crop, and the crop's bytes are the file's.
    REQUIRE(dlio.samples.size() == files.size());
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string bytes = testing::ReadTextFile(data + "/" + files[i]);
      const size_t o = static_cast<size_t>(at[i]);
      CHECK(dlio.samples[i].substr(o, c.crop) == bytes.substr(o, c.crop));
      CHECK(dlio.samples[i].substr(0, c.head) == bytes.substr(0, c.head));
    }
  }
  // Crops differ from file to file and from draw to draw, within [head, size - crop].
  std::set<uint64_t> offsets;
  for (const std::string& f : files) {
    for (uint64_t draw = 0; draw < 4; ++draw) {
      const uint64_t o = PyioCropOffset(data + "/" + f, draw, 70'000, 44, 1'000);
      CHECK(o >= 44);
      CHECK(o <= 69'000);
      offsets.insert(o);
    }
  }
  CHECK(offsets.size() == 4 * files.size());
  CHECK(PyioCropOffset("/x", 0, 1'000, 44, 2'000) == 44);  // no room: the reader refuses it
}

// A file too short for the crop after its head (dlio's generated sizes are drawn and can be):
// the crop runs from the head to the end, the call coming back short, as Python's does; the
// same requests as CPython's, and the sample holds the file's bytes.
TEST_CASE("pyio model: a crop longer than the file after its head reads to the end, as measured") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  const std::vector<uint64_t> sizes = {5'000, 40'000};
  const std::vector<std::string> files = WriteNpys(data, sizes);
  for (const PyioCall call : {PyioCall::kRead, PyioCall::kReadinto}) {
    FormatOptions options;
    options.io_model = IoModel::kPyio;
    PyioOptions& pyio = options.formats.Get<PyioOptions>();
    pyio.head_bytes = 100;
    pyio.call = call;
    pyio.crop_bytes = 50'000;
    const DlioRun dlio = io_model_test::ReadWithDlio(*BuiltinFormat("raw"), files, data, options);
    const std::string script = tmp / "pyio_short_crop.py";
    testing::WriteTextFile(script,
                           "import sys\n"
                           "for name in sys.argv[3:]:\n"
                           "    with open(sys.argv[1] + '/' + name, 'rb') as f:\n"
                           "        f.read(100)\n"
                           "        f.seek(100)\n"
                           "        if sys.argv[2] == 'read': f.read(50000)\n"
                           "        else: f.readinto(bytearray(50000))\n");
    std::string args = "'" + script + "' '" + data + "' " + std::string(EnumName(call));
    for (const std::string& f : files) args += " '" + f + "'";
    const std::vector<Request> python = RequestsOf(
        TracePythonProgram(args, data, tmp / ("prof-short-" + std::string(EnumName(call)))), data,
        kOpenStatReadSeekClose);
    INFO(EnumName(call) << "\nPython:\n"
                        << ToString(python) << "dlio:\n"
                        << ToString(dlio.requests));
    CHECK(dlio.requests == python);
    REQUIRE(dlio.samples.size() == files.size());
    for (size_t i = 0; i < files.size(); ++i) {
      CHECK(dlio.samples[i] == testing::ReadTextFile(data + "/" + files[i]));
    }
  }
}

// A file that grew after it was opened: the look past its end (reader.pyio_end_reads) finds
// bytes, and the load fails naming the file and the offset where the bytes were.
TEST_CASE("pyio model: an end read that finds bytes fails naming the file and the offset") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  const std::string path = data + "/grows.raw";
  testing::WriteTextFile(path, std::string(10'000, 'x'));
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  FormatOptions options;
  options.io_model = IoModel::kPyio;
  // f.readinto of all but 100 bytes, f.read(100), then the end reads
  options.formats.Get<PyioOptions>() = {0, 0, PyioCall::kReadinto, 100, 0, 0, 2};
  auto reader = BuiltinFormat("raw")->Open(storage.get(), path, options);
  REQUIRE(reader.ok());
  SampleBuffer buf;
  REQUIRE((*reader)->ReadSample(0, &buf).ok());  // as opened: the end reads find nothing
  CHECK(buf.size() == 10'000);
  {
    std::ofstream grow(path, std::ios::app | std::ios::binary);
    grow << std::string(100, 'y');
  }
  const Status s = (*reader)->ReadSample(0, &buf);
  INFO(s.ToString());
  CHECK(s.code() == StatusCode::kCorruption);
  CHECK_THAT(s.message(), Catch::Contains("grows.raw") && Catch::Contains("at offset 10000") &&
                              Catch::Contains("looked for its end"));
  // f.read() of the whole file finds the bytes itself, and says where it began and how large the
  // file has become.
  options.formats.Get<PyioOptions>() = {};
  auto whole = BuiltinFormat("raw")->Open(storage.get(), path, options);
  REQUIRE(whole.ok());
  {
    std::ofstream grow(path, std::ios::app | std::ios::binary);
    grow << std::string(100, 'z');
  }
  const Status all = (*whole)->ReadSample(0, &buf);
  INFO(all.ToString());
  CHECK(all.code() == StatusCode::kResourceExhausted);
  CHECK_THAT(all.message(), Catch::Contains("grows.raw: the file grew to 10200 bytes or more") &&
                                Catch::Contains("from offset 0"));
}

TEST_CASE("pyio model: a file that is not of the format is refused naming it") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data);
  testing::WriteTextFile(data + "/not.npy", std::string(5000, 'x'));
  testing::WriteTextFile(data + "/short.npy", NpyBytes(1000).substr(0, 200));
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  FormatOptions options;
  options.io_model = IoModel::kPyio;
  for (const auto& [format, file, says] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"npy", "not.npy", "not.npy"},
           {"npy", "short.npy", "bytes of data at offset 128 but the file holds 72"},
           {"jpeg", "not.npy", "not a JPEG"}}) {
    auto reader = BuiltinFormat(format)->Open(storage.get(), data + "/" + file, options);
    REQUIRE(reader.ok());
    SampleBuffer buf;
    const Status s = (*reader)->ReadSample(0, &buf);
    INFO(s.ToString());
    CHECK(s.code() == StatusCode::kCorruption);
    CHECK_THAT(s.message(), Catch::Contains(file));
    CHECK_THAT(s.message(), Catch::Contains(says));
    CHECK((*reader)->ReadSample(1, &buf).code() == StatusCode::kOutOfRange);
  }
}

}  // namespace
}  // namespace dlio
