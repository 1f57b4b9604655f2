// The request-log fixture itself: a Python program's preads, traced under libdlio_preload.so, and
// the same preads through dlio's posix storage under a MemoryTracer give the same Request rows.
#include "request_log.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/storage.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::KindFilter;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::TempDir;

TEST_CASE("request log: a Python program's reads and dlio's storage reads compare row by row") {
  TempDir tmp;
  const std::string data = tmp / "data";
  std::filesystem::create_directories(data + "/sub");
  testing::WriteTextFile(data + "/sub/f.bin", std::string(10000, 'x'));
  testing::WriteTextFile(tmp / "other.bin", std::string(100, 'y'));
  const std::string script = tmp / "p.py";
  testing::WriteTextFile(script,
                         "import os, sys\n"
                         "d = sys.argv[1]\n"
                         "fd = os.open(d + '/sub/f.bin', os.O_RDONLY)\n"
                         "os.pread(fd, 100, 0)\n"
                         "os.pread(fd, 4096, 5000)\n"
                         "os.close(fd)\n"
                         "open(sys.argv[2], 'rb').read()\n");  // outside the data folder
  const std::vector<Request> expected{{"sub/f.bin", OpKind::kRead, 0, 100},
                                      {"sub/f.bin", OpKind::kRead, 5000, 4096}};

  const ProfileTrace real =
      TracePythonProgram("'" + script + "' '" + data + "' '" + std::string(tmp / "other.bin") + "'",
                         data, tmp / "prof");
  const std::vector<Request> python = RequestsOf(real, data);
  INFO(ToString(python));
  CHECK(python == expected);
  // Opens are kept when asked for, and the pid is the program's.
  const auto with_opens = RequestsOf(real, data, KindFilter{{OpKind::kOpen, OpKind::kRead}});
  REQUIRE(with_opens.size() == 3);
  CHECK(with_opens[0].kind == OpKind::kOpen);
  CHECK(with_opens[0].pid > 0);

  MemoryTracer tracer;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), &tracer);
  {
    auto f = storage->Open(data + "/sub/f.bin", OpenMode::kRead);
    REQUIRE(f.ok());
    std::vector<uint8_t> buf(4096);
    REQUIRE((*f)->ReadAt(0, 100, buf.data()).ok());
    REQUIRE((*f)->ReadAt(5000, 4096, buf.data()).ok());
  }
  const std::vector<Request> dlio = RequestsOf(tracer, data);
  INFO(ToString(dlio));
  CHECK(dlio == expected);
  // A different size is a different request.
  CHECK_FALSE(Request{"sub/f.bin", OpKind::kRead, 0, 101} == expected[0]);
}

}  // namespace
}  // namespace dlio
