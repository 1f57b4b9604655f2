// CRC-32C, the checksum of TFRecord framing: known vectors and agreement of its code paths.
#include <catch2/catch.hpp>
#include <random>

#include "format/tfrecord_test_util.h"

namespace dlio::testing {
namespace {

TEST_CASE("CRC-32C known vectors on the portable and the hardware path",
          "[format][tfrecord][crc]") {
  struct Vector {
    std::string data;
    uint32_t crc;
  };
  std::string ascending(32, '\0'), descending(32, '\0');
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<char>(i);
    descending[i] = static_cast<char>(31 - i);
  }
  // RFC 3720 B.4 and the usual check value.
  const std::vector<Vector> vectors = {{"", 0},
                                       {"a", 0xC1D04330u},
                                       {"123456789", 0xE3069283u},
                                       {std::string(32, '\0'), 0x8A9136AAu},
                                       {std::string(32, '\xff'), 0x62A8AB43u},
                                       {ascending, 0x46DD794Eu},
                                       {descending, 0x113FDB5Cu}};
  INFO("hardware CRC available: " << format_internal::Crc32cHardwareAvailable()
                                  << ", folding: " << format_internal::Crc32cFoldingAvailable());
  for (const Vector& v : vectors) {
    INFO("length " << v.data.size());
    REQUIRE(Crc32cExtendPortable(0, U8(v.data), v.data.size()) == v.crc);
    REQUIRE(Crc32cExtendHardware(0, U8(v.data), v.data.size()) == v.crc);
    REQUIRE(Crc32cExtendFolding(0, U8(v.data), v.data.size()) == v.crc);
    REQUIRE(Crc32c(U8(v.data), v.data.size()) == v.crc);
  }
  // TensorFlow's masking: the masked CRC of an empty record is the mask delta itself.
  REQUIRE(MaskCrc32c(Crc32c(nullptr, 0)) == 0xa282ead8u);
  REQUIRE(MaskCrc32c(0xE3069283u) == (((0xE3069283u >> 15) | (0xE3069283u << 17)) + 0xa282ead8u));
  for (uint32_t c : {0u, 1u, 0xE3069283u, 0xffffffffu}) REQUIRE(UnmaskCrc32c(MaskCrc32c(c)) == c);
}

TEST_CASE("CRC-32C paths agree on every length, alignment and split", "[format][tfrecord][crc]") {
  INFO("hardware CRC available: " << format_internal::Crc32cHardwareAvailable()
                                  << ", folding: " << format_internal::Crc32cFoldingAvailable());
  std::mt19937_64 rng(11);
  std::string data(300000 + 64, '\0');  // the longest length at the largest alignment fits
  for (char& c : data) c = static_cast<char>(rng());
  // Lengths around the hardware path's 3-stream block sizes (3 x 8192, 3 x 256), the folding
  // path's 256-byte blocks, and the tails.
  const std::vector<size_t> lengths = {0,     1,     7,     8,      9,     255,  256,   257,
                                       511,   512,   513,   767,    768,   769,  1000,  1023,
                                       1024,  1025,  1279,  1280,   1281,  4096, 24575, 24576,
                                       24577, 50000, 65553, 262144, 299990};
  for (size_t n : lengths) {
    for (size_t align : {0, 1, 3, 7, 61}) {
      INFO("n " << n << " align " << align);
      const uint8_t* p = U8(data) + align;
      const uint32_t portable = Crc32cExtendPortable(0, p, n);
      REQUIRE(Crc32cExtendHardware(0, p, n) == portable);
      REQUIRE(Crc32cExtendFolding(0, p, n) == portable);
      for (size_t cut : {n / 3, n / 2 + 5, n > 1100 ? n - 1100 : 0}) {
        if (cut > n) continue;
        INFO("cut " << cut);
        REQUIRE(Crc32cExtend(Crc32cExtend(0, p, cut), p + cut, n - cut) == portable);
        REQUIRE(Crc32cExtendFolding(Crc32cExtendFolding(0xdeadbeef, p, cut), p + cut, n - cut) ==
                Crc32cExtendPortable(Crc32cExtendPortable(0xdeadbeef, p, cut), p + cut, n - cut));
        REQUIRE(Crc32cExtendPortable(Crc32cExtendPortable(0, p, cut), p + cut, n - cut) ==
                portable);
      }
    }
  }
  // Special contents: all zeros and all ones over many blocks.
  for (char fill : {'\0', '\xff'}) {
    const std::string same(100000, fill);
    REQUIRE(Crc32cExtendFolding(0, U8(same), same.size()) ==
            Crc32cExtendPortable(0, U8(same), same.size()));
  }
}

}  // namespace
}  // namespace dlio::testing
