#include "io_models/tarfile_index_reader.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "dlio/str_cat.h"
#include "format/io_util.h"
#include "format/webdataset/tar_header.h"
#include "io_models/pyio/buffered_reader.h"

namespace dlio::io_models {
namespace {

namespace tar = format_internal::tar;

// What each of tarfile.open's compression probes reads before it gives up on an uncompressed
// archive: gzip's magic, read(2); bz2's and lzma's first block, _compression.BUFFER_SIZE.
constexpr size_t kGzipMagicBytes = 2;
constexpr size_t kCompressedBlockBytes = 8192;

// A regular member's data, and its WebDataset key (empty: none).
struct IndexedMember {
  std::string key;
  uint64_t data_offset = 0, size = 0;
};

// One of tarfile.open's probes: open(path, "rb") (open, fstat), the read the probe's reader
// makes, close.
Status Probe(Storage* storage, const std::string& path, const FormatOptions& options, size_t n) {
  DLIO_ASSIGN_OR_RETURN(format_internal::SizedFile f,
                        format_internal::OpenSized(storage, path, options));
  pyio::BufferedReader fp(f.file.get(), pyio::PythonBufferSize(storage, *f.file));
  std::vector<uint8_t> scratch(n);
  DLIO_RETURN_NOT_OK(fp.ReadInto(n, scratch.data()).status());
  return f.file->Close();
}

// TarFile.next over `fp` until the end of the archive: every header read with tarfile's calls.
class IndexWalk {
 public:
  IndexWalk(pyio::BufferedReader* fp, std::string path, uint64_t file_size)
      : fp_(fp), path_(std::move(path)), file_size_(file_size) {}

  Result<std::vector<IndexedMember>> Run() {
    std::vector<IndexedMember> members;
    DLIO_RETURN_NOT_OK(fp_->Tell().status());  // TarFile.__init__: self.offset = fileobj.tell()
    for (;;) {
      DLIO_ASSIGN_OR_RETURN(const uint64_t at, fp_->Tell());  // next(): offset != fileobj.tell()
      if (offset_ != at) DLIO_RETURN_NOT_OK(CheckDataBefore());
      DLIO_ASSIGN_OR_RETURN(const bool more, NextMember(&members));
      if (!more) return members;
    }
  }

 private:
  // tarfile's seek(offset - 1) and read(1): the last byte before the next header is there.
  Status CheckDataBefore() {
    DLIO_RETURN_NOT_OK(fp_->Seek(static_cast<int64_t>(offset_) - 1, 0).status());
    uint8_t byte = 0;
    DLIO_ASSIGN_OR_RETURN(const size_t got, fp_->ReadInto(1, &byte));
    if (got == 0) {
      return Status::Corruption(path_, ": unexpected end of data before the tar header at offset ",
                                offset_, " (the file ends at ", file_size_, ")");
    }
    return Status::OK();
  }

  // fromtarfile and _proc_member: the next member's header(s); false at the archive's end.
  Result<bool> NextMember(std::vector<IndexedMember>* members) {
    tar::PaxOverride pax;
    uint8_t block[tar::kBlock];
    while (true) {
      const uint64_t at = fp_->Position();
      DLIO_ASSIGN_OR_RETURN(const size_t got, fp_->ReadInto(tar::kBlock, block));
      if (got == 0 && at > 0) return false;  // tarfile: an empty read ends the archive
      if (got < tar::kBlock) {
        return Status::Corruption(path_, ": truncated tar header at offset ", at, " (", got, " of ",
                                  tar::kBlock, " bytes)");
      }
      DLIO_ASSIGN_OR_RETURN(const tar::Header h, tar::ParseHeader(block, path_, at));
      if (h.zero) return false;
      DLIO_RETURN_NOT_OK(fp_->Tell().status());  // fromtarfile: obj.offset = tell() - BLOCKSIZE
      if (tar::IsExtended(h)) {
        DLIO_RETURN_NOT_OK(ReadExtended(h, at, &pax));
        continue;
      }
      if (h.type == 'S') {
        return Status::Unimplemented(path_, ": tar header at offset ", at,
                                     ": GNU sparse members are not read");
      }
      const uint64_t size = pax.has_size ? pax.size : h.size;
      DLIO_ASSIGN_OR_RETURN(const uint64_t data, fp_->Tell());  // _proc_builtin's offset_data
      const bool regular = h.type == '0' || h.type == '\0' || h.type == '7';
      // _proc_builtin: data blocks follow regular members and types tarfile does not know.
      const bool has_data = regular || std::string_view("123456").find(h.type) == std::string::npos;
      if (has_data && size > file_size_ - std::min(data, file_size_)) {
        return Status::Corruption(path_, ": tar header at offset ", at, ": member size ", size,
                                  " runs past the end of the file (", file_size_, " bytes)");
      }
      offset_ = data + (has_data ? tar::PadToBlock(size) : 0);
      if (regular) {
        const std::string& name = pax.has_path ? pax.path : h.name;
        std::string_view key;
        members->push_back({tar::SampleKey(name, &key) ? std::string(key) : "", data, size});
      }
      return true;
    }
  }

