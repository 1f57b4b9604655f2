#include "io_models/pyio/zipfile.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

namespace dlio::pyio {
namespace {

constexpr size_t kEndRecord = 22, kEndRecord64 = 56, kEndLocator64 = 20;
constexpr size_t kCentralDir = 46, kLocalHeader = 30;
constexpr size_t kMinReadSize = 4096;  // ZipExtFile.MIN_READ_SIZE
constexpr uint16_t kStored = 0, kDeflated = 8;
constexpr uint16_t kEncrypted = 0x1;

uint16_t Le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t Le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
uint64_t Le64(const uint8_t* p) { return Le32(p) | (static_cast<uint64_t>(Le32(p + 4)) << 32); }

// The fields of the end record _RealGetContents uses.
struct EndRecord {
  bool zip64 = false;
  uint64_t size_cd = 0, offset_cd = 0, location = 0;
};

Status NotAZip(const BufferedReader& fp, const std::string& why) {
  return Status::Corruption(fp.file()->path(), ": not a zip file (zipfile: ", why, ")");
}

// _EndRecData64: the ZIP64 locator and record before the end record at `offset` from the end.
Status EndRecord64(BufferedReader* fp, int64_t offset, EndRecord* rec) {
  if (!fp->Seek(offset - static_cast<int64_t>(kEndLocator64), 2).ok()) return Status::OK();
  uint8_t loc[kEndLocator64];
  DLIO_ASSIGN_OR_RETURN(size_t got, fp->Read(sizeof(loc), loc));
  if (got != sizeof(loc) || std::memcmp(loc, "PK\x06\x07", 4) != 0) return Status::OK();
  if (Le32(loc + 4) != 0 || Le32(loc + 16) > 1) {
    return NotAZip(*fp, "zipfiles that span multiple disks are not supported");
  }
  if (!fp->Seek(offset - static_cast<int64_t>(kEndLocator64 + kEndRecord64), 2).ok()) {
    return Status::OK();
  }
  uint8_t r[kEndRecord64];
  DLIO_ASSIGN_OR_RETURN(got, fp->Read(sizeof(r), r));
  if (got != sizeof(r) || std::memcmp(r, "PK\x06\x06", 4) != 0) return Status::OK();
  rec->zip64 = true;
  rec->size_cd = Le64(r + 40);
  rec->offset_cd = Le64(r + 48);
  return Status::OK();
}

// _EndRecData: the end record without a comment, else a search of the last 64 KiB + 22 bytes.
Result<EndRecord> FindEndRecord(BufferedReader* fp) {
  DLIO_RETURN_NOT_OK(fp->Seek(0, 2).status());
  DLIO_ASSIGN_OR_RETURN(const uint64_t filesize, fp->Tell());
  if (!fp->Seek(-static_cast<int64_t>(kEndRecord), 2).ok()) return NotAZip(*fp, "too short");
  std::vector<uint8_t> data;
  DLIO_RETURN_NOT_OK(fp->ReadAll(&data));
  EndRecord rec;
  if (data.size() == kEndRecord && std::memcmp(data.data(), "PK\x05\x06", 4) == 0 &&
      data[20] == 0 && data[21] == 0) {
    rec.size_cd = Le32(data.data() + 12);
    rec.offset_cd = Le32(data.data() + 16);
    rec.location = filesize - kEndRecord;
    DLIO_RETURN_NOT_OK(EndRecord64(fp, -static_cast<int64_t>(kEndRecord), &rec));
    return rec;
  }
  const uint64_t max_comment_start =
      filesize > (1u << 16) + kEndRecord ? filesize - (1u << 16) - kEndRecord : 0;
  DLIO_RETURN_NOT_OK(fp->Seek(static_cast<int64_t>(max_comment_start), 0).status());
  DLIO_RETURN_NOT_OK(fp->ReadAll(&data));
  for (size_t start = data.size() >= 4 ? data.size() - 4 + 1 : 0; start-- > 0;) {
    if (std::memcmp(data.data() + start, "PK\x05\x06", 4) != 0) continue;
    if (data.size() - start < kEndRecord) break;
    rec.size_cd = Le32(data.data() + start + 12);
    rec.offset_cd = Le32(data.data() + start + 16);
    rec.location = max_comment_start + start;
    DLIO_RETURN_NOT_OK(EndRecord64(
        fp, static_cast<int64_t>(max_comment_start + start) - static_cast<int64_t>(filesize),
        &rec));
    return rec;
  }
  return NotAZip(*fp, "no end of central directory record");
}

// ZipInfo._decodeExtra: ZIP64 sizes and offset.
void DecodeExtra(const uint8_t* p, size_t n, ZipInfo* info) {
  while (n >= 4) {
    const uint16_t tp = Le16(p), ln = Le16(p + 2);
    if (static_cast<size_t>(ln) + 4 > n) return;
    if (tp == 0x0001) {
      const uint8_t* d = p + 4;
      size_t left = ln;
      auto take = [&](uint64_t* v) {
        if (left < 8) return;
        *v = Le64(d);
        d += 8;
        left -= 8;
      };
      if (info->file_size == 0xFFFFFFFFull) take(&info->file_size);
      if (info->compress_size == 0xFFFFFFFFull) take(&info->compress_size);
      if (info->header_offset == 0xFFFFFFFFull) take(&info->header_offset);
    }
    p += ln + 4;
    n -= ln + 4;
  }
}

}  // namespace

Result<ZipFile> ZipFile::Read(BufferedReader* fp) {
  DLIO_ASSIGN_OR_RETURN(EndRecord rec, FindEndRecord(fp));
  int64_t concat = static_cast<int64_t>(rec.location) - static_cast<int64_t>(rec.size_cd) -
                   static_cast<int64_t>(rec.offset_cd);
  if (rec.zip64) concat -= static_cast<int64_t>(kEndRecord64 + kEndLocator64);
  const int64_t start_dir = static_cast<int64_t>(rec.offset_cd) + concat;
  if (start_dir < 0) return NotAZip(*fp, "bad offset for central directory");
  DLIO_RETURN_NOT_OK(fp->Seek(start_dir, 0).status());
  DLIO_ASSIGN_OR_RETURN(uint64_t size, fp->FileSize());
  if (rec.size_cd > size) return NotAZip(*fp, "central directory larger than the file");
  std::vector<uint8_t> cd(static_cast<size_t>(rec.size_cd));
  DLIO_ASSIGN_OR_RETURN(size_t got, fp->Read(cd.size(), cd.data()));
  cd.resize(got);
  ZipFile zip(fp);
  size_t at = 0;
  while (at < rec.size_cd) {
    if (cd.size() - at < kCentralDir) return NotAZip(*fp, "truncated central directory");
    const uint8_t* c = cd.data() + at;
    if (std::memcmp(c, "PK\x01\x02", 4) != 0) {
      return NotAZip(*fp, "bad magic number for central directory");
    }
    const size_t name_len = Le16(c + 28), extra_len = Le16(c + 30), comment_len = Le16(c + 32);
    if (cd.size() - at - kCentralDir < name_len + extra_len + comment_len) {
      return NotAZip(*fp, "truncated central directory");
    }
    ZipInfo info;
    info.filename.assign(reinterpret_cast<const char*>(c + kCentralDir), name_len);
    info.flag_bits = Le16(c + 8);
    info.compress_type = Le16(c + 10);
    info.crc = Le32(c + 16);
    info.compress_size = Le32(c + 20);
    info.file_size = Le32(c + 24);
    info.header_offset = Le32(c + 42);
    DecodeExtra(c + kCentralDir + name_len, extra_len, &info);
    info.header_offset = static_cast<uint64_t>(static_cast<int64_t>(info.header_offset) + concat);
    zip.members_.push_back(std::move(info));
    at += kCentralDir + name_len + extra_len + comment_len;
  }
  return zip;
}

const ZipInfo* ZipFile::GetInfo(const std::string& name) const {
  // NameToInfo keeps the last member of a name.
  for (auto it = members_.rbegin(); it != members_.rend(); ++it) {
    if (it->filename == name) return &*it;
  }
  return nullptr;
}

Result<std::unique_ptr<ZipExtFile>> ZipFile::Open(const ZipInfo& info, bool check_crc,
                                                  bool compute_crc) const {
  const std::string where = fp_->file()->path() + " member '" + info.filename + "'";
  // _SharedFile reads: seek to its position, read, remember tell().
  uint64_t pos = info.header_offset;
  auto shared_read = [&](size_t n, uint8_t* dst) -> Result<size_t> {
    DLIO_RETURN_NOT_OK(fp_->Seek(static_cast<int64_t>(pos), 0).status());
    DLIO_ASSIGN_OR_RETURN(size_t got, fp_->Read(n, dst));
    DLIO_ASSIGN_OR_RETURN(pos, fp_->Tell());
    return got;
  };
  uint8_t h[kLocalHeader];
  DLIO_ASSIGN_OR_RETURN(size_t got, shared_read(sizeof(h), h));
  if (got != sizeof(h)) {
    return Status::Corruption(where, " at offset ", info.header_offset, ": truncated file header");
  }
  if (std::memcmp(h, "PK\x03\x04", 4) != 0) {
    return Status::Corruption(where, " at offset ", info.header_offset,
                              ": bad magic number for file header");
  }
  std::vector<uint8_t> name(Le16(h + 26));
  DLIO_ASSIGN_OR_RETURN(got, shared_read(name.size(), name.data()));
  if (const uint16_t extra = Le16(h + 28); extra > 0) {
    std::vector<uint8_t> skip(extra);
    DLIO_RETURN_NOT_OK(shared_read(skip.size(), skip.data()).status());
  }
  if (got != name.size() || std::string(name.begin(), name.end()) != info.filename) {
    return Status::Corruption(where, " at offset ", info.header_offset,
                              ": file name in directory and header differ");
  }
  if (info.flag_bits & kEncrypted) {
    return Status::Unimplemented(where, ": encrypted zip members");
  }
  if (info.compress_type != kStored && info.compress_type != kDeflated) {
    return Status::Unimplemented(where, ": zip compression method ", info.compress_type,
                                 " (only stored and deflate)");
  }
  return std::make_unique<ZipExtFile>(fp_, pos, info, check_crc, compute_crc);
}

struct ZipExtFile::Inflater {
  z_stream z{};
  bool ok = false;
  bool eof = false;
  std::vector<uint8_t> tail;  // unconsumed_tail
  Inflater() { ok = inflateInit2(&z, -MAX_WBITS) == Z_OK; }
  ~Inflater() {
    if (ok) inflateEnd(&z);
  }
};

ZipExtFile::ZipExtFile(BufferedReader* fp, uint64_t data_pos, const ZipInfo& info, bool check_crc,
                       bool compute_crc)
    : fp_(fp),
      pos_(data_pos),
      data_start_(data_pos),
      check_crc_(check_crc && compute_crc),
      compute_crc_(compute_crc),
      info_(info),
      compress_left_(info.compress_size),
      left_(info.file_size),
      running_crc_(static_cast<uint32_t>(crc32(0L, Z_NULL, 0))) {
  if (info.compress_type == kDeflated) inflater_ = std::make_unique<Inflater>();
}

ZipExtFile::~ZipExtFile() = default;

Status ZipExtFile::Where(const std::string& what) const {
  return Status::Corruption(fp_->file()->path(), " member '", info_.filename, "' at offset ",
                            data_start_, ": ", what);
}

Result<PythonBytes> ZipExtFile::Read2(size_t n) {
  if (compress_left_ == 0) return PythonBytes();
  n = static_cast<size_t>(std::min<uint64_t>(std::max(n, kMinReadSize), compress_left_));
  DLIO_RETURN_NOT_OK(fp_->Seek(static_cast<int64_t>(pos_), 0).status());
  DLIO_ASSIGN_OR_RETURN(PythonBytes data, fp_->ReadObject(n));
  DLIO_ASSIGN_OR_RETURN(pos_, fp_->Tell());
  compress_left_ -= data.size();
  if (data.size() == 0) return Where("the archive ends inside the member (EOFError)");
  return data;
}

Status ZipExtFile::Decompress(const std::vector<uint8_t>& in, size_t max_length,
                              std::vector<uint8_t>* out) {
  Inflater& f = *inflater_;
  if (!f.ok) return Status::Internal("zlib inflateInit2 failed");
  out->resize(max_length);
  f.z.next_in = const_cast<Bytef*>(in.data());
  f.z.avail_in = static_cast<uInt>(in.size());
  f.z.next_out = out->data();
  f.z.avail_out = static_cast<uInt>(max_length);
  int err = Z_OK;
  while (f.z.avail_out > 0) {
    const uInt before_in = f.z.avail_in, before_out = f.z.avail_out;
    err = inflate(&f.z, Z_SYNC_FLUSH);
    if (err == Z_STREAM_END) break;
    if (err != Z_OK && err != Z_BUF_ERROR) return Where("invalid deflate data");
    if (f.z.avail_in == before_in && f.z.avail_out == before_out) break;  // needs more input
  }
  out->resize(max_length - f.z.avail_out);
  if (err == Z_STREAM_END) {
    f.eof = true;
    f.tail.clear();  // the rest is unused_data
  } else {
    f.tail.assign(f.z.next_in, f.z.next_in + f.z.avail_in);
  }
  return Status::OK();
}

Status ZipExtFile::Flush(std::vector<uint8_t>* out) {
  Inflater& f = *inflater_;
  if (f.eof) return Status::OK();
  std::vector<uint8_t> in = std::move(f.tail);
  f.tail.clear();
  f.z.next_in = in.data();
  f.z.avail_in = static_cast<uInt>(in.size());
  uint8_t chunk[16384];
  for (;;) {
    f.z.next_out = chunk;
    f.z.avail_out = sizeof(chunk);
    const int err = inflate(&f.z, Z_FINISH);
    out->insert(out->end(), chunk, chunk + (sizeof(chunk) - f.z.avail_out));
    if (err == Z_STREAM_END) {
      f.eof = true;
      break;
    }
    if (f.z.avail_out != 0 || (err != Z_OK && err != Z_BUF_ERROR)) break;
  }
  return Status::OK();
}

Result<PythonBytes> ZipExtFile::Read1(size_t n) {
  if (eof_ || n == 0) return PythonBytes();
  PythonBytes data;
  if (inflater_) {
    std::vector<uint8_t> in = std::move(inflater_->tail);
    inflater_->tail.clear();
    if (n > in.size()) {
      DLIO_ASSIGN_OR_RETURN(PythonBytes raw, Read2(n - in.size()));
      in.insert(in.end(), raw.data(), raw.data() + raw.size());
    }
    std::vector<uint8_t> out;
    DLIO_RETURN_NOT_OK(Decompress(in, std::max(n, kMinReadSize), &out));
    eof_ = inflater_->eof || (compress_left_ == 0 && inflater_->tail.empty());
    if (eof_) DLIO_RETURN_NOT_OK(Flush(&out));
    data = PythonBytes(out.size());  // zlib's decompress returns a new object
    if (data.failed(out.size())) return Where("no memory for the inflated data (MemoryError)");
    if (!out.empty()) std::memcpy(data.data(), out.data(), out.size());
  } else {
    DLIO_ASSIGN_OR_RETURN(data, Read2(n));
    eof_ = compress_left_ == 0;
  }
  if (data.size() > left_) data = PythonBytes::Slice(&data, 0, static_cast<size_t>(left_));
  left_ -= data.size();
  if (left_ == 0) eof_ = true;
  DLIO_RETURN_NOT_OK(UpdateCrc(data.data(), data.size()));
  return data;
}

Status ZipExtFile::UpdateCrc(const uint8_t* data, size_t n) {
  if (!compute_crc_) return Status::OK();
  if (n > 0) running_crc_ = static_cast<uint32_t>(crc32_z(running_crc_, data, n));
  if (eof_ && check_crc_ && running_crc_ != info_.crc) {
    return Where("CRC mismatch (zipfile: Bad CRC-32)");
  }
  return Status::OK();
}

Result<size_t> ZipExtFile::Read1Into(size_t n, uint8_t* dst) {
  // Read2's request, read into `dst`; the caller checked that all of it is wanted.
  if (compress_left_ == 0) {
    eof_ = true;
    return size_t{0};
  }
  DLIO_RETURN_NOT_OK(fp_->Seek(static_cast<int64_t>(pos_), 0).status());
  DLIO_ASSIGN_OR_RETURN(size_t got, fp_->ReadInto(n, dst));
  DLIO_ASSIGN_OR_RETURN(pos_, fp_->Tell());
  compress_left_ -= got;
  if (got == 0) return Where("the archive ends inside the member (EOFError)");
  eof_ = compress_left_ == 0;
  left_ -= got;
  if (left_ == 0) eof_ = true;
  DLIO_RETURN_NOT_OK(UpdateCrc(dst, got));
  return got;
}

Result<size_t> ZipExtFile::ReadInto(size_t n, uint8_t* dst) {
  // ReadObject's steps: the read buffer's rest (all of it served when `n` fits strictly inside),
  // then _read1 calls until `n` bytes or the member's end, a partly used one kept as the buffer.
  const size_t buffered = readbuffer_.size() - offset_;
  if (n < buffered) {
    std::memcpy(dst, readbuffer_.data() + offset_, n);
    offset_ += n;
    return n;
  }
  if (buffered > 0) std::memcpy(dst, readbuffer_.data() + offset_, buffered);
  size_t done = buffered;
  readbuffer_ = PythonBytes();
  offset_ = 0;
  while (done < n && !eof_) {
    const size_t want = n - done;
    // _read2's request size: at least MIN_READ_SIZE, at most what is left of the member.
    const uint64_t raw = std::min<uint64_t>(std::max(want, kMinReadSize), compress_left_);
    if (!inflater_ && raw <= want && raw <= left_) {
      DLIO_ASSIGN_OR_RETURN(size_t got, Read1Into(static_cast<size_t>(raw), dst + done));
      done += got;
      continue;
    }
    DLIO_ASSIGN_OR_RETURN(PythonBytes data, Read1(want));
    const size_t take = std::min(want, data.size());
    if (take > 0) std::memcpy(dst + done, data.data(), take);
    done += take;
    if (take < data.size()) {
      readbuffer_ = std::move(data);
      offset_ = take;
      break;
    }
  }
  return done;
}

Result<PythonBytes> ZipExtFile::ReadObject(size_t n) {
  const size_t end = n + offset_;
  if (end < readbuffer_.size()) {
    PythonBytes buf = PythonBytes::Slice(&readbuffer_, offset_, end);
    offset_ = end;
    return buf;
  }
  size_t want = end - readbuffer_.size();
  PythonBytes buf = PythonBytes::Slice(&readbuffer_, offset_, readbuffer_.size());
  readbuffer_ = PythonBytes();
  offset_ = 0;
  while (want > 0 && !eof_) {
    DLIO_ASSIGN_OR_RETURN(PythonBytes data, Read1(want));
    if (want < data.size()) {
      buf = PythonBytes::Concat(std::move(buf), PythonBytes::Slice(&data, 0, want));
      readbuffer_ = std::move(data);
      offset_ = want;
      break;
    }
    want -= data.size();
    buf = PythonBytes::Concat(std::move(buf), std::move(data));
  }
  return buf;
}

Status ZipExtFile::Read(size_t n, std::vector<uint8_t>* out) {
  DLIO_ASSIGN_OR_RETURN(PythonBytes buf, ReadObject(n));
  if (buf.size() > 0) out->insert(out->end(), buf.data(), buf.data() + buf.size());
  return Status::OK();
}

}  // namespace dlio::pyio
