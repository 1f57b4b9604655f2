// npz: a ZIP of .npy members as numpy.savez writes it. Samples come from member "x.npy" (or the
// first ".npy" member when there is no x): one slice along its first axis.
//
// Stored members are read in place with ReadAt. Deflated members are inflated as a stream whose
// compressed input is read in transfer_size requests. A member of at most
// FormatOptions::inflate_cache_bytes (256 MiB by default) is inflated once, on the first sample
// read, and kept by the reader (so samples after the first cost a memcpy; the CRC is verified
// then). Larger members keep one inflate stream that
// moves forward: reading samples in order costs one pass, going back restarts from the member's
// start, and the CRC is verified whenever a pass reaches the end. Both paths hold a mutex, so
// reads of one deflated member are serialized.
#include <zlib.h>

#include <algorithm>
#include <mutex>

#include "format/content.h"
#include "format/formats.h"
#include "format/io_util.h"
#include "format/npy_header.h"
#include "format/zip.h"

namespace dlio::format_internal {
namespace {

// A forward-only inflate of one member; Read() restarts when asked to go back.
class Inflater {
 public:
  Inflater(File* file, const ZipMember& m, uint64_t transfer_size, bool verify)
      : file_(file), m_(m), verify_(verify) {
    const uint64_t chunk = transfer_size == 0 ? m.compressed_size : transfer_size;
    in_.resize(static_cast<size_t>(std::max<uint64_t>(1, std::min(chunk, m.compressed_size))));
  }
  ~Inflater() {
    if (init_) inflateEnd(&zs_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  uint64_t pos() const { return pos_; }

  // Writes uncompressed bytes [from, from + n) of the member to dst.
  Status Read(uint64_t from, uint64_t n, uint8_t* dst) {
    if (!init_ || from < pos_) DLIO_RETURN_NOT_OK(Restart());
    while (pos_ < from) {
      if (scratch_.empty()) scratch_.resize(256 << 10);
      const uint64_t skip = std::min<uint64_t>(from - pos_, scratch_.size());
      DLIO_RETURN_NOT_OK(Produce(scratch_.data(), skip));
    }
    return Produce(dst, n);
  }

 private:
  std::string Where() const { return file_->path() + " member '" + m_.name + "'"; }

  Status Restart() {
    if (!init_) {
      if (inflateInit2(&zs_, -15) != Z_OK) return Status::Internal("inflateInit2 failed");
      init_ = true;
    } else {
      inflateReset(&zs_);
    }
    zs_.avail_in = 0;
    in_pos_ = pos_ = 0;
    crc_ = static_cast<uint32_t>(crc32(0, nullptr, 0));
    ended_ = false;
    return Status::OK();
  }

  Status Produce(uint8_t* dst, uint64_t n) {
    while (n > 0) {
      if (ended_) {
        return Status::Corruption(Where() + " at offset " + std::to_string(m_.data_offset) +
                                  ": deflate stream ends after " + std::to_string(pos_) +
                                  " bytes, central directory says " +
                                  std::to_string(m_.uncompressed_size));
      }
      if (zs_.avail_in == 0 && in_pos_ < m_.compressed_size) {
        const uint64_t len = std::min<uint64_t>(in_.size(), m_.compressed_size - in_pos_);
        DLIO_RETURN_NOT_OK(file_->ReadExactAt(m_.data_offset + in_pos_, len, in_.data()));
        zs_.next_in = in_.data();
        zs_.avail_in = static_cast<uInt>(len);
        in_pos_ += len;
      }
      const uInt want = static_cast<uInt>(std::min<uint64_t>(n, 1u << 30));
      zs_.next_out = dst;
      zs_.avail_out = want;
      const int ret = inflate(&zs_, Z_NO_FLUSH);
      const uInt got = want - zs_.avail_out;
      if (ret != Z_OK && ret != Z_STREAM_END && !(ret == Z_BUF_ERROR && got > 0)) {
        const uint64_t at = m_.data_offset + in_pos_ - zs_.avail_in;
        if (ret == Z_BUF_ERROR) {
          return Status::Corruption(Where() + ": deflate data truncated at offset " +
                                    std::to_string(at));
        }
        return Status::Corruption(Where() + ": bad deflate data near offset " + std::to_string(at) +
                                  ": " + (zs_.msg ? zs_.msg : "error"));
      }
      if (verify_) crc_ = static_cast<uint32_t>(crc32_z(crc_, dst, got));
      pos_ += got;
      dst += got;
      n -= got;
      if (ret == Z_STREAM_END) ended_ = true;
      if (pos_ == m_.uncompressed_size && verify_ && crc_ != m_.crc32) {
        return Status::Corruption(Where() + " at offset " + std::to_string(m_.data_offset) +
                                  ": CRC mismatch (computed " + std::to_string(crc_) +
                                  ", central directory says " + std::to_string(m_.crc32) + ")");
      }
    }
    return Status::OK();
  }

  File* file_;
  ZipMember m_;
  bool verify_;
  z_stream zs_{};
  bool init_ = false, ended_ = false;
  std::vector<uint8_t> in_, scratch_;
  uint64_t in_pos_ = 0, pos_ = 0;
  uint32_t crc_ = 0;
};

class NpzReader final : public FormatReader {
 public:
  NpzReader(std::unique_ptr<File> file, uint64_t file_size, ZipDirectory dir, size_t member,
            NpyHeader header, std::unique_ptr<Inflater> inflater, std::vector<uint8_t> prefix,
            uint64_t transfer_size, uint64_t cache_limit)
      : file_(std::move(file)),
        file_size_(file_size),
        dir_(std::move(dir)),
        m_(dir_.members[member]),
        h_(std::move(header)),
        num_samples_(h_.num_samples()),
        sample_size_(h_.sample_size()),
        transfer_size_(transfer_size),
        cache_limit_(cache_limit),
        inflater_(std::move(inflater)),
        prefix_(std::move(prefix)) {}

  uint64_t num_samples() const override { return num_samples_; }
  uint64_t sample_size(uint64_t) const override { return sample_size_; }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(file_->path(), i, num_samples_));
    DLIO_RETURN_NOT_OK(out->Resize(sample_size_));
    const uint64_t at = h_.data_offset + i * sample_size_;
    if (m_.method == kZipStored) {
      return ReadRange(file_.get(), m_.data_offset + at, sample_size_, transfer_size_, out->data());
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (m_.uncompressed_size <= cache_limit_) {
      if (!cached_) {
        std::vector<uint8_t> all(m_.uncompressed_size);
        std::copy(prefix_.begin(), prefix_.end(), all.begin());
        DLIO_RETURN_NOT_OK(inflater_->Read(prefix_.size(), all.size() - prefix_.size(),
                                           all.data() + prefix_.size()));
        cache_ = std::move(all);
        cached_ = true;
      }
      std::copy_n(cache_.data() + at, sample_size_, out->data());
      return Status::OK();
    }
    return inflater_->Read(at, sample_size_, out->data());
  }

  std::string DescribeJson() const override {
    std::string members;
    for (const ZipMember& m : dir_.members) {
      members += std::string(members.empty() ? "" : ",") + "{\"name\":" + JsonString(m.name) +
                 ",\"compression\":\"" +
                 (m.method == kZipStored    ? "stored"
                  : m.method == kZipDeflate ? "deflate"
                                            : "other") +
                 "\",\"method\":" + std::to_string(m.method) +
                 ",\"compressed_size\":" + std::to_string(m.compressed_size) +
                 ",\"uncompressed_size\":" + std::to_string(m.uncompressed_size) +
                 ",\"crc32\":" + std::to_string(m.crc32) +
                 ",\"local_offset\":" + std::to_string(m.local_offset);
      if (m.name == m_.name) {
        members += ",\"samples\":true,\"dtype\":" + JsonString(h_.descr) +
                   ",\"shape\":" + h_.ShapeJson() +
                   ",\"fortran_order\":" + (h_.fortran_order ? "true" : "false");
      }
      members += "}";
    }
    return "{\"format\":\"npz\",\"path\":" + JsonString(file_->path()) +
           ",\"file_size\":" + std::to_string(file_size_) + "," +
           SampleSizesJson(num_samples_, *this) + ",\"sample_member\":" + JsonString(m_.name) +
           ",\"dtype\":" + JsonString(h_.descr) + ",\"shape\":" + h_.ShapeJson() +
           ",\"zip64\":" + (dir_.zip64 ? "true" : "false") + ",\"members\":[" + members + "]}";
  }

 private:
  std::unique_ptr<File> file_;
  uint64_t file_size_;
  ZipDirectory dir_;
  ZipMember m_;
  NpyHeader h_;
  uint64_t num_samples_, sample_size_, transfer_size_, cache_limit_;
  std::mutex mu_;  // guards the inflater and the cache
  std::unique_ptr<Inflater> inflater_;
  std::vector<uint8_t> prefix_;  // the member's npy header, already inflated at Open
  std::vector<uint8_t> cache_;
  bool cached_ = false;
};

// The member to sample from: x.npy, else the first .npy member, else the first member.
size_t PickMember(const ZipDirectory& dir) {
  for (size_t i = 0; i < dir.members.size(); ++i) {
    if (dir.members[i].name == "x.npy") return i;
  }
  for (size_t i = 0; i < dir.members.size(); ++i) {
    const std::string& n = dir.members[i].name;
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".npy") == 0) return i;
  }
  return 0;
}

class NpzFormat final : public Format {
 public:
  std::string name() const override { return "npz"; }
  std::string extension() const override { return "npz"; }
  bool variable_sample_sizes() const override { return false; }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    return WriteNpz(storage, path, spec, options, /*force_zip64=*/false);
  }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    FileOptions fo;
    fo.direct = options.direct;
    DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kRead, fo));
    DLIO_ASSIGN_OR_RETURN(uint64_t size, file->Size());
    DLIO_ASSIGN_OR_RETURN(ZipDirectory dir, ReadZipDirectory(file.get(), size));
    if (dir.members.empty()) return Status::Corruption(path + ": npz archive has no members");
    const size_t index = PickMember(dir);
    ZipMember& m = dir.members[index];
    DLIO_RETURN_NOT_OK(LocateZipMember(file.get(), dir, &m));
    const std::string where = path + " member '" + m.name + "'";
    std::unique_ptr<Inflater> inflater;
    std::vector<uint8_t> head(static_cast<size_t>(std::min<uint64_t>(m.uncompressed_size, 4096)));
    if (m.method == kZipStored) {
      if (m.compressed_size != m.uncompressed_size) {
        return Status::Corruption(where + " at offset " + std::to_string(m.local_offset) +
                                  ": stored member with compressed size " +
                                  std::to_string(m.compressed_size) + " != uncompressed size " +
                                  std::to_string(m.uncompressed_size));
      }
      DLIO_RETURN_NOT_OK(ReadRange(file.get(), m.data_offset, head.size(), 0, head.data()));
    } else if (m.method == kZipDeflate) {
      inflater = std::make_unique<Inflater>(file.get(), m, options.transfer_size, options.verify);
      head.resize(std::min<size_t>(head.size(), kNpyPreambleBytes));
      DLIO_RETURN_NOT_OK(inflater->Read(0, head.size(), head.data()));
    } else {
      return Status::Unimplemented(where + ": zip compression method " + std::to_string(m.method) +
                                   " (only stored and deflate)");
    }
    DLIO_ASSIGN_OR_RETURN(uint64_t total,
                          ParseNpyPreamble(head.data(), head.size(), where, m.data_offset));
    if (total > m.uncompressed_size) {
      return Status::Corruption(where + " at offset " + std::to_string(m.data_offset) +
                                ": npy header of " + std::to_string(total) +
                                " bytes exceeds the member's " +
                                std::to_string(m.uncompressed_size));
    }
    if (total > head.size()) {
      const size_t have = head.size();
      head.resize(total);
      if (inflater) {
        DLIO_RETURN_NOT_OK(inflater->Read(have, total - have, head.data() + have));
      } else {
        DLIO_RETURN_NOT_OK(
            ReadRange(file.get(), m.data_offset + have, total - have, 0, head.data() + have));
      }
    }
    DLIO_ASSIGN_OR_RETURN(NpyHeader h, ParseNpyHeader(head.data(), total, where, m.data_offset));
    if (m.uncompressed_size - h.data_offset != h.data_bytes) {
      return Status::Corruption(
          where + " at offset " + std::to_string(m.data_offset) + ": npy shape " + h.ShapeJson() +
          " x itemsize " + std::to_string(h.itemsize) + " = " + std::to_string(h.data_bytes) +
          " bytes, but the member holds " + std::to_string(m.uncompressed_size - h.data_offset) +
          " after its header");
    }
    head.resize(total);
    return std::unique_ptr<FormatReader>(new NpzReader(
        std::move(file), size, std::move(dir), index, std::move(h), std::move(inflater),
        std::move(head), options.transfer_size, options.inflate_cache_bytes));
  }
};

}  // namespace

