// zlib streams (RFC 1950 around RFC 1951 deflate) of a chosen length: what a compressed chunk of a
// compressible dataset takes on disk. The data is `literals` bytes as given (random: stored
// blocks, one byte each plus 5 per block of up to 65535) followed by zeros (one fixed-Huffman
// block: a literal zero, then matches of distance 1); choosing how many of a chunk's bytes are
// literals sets the stream's length to within a byte of any length between the all-zero and the
// all-literal streams (docs/formats.md, hdf5 "Compressible records"). Any inflater (zlib, libhdf5's
// deflate filter, h5py) reads it back.
#pragma once

#include <cstdint>
#include <vector>

namespace dlio::format_internal {

// Bytes of the zlib stream of `literals` literal bytes followed by `zeros` zero bytes, exactly.
uint64_t SizedZlibBytes(uint64_t literals, uint64_t zeros);

// The number of literal bytes (at most `total`) whose stream of `total` bytes in all
// (SizedZlibBytes(literals, total - literals)) is nearest to `target` bytes (the fewest literals
// among equals); targets below the all-zero stream or above the all-literal one give 0 or `total`.
uint64_t LiteralsForZlibBytes(uint64_t total, uint64_t target);

// Appends to `out` the zlib stream of the `literals` bytes at `data` followed by `zeros` zeros:
// SizedZlibBytes(literals, zeros) bytes.
void AppendSizedZlib(const uint8_t* data, uint64_t literals, uint64_t zeros,
                     std::vector<uint8_t>* out);

}  // namespace dlio::format_internal
