#include "format/parquet/parquet_codec.h"

#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cctype>

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
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) return Status::IOError("inflateInit2 failed");
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(n);
  z.next_out = dst;
  z.avail_out = static_cast<uInt>(expected);
  const int rc = inflate(&z, Z_FINISH);
  const uint64_t got = z.total_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END || got != expected) {
    return Bad(path, offset,
               "gzip data does not inflate to " + std::to_string(expected) + " bytes");
  }
  return Status::OK();
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
    case 5:
      return "LZ4";
    case kZstd:
      return "ZSTD";
    case 7:
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
    default:
      return Bad(path, offset, std::string("codec ") + CodecName(codec) + " is not supported");
  }
}

}  // namespace dlio::format_internal::parquet
