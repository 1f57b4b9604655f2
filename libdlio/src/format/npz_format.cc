// npz: a ZIP of .npy members as numpy.savez writes it. Samples come from member "x.npy" (or the
// first ".npy" member when there is no x), along its first or last axis (npy_samples.h; the
// length of member "y.npy" tells which).
//
// Stored members are read in place with ReadAt. Deflated members are inflated as a stream whose
// compressed input is read in transfer_size requests. A first-axis member of at most
// NpyOptions::inflate_cache_bytes (256 MiB by default) is inflated once, on the first sample
// read, and kept by the reader (so samples after the first cost a memcpy; the CRC is verified
// then). Larger members keep one inflate stream that moves forward: reading samples in order
// costs one pass, going back restarts from the member's start, and the CRC is verified whenever
// a pass reaches the end. A last-axis sample costs a whole pass over the member, as np.load.
// Deflated reads hold a mutex, so reads of one deflated member are serialized.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>

#include "format/content.h"
#include "format/formats.h"
#include "format/io_util.h"
#include "format/npy_header.h"
#include "format/npy_samples.h"
#include "format/sized_deflate.h"
#include "format/zip.h"
#include "format/zip_inflater.h"
#include "io_models/model_readers.h"
#include "io_models/numpy_model_reader.h"

namespace dlio::format_internal {
namespace {

// Output piece of a whole-member inflate pass for a last-axis sample (the requests are the
// compressed input's).
constexpr uint64_t kInflatePiece = 1u << 20;
// Deflate expands at most 1032:1 (zlib's documented maximum); a member that claims more is
// Corruption before anything is allocated or planned from its sizes.
constexpr uint64_t kMaxDeflateRatio = 1032;

// The parts of an opened sample member.
struct NpzArray {
  ZipMember member;
  NpyHeader header;
  std::vector<uint8_t> head;  // the member's npy header bytes, as read at Open
  std::unique_ptr<ZipInflater> inflater;
};

class NpzReader final : public FormatReader {
 public:
  NpzReader(std::unique_ptr<File> file, uint64_t file_size, ZipDirectory dir, NpzArray array,
            ArraySamples samples, std::optional<uint64_t> labels, std::vector<std::string> problems,
            const FormatOptions& options)
      : file_(std::move(file)),
        file_size_(file_size),
        dir_(std::move(dir)),
        m_(array.member),
        h_(std::move(array.header)),
        s_(std::move(samples)),
        labels_(labels),
        problems_(std::move(problems)),
        transfer_size_(options.transfer_size),
        cache_limit_(NpyOf(options.formats).inflate_cache_bytes),
        last_axis_(s_, h_.data_bytes,
                   m_.method != kZipStored ? kInflatePiece
                   : options.transfer_size ? options.transfer_size
                                           : kNumpyReadPieceBytes,
                   options.read_type == ReadType::kMemory),
        inflater_(std::move(array.inflater)),
        prefix_(std::move(array.head)) {}

  uint64_t num_samples() const override { return s_.num_samples; }
  uint64_t sample_size(uint64_t) const override { return s_.sample_size; }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(file_->path(), i, s_.num_samples));
    DLIO_RETURN_NOT_OK(out->Resize(s_.sample_size));
    const uint64_t data = m_.data_offset + h_.data_offset;  // file offset of a stored array
    if (s_.axis == SampleAxis::kLast) {
      if (m_.method == kZipStored) {
        return last_axis_.Read(
            i,
            [&](uint64_t pos, uint64_t n, uint8_t* dst) {
              return ReadRange(file_.get(), data + pos, n, 0, dst);
            },
            out->data());
      }
      std::lock_guard<std::mutex> lock(mu_);
      return last_axis_.Read(
          i,
          [&](uint64_t pos, uint64_t n, uint8_t* dst) {
            return inflater_->Read(h_.data_offset + pos, n, dst);
          },
          out->data());
    }
    const uint64_t at = h_.data_offset + s_.offset(i);  // offset in the member
    if (m_.method == kZipStored) {
      return ReadRange(file_.get(), m_.data_offset + at, s_.sample_size, transfer_size_,
                       out->data());
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (m_.uncompressed_size <= cache_limit_) {
      DLIO_RETURN_NOT_OK(FillCache());
      CopyFrontToBack(out->data(), cache_.data() + at, s_.sample_size);
      return Status::OK();
    }
    return inflater_->Read(at, s_.sample_size, out->data());
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
           FixedSampleSizesJson(s_.num_samples, s_.sample_size) +
           ",\"sample_member\":" + JsonString(m_.name) + ",\"dtype\":" + JsonString(h_.descr) +
           ",\"shape\":" + h_.ShapeJson() + ArraySamplesJson(s_, labels_) +
           ",\"zip64\":" + (dir_.zip64 ? "true" : "false") + ",\"members\":[" + members + "]" +
           StoredJson() + MembersReadJson() + ProblemsJson(problems_) + "}";
  }

