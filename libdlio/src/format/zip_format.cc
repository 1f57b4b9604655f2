// zip: a ZIP archive whose members are the samples, one member per sample in the central
// directory's order (directories aside), as image datasets ship in one archive (CelebA's
// img_align_celeba.zip, StyleGAN's dataset zips). dlio writes members `<index>.bin` of the sample
// sizes, stored (dataset.compression none) or deflated (gzip), and reads any archive zipfile
// reads: stored and deflated members, ZIP64 records.
//
// native: the central directory at open (format/zip.h), then per sample one request for the
// member's local header and data together (a second for the data when the local header carries
// an extra field); a deflated member is inflated after it is read. zipfile (the default under
// auto): what zipfile.ZipFile(path) and ZipFile.read(name) send (io_models/zipfile_reader.h).
#include <zlib.h>

#include <algorithm>
#include <limits>

#include "dlio/str_cat.h"
#include "format/content.h"
#include "format/formats.h"
#include "format/inflate_exact.h"
#include "format/io_util.h"
#include "format/zip.h"
#include "io_models/model_readers.h"
#include "io_models/zipfile_reader.h"

namespace dlio::format_internal {
namespace {

bool IsDirectoryMember(const ZipMember& m) { return !m.name.empty() && m.name.back() == '/'; }

// The archive's sample members: every member but directories, in directory order. Corruption
// when it holds fewer than `expected` (> 0).
Result<std::vector<ZipMember>> ArchiveSampleMembers(const std::string& path,
                                                    const ZipDirectory& dir, uint64_t expected) {
  std::vector<ZipMember> out;
  for (const ZipMember& m : dir.members) {
    if (IsDirectoryMember(m)) continue;
    if (m.method != kZipStored && m.method != kZipDeflate) {
      return Status::Unimplemented(path, ": member '", m.name, "' at offset ", m.local_offset,
                                   " uses compression method ", m.method,
                                   " (stored and deflated are read)");
    }
    out.push_back(m);
  }
  if (expected > out.size()) {
    return Status::Corruption(path, ": the archive holds ", out.size(), " members, but ", expected,
                              " samples were expected (dataset.num_samples_per_file)");
  }
  if (expected > 0) out.resize(static_cast<size_t>(expected));
  return out;
}

class ZipReader final : public FormatReader {
 public:
  ZipReader(std::unique_ptr<File> file, uint64_t file_size, ZipDirectory dir,
            std::vector<ZipMember> members)
      : file_(std::move(file)),
        file_size_(file_size),
        dir_(std::move(dir)),
        members_(std::move(members)) {}

  uint64_t num_samples() const override { return members_.size(); }
  uint64_t sample_size(uint64_t i) const override {
    return i < members_.size() ? members_[static_cast<size_t>(i)].uncompressed_size : 0;
  }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(file_->path(), i, members_.size()));
    const ZipMember& m = members_[static_cast<size_t>(i)];
    DLIO_RETURN_NOT_OK(out->Resize(static_cast<size_t>(m.uncompressed_size)));
    const std::string where = file_->path() + " member '" + m.name + "'";
    if (m.method == kZipStored && m.compressed_size != m.uncompressed_size) {
      return Status::Corruption(where, " at offset ", m.local_offset, ": stored member of ",
                                m.compressed_size, " bytes claims ", m.uncompressed_size);
    }
    std::vector<uint8_t> packed;
    uint8_t* data = out->data();
    if (m.method == kZipDeflate) {
      if (m.compressed_size > file_size_) {
        return Status::Corruption(where, " at offset ", m.local_offset, ": ", m.compressed_size,
                                  " compressed bytes in a file of ", file_size_);
      }
      packed.resize(static_cast<size_t>(m.compressed_size));
      data = packed.data();
    }
    DLIO_RETURN_NOT_OK(ReadZipMemberBytes(file_.get(), dir_, m, where, data));
    if (m.method == kZipDeflate) {
      if (!InflateExactly(packed.data(), packed.size(), -MAX_WBITS, out->data(),
                          m.uncompressed_size)) {
        return Status::Corruption(where, ": deflated data does not inflate to ",
                                  m.uncompressed_size, " bytes");
      }
    }
    return Status::OK();
  }

