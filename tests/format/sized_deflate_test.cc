// zlib streams of a chosen length (format/sized_deflate.h), inflated by zlib itself: the bytes
// come back, the length is what SizedZlibBytes says, and LiteralsForZlibBytes reaches a target
// to the byte across the range a chunk's stream can take.
#include "format/sized_deflate.h"

#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "format/content.h"

namespace dlio::format_internal {
namespace {

std::vector<uint8_t> Inflate(const std::vector<uint8_t>& stream, uint64_t expect) {
  std::vector<uint8_t> out(static_cast<size_t>(expect) + 16);
  uLongf n = static_cast<uLongf>(out.size());
  const int rc = uncompress(out.data(), &n, stream.data(), static_cast<uLong>(stream.size()));
  INFO("zlib uncompress: " << rc);
  REQUIRE(rc == Z_OK);
  out.resize(n);
  return out;
}

TEST_CASE("sized zlib: literals then zeros inflate back, at the length computed") {
  for (uint64_t literals : {0u, 1u, 7u, 4096u, 65535u, 65536u, 140000u}) {
    for (uint64_t zeros : {0u, 1u, 2u, 3u, 4u, 258u, 259u, 260u, 261u, 516u, 517u, 65536u}) {
      INFO("literals " << literals << ", zeros " << zeros);
      std::vector<uint8_t> data(static_cast<size_t>(literals));
      FillSampleBytes(3, literals, zeros, data.data(), data.size());
      std::vector<uint8_t> stream;
      AppendSizedZlib(data.data(), literals, zeros, &stream);
      CHECK(stream.size() == SizedZlibBytes(literals, zeros));
      const std::vector<uint8_t> back = Inflate(stream, literals + zeros);
      REQUIRE(back.size() == literals + zeros);
      CHECK(std::equal(data.begin(), data.end(), back.begin()));
      CHECK(std::all_of(back.begin() + static_cast<int64_t>(literals), back.end(),
                        [](uint8_t b) { return b == 0; }));
    }
  }
}

TEST_CASE("sized zlib: any length between the all-zero and all-literal streams, to the byte") {
  for (uint64_t total : {512u, 65536u, 1u << 20}) {
    const uint64_t lo = SizedZlibBytes(0, total), hi = SizedZlibBytes(total, 0);
    INFO("total " << total << ": " << lo << " to " << hi << " bytes");
    CHECK(lo < total / 100 + 64);  // zeros cost about 13 bits per 258
    CHECK(hi == total + 6 + 5 * ((total + 65534) / 65535));
    int64_t off_by_one = 0, targets = 0;
    for (uint64_t target = lo; target <= hi; target += std::max<uint64_t>(1, (hi - lo) / 997)) {
      const uint64_t literals = LiteralsForZlibBytes(total, target);
      const uint64_t got = SizedZlibBytes(literals, total - literals);
      INFO("target " << target << ": " << literals << " literals, " << got << " bytes");
      // A stored block's 5-byte header comes with its first literal (at 0 and every 65535): the
      // lengths it skips are met to within 3 bytes; every other length to within one.
      const uint64_t off = got > target ? got - target : target - got;
      REQUIRE(off <= 3);
      off_by_one += off > 0;
      ++targets;
    }
    CHECK(off_by_one * 50 <= targets);
  }
  CHECK(LiteralsForZlibBytes(65536, 1) == 0);
  CHECK(LiteralsForZlibBytes(65536, 1u << 30) == 65536);
}

}  // namespace
}  // namespace dlio::format_internal
