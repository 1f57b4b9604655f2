#include "format/zip.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "format/io_util.h"
#include "format/sized_deflate.h"

namespace dlio::format_internal {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50;
constexpr uint32_t kEnd64LocatorSig = 0x07064b50;
constexpr uint64_t k32 = 0xffffffffu;
// 1980-01-01 00:00: a fixed timestamp keeps generated files reproducible byte for byte.
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;
constexpr uint16_t kDosTime = 0;

std::string At(const File* file, uint64_t offset) {
  return StrCat(file->path(), " at offset ", offset);
}

// The end-of-central-directory record (22 bytes) and its offset: usually the last 22 bytes (no
// comment); else searched for in the last 64 KiB.
Status FindEndRecord(File* file, uint64_t file_size, uint64_t* at, std::vector<uint8_t>* bytes) {
  if (file_size < 22) {
    return Status::Corruption(file->path(), ": ", file_size,
                              " bytes is too small for a zip archive (no end record)");
  }
  uint8_t tail22[22];
  DLIO_RETURN_NOT_OK(file->ReadExactAt(file_size - 22, 22, tail22));
  *at = file_size - 22;
  bytes->assign(tail22, tail22 + 22);
  if (Le32(tail22) == kEndSig) return Status::OK();
  const uint64_t span = std::min<uint64_t>(file_size, 22 + 0xffff);
  std::vector<uint8_t> tail(span);
  DLIO_RETURN_NOT_OK(file->ReadExactAt(file_size - span, span, tail.data()));
  for (size_t i = span - 22 + 1; i-- > 0;) {
    if (Le32(&tail[i]) == kEndSig) {
      *at = file_size - span + i;
      bytes->assign(tail.begin() + i, tail.begin() + i + 22);
      return Status::OK();
    }
  }
  return Status::Corruption(file->path(), ": no zip end-of-central-directory record in the last ",
                            span, " bytes (bad magic or truncated file)");
}

// The zip64 end record, through its locator just before the end record at `eocd`: the entry
// count and the central directory's size and offset; `cd_limit` becomes the record's offset.
Status ReadZip64End(File* file, uint64_t eocd, uint64_t* entries, ZipDirectory* dir,
                    uint64_t* cd_limit) {
  if (eocd < 20) return Status::Corruption(At(file, eocd) + ": zip64 locator missing");
  uint8_t loc[20];
  DLIO_RETURN_NOT_OK(file->ReadExactAt(eocd - 20, 20, loc));
  if (Le32(loc) != kEnd64LocatorSig) {
    return Status::Corruption(At(file, eocd - 20) + ": bad zip64 end locator signature");
  }
  const uint64_t end64 = Le64(loc + 8);
  if (end64 > eocd - 20 || eocd - 20 - end64 < 56) {
    return Status::Corruption(At(file, eocd - 20), ": zip64 end record offset ", end64,
                              " out of range");
  }
  uint8_t rec[56];
  DLIO_RETURN_NOT_OK(file->ReadExactAt(end64, 56, rec));
  if (Le32(rec) != kEnd64Sig) {
    return Status::Corruption(At(file, end64) + ": bad zip64 end record signature");
  }
  *entries = Le64(rec + 32);
  dir->cd_size = Le64(rec + 40);
  dir->cd_offset = Le64(rec + 48);
  dir->zip64 = true;
  *cd_limit = end64;
  return Status::OK();
}

// ZIP64 extra field: the 8-byte values of exactly those fields of `m` that hold 0xffffffff, in
// order. `where`: the central directory entry's offset, for messages.
Status ApplyZip64Extra(const File* file, uint64_t where, const uint8_t* x, size_t extra_len,
                       ZipMember* m) {
  for (size_t xp = 0; xp + 4 <= extra_len;) {
    const uint16_t id = Le16(x + xp), len = Le16(x + xp + 2);
    if (xp + 4 + len > extra_len) break;
    if (id == 0x0001) {
      const uint8_t* v = x + xp + 4;
      size_t left = len;
      auto take = [&](uint64_t* field) -> bool {
        if (*field != k32) return true;
        if (left < 8) return false;
        *field = Le64(v);
        v += 8, left -= 8;
        return true;
      };
      if (!take(&m->uncompressed_size) || !take(&m->compressed_size) || !take(&m->local_offset)) {
        return Status::Corruption(At(file, where) + ": zip64 extra of member '" + m->name +
                                  "' is too short");
      }
    }
    xp += 4 + len;
  }
  return Status::OK();
}

// Central directory entry `n` at `pos` of `cd`: appended to `dir`, `pos` moved past it.
Status ParseCentralEntry(const File* file, const std::vector<uint8_t>& cd, uint64_t n, size_t* pos,
                         ZipDirectory* dir) {
  const uint64_t where = dir->cd_offset + *pos;
  if (*pos + 46 > cd.size() || Le32(&cd[*pos]) != kCentralSig) {
    return Status::Corruption(At(file, where), ": bad zip central directory entry ", n);
  }
  const uint8_t* c = &cd[*pos];
  ZipMember m;
  m.method = Le16(c + 10);
  m.crc32 = Le32(c + 16);
  m.compressed_size = Le32(c + 20);
  m.uncompressed_size = Le32(c + 24);
  const size_t name_len = Le16(c + 28), extra_len = Le16(c + 30), comment_len = Le16(c + 32);
  m.local_offset = Le32(c + 42);
  const size_t entry_size = 46 + name_len + extra_len + comment_len;
  if (*pos + entry_size > cd.size()) {
    return Status::Corruption(At(file, where), ": zip central directory entry ", n,
                              " overruns the directory");
  }
  m.name.assign(reinterpret_cast<const char*>(c + 46), name_len);
  DLIO_RETURN_NOT_OK(ApplyZip64Extra(file, where, c + 46 + name_len, extra_len, &m));
  dir->members.push_back(std::move(m));
  *pos += entry_size;
  return Status::OK();
}

}  // namespace