Status WriteNpz(Storage* storage, const std::string& path, const FileSpec& spec,
                const FormatOptions& options, bool force_zip64) {
  DLIO_ASSIGN_OR_RETURN(bool deflate, ParseCompression(options.compression));
  const uint64_t n = spec.sample_sizes.size();
  DLIO_ASSIGN_OR_RETURN(const uint64_t record, UniformSampleSize(spec, path, "npz"));
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kCreateNew));
  auto write_all = [&]() -> Status {
    std::vector<ZipMember> members;
    const std::string x_header = BuildNpyHeader("|u1", {n, record});
    DLIO_ASSIGN_OR_RETURN(
        ZipMember x,
        WriteZipMember(file.get(), 0, "x.npy", x_header.size() + n * record, deflate,
                       options.compression_level, force_zip64, [&](const auto& sink) -> Status {
                         DLIO_RETURN_NOT_OK(sink(reinterpret_cast<const uint8_t*>(x_header.data()),
                                                 x_header.size()));
                         return ForEachDataChunk(spec, kWriteChunk, sink);
                       }));
    members.push_back(x);
    std::string y = BuildNpyHeader("<i8", {n});
    for (uint64_t i = 0; i < n; ++i) PutLe64(&y, static_cast<uint64_t>(SampleLabel(spec.seed, i)));
    const uint64_t y_offset = x.data_offset + x.compressed_size;
    DLIO_ASSIGN_OR_RETURN(
        ZipMember ym,
        WriteZipMember(file.get(), y_offset, "y.npy", y.size(), deflate, options.compression_level,
                       force_zip64, [&](const auto& sink) -> Status {
                         return sink(reinterpret_cast<const uint8_t*>(y.data()), y.size());
                       }));
    members.push_back(ym);
    DLIO_RETURN_NOT_OK(
        WriteZipDirectory(file.get(), ym.data_offset + ym.compressed_size, members, force_zip64));
    return file->Close();
  };
  Status st = write_all();
  if (!st.ok()) {
    file.reset();
    RemoveQuietly(storage, path);
  }
  return st;
}

std::unique_ptr<Format> NewNpzFormat() { return std::make_unique<NpzFormat>(); }

}  // namespace dlio::format_internal