 private:
  // What `dlio-run fit` sizes an emulation by (docs/formats.md, "inspect"): the sample member's
  // bytes on disk, and, deflated, its codec and the member as the one unit deflate compressed.
  std::string StoredJson() const {
    std::string out = ",\"stored_data_bytes\":" + std::to_string(m_.compressed_size);
    if (m_.method != kZipDeflate) return out;
    return out + ",\"compression\":\"gzip\",\"compressed_units\":{\"count\":1,\"bytes\":" +
           std::to_string(m_.uncompressed_size) +
           ",\"stored_mean\":" + std::to_string(m_.compressed_size) + ",\"stored_stdev\":0}";
  }

  // The reader.npz_members values `dlio-run fit` tries on an archive of several members
  // ("reader_variants"): the sample's member only (the default), every member in the
  // directory's order, and the sample's member first, then the others in that order.
  std::string MembersReadJson() const {
    if (dir_.members.size() < 2) return "";
    std::string all, sample_first = m_.name;
    for (const ZipMember& m : dir_.members) {
      if (m.name.find(',') != std::string::npos) return "";  // a name the key cannot list
      all += (all.empty() ? "" : ",") + m.name;
      if (m.name != m_.name) sample_first += "," + m.name;
    }
    std::string values = "\"\"," + JsonString(all);
    if (sample_first != all) values += "," + JsonString(sample_first);
    return ",\"reader_variants\":{\"reader.npz_members\":[" + values + "]}";
  }

  // Inflates the whole member once (the cache path); requires mu_.
  Status FillCache() {
    if (cached_) return Status::OK();
    std::vector<uint8_t> all(m_.uncompressed_size);
    std::copy(prefix_.begin(), prefix_.end(), all.begin());
    DLIO_RETURN_NOT_OK(
        inflater_->Read(prefix_.size(), all.size() - prefix_.size(), all.data() + prefix_.size()));
    cache_ = std::move(all);
    cached_ = true;
    return Status::OK();
  }

