#include "format/parquet/parquet_codec.h"

#include <lz4.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cctype>

#include "format/inflate_exact.h"

namespace dlio::format_internal::parquet {
namespace {

Status Bad(const std::string& path, uint64_t offset, const std::string& what) {
  return Status::Corruption(path, ": page at offset ", offset, ": ", what);
}

Status GzipCompress(const uint8_t* data, size_t n, std::string* out) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::IOError("deflateInit2 failed");
  }
  const size_t start = out->size();
  out->resize(start + deflateBound(&z, n));
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(n);
  z.next_out = reinterpret_cast<Bytef*>(out->data() + start);
  z.avail_out = static_cast<uInt>(out->size() - start);
  const int rc = deflate(&z, Z_FINISH);
  out->resize(start + z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Status::IOError("gzip compression failed");
  return Status::OK();
}

Status GzipDecompress(const uint8_t* data, size_t n, uint8_t* dst, size_t expected,
                      const std::string& path, uint64_t offset) {
  if (!InflateExactly(data, n, 15 + 32, dst, expected)) {
    return Bad(path, offset,
               "gzip data does not inflate to " + std::to_string(expected) + " bytes");
  }
  return Status::OK();
}

// One LZ4 block of n bytes at src into exactly `expected` bytes at dst.
bool Lz4Block(const uint8_t* src, size_t n, uint8_t* dst, size_t expected) {
  if (n > INT32_MAX || expected > INT32_MAX) return false;
  return LZ4_decompress_safe(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst),
                             static_cast<int>(n),
                             static_cast<int>(expected)) == static_cast<int>(expected);
}

uint32_t Be32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 |
         static_cast<uint32_t>(p[2]) << 8 | p[3];
}

// The deprecated LZ4 codec: Hadoop's framing (blocks of a big-endian uncompressed and compressed
// length, then the LZ4 block) as parquet-mr writes it; else one bare LZ4 block, as some older
// writers stored under the same codec.
bool Lz4Hadoop(const uint8_t* data, size_t n, uint8_t* dst, size_t expected) {
  size_t in = 0, out = 0;
  while (n - in >= 8) {
    const uint32_t raw = Be32(data + in), packed = Be32(data + in + 4);
    in += 8;
    if (packed > n - in || raw > expected - out || !Lz4Block(data + in, packed, dst + out, raw)) {
      break;
    }
    in += packed;
    out += raw;
    if (in == n && out == expected) return true;
  }
  return Lz4Block(data, n, dst, expected);
}

}  // namespace

Result<Codec> ParseParquetCompression(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "none" || lower == "uncompressed" || lower.empty()) return kUncompressed;
  if (lower == "snappy") return kSnappy;
  if (lower == "gzip") return kGzip;
  if (lower == "zstd") return kZstd;
  return Status::InvalidArgument("dataset.compression '", name,
                                 "' is not supported by format parquet (none, snappy, gzip, zstd)");
}

const char* CodecName(int32_t codec) {
  switch (codec) {
    case kUncompressed:
      return "UNCOMPRESSED";
    case kSnappy:
      return "SNAPPY";
    case kGzip:
      return "GZIP";
    case 3:
      return "LZO";
    case 4:
      return "BROTLI";
    case kLz4:
      return "LZ4";
    case kZstd:
      return "ZSTD";
    case kLz4Raw:
      return "LZ4_RAW";
    default:
      return "unknown";
  }
}

Status CompressPage(Codec codec, const uint8_t* data, size_t n, std::string* out) {
  switch (codec) {
    case kUncompressed:
      out->append(reinterpret_cast<const char*>(data), n);
      return Status::OK();
    case kSnappy: {
      std::string c;
      snappy::Compress(reinterpret_cast<const char*>(data), n, &c);
      out->append(c);
      return Status::OK();
    }
    case kGzip:
      return GzipCompress(data, n, out);
    case kLz4:
    case kLz4Raw:
      break;  // read only
    case kZstd: {
      const size_t start = out->size();
      out->resize(start + ZSTD_compressBound(n));
      const size_t r = ZSTD_compress(out->data() + start, out->size() - start, data, n, 1);
      if (ZSTD_isError(r)) return Status::IOError("zstd: ", ZSTD_getErrorName(r));
      out->resize(start + r);
      return Status::OK();
    }
  }
  return Status::InvalidArgument("unknown parquet codec ", static_cast<int>(codec));
}

Status DecompressPage(int32_t codec, const uint8_t* data, size_t n, uint8_t* dst, size_t expected,
                      const std::string& path, uint64_t offset) {
  const char* src = reinterpret_cast<const char*>(data);
  switch (codec) {
    case kUncompressed:
      if (n != expected) return Bad(path, offset, "uncompressed page sizes disagree");
      std::copy(data, data + n, dst);
      return Status::OK();
    case kSnappy: {
      size_t len = 0;
      if (!snappy::GetUncompressedLength(src, n, &len) || len != expected ||
          !snappy::RawUncompress(src, n, reinterpret_cast<char*>(dst))) {
        return Bad(path, offset,
                   "snappy data does not decompress to " + std::to_string(expected) + " bytes");
      }
      return Status::OK();
    }
    case kGzip:
      return GzipDecompress(data, n, dst, expected, path, offset);
    case kZstd: {
      const size_t r = ZSTD_decompress(dst, expected, data, n);
      if (ZSTD_isError(r) || r != expected) {
        return Bad(path, offset,
                   "zstd data does not decompress to " + std::to_string(expected) + " bytes");
      }
      return Status::OK();
    }
    case kLz4Raw:
    case kLz4:
      if (codec == kLz4Raw ? Lz4Block(data, n, dst, expected) : Lz4Hadoop(data, n, dst, expected)) {
        return Status::OK();
      }
      return Bad(path, offset,
                 std::string(CodecName(codec)) + " data does not decompress to " +
                     std::to_string(expected) + " bytes");
    default:
      return Bad(path, offset, std::string("codec ") + CodecName(codec) + " is not supported");
  }
}

}  // namespace dlio::format_internal::parquet
