// Deflate streams (RFC 1951, raw as in a zip member, or in RFC 1950's zlib wrapper) of a chosen
// length: what a compressed chunk of a
// compressible dataset takes on disk. The data is `literals` bytes as given (random: stored
// blocks, one byte each plus 5 per block of up to 65535) followed by zeros (one fixed-Huffman
// block: a literal zero, then matches of distance 1); choosing how many of a chunk's bytes are
// literals sets the stream's length to within a byte of any length between the all-zero and the
// all-literal streams (docs/formats.md, hdf5 "Compressible records"). Any inflater (zlib, libhdf5's
// deflate filter, h5py) reads it back.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace dlio::format_internal {

// dataset.compression_ratio or its stdev away from 1 (0): units are written as deflate streams
// of drawn lengths (hdf5 chunks, npz members).
inline bool CompressionRatioSet(double ratio, double stdev) { return ratio != 1.0 || stdev != 0.0; }

// Whether dataset.compression names the deflate codec (gzip, zlib or deflate, in any case): the
// one codec whose streams this file sizes.
inline bool IsDeflateCodec(std::string_view compression) {
  auto is = [compression](std::string_view name) {
    if (compression.size() != name.size()) return false;
    for (size_t i = 0; i < name.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(compression[i])) != name[i]) return false;
    }
    return true;
  };
  return is("gzip") || is("zlib") || is("deflate");
}

// Bytes of the raw deflate stream (RFC 1951, as a zip member holds it) of `literals` literal
// bytes followed by `zeros` zero bytes, exactly.
uint64_t SizedDeflateBytes(uint64_t literals, uint64_t zeros);
// The same in a zlib stream (a 2-byte header and an Adler-32 trailer more).
uint64_t SizedZlibBytes(uint64_t literals, uint64_t zeros);

// The number of literal bytes (at most `total`) whose raw deflate stream of `total` bytes in all
// (SizedDeflateBytes(literals, total - literals)) is nearest to `target` bytes (the fewest
// literals among equals); targets below the all-zero stream or above the all-literal one give 0
// or `total`.
uint64_t LiteralsForDeflateBytes(uint64_t total, uint64_t target);
// The same for a zlib stream of `target` bytes.
uint64_t LiteralsForZlibBytes(uint64_t total, uint64_t target);

// A raw deflate stream of `literals` bytes handed over in pieces, then `zeros` zeros, written as
// it goes: Literals() for the pieces (in all exactly `literals` bytes), then Finish().
class SizedDeflateWriter {
 public:
  SizedDeflateWriter(uint64_t literals, uint64_t zeros) : literals_(literals), zeros_(zeros) {}
  // Appends to `out` the stream bytes that `n` more literal bytes at `data` complete.
  void Literals(const uint8_t* data, size_t n, std::vector<uint8_t>* out);
  // Appends the rest of the stream (the last stored block, the zeros' block) to `out`.
  void Finish(std::vector<uint8_t>* out);

 private:
  void EmitBlock(std::vector<uint8_t>* out);
  uint64_t literals_, zeros_, taken_ = 0;
  std::vector<uint8_t> block_;  // literals of the stored block being filled
};

// Appends to `out` the zlib stream of the `literals` bytes at `data` followed by `zeros` zeros:
// SizedZlibBytes(literals, zeros) bytes.
void AppendSizedZlib(const uint8_t* data, uint64_t literals, uint64_t zeros,
                     std::vector<uint8_t>* out);

}  // namespace dlio::format_internal
