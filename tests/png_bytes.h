// PNG files built byte by byte for the tests that need a layout no encoder gives (image_bomb_test,
// pil_png_test): big-endian fields and whole chunks with their CRCs. Needs zlib (ZLIB::ZLIB).
#pragma once

#include <zlib.h>

#include <cstdint>
#include <string>

namespace dlio::testing {

// `v` as 4 big-endian bytes appended to `s`.
inline void PutBe32(std::string* s, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s->push_back(static_cast<char>((v >> shift) & 0xFF));
}

// A chunk of `type` (4 letters) holding `data`, with its length and CRC, appended to `png`.
inline void PutChunk(std::string* png, const char* type, const std::string& data) {
  PutBe32(png, static_cast<uint32_t>(data.size()));
  const std::string body = std::string(type, 4) + data;
  png->append(body);
  PutBe32(png, static_cast<uint32_t>(
                   crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())));
}

}  // namespace dlio::testing