  std::unique_ptr<File> file_;
  uint64_t file_size_;
  ZipDirectory dir_;
  ZipMember m_;
  NpyHeader h_;
  ArraySamples s_;
  std::optional<uint64_t> labels_;
  std::vector<std::string> problems_;
  uint64_t transfer_size_, cache_limit_;
  LastAxisSampleReader last_axis_;  // np.load's whole-array reads
  std::mutex mu_;                   // guards the inflater and the cache
  std::unique_ptr<ZipInflater> inflater_;
  std::vector<uint8_t> prefix_;  // the member's npy header, already inflated at Open
  std::vector<uint8_t> cache_;
  bool cached_ = false;
};

// The member to sample from: x.npy, else the first .npy member, else the first member.
// (The numpy model makes the same choice from zipfile's directory.)
size_t PickMember(const ZipDirectory& dir) {
  std::vector<std::string> names;
  names.reserve(dir.members.size());
  for (const ZipMember& m : dir.members) names.push_back(m.name);
  return pyio::PickSampleMember(names);
}

// Locates member `index` and reads and checks its npy header: a stored member in one request of
// up to 4 KiB, a deflated one through a new inflater (kept in the result for the samples).
Result<NpzArray> OpenMember(File* file, const ZipDirectory& dir, size_t index,
                            const FormatOptions& options) {
  NpzArray a;
  a.member = dir.members[index];
  ZipMember& m = a.member;
  DLIO_RETURN_NOT_OK(LocateZipMember(file, dir, &m));
  const std::string where = file->path() + " member '" + m.name + "'";
  std::vector<uint8_t>& head = a.head;
  head.resize(static_cast<size_t>(std::min<uint64_t>(m.uncompressed_size, 4096)));
  if (m.method == kZipStored) {
    if (m.compressed_size != m.uncompressed_size) {
      return Status::Corruption(where, " at offset ", m.local_offset,
                                ": stored member with compressed size ", m.compressed_size,
                                " != uncompressed size ", m.uncompressed_size);
    }
    DLIO_RETURN_NOT_OK(ReadRange(file, m.data_offset, head.size(), 0, head.data()));
  } else if (m.method == kZipDeflate) {
    uint64_t most = 0;
    if (__builtin_mul_overflow(m.compressed_size, kMaxDeflateRatio, &most)) most = UINT64_MAX;
    if (m.uncompressed_size > most + kMaxDeflateRatio) {
      return Status::Corruption(where, " at offset ", m.local_offset, ": claims ",
                                m.uncompressed_size, " uncompressed bytes from ", m.compressed_size,
                                " deflated ones (deflate expands at most 1032:1)");
    }
    a.inflater = std::make_unique<ZipInflater>(file, m, options.transfer_size, options.verify);
    head.resize(std::min<size_t>(head.size(), kNpyPreambleBytes));
    DLIO_RETURN_NOT_OK(a.inflater->Read(0, head.size(), head.data()));
  } else {
    return Status::Unimplemented(where, ": zip compression method ", m.method,
                                 " (only stored and deflate)");
  }
  DLIO_ASSIGN_OR_RETURN(uint64_t total,
                        ParseNpyPreamble(head.data(), head.size(), where, m.data_offset));
  if (total > m.uncompressed_size) {
    return Status::Corruption(where, " at offset ", m.data_offset, ": npy header of ", total,
                              " bytes exceeds the member's ", m.uncompressed_size);
  }
  if (total > head.size()) {
    const size_t have = head.size();
    head.resize(total);
    if (a.inflater) {
      DLIO_RETURN_NOT_OK(a.inflater->Read(have, total - have, head.data() + have));
    } else {
      DLIO_RETURN_NOT_OK(
          ReadRange(file, m.data_offset + have, total - have, 0, head.data() + have));
    }
  }
  DLIO_ASSIGN_OR_RETURN(a.header, ParseNpyHeader(head.data(), total, where, m.data_offset));
  const NpyHeader& h = a.header;
  if (m.uncompressed_size - h.data_offset != h.data_bytes) {
    return Status::Corruption(where, " at offset ", m.data_offset, ": npy shape ", h.ShapeJson(),
                              " x itemsize ", h.itemsize, " = ", h.data_bytes,
                              " bytes, but the member holds ", m.uncompressed_size - h.data_offset,
                              " after its header");
  }
  head.resize(total);
  return a;
}

// The length of the labels (member y.npy, other than the sample member), when it decides the
// sample axis: only then is y read (np.load(f)['x'] never touches it). A damaged y is a problem
// for inspect, not an error: the samples do not depend on it.
std::optional<uint64_t> LabelsLength(File* file, const ZipDirectory& dir, size_t sample_member,
                                     const NpyHeader& x, const FormatOptions& options,
                                     std::vector<std::string>* problems) {
  if (x.shape.size() < 2 || x.fortran_order || x.shape[0] == x.shape.back()) return std::nullopt;
  for (size_t i = 0; i < dir.members.size(); ++i) {
    if (i == sample_member || dir.members[i].name != "y.npy") continue;
    FormatOptions quiet = options;
    quiet.verify = false;
    auto y = OpenMember(file, dir, i, quiet);
    if (!y.ok()) {
      problems->push_back("labels (y.npy) unreadable: " + y.status().ToString());
      return std::nullopt;
    }
    if (y->header.shape.empty()) return std::nullopt;
    return y->header.shape[0];
  }
  return std::nullopt;
}

class NpzFormat final : public Format {
 public:
  NpzFormat() { readers_.Add(IoModel::kNative, OpenNative).Add(IoModel::kNumpy, OpenNumpyModel); }

