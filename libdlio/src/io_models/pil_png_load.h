// PngImagePlugin's calls (Pillow 9.4) for Image.open and the load of a PNG, which read the file
// chunk by chunk through the BufferedReader rather than in 64 KiB blocks:
//
// _open: fp.read(8) (the signature), then per chunk up to the first IDAT: fp.read(8) (length and
// type), the chunk's data (_safe_read: one read, or 1 MiB pieces above 1 MiB) and fp.read(4)
// (CRC). The load seeks to the IDAT data (where the file already is) and asks read(65536) until
// the zlib decoder has the image's last row; load_read answers each with at most what is left
// of the current IDAT chunk, and, at a chunk's end, first reads its CRC and the next header. Once
// the decoder is done, load_end reads what is left of the IDAT chunk, then per chunk its
// predecessor's CRC, its header, and its data (later IDATs, text, unknown chunks), until the
// IEND header; IEND's CRC is never read. Measured with strace (docs/io_models.md, "pil").
#pragma once

#include <cstdint>

#include "dlio/status.h"
#include "io_models/pil_calls.h"

namespace dlio::io_models {

// Those calls, after Image.open's prefix read and rewind. To know
// which read completes the last row, the IDAT data is inflated (zlib, as Pillow's decoder does,
// without unfiltering) and its output counted against what IHDR says the rows hold. The bytes
// of IEND's CRC, which no call reads, are IEND's fixed CRC in the sample. Returns the bytes the
// sample then holds (the file size for a file that ends with IEND); Corruption naming the file and
// the offset where Pillow's load fails (no signature, no IHDR first, a broken chunk type, IDAT data
// that ends or fails to inflate before the last row).
Result<uint64_t> LoadPngAsPil(PilCalls* calls);

}  // namespace dlio::io_models
