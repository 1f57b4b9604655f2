// pyio::PythonBytes: the bytes objects the Python-library models read into live and die as
// CPython's do (`a += b` hands back `b` when `a` is empty; a whole slice is the object itself),
// from the glibc thresholds a Python process has after its imports.
#include "io_models/pyio/python_bytes.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "io_models/pyio/python_heap.h"
#include "test_util.h"

namespace dlio::pyio {
namespace {

PythonBytes Bytes(const std::string& s) {
  PythonBytes b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

std::string Text(const PythonBytes& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

TEST_CASE("python bytes: += and slices make new objects only where CPython does") {
  PythonBytes b = Bytes("data");
  const uint8_t* block = b.data();
  PythonBytes joined = PythonBytes::Concat(PythonBytes(), std::move(b));
  CHECK(joined.data() == block);  // b'' + b is b itself
  CHECK(Text(joined) == "data");
  PythonBytes more = PythonBytes::Concat(std::move(joined), Bytes("++"));
  CHECK(more.data() != block);  // a new object holding both
  CHECK(Text(more) == "data++");

  const uint8_t* whole = more.data();
  PythonBytes all = PythonBytes::Slice(&more, 0, 100);
  CHECK(all.data() == whole);  // s[0:] is s
  CHECK(more.size() == 0);
  PythonBytes part = PythonBytes::Slice(&all, 2, 5);
  CHECK(part.data() != whole);
  CHECK(Text(part) == "ta+");
  CHECK(Text(all) == "data++");
  CHECK(PythonBytes::Slice(&all, 7, 9).size() == 0);
}

TEST_CASE("python bytes: a short read shrinks the object, assignment frees the old one") {
  PythonBytes b(10);
  REQUIRE(b.data() != nullptr);
  b.Shrink(4);
  CHECK(b.size() == 4);
  b.Shrink(8);  // never grows
  CHECK(b.size() == 4);
  b = Bytes("x");
  CHECK(Text(b) == "x");
  CHECK_FALSE(PythonBytes().failed(0));
  CHECK(PythonBytes().data() == nullptr);
}

TEST_CASE("MatchPythonImports leaves glibc's mmap threshold where import numpy leaves Python's") {
  // Python 3.11 with numpy imported, asked the same way (which malloc sizes get a mapping):
  // 315,345 bytes from the heap, 315,409 mapped.
  const size_t numpy = PythonImportThreshold(IoModel::kNumpy);
  REQUIRE(numpy == 315'392);
  if (testing::MallocMapsInChild(200'000, [] {}) != 1) {
    WARN("malloc(200000) is not mmapped in a fresh child here; nothing to compare");
    return;
  }
  const auto match = [numpy] { MatchPythonImports(numpy); };
  CHECK(testing::MallocMapsInChild(200'000, match) == 0);
  CHECK(testing::MallocMapsInChild(315'345, match) == 0);
  CHECK(testing::MallocMapsInChild(315'409, match) == 1);
  // It never lowers them: torch's threshold then numpy's keeps torch's.
  const size_t torch = PythonImportThreshold(IoModel::kPytorch);
  CHECK(testing::MallocMapsInChild(400'000, [&] {
          MatchPythonImports(torch);
          MatchPythonImports(numpy);
        }) == 0);
  CHECK(PythonImportThreshold(IoModel::kNative) == 0);
  CHECK(PythonImportThreshold(IoModel::kTfData) == 0);
}

}  // namespace
}  // namespace dlio::pyio
