// Page compression of the parquet format: UNCOMPRESSED, SNAPPY (raw snappy blocks, libsnappy),
// GZIP (a gzip member, zlib) and ZSTD (a zstd frame, libzstd), as parquet-format's Compression.md
// defines them; read only, LZ4_RAW (an LZ4 block, liblz4) and the deprecated LZ4 (Hadoop-framed
// LZ4 blocks, or one bare block).
#pragma once

#include <cstdint>
#include <string>

#include "dlio/status.h"
#include "format/parquet/parquet_meta.h"

namespace dlio::format_internal::parquet {

// dataset.compression -> codec: none, snappy, gzip, zstd (case-insensitive); InvalidArgument
// naming the key otherwise (lz4, brotli: not supported).
Result<Codec> ParseParquetCompression(const std::string& name);
const char* CodecName(int32_t codec);

// Appends the compressed form of [data, data + n) to *out.
Status CompressPage(Codec codec, const uint8_t* data, size_t n, std::string* out);
// Decompresses [data, data + n) into exactly `expected` bytes at dst. Corruption naming `path`
// and `offset` (the page's) when the bytes do not decompress to that size.
Status DecompressPage(int32_t codec, const uint8_t* data, size_t n, uint8_t* dst, size_t expected,
                      const std::string& path, uint64_t offset);

}  // namespace dlio::format_internal::parquet