  std::string name() const override { return "npz"; }
  std::string extension() const override { return "npz"; }
  bool variable_sample_sizes() const override { return false; }
  // A sample's reads depend only on its size (docs/scaling.md).
  FormatCapabilities capabilities() const override {
    FormatCapabilities c;
    c.collective_reads = true;
    c.io_models = {IoModel::kNumpy};
    c.streams_samples = true;
    c.compression_ratio = true;
    c.member_loads = true;
    return c;
  }
  std::vector<IoModel> reader_models() const override { return readers_.models(); }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    return WriteNpz(storage, path, spec, options, /*force_zip64=*/false);
  }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    return readers_.Open(capabilities(), storage, path, options);
  }

 private:
  // reader.io_model numpy: the first np.load of the file (its member chosen from zipfile's
  // directory as PickMember does; with reader.npz_members, the members it names read in turn)
  // gives the sample count and layout; the native reader is opened only for inspect.
  static Result<std::unique_ptr<FormatReader>> OpenNumpyModel(Storage* storage,
                                                              const std::string& path,
                                                              const FormatOptions& options) {
    NumpyModelSpec spec = NumpyModelSpecFor(storage, path, options);
    spec.buffers.check_crc = options.verify;
    spec.buffers.npz_members = NpzMemberNames(NpyOf(options.formats));  // reader.npz_members
    return OpenNumpyModelReader(std::move(spec), options, [storage, path, options] {
      return OpenNative(storage, path, options);
    });
  }

  static Result<std::unique_ptr<FormatReader>> OpenNative(Storage* storage, const std::string& path,
                                                          const FormatOptions& options) {
    DLIO_ASSIGN_OR_RETURN(SizedFile opened, OpenSized(storage, path, options));
    std::unique_ptr<File> file = std::move(opened.file);
    const uint64_t size = opened.size;
    DLIO_ASSIGN_OR_RETURN(ZipDirectory dir, ReadZipDirectory(file.get(), size));
    if (dir.members.empty()) return Status::Corruption(path + ": npz archive has no members");
    const size_t index = PickMember(dir);
    DLIO_ASSIGN_OR_RETURN(NpzArray array, OpenMember(file.get(), dir, index, options));
    std::vector<std::string> problems;
    const std::optional<uint64_t> labels =
        LabelsLength(file.get(), dir, index, array.header, options, &problems);
    ArraySamples samples = ResolveArraySamples(array.header, labels, options);
    DLIO_RETURN_NOT_OK(CheckZeroByteSamples(
        samples, size,
        path + " member '" + array.member.name + "' shape " + array.header.ShapeJson()));
    if (samples.num_samples == 0) problems.push_back(path + ": the array holds no samples");
    if (samples.axis == SampleAxis::kLast && array.inflater && options.transfer_size == 0) {
      array.inflater->SetTransferSize(kNumpyReadPieceBytes);  // zipfile's reads for np.load
    }
    return std::unique_ptr<FormatReader>(new NpzReader(std::move(file), size, std::move(dir),
                                                       std::move(array), std::move(samples), labels,
                                                       std::move(problems), options));
  }

  io_models::ModelReaders readers_;
};

}  // namespace