Result<ZipDirectory> ReadZipDirectory(File* file, uint64_t file_size) {
  uint64_t eocd = 0;
  std::vector<uint8_t> eocd_bytes;
  DLIO_RETURN_NOT_OK(FindEndRecord(file, file_size, &eocd, &eocd_bytes));
  const uint8_t* e = eocd_bytes.data();
  ZipDirectory dir;
  uint64_t entries = Le16(e + 10);
  dir.cd_size = Le32(e + 12);
  dir.cd_offset = Le32(e + 16);
  uint64_t cd_limit = eocd;
  if (entries == 0xffff || dir.cd_size == k32 || dir.cd_offset == k32) {
    DLIO_RETURN_NOT_OK(ReadZip64End(file, eocd, &entries, &dir, &cd_limit));
  }
  if (dir.cd_offset > cd_limit || dir.cd_size > cd_limit - dir.cd_offset) {
    return Status::Corruption(file->path(), ": zip central directory at offset ", dir.cd_offset,
                              " (", dir.cd_size, " bytes) is out of range (end record at offset ",
                              cd_limit, ", file size ", file_size, ")");
  }
  std::vector<uint8_t> cd(dir.cd_size);
  if (!cd.empty()) DLIO_RETURN_NOT_OK(file->ReadExactAt(dir.cd_offset, cd.size(), cd.data()));
  DLIO_RETURN_NOT_OK(ParseZipCentralDirectory(file, cd, entries, &dir));
  return dir;
}

Status ParseZipCentralDirectory(const File* file, const std::vector<uint8_t>& cd, uint64_t entries,
                                ZipDirectory* dir) {
  size_t pos = 0;
  for (uint64_t n = 0; n < entries; ++n) {
    DLIO_RETURN_NOT_OK(ParseCentralEntry(file, cd, n, &pos, dir));
  }
  return Status::OK();
}

Status ReadZipMemberBytes(File* file, const ZipDirectory& dir, const ZipMember& m,
                          const std::string& where, uint8_t* data) {
  const size_t head = 30 + m.name.size();
  if (m.local_offset > dir.cd_offset || dir.cd_offset - m.local_offset < head ||
      m.compressed_size > dir.cd_offset - m.local_offset - head) {
    return Status::Corruption(where, " at offset ", m.local_offset,
                              ": the member runs past the central directory at offset ",
                              dir.cd_offset);
  }
  std::vector<uint8_t> h(head);
  const auto n = static_cast<size_t>(m.compressed_size);
  DLIO_ASSIGN_OR_RETURN(const size_t got, file->ReadTwoAt(m.local_offset, head, h.data(), n, data));
  if (got < head || Le32(h.data()) != kLocalSig) {
    return Status::Corruption(where, " at offset ", m.local_offset,
                              ": bad zip local header signature");
  }
  const uint64_t data_offset = m.local_offset + 30 + Le16(h.data() + 26) + Le16(h.data() + 28);
  if (data_offset == m.local_offset + head) {
    if (got != head + n) {
      return Status::Corruption(where, " at offset ", m.local_offset + head, ": ", got - head,
                                " of ", n, " bytes (the file shrank?)");
    }
    return Status::OK();
  }
  if (data_offset > dir.cd_offset || m.compressed_size > dir.cd_offset - data_offset) {
    return Status::Corruption(where, " at offset ", data_offset, ": data of ", n,
                              " bytes runs past the central directory at offset ", dir.cd_offset);
  }
  return ReadRange(file, data_offset, n, 0, data);
}

