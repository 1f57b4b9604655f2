#include "io_models/pil_png_load.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "io_models/pil_reader.h"

namespace dlio::io_models {
namespace {

constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
constexpr uint8_t kIendCrc[4] = {0xAE, 0x42, 0x60, 0x82};  // IEND holds no data: a fixed CRC
constexpr size_t kSafeBlock = 1 << 20;                     // ImageFile.SAFEBLOCK

uint32_t Be32(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (static_cast<uint32_t>(p[1]) << 16) |
         (static_cast<uint32_t>(p[2]) << 8) | p[3];
}

struct ChunkHeader {
  bool complete = false;  // 8 bytes came back and the type is four word characters (is_cid)
  uint64_t offset = 0;    // of the length field
  uint32_t length = 0;
  char type[5] = {};
  bool Is(const char* t) const { return std::memcmp(type, t, 4) == 0; }
};

// ChunkStream.read: fp.read(8), then pos = fp.tell() (even after a short read).
Result<ChunkHeader> ReadChunkHeader(PilCalls* c) {
  ChunkHeader h;
  h.offset = c->loaded();
  DLIO_ASSIGN_OR_RETURN(const size_t got, c->Read(8));
  DLIO_RETURN_NOT_OK(c->Tell());
  if (got < 8) return h;
  const uint8_t* p = c->at(h.offset);
  h.length = Be32(p);
  std::memcpy(h.type, p + 4, 4);
  h.complete = std::all_of(h.type, h.type + 4, [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
  });
  return h;
}

Status BrokenChunk(PilCalls* c, const ChunkHeader& h) {
  return Status::Corruption(c->path(), ": broken PNG chunk header at offset ", h.offset,
                            " (Pillow: broken PNG file)");
}

// ImageFile._safe_read(fp, n): one read, or reads of 1 MiB above 1 MiB; short: truncated.
Status SafeRead(PilCalls* c, uint64_t n, const ChunkHeader& h) {
  while (n > 0) {
    DLIO_ASSIGN_OR_RETURN(const size_t got, c->Read(std::min<uint64_t>(n, kSafeBlock)));
    if (got == 0 || (n <= kSafeBlock && got < n)) {
      return Status::Corruption(c->path(), ": PNG chunk '", h.type, "' at offset ", h.offset,
                                " runs past the end of the file (Pillow: Truncated File Read)");
    }
    n -= got;
  }
  return Status::OK();
}

// The bytes the zlib stream of an image IHDR describes inflates to: a filter byte per row, per
// Adam7 pass when interlaced (a pass with no pixel has no rows). 0 for an invalid IHDR.
uint64_t RawBytes(const uint8_t* ihdr) {
  const uint64_t w = Be32(ihdr), h = Be32(ihdr + 4);
  const uint64_t depth = ihdr[8];
  static constexpr int kChannels[7] = {1, 0, 3, 1, 2, 0, 4};
  if (ihdr[9] > 6 || kChannels[ihdr[9]] == 0) return 0;
  const uint64_t bits = depth * static_cast<uint64_t>(kChannels[ihdr[9]]);
  auto rows = [&](uint64_t cols, uint64_t n) {
    return cols == 0 ? 0 : n * (1 + (cols * bits + 7) / 8);
  };
  if (ihdr[12] == 0) return rows(w, h);
  static constexpr int kX0[7] = {0, 4, 0, 2, 0, 1, 0}, kDx[7] = {8, 8, 4, 4, 2, 2, 1};
  static constexpr int kY0[7] = {0, 0, 4, 0, 2, 0, 1}, kDy[7] = {8, 8, 8, 4, 4, 2, 2};
  uint64_t total = 0;
  for (int p = 0; p < 7; ++p) {
    const uint64_t cols = w > uint64_t(kX0[p]) ? (w - kX0[p] + kDx[p] - 1) / kDx[p] : 0;
    const uint64_t n = h > uint64_t(kY0[p]) ? (h - kY0[p] + kDy[p] - 1) / kDy[p] : 0;
    total += rows(cols, n);
  }
  return total;
}

// Pillow's zip decoder, as far as when it is done: it has inflated every row.
class IdatInflater {
 public:
  explicit IdatInflater(uint64_t raw_bytes) : want_(raw_bytes) { ok_ = inflateInit(&z_) == Z_OK; }
  ~IdatInflater() {
    if (ok_) inflateEnd(&z_);
  }
  IdatInflater(const IdatInflater&) = delete;
  IdatInflater& operator=(const IdatInflater&) = delete;

  // Inflates `n` more bytes; true once the last row is out (or the stream ended). False with
  // `error` set when zlib refuses the data.
  bool Feed(const uint8_t* p, size_t n, const char** error) {
    *error = ok_ ? nullptr : "inflateInit failed";
    if (!ok_) return false;
    z_.next_in = const_cast<Bytef*>(p);
    z_.avail_in = static_cast<uInt>(n);
    do {
      z_.next_out = scratch_;
      z_.avail_out = sizeof scratch_;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END || z_.total_out >= want_) return true;
      if (rc == Z_BUF_ERROR) return false;
      if (rc != Z_OK) {
        *error = z_.msg != nullptr ? z_.msg : "inflate failed";
        return false;
      }
    } while (z_.avail_in > 0 || z_.avail_out == 0);
    return false;
  }