namespace {

bool CompressibleMember(const FormatOptions& o) {
  return CompressionRatioSet(o.compression_ratio, o.compression_ratio_stdev);
}

// x.npy deflated to the length a compression ratio drawn for the file gives
// (dataset.compression_ratio: normal of its mean and stdev, at least 1, from the file's seed): its
// header and then random bytes as stored deflate blocks, the rest zeros (sized_deflate.h).
Result<ZipMember> WriteRatioMember(File* file, const std::string& name, const std::string& header,
                                   uint64_t size, const FileSpec& spec, const FormatOptions& o,
                                   bool force_zip64) {
  uint64_t state = spec.seed ^ 0x2a9c0de5a1edb10cULL;
  const double ratio =
      std::max(1.0, o.compression_ratio + o.compression_ratio_stdev * StandardNormal(&state));
  const auto target = static_cast<uint64_t>(std::llround(static_cast<double>(size) / ratio));
  const uint64_t literals =
      std::max<uint64_t>(LiteralsForDeflateBytes(size, target), header.size());
  return WriteSizedZipMember(
      file, 0, name, size, literals, force_zip64, [&](const auto& sink) -> Status {
        DLIO_RETURN_NOT_OK(sink(reinterpret_cast<const uint8_t*>(header.data()), header.size()));
        std::vector<uint8_t> buf(kWriteChunk);
        for (uint64_t done = header.size(); done < literals;) {
          const size_t n = static_cast<size_t>(std::min<uint64_t>(literals - done, buf.size()));
          FillSampleBytes(spec.seed, 0, done, buf.data(), n);
          DLIO_RETURN_NOT_OK(sink(buf.data(), n));
          done += n;
        }
        return Status::OK();
      });
}

}  // namespace

Status WriteNpz(Storage* storage, const std::string& path, const FileSpec& spec,
                const FormatOptions& options, bool force_zip64) {
  DLIO_ASSIGN_OR_RETURN(bool deflate, ParseCompression(options.compression));
  if (!deflate && CompressibleMember(options)) {
    return Status::InvalidArgument(path,
                                   ": dataset.compression_ratio needs deflated members "
                                   "(dataset.compression gzip)");
  }
  const uint64_t n = spec.sample_sizes.size();
  DLIO_ASSIGN_OR_RETURN(const uint64_t record, UniformSampleSize(spec, path, "npz"));
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kCreateNew));
  // np.savez opens each member with force_zip64=True: a zip64 extra field in every local header
  // (which zipfile reads, with a tell, on each open of the member); `force_zip64` asks the same
  // of the central directory and end records.
  constexpr bool kLocalZip64 = true;
  auto write_all = [&]() -> Status {
    std::vector<ZipMember> members;
    const WrittenArray array = ArrayToWrite(options, n, record);
    const std::string x_header = BuildNpyHeader(array.descr, array.shape);
    const uint64_t x_size = x_header.size() + n * record;
    auto x_written =
        deflate && CompressibleMember(options)
            ? WriteRatioMember(file.get(), "x.npy", x_header, x_size, spec, options, kLocalZip64)
            : WriteZipMember(
                  file.get(), 0, "x.npy", x_size, deflate, options.compression_level, kLocalZip64,
                  [&](const auto& sink) -> Status {
                    DLIO_RETURN_NOT_OK(
                        sink(reinterpret_cast<const uint8_t*>(x_header.data()), x_header.size()));
                    return ForEachArrayChunk(spec, NpyOf(options.formats).sample_layout,
                                             array.itemsize, kWriteChunk, sink);
                  });
    DLIO_ASSIGN_OR_RETURN(ZipMember x, std::move(x_written));
    members.push_back(x);
    std::string y = BuildNpyHeader("<i8", {n});
    for (uint64_t i = 0; i < n; ++i) PutLe64(&y, static_cast<uint64_t>(SampleLabel(spec.seed, i)));
    const uint64_t y_offset = x.data_offset + x.compressed_size;
    DLIO_ASSIGN_OR_RETURN(
        ZipMember ym,
        WriteZipMember(file.get(), y_offset, "y.npy", y.size(), deflate, options.compression_level,
                       kLocalZip64, [&](const auto& sink) -> Status {
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
