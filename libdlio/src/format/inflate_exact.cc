#include "format/inflate_exact.h"

#include <zlib.h>

#include <algorithm>

namespace dlio::format_internal {

bool InflateExactly(const uint8_t* in, uint64_t in_n, int window_bits, uint8_t* dst, uint64_t n) {
  z_stream z{};
  if (inflateInit2(&z, window_bits) != Z_OK) return false;
  z.next_in = const_cast<Bytef*>(in);
  uint64_t in_left = in_n, out_left = n;
  uint8_t spare = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    const auto in_step = static_cast<uInt>(std::min<uint64_t>(in_left, 1u << 30));
    const auto out_step = static_cast<uInt>(std::min<uint64_t>(out_left, 1u << 30));
    z.avail_in = in_step;
    z.next_out = out_step > 0 ? dst + (n - out_left) : &spare;
    z.avail_out = out_step > 0 ? out_step : 1;  // room to learn the stream ends here
    rc = inflate(&z, Z_NO_FLUSH);
    in_left -= in_step - z.avail_in;
    if (out_step > 0) out_left -= out_step - z.avail_out;
    if (rc == Z_BUF_ERROR && in_left > 0 && out_left > 0) rc = Z_OK;
    if (out_step == 0 && z.avail_out == 0) break;  // more output than the container says
  }
  inflateEnd(&z);
  return rc == Z_STREAM_END && out_left == 0;
}

}  // namespace dlio::format_internal