 private:
  z_stream z_{};
  uint64_t want_;
  bool ok_ = false;
  uint8_t scratch_[16384];
};

struct ImageStart {
  uint64_t raw_bytes = 0;   // what the rows inflate to
  uint32_t idat_bytes = 0;  // the first IDAT chunk's length
};

// _open: the signature, then every chunk up to the first IDAT's header.
Result<ImageStart> ReadHeaderChunks(PilCalls* c) {
  DLIO_ASSIGN_OR_RETURN(const size_t got, c->Read(sizeof kSignature));
  if (got < sizeof kSignature || std::memcmp(c->at(0), kSignature, sizeof kSignature) != 0) {
    return Status::Corruption(c->path(), ": not a PNG: offset 0 does not hold the PNG signature");
  }
  ImageStart start;
  for (bool first = true;; first = false) {
    DLIO_ASSIGN_OR_RETURN(const ChunkHeader h, ReadChunkHeader(c));
    if (!h.complete) return BrokenChunk(c, h);
    if (first && (!h.Is("IHDR") || h.length != 13)) {
      return Status::Corruption(c->path(),
                                ": the first PNG chunk at offset 8 is not a 13-byte IHDR");
    }
    if (h.Is("IDAT")) {
      start.idat_bytes = h.length;
      return start;
    }
    DLIO_RETURN_NOT_OK(SafeRead(c, h.length, h));
    if (first) start.raw_bytes = RawBytes(c->at(h.offset + 8));
    if (first && start.raw_bytes == 0) {
      return Status::Corruption(c->path(), ": invalid IHDR at offset 16");
    }
    DLIO_RETURN_NOT_OK(SafeRead(c, 4, h));  // the CRC
  }
}

// The load loop: read(65536) through load_read until the decoder is done; returns what is left
// of the IDAT chunk then.
Result<uint64_t> ReadImageData(PilCalls* c, const ImageStart& start) {
  IdatInflater inflater(start.raw_bytes);
  uint64_t left = start.idat_bytes;
  for (;;) {
    while (left == 0) {
      DLIO_ASSIGN_OR_RETURN(const size_t crc, c->Read(4));
      DLIO_ASSIGN_OR_RETURN(const ChunkHeader h, ReadChunkHeader(c));
      if (crc < 4 || !h.complete || !h.Is("IDAT")) {
        return Status::Corruption(c->path(), ": PNG image data ends at offset ", h.offset,
                                  " before the image's last row (Pillow: image file is truncated)");
      }
      left = h.length;
    }
    const uint64_t at = c->loaded();
    DLIO_ASSIGN_OR_RETURN(const size_t got, c->Read(std::min<uint64_t>(left, kPilReadBytes)));
    if (got == 0) {
      return Status::Corruption(c->path(), ": PNG image data ends at offset ", at,
                                " (the end of the file) before the image's last row");
    }
    left -= std::min<uint64_t>(left, kPilReadBytes);
    const char* error = nullptr;
    if (inflater.Feed(c->at(at), got, &error)) return left;
    if (error != nullptr) {
      return Status::Corruption(c->path(), ": PNG image data near offset ", at,
                                " does not inflate: ", error);
    }
  }
}

// load_end: the rest of the IDAT chunk, then the chunks after it up to IEND's header.
Result<uint64_t> ReadTrailingChunks(PilCalls* c, uint64_t idat_left) {
  if (idat_left > 0) DLIO_RETURN_NOT_OK(c->Read(idat_left).status());
  for (;;) {
    DLIO_RETURN_NOT_OK(c->Read(4).status());  // the previous chunk's CRC
    DLIO_ASSIGN_OR_RETURN(const ChunkHeader h, ReadChunkHeader(c));
    if (!h.complete) return c->loaded();  // struct.error / SyntaxError: load_end stops
    if (h.Is("IEND")) {
      std::memcpy(c->at(c->loaded()), kIendCrc, sizeof kIendCrc);
      return c->loaded() + sizeof kIendCrc;
    }
    DLIO_RETURN_NOT_OK(SafeRead(c, h.length, h));
  }
}

}  // namespace

Result<uint64_t> LoadPngAsPil(PilCalls* c) {
  DLIO_ASSIGN_OR_RETURN(const ImageStart start, ReadHeaderChunks(c));
  DLIO_RETURN_NOT_OK(c->Seek(c->loaded()));  // ImageFile.load's seek to the tile's offset
  DLIO_ASSIGN_OR_RETURN(const uint64_t left, ReadImageData(c, start));
  return ReadTrailingChunks(c, left);
}

}  // namespace dlio::io_models
