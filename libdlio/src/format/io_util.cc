#include "format/io_util.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "core/utf8.h"
#include "dlio/comm.h"
#include "format/content.h"
#include "format/sized_deflate.h"

namespace dlio::format_internal {

Status ReadRange(File* file, uint64_t offset, uint64_t n, uint64_t transfer_size, uint8_t* dst) {
  const uint64_t step = transfer_size == 0 ? std::max<uint64_t>(n, 1) : transfer_size;
  for (uint64_t done = 0; done < n; done += step) {
    const uint64_t len = std::min(step, n - done);
    DLIO_RETURN_NOT_OK(file->ReadExactAt(offset + done, len, dst + done));
  }
  return Status::OK();
}

FileOptions ReadFileOptions(const FormatOptions& options) {
  FileOptions fo;
  fo.direct = options.direct;
  return fo;
}

Result<SizedFile> OpenSized(Storage* storage, const std::string& path,
                            const FormatOptions& options) {
  SizedFile f;
  DLIO_ASSIGN_OR_RETURN(f.file, storage->Open(path, OpenMode::kRead, ReadFileOptions(options)));
  DLIO_ASSIGN_OR_RETURN(f.size, f.file->Size());
  return f;
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u >= 0x80) {  // valid UTF-8 passes through; a stray byte becomes U+0080..U+00FF
          const size_t len = Utf8SequenceLength(s, i);
          if (len > 0) {
            out.append(s.substr(i, len));
            i += len - 1;
            break;
          }
        }
        if (u < 0x20 || u >= 0x80) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(u));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

namespace {

std::string SizesJson(uint64_t num_samples, uint64_t mn, uint64_t mx, long double mean,
                      const std::function<uint64_t(uint64_t)>& size_of) {
  char mean_text[64];
  std::snprintf(mean_text, sizeof mean_text, "%.1Lf", mean);
  std::string out = "\"num_samples\":" + std::to_string(num_samples) +
                    ",\"sample_size\":{\"min\":" + std::to_string(mn) +
                    ",\"max\":" + std::to_string(mx) + ",\"mean\":" + mean_text + "}";
  if (num_samples <= 16) {
    out += ",\"sample_sizes\":[";
    for (uint64_t i = 0; i < num_samples; ++i) {
      if (i > 0) out += ',';
      out += std::to_string(size_of(i));
    }
    out += ']';
  }
  return out;
}

}  // namespace

std::string SampleSizesJson(uint64_t num_samples, const FormatReader& reader) {
  uint64_t mn = 0, mx = 0;
  long double total = 0;
  for (uint64_t i = 0; i < num_samples; ++i) {
    const uint64_t s = reader.sample_size(i);
    mn = i == 0 ? s : std::min(mn, s);
    mx = std::max(mx, s);
    total += s;
  }
  return SizesJson(num_samples, mn, mx, num_samples ? total / num_samples : 0.0L,
                   [&](uint64_t i) { return reader.sample_size(i); });
}

std::string FixedSampleSizesJson(uint64_t num_samples, uint64_t size) {
  const uint64_t s = num_samples > 0 ? size : 0;
  return SizesJson(num_samples, s, s, static_cast<long double>(s), [s](uint64_t) { return s; });
}

std::string ProblemsJson(const std::vector<std::string>& problems) {
  if (problems.empty()) return "";
  std::string out = ",\"problems\":[";
  for (size_t i = 0; i < problems.size(); ++i) {
    if (i > 0) out += ',';
    out += JsonString(problems[i]);
  }
  out += ']';
  return out;
}

void RemoveQuietly(Storage* storage, const std::string& path) {
  auto exists = storage->Exists(path);
  if (exists.ok() && *exists) (void)storage->Remove(path);
}

Status ChunkAlignedWriter::Write(const uint8_t* p, size_t n) {
  while (n > 0) {
    const size_t to_boundary = chunk_ - static_cast<size_t>(end() % chunk_);
    if (held_.empty() && n >= to_boundary) {  // a whole piece up to the boundary: no copy
      DLIO_RETURN_NOT_OK(file_->WriteAt(pos_, p, to_boundary));
      pos_ += to_boundary;
      p += to_boundary;
      n -= to_boundary;
      continue;
    }
    const size_t take = std::min(n, to_boundary);
    held_.insert(held_.end(), p, p + take);
    p += take;
    n -= take;
    if (end() % chunk_ == 0) DLIO_RETURN_NOT_OK(Flush());
  }
  return Status::OK();
}