Status LocateZipMember(File* file, const ZipDirectory& dir, ZipMember* member) {
  uint8_t h[30];
  if (member->local_offset > dir.cd_offset || dir.cd_offset - member->local_offset < 30) {
    return Status::Corruption(At(file, member->local_offset) + ": local header of member '" +
                              member->name + "' lies past the central directory");
  }
  DLIO_RETURN_NOT_OK(file->ReadExactAt(member->local_offset, 30, h));
  if (Le32(h) != kLocalSig) {
    return Status::Corruption(At(file, member->local_offset) +
                              ": bad zip local header signature of member '" + member->name + "'");
  }
  member->data_offset = member->local_offset + 30 + Le16(h + 26) + Le16(h + 28);
  if (member->data_offset > dir.cd_offset ||
      member->compressed_size > dir.cd_offset - member->data_offset) {
    return Status::Corruption(At(file, member->data_offset), ": data of member '", member->name,
                              "' (", member->compressed_size,
                              " bytes) runs past the central directory at offset ", dir.cd_offset);
  }
  return Status::OK();
}

namespace {

// What writing a member's data left: where it ended, its CRC-32 and how many bytes it produced.
struct MemberData {
  uint64_t end = 0;
  uint32_t crc = static_cast<uint32_t>(crc32(0, nullptr, 0));
  uint64_t produced = 0;
};

// The member's bytes as they come, stored from `at` on.
Result<MemberData> WriteStored(File* file, uint64_t at, const ZipProducer& produce) {
  MemberData d;
  d.end = at;
  DLIO_RETURN_NOT_OK(produce([&](const uint8_t* p, size_t n) -> Status {
    d.crc = static_cast<uint32_t>(crc32_z(d.crc, p, n));
    d.produced += n;
    DLIO_RETURN_NOT_OK(file->WriteAt(d.end, p, n));
    d.end += n;
    return Status::OK();
  }));
  return d;
}

// Runs deflate over what `zs` holds (to the end with Z_FINISH), writing its output at *out_pos.
Status PumpDeflate(File* file, z_stream* zs, int flush, std::vector<uint8_t>* out,
                   uint64_t* out_pos) {
  for (;;) {
    zs->next_out = out->data();
    zs->avail_out = static_cast<uInt>(out->size());
    const int ret = ::deflate(zs, flush);
    const size_t have = out->size() - zs->avail_out;
    if (have > 0) {
      DLIO_RETURN_NOT_OK(file->WriteAt(*out_pos, out->data(), have));
      *out_pos += have;
    }
    if (ret == Z_STREAM_END) return Status::OK();
    if (ret != Z_OK && ret != Z_BUF_ERROR) {
      return Status::Internal("deflate failed writing " + file->path());
    }
    if (flush == Z_NO_FLUSH && zs->avail_in == 0 && zs->avail_out != 0) return Status::OK();
  }
}

// The member's bytes deflated (raw, at `level`) from `at` on.
Result<MemberData> WriteDeflated(File* file, uint64_t at, int level, const ZipProducer& produce) {
  z_stream zs{};
  if (deflateInit2(&zs, std::clamp(level, 0, 9), Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("deflateInit2 failed for " + file->path());
  }
  MemberData d;
  d.end = at;
  std::vector<uint8_t> out(kWriteChunk);
  Status st = produce([&](const uint8_t* p, size_t n) -> Status {
    d.crc = static_cast<uint32_t>(crc32_z(d.crc, p, n));
    d.produced += n;
    zs.next_in = const_cast<Bytef*>(p);
    zs.avail_in = static_cast<uInt>(n);  // pieces are <= kWriteChunk
    return PumpDeflate(file, &zs, Z_NO_FLUSH, &out, &d.end);
  });
  if (st.ok()) st = PumpDeflate(file, &zs, Z_FINISH, &out, &d.end);
  deflateEnd(&zs);
  DLIO_RETURN_NOT_OK(st);
  return d;
}

// The local file header of `m` (with a zip64 extra field holding both sizes when `zip64`).
std::string LocalHeader(const ZipMember& m, bool zip64) {
  std::string h;
  PutLe32(&h, kLocalSig);
  PutLe16(&h, zip64 ? 45 : 20);
  PutLe16(&h, 0);  // flags
  PutLe16(&h, m.method);
  PutLe16(&h, kDosTime);
  PutLe16(&h, kDosDate);
  PutLe32(&h, m.crc32);
  PutLe32(&h, zip64 ? static_cast<uint32_t>(k32) : static_cast<uint32_t>(m.compressed_size));
  PutLe32(&h, zip64 ? static_cast<uint32_t>(k32) : static_cast<uint32_t>(m.uncompressed_size));
  PutLe16(&h, static_cast<uint16_t>(m.name.size()));
  PutLe16(&h, zip64 ? 20 : 0);
  h += m.name;
  if (zip64) {
    PutLe16(&h, 0x0001);
    PutLe16(&h, 16);
    PutLe64(&h, m.uncompressed_size);
    PutLe64(&h, m.compressed_size);
  }
  return h;
}

// Appends the central directory entry of `m` to *cd: sizes and offset that do not fit 32 bits
// (or all of them, with `force_zip64`) go into a zip64 extra field.
void AppendCentralEntry(const ZipMember& m, bool force_zip64, std::string* cd) {
  const bool big_u = force_zip64 || m.uncompressed_size >= k32;
  const bool big_c = force_zip64 || m.compressed_size >= k32;
  const bool big_o = force_zip64 || m.local_offset >= k32;
  std::string extra;
  if (big_u) PutLe64(&extra, m.uncompressed_size);
  if (big_c) PutLe64(&extra, m.compressed_size);
  if (big_o) PutLe64(&extra, m.local_offset);
  const bool zip64 = !extra.empty();
  const uint16_t version = zip64 ? 45 : 20;
  PutLe32(cd, kCentralSig);
  PutLe16(cd, static_cast<uint16_t>((3 << 8) | version));  // made by: Unix
  PutLe16(cd, version);
  PutLe16(cd, 0);
  PutLe16(cd, m.method);
  PutLe16(cd, kDosTime);
  PutLe16(cd, kDosDate);
  PutLe32(cd, m.crc32);
  PutLe32(cd, big_c ? static_cast<uint32_t>(k32) : static_cast<uint32_t>(m.compressed_size));
  PutLe32(cd, big_u ? static_cast<uint32_t>(k32) : static_cast<uint32_t>(m.uncompressed_size));
  PutLe16(cd, static_cast<uint16_t>(m.name.size()));
  PutLe16(cd, static_cast<uint16_t>(zip64 ? extra.size() + 4 : 0));
  PutLe16(cd, 0);  // comment
  PutLe16(cd, 0);  // disk
  PutLe16(cd, 0);  // internal attributes
  PutLe32(cd, 0100644u << 16);
  PutLe32(cd, big_o ? static_cast<uint32_t>(k32) : static_cast<uint32_t>(m.local_offset));
  *cd += m.name;
  if (zip64) {
    PutLe16(cd, 0x0001);
    PutLe16(cd, static_cast<uint16_t>(extra.size()));
    *cd += extra;
  }
}

// The zip64 end record and its locator, for a directory of `count` entries and `cd_size` bytes
// at `offset`.
void AppendEnd64(uint64_t count, uint64_t cd_size, uint64_t offset, std::string* end) {
  PutLe32(end, kEnd64Sig);
  PutLe64(end, 44);
  PutLe16(end, (3 << 8) | 45);
  PutLe16(end, 45);
  PutLe32(end, 0);
  PutLe32(end, 0);
  PutLe64(end, count);
  PutLe64(end, count);
  PutLe64(end, cd_size);
  PutLe64(end, offset);
  PutLe32(end, kEnd64LocatorSig);
  PutLe32(end, 0);
  PutLe64(end, offset + cd_size);
  PutLe32(end, 1);
}

}  // namespace

Result<ZipMember> WriteZipMember(File* file, uint64_t offset, const std::string& name,
                                 uint64_t uncompressed_size, bool deflate, int level,
                                 bool force_zip64, const ZipProducer& produce) {
  const uint64_t bound =
      deflate
          ? compressBound(static_cast<uLong>(std::min<uint64_t>(uncompressed_size, ~uLong{0}))) + 64
          : uncompressed_size;
  const bool zip64 = force_zip64 || uncompressed_size >= k32 || bound >= k32;
  ZipMember m;
  m.name = name;
  m.method = deflate ? kZipDeflate : kZipStored;
  m.uncompressed_size = uncompressed_size;
  m.local_offset = offset;
  m.data_offset = offset + 30 + name.size() + (zip64 ? 20 : 0);
  DLIO_ASSIGN_OR_RETURN(const MemberData d, deflate
                                                ? WriteDeflated(file, m.data_offset, level, produce)
                                                : WriteStored(file, m.data_offset, produce));
  if (d.produced != uncompressed_size) {
    return Status::Internal("zip member '", name, "' of ", file->path(), ": produced ", d.produced,
                            " bytes, announced ", uncompressed_size);
  }
  m.crc32 = d.crc;
  m.compressed_size = d.end - m.data_offset;
  const std::string h = LocalHeader(m, zip64);
  DLIO_RETURN_NOT_OK(file->WriteAt(offset, h.data(), h.size()));
  return m;
}

Result<ZipMember> WriteSizedZipMember(File* file, uint64_t offset, const std::string& name,
                                      uint64_t uncompressed_size, uint64_t literals,
                                      bool force_zip64, const ZipProducer& produce) {
  const uint64_t zeros = uncompressed_size - std::min(literals, uncompressed_size);
  const uint64_t compressed = SizedDeflateBytes(literals, zeros);
  const bool zip64 = force_zip64 || uncompressed_size >= k32 || compressed >= k32;
  ZipMember m;
  m.name = name;
  m.method = kZipDeflate;
  m.uncompressed_size = uncompressed_size;
  m.local_offset = offset;
  m.data_offset = offset + 30 + name.size() + (zip64 ? 20 : 0);
  m.compressed_size = compressed;
  SizedDeflateWriter writer(literals, zeros);
  std::vector<uint8_t> out;
  uint64_t at = m.data_offset, produced = 0;
  uLong crc = crc32(0, nullptr, 0);
  auto flush = [&]() -> Status {
    DLIO_RETURN_NOT_OK(file->WriteAt(at, out.data(), out.size()));
    at += out.size();
    out.clear();
    return Status::OK();
  };
  DLIO_RETURN_NOT_OK(produce([&](const uint8_t* p, size_t n) -> Status {
    crc = crc32_z(crc, p, n);
    produced += n;
    if (produced > literals) return Status::Internal("zip member '", name, "': too many bytes");
    writer.Literals(p, n, &out);
    return out.size() >= kWriteChunk ? flush() : Status::OK();
  }));
  if (produced != literals) {
    return Status::Internal("zip member '", name, "' of ", file->path(), ": produced ", produced,
                            " literal bytes, announced ", literals);
  }
  static const std::vector<uint8_t> kZeros(kWriteChunk, 0);
  for (uint64_t done = 0; done < zeros;) {
    const uint64_t n = std::min<uint64_t>(zeros - done, kZeros.size());
    crc = crc32_z(crc, kZeros.data(), n);
    done += n;
  }
  writer.Finish(&out);
  DLIO_RETURN_NOT_OK(flush());
  if (at != m.data_offset + m.compressed_size) {
    return Status::Internal("zip member '", name, "': wrote ", at - m.data_offset,
                            " deflate bytes, announced ", m.compressed_size);
  }
  m.crc32 = static_cast<uint32_t>(crc);
  const std::string h = LocalHeader(m, zip64);
  DLIO_RETURN_NOT_OK(file->WriteAt(offset, h.data(), h.size()));
  return m;
}

Status WriteZipDirectory(File* file, uint64_t offset, const std::vector<ZipMember>& members,
                         bool force_zip64) {
  std::string cd;
  for (const ZipMember& m : members) AppendCentralEntry(m, force_zip64, &cd);
  const uint64_t count = members.size();
  const bool zip64 = force_zip64 || count >= 0xffff || cd.size() >= k32 || offset >= k32;
  std::string end;
  if (zip64) AppendEnd64(count, cd.size(), offset, &end);
  PutLe32(&end, kEndSig);
  PutLe16(&end, 0);
  PutLe16(&end, 0);
  const uint16_t count16 = zip64 ? 0xffff : static_cast<uint16_t>(count);
  PutLe16(&end, count16);
  PutLe16(&end, count16);
  PutLe32(&end, zip64 ? static_cast<uint32_t>(k32) : static_cast<uint32_t>(cd.size()));
  PutLe32(&end, zip64 ? static_cast<uint32_t>(k32) : static_cast<uint32_t>(offset));
  PutLe16(&end, 0);  // comment length
  cd += end;
  return file->WriteAt(offset, cd.data(), cd.size());
}

}  // namespace dlio::format_internal