  std::string DescribeJson() const override {
    uint64_t deflated = 0, stored_bytes = 0;
    for (const ZipMember& m : members_) {
      deflated += m.method == kZipDeflate;
      stored_bytes += m.compressed_size;
    }
    const std::string first = members_.empty() ? "" : members_.front().name;
    return StrCat(
        "{\"format\":\"zip\",\"path\":", JsonString(file_->path()), ",\"file_size\":", file_size_,
        ",", SampleSizesJson(members_.size(), *this), ",\"members\":", dir_.members.size(),
        ",\"deflated_members\":", deflated, ",\"first_member\":", JsonString(first),
        ",\"zip64\":", dir_.zip64 ? "true" : "false", ",\"stored_data_bytes\":", stored_bytes, "}");
  }

 private:
  std::unique_ptr<File> file_;
  uint64_t file_size_;
  ZipDirectory dir_;
  std::vector<ZipMember> members_;
};

Result<std::unique_ptr<FormatReader>> OpenZipNative(Storage* storage, const std::string& path,
                                                    const FormatOptions& options) {
  DLIO_ASSIGN_OR_RETURN(SizedFile f, OpenSized(storage, path, options));
  DLIO_ASSIGN_OR_RETURN(ZipDirectory dir, ReadZipDirectory(f.file.get(), f.size));
  DLIO_ASSIGN_OR_RETURN(std::vector<ZipMember> members,
                        ArchiveSampleMembers(path, dir, options.samples_per_file));
  return std::unique_ptr<FormatReader>(
      new ZipReader(std::move(f.file), f.size, std::move(dir), std::move(members)));
}

// Member names: the sample's index, zero-padded so that names sort as the samples do.
std::string ZipMemberName(uint64_t i) {
  std::string digits = std::to_string(i);
  if (digits.size() < 8) digits.insert(0, 8 - digits.size(), '0');
  return digits + ".bin";
}

class ZipFormat final : public Format {
 public:
  ZipFormat() {
    readers_.Add(IoModel::kNative, OpenZipNative)
        .Add(IoModel::kZipfile, io_models::OpenZipfileReader);
  }

  std::string name() const override { return "zip"; }
  std::string extension() const override { return "zip"; }
  bool variable_sample_sizes() const override { return true; }

  FormatCapabilities capabilities() const override {
    FormatCapabilities c;
    c.io_models = {IoModel::kZipfile};
    return c;
  }
  std::vector<IoModel> reader_models() const override { return readers_.models(); }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    DLIO_ASSIGN_OR_RETURN(const bool deflate, ParseCompression(options.compression));
    return WriteNewFile(storage, path, [&](File* file) {
      return WriteMembers(file, spec, deflate, options.compression_level);
    });
  }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    return readers_.Open(capabilities(), storage, path, options);
  }

 private:
  static Status WriteMembers(File* file, const FileSpec& spec, bool deflate, int level) {
    std::vector<ZipMember> members;
    uint64_t at = 0;
    std::vector<uint8_t> chunk;
    for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
      const uint64_t size = spec.sample_sizes[i];
      DLIO_ASSIGN_OR_RETURN(ZipMember m,
                            WriteZipMember(file, at, ZipMemberName(i), size, deflate, level, false,
                                           [&](const auto& sink) -> Status {
                                             for (uint64_t done = 0; done < size;) {
                                               const auto n = static_cast<size_t>(
                                                   std::min<uint64_t>(size - done, kWriteChunk));
                                               chunk.resize(n);
                                               FillSampleBytes(spec.seed, i, done, chunk.data(), n);
                                               DLIO_RETURN_NOT_OK(sink(chunk.data(), n));
                                               done += n;
                                             }
                                             return Status::OK();
                                           }));
      at = m.data_offset + m.compressed_size;
      members.push_back(std::move(m));
    }
    return WriteZipDirectory(file, at, members, false);
  }

  io_models::ModelReaders readers_;
};

}  // namespace

std::unique_ptr<Format> NewZipFormat() { return std::make_unique<ZipFormat>(); }

}  // namespace dlio::format_internal
