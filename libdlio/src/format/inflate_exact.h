// One zlib stream inflated in memory to exactly the size its container says (a deflated zip
// member, a gzip parquet page): what the readers that hold a whole stream's bytes share.
#pragma once

#include <cstdint>

namespace dlio::format_internal {

// Inflates the `in_n` bytes at `in` into exactly `n` bytes at `dst`. `window_bits` as zlib's
// inflateInit2 takes it (-15: raw deflate; 15 + 32: zlib or gzip, told by its header). False when
// the stream is damaged, ends before `n` bytes, or holds more; sizes past 4 GiB are fed to zlib in
// pieces.
bool InflateExactly(const uint8_t* in, uint64_t in_n, int window_bits, uint8_t* dst, uint64_t n);

}  // namespace dlio::format_internal