  // A pax ('x', 'g') or GNU long-name ('L') header's data: read(padded size), as tarfile does.
  Status ReadExtended(const tar::Header& h, uint64_t at, tar::PaxOverride* pax) {
    DLIO_RETURN_NOT_OK(
        tar::CheckExtendedSize(h, file_size_ - std::min(file_size_, fp_->Position()), path_, at));
    std::vector<uint8_t> data(static_cast<size_t>(tar::PadToBlock(h.size)));
    DLIO_ASSIGN_OR_RETURN(const size_t got, fp_->ReadInto(data.size(), data.data()));
    if (got < data.size()) {
      return Status::Corruption(path_, ": tar header at offset ", at, ": the file ends inside ",
                                "its ", h.size, "-byte extended header");
    }
    const std::string_view text(reinterpret_cast<const char*>(data.data()),
                                static_cast<size_t>(h.size));
    return tar::ApplyExtended(h, text, path_, at, pax);
  }

  pyio::BufferedReader* fp_;
  std::string path_;
  uint64_t file_size_;
  uint64_t offset_ = 0;  // tarfile.offset: where the next header starts
};

// A sample: consecutive members sharing a key.
struct SampleMembers {
  size_t first = 0, count = 0;
  uint64_t bytes = 0;
};

std::vector<SampleMembers> GroupByKey(const std::vector<IndexedMember>& members) {
  std::vector<SampleMembers> samples;
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].key.empty()) continue;
    const bool continues = !samples.empty() && samples.back().first + samples.back().count == i &&
                           members[i - 1].key == members[i].key;
    if (!continues) {
      samples.push_back({i, 0, 0});
    }
    ++samples.back().count;
    samples.back().bytes += members[i].size;
  }
  return samples;
}

class TarfileIndexReader final : public FormatReader {
 public:
  TarfileIndexReader(std::unique_ptr<File> file, size_t buffer_size, bool python_bytes)
      : file_(std::move(file)), fp_(file_.get(), buffer_size), python_bytes_(python_bytes) {}

  // TarFile's first header, then the index the first extractfile loads.
  Status Load(uint64_t file_size, uint64_t expected) {
    DLIO_ASSIGN_OR_RETURN(members_, IndexWalk(&fp_, file_->path(), file_size).Run());
    samples_ = GroupByKey(members_);
    if (expected > samples_.size()) {
      return Status::Corruption(file_->path(), ": the archive holds ", samples_.size(),
                                " samples (members grouped by key), but ", expected,
                                " were expected");
    }
    count_ = expected > 0 ? expected : samples_.size();
    return Status::OK();
  }

  uint64_t num_samples() const override { return count_; }
  uint64_t sample_size(uint64_t i) const override {
    return i < count_ ? samples_[static_cast<size_t>(i)].bytes : 0;
  }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(format_internal::CheckSampleIndex(file_->path(), i, count_));
    const SampleMembers& s = samples_[static_cast<size_t>(i)];
    DLIO_RETURN_NOT_OK(out->Resize(static_cast<size_t>(s.bytes)));
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t at = 0;
    for (size_t m = s.first; m < s.first + s.count; ++m) {
      DLIO_RETURN_NOT_OK(Extract(members_[m], out->data() + at));
      at += members_[m].size;
    }
    return Status::OK();
  }

  std::string DescribeJson() const override {
    size_t most = 0;
    for (const SampleMembers& s : samples_) most = std::max(most, s.count);
    return StrCat("{\"format\":\"webdataset\",\"io_model\":\"tarfile_index\",\"members\":",
                  members_.size(), ",\"members_per_sample\":", most, ",",
                  format_internal::SampleSizesJson(count_, *this), "}");
  }

 private:
  // extractfile(member).read(): seek to its data, one read of its size.
  Status Extract(const IndexedMember& m, uint8_t* dst) {
    if (m.size == 0) return Status::OK();  // _FileInFile.read() of nothing: no call
    DLIO_RETURN_NOT_OK(fp_.Seek(static_cast<int64_t>(m.data_offset), 0).status());
    size_t got = 0;
    const size_t n = static_cast<size_t>(m.size);
    if (python_bytes_) {
      DLIO_ASSIGN_OR_RETURN(pyio::PythonBytes bytes, fp_.ReadObject(n));
      got = bytes.size();
      if (got > 0) std::memcpy(dst, bytes.data(), got);
    } else {
      DLIO_ASSIGN_OR_RETURN(got, fp_.ReadInto(n, dst));
    }
    if (got != n) {
      return Status::Corruption(file_->path(), ": member data at offset ", m.data_offset,
                                " ends after ", got, " of ", n, " bytes (the file shrank?)");
    }
    return Status::OK();
  }

  std::unique_ptr<File> file_;
  std::mutex mu_;  // the buffered file is one Python object: one call at a time
  pyio::BufferedReader fp_;
  bool python_bytes_;
  std::vector<IndexedMember> members_;
  std::vector<SampleMembers> samples_;
  uint64_t count_ = 0;
};

}  // namespace

Result<std::unique_ptr<FormatReader>> OpenTarfileIndexReader(Storage* storage,
                                                             const std::string& path,
                                                             const FormatOptions& options) {
  for (const size_t n : {kGzipMagicBytes, kCompressedBlockBytes, kCompressedBlockBytes}) {
    DLIO_RETURN_NOT_OK(Probe(storage, path, options, n));
  }
  DLIO_ASSIGN_OR_RETURN(format_internal::SizedFile sized,
                        format_internal::OpenSized(storage, path, options));
  const size_t buffer = pyio::PythonBufferSize(storage, *sized.file);
  auto reader = std::make_unique<TarfileIndexReader>(std::move(sized.file), buffer,
                                                     options.framework_client_costs);
  DLIO_RETURN_NOT_OK(reader->Load(sized.size, options.samples_per_file));
  return std::unique_ptr<FormatReader>(std::move(reader));
}

}  // namespace dlio::io_models