Status ChunkAlignedWriter::Flush() {
  if (held_.empty()) return Status::OK();
  DLIO_RETURN_NOT_OK(file_->WriteAt(pos_, held_.data(), held_.size()));
  pos_ += held_.size();
  held_.clear();
  return Status::OK();
}

Status WriteNewFile(Storage* storage, const std::string& path,
                    const std::function<Status(File*)>& write) {
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kCreateNew));
  Status st = write(file.get());
  if (st.ok()) st = file->Close();
  if (!st.ok()) {
    file.reset();
    RemoveQuietly(storage, path);
  }
  return st;
}

Result<bool> ParseCompression(const std::string& compression) {
  std::string c;
  for (char ch : compression) c += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (c.empty() || c == "none") return false;
  if (IsDeflateCodec(c)) return true;
  return Status::InvalidArgument("dataset.compression: '" + compression +
                                 "' is not supported by npz (use none, gzip, zlib or deflate)");
}

Status CheckSampleIndex(const std::string& path, uint64_t i, uint64_t n) {
  if (i < n) return Status::OK();
  return Status::OutOfRange(path, ": sample ", i, " of ", n);
}

Result<uint64_t> UniformSampleSize(const FileSpec& spec, const std::string& path,
                                   const char* format_name) {
  const uint64_t record = spec.sample_sizes.empty() ? 0 : spec.sample_sizes[0];
  for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
    if (spec.sample_sizes[i] != record) {
      return Status::InvalidArgument(path, ": ", format_name,
                                     " needs one sample size per file (sample ", i, " has ",
                                     spec.sample_sizes[i], " bytes, sample 0 ", record, ")");
    }
  }
  return record;
}

SampleShare ShareOf(uint64_t n, int rank, int world) {
  const uint64_t r = static_cast<uint64_t>(rank), w = static_cast<uint64_t>(world);
  const uint64_t base = n / w, extra = n % w;
  SampleShare s;
  s.first = r * base + std::min(r, extra);
  s.last = s.first + base + (r < extra ? 1 : 0);
  return s;
}

Status AgreeAcrossRanks(Comm* comm, const Status& mine, const std::string& what) {
  std::vector<double> failed{mine.ok() ? 0.0 : 1.0};
  Status reduced = comm->AllReduceMax(&failed);
  if (!mine.ok()) return mine;
  DLIO_RETURN_NOT_OK(reduced);
  if (failed[0] > 0) return Status::Cancelled(what + ": another rank failed (its error says why)");
  return Status::OK();
}

Status WriteSharedSamples(Storage* storage, const std::string& path, const FileSpec& spec,
                          const std::vector<uint64_t>& data_offsets, const SharedWrite& shared,
                          const std::function<Status(std::vector<std::string>* created)>& create) {
  std::vector<std::string> created;
  auto cleanup = [&] {
    for (const std::string& p : created) RemoveQuietly(storage, p);
  };
  Status mine = shared.rank == 0 ? create(&created) : Status::OK();
  Status st = AgreeAcrossRanks(shared.comm, mine, "creating shared file " + path);
  if (!st.ok()) {
    cleanup();
    return st;
  }
  const SampleShare share = ShareOf(spec.sample_sizes.size(), shared.rank, shared.world);
  mine = [&]() -> Status {
    if (share.first == share.last) return Status::OK();
    DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kReadWrite));
    uint64_t at = data_offsets[share.first];
    DLIO_RETURN_NOT_OK(ForEachDataChunkOf(spec, share.first, share.last, kWriteChunk,
                                          [&](const uint8_t* p, size_t len) {
                                            DLIO_RETURN_NOT_OK(file->WriteAt(at, p, len));
                                            at += len;
                                            return Status::OK();
                                          }));
    return file->Close();
  }();
  st = AgreeAcrossRanks(
      shared.comm, mine,
      StrCat("writing samples of shared file ", path, " (rank ", shared.rank, ")"));
  if (!st.ok()) cleanup();
  return st;
}

}  // namespace dlio::format_internal
