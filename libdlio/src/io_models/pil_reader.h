// reader.io_model: pil. The requests Pillow (9.4, Debian 12's python3-pil) sends to the file
// system for `Image.open(path)` and the load that decodes it (`np.asarray(Image.open(path))`,
// `.convert("RGB")`: DLIO's image reader, torchvision's ImageFolder loader), CPython 3.11's io:
//
// Image.open opens the file with `open(path, "rb")` (open, fstat, and two lseeks dlio's storage
// has no call for), parses the header through the BufferedReader (one fill of st_blksize bytes,
// 4096 on local file systems), and the JPEG load seeks back to 0 (inside the buffer: no call),
// then calls `fp.read(65536)` (ImageFile's decodermaxblock) until the decoder has the whole file:
// the buffered bytes and a direct read to the next 64 KiB (61440), 65536-byte reads, and at the
// end a short read followed by one that finds the end (the rest of the 64 KiB rounded down to
// the buffer size). Measured with strace on files of 2.6 KB, 37 KB, 235 KB and 555 KB
// (docs/io_models.md, "pil"). PNG's plugin reads chunk by chunk instead (pil_png_load.h).
#pragma once

#include <memory>
#include <string>

#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"
#include "io_models/whole_file_reader.h"

namespace dlio::io_models {

// Which of Pillow's plugins opens the format's files: how its load reads them after Image.open's
// prefix read and rewind. The format picks it when it registers its pil reader.
enum class PilPlugin {
  kJpeg,  // JpegImagePlugin: fp.read(65536) until the decoder has the whole file
  kPng,   // PngImagePlugin: chunk headers, chunks and CRCs, IDAT data in reads of up to 64 KiB
};

// ImageFile.MAXBLOCK: the size of the reads the load loop asks (ImageFile.decodermaxblock).
inline constexpr size_t kPilReadBytes = 65536;

// Opens `path` (open and fstat, as `open(path, "rb")` does); each ReadSample(0) then reads the
// whole file with `plugin`'s requests (above) into the sample: under reader.client_costs none
// straight into it, under framework through a new bytes object per read, copied (PIL's read returns
// one). One sample per file, the file's bytes.
Result<std::unique_ptr<FormatReader>> OpenPilReader(Storage* storage, const std::string& path,
                                                    const FormatOptions& options,
                                                    WholeFileCheck check, PilPlugin plugin);

}  // namespace dlio::io_models
