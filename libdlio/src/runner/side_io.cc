#include "dlio/side_io.h"

#include <algorithm>
#include <cstring>

#include "dlio/distribution.h"
#include "dlio/format.h"
#include "format/content.h"

namespace dlio {
namespace {

constexpr uint64_t kContentTag = 0x5e1d10;  // side-file content stream
constexpr uint64_t kOffsetTag = 0x0ff5e7;   // random offsets
constexpr uint64_t kSpreadTag = 0x5b4ead;   // spread steps
constexpr char kJsonHead[] = "{\"model\": \"";
constexpr char kJsonTail[] = "\"}\n";

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A uniform draw in [0, n) (n > 0); the modulo bias is irrelevant at these sizes.
uint64_t Below(uint64_t* state, uint64_t n) { return SplitMix64(state) % n; }

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string UnderFolder(const std::string& folder, const std::string& name) {
  if (name.empty() || name[0] == '/') return name;
  return folder + (folder.empty() || folder.back() == '/' ? "" : "/") + name;
}

// Bytes [offset, offset + n) of the end-of-run file: for a .json name a document
// {"model": "<letters>"} of exactly `total` bytes (when it fits), else seeded bytes.
void FillWriteBytes(bool json, uint64_t seed, uint64_t total, uint64_t offset, uint8_t* dst,
                    size_t n) {
  const uint64_t head = sizeof(kJsonHead) - 1, tail = sizeof(kJsonTail) - 1;
  if (!json || total < head + tail) {
    format_internal::FillSampleBytes(seed, 0, offset, dst, n);
    return;
  }
  format_internal::FillSampleBytes(seed, 0, offset, dst, n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t at = offset + i;
    if (at < head) {
      dst[i] = static_cast<uint8_t>(kJsonHead[at]);
    } else if (at >= total - tail) {
      dst[i] = static_cast<uint8_t>(kJsonTail[at - (total - tail)]);
    } else {
      dst[i] = static_cast<uint8_t>('a' + dst[i] % 26);  // a JSON string needs no escapes
    }
  }
}

}  // namespace

Result<SideIoOptions> SideIoOptionsFor(const WorkloadConfig& c, int rank) {
  const SideIoConfig& s = c.side_io;
  SideIoOptions o;
  o.read_file = UnderFolder(c.dataset.data_folder, s.read_file);
  o.read_file_size = s.read_file_size;
  o.read_file_format = s.read_file_format;
  o.read_size = s.read_size;
  o.reads = s.reads;
  o.schedule = s.schedule;
  o.access = s.access;
  o.end_reads = s.end_reads;
  if (s.write_bytes > 0) {
    std::string name = s.write_file;
    const std::string r = std::to_string(rank);
    for (size_t at; (at = name.find("{rank}")) != std::string::npos;) name.replace(at, 6, r);
    o.write_file = UnderFolder(c.output.folder, name);
  }
  o.write_bytes = s.write_bytes;
  o.write_request_size = s.write_request_size;
  o.seed = MixSeed(c.train.seed, 0x51de, static_cast<uint64_t>(rank));
  o.file_seed = MixSeed(c.train.seed, 0x51de, kContentTag);
  return o;
}

Status GenerateSideFile(const SideIoOptions& o, const Registries& registries, Storage* storage) {
  if (o.read_file.empty() || o.read_file_size == 0) return Status::OK();
  DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(o.read_file));
  if (exists) return Status::OK();
  const size_t slash = o.read_file.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    DLIO_RETURN_NOT_OK(storage->CreateDirs(o.read_file.substr(0, slash)));
  }
  const uint64_t seed = o.file_seed;
  // Through the format registry, "raw" included: raw's writer stores the seeded bytes alone.
  auto factory = registries.formats.Get(o.read_file_format);
  if (!factory.ok()) {
    return Status::NotFound("side_io.read_file_format: " + factory.status().message());
  }
  DLIO_ASSIGN_OR_RETURN(auto format, (*factory)());
  FileSpec spec;
  spec.sample_sizes = {o.read_file_size};
  spec.seed = seed;
  const Status status = WriteFileAtomicallyAt(storage, o.read_file, [&](const std::string& tmp) {
    return format->Write(storage, tmp, spec, FormatOptions{});
  });
  if (!status.ok()) return status.WithContext("side_io: generating the read file");
  return Status::OK();
}

SideIo::SideIo(const SideIoOptions& options, Storage* storage)
    : options_(options), storage_(storage), rng_(MixSeed(options.seed, kOffsetTag)) {}

SideIo::~SideIo() = default;

Result<std::unique_ptr<SideIo>> SideIo::Make(const SideIoOptions& options, Storage* storage) {
  if (storage == nullptr) return Status::InvalidArgument("SideIo: storage is null");
  if (!options.read_file.empty() && options.read_size == 0) {
    return Status::InvalidArgument("side_io.read_size must be >= 1");
  }
  if (options.end_reads > 0 && options.access != SideIoAccess::kWhole) {
    return Status::InvalidArgument("side_io.end_reads needs side_io.access: whole");
  }
  return std::unique_ptr<SideIo>(new SideIo(options, storage));
}

Result<std::unique_ptr<File>> SideIo::OpenReadFile() {
  auto file = storage_->Open(options_.read_file, OpenMode::kRead);
  if (!file.ok()) {
    return file.status().WithContext("side_io.read_file " + options_.read_file +
                                     " (generate it with workflow.generate_data and "
                                     "side_io.read_file_size)");
  }
  return file;
}

Status SideIo::BeforeTraining() {
  if (options_.read_file.empty() || started_) return Status::OK();
  started_ = true;
  if (options_.access == SideIoAccess::kWhole) {
    buffer_.resize(static_cast<size_t>(options_.read_size));
  } else {
    DLIO_ASSIGN_OR_RETURN(file_, OpenReadFile());
    DLIO_ASSIGN_OR_RETURN(file_size_, file_->Size());
    if (file_size_ == 0) {
      return Status::InvalidArgument("side_io.read_file " + options_.read_file + " is empty");
    }
    buffer_.resize(static_cast<size_t>(std::min(options_.read_size, file_size_)));
  }
  if (options_.schedule == SideIoSchedule::kBeforeTraining) {
    for (uint64_t i = 0; i < options_.reads; ++i) DLIO_RETURN_NOT_OK(ReadOnce());
  }
  return Status::OK();
}

void SideIo::SetRunSteps(uint64_t steps) {
  if (spread_drawn_ || options_.schedule != SideIoSchedule::kSpread) return;
  spread_drawn_ = true;
  if (steps == 0) return;
  uint64_t state = MixSeed(options_.seed, kSpreadTag);
  spread_steps_.resize(options_.reads);
  for (auto& s : spread_steps_) s = Below(&state, steps);
  std::sort(spread_steps_.begin(), spread_steps_.end());
}

Status SideIo::BeforeStep(uint64_t step) {
  if (!started_) return Status::OK();
  if (options_.schedule == SideIoSchedule::kPerStep) {
    for (uint64_t i = 0; i < options_.reads; ++i) DLIO_RETURN_NOT_OK(ReadOnce());
  } else if (options_.schedule == SideIoSchedule::kSpread) {
    // Steps the caller skipped still get their reads, late rather than never.
    while (spread_next_ < spread_steps_.size() && spread_steps_[spread_next_] <= step) {
      DLIO_RETURN_NOT_OK(ReadOnce());
      ++spread_next_;
    }
  }
  return Status::OK();
}

Status SideIo::ReadOnce() {
  return options_.access == SideIoAccess::kWhole ? ReadWholeFile() : ReadAtOffset();
}

Status SideIo::ReadWholeFile() {
  DLIO_ASSIGN_OR_RETURN(auto file, OpenReadFile());
  const size_t chunk = buffer_.size();
  uint64_t offset = 0;
  auto request = [&](size_t n, size_t at) -> Result<size_t> {
    DLIO_ASSIGN_OR_RETURN(size_t got, file->ReadSomeAt(offset, n, buffer_.data() + at));
    ++reads_done_;
    bytes_read_ += got;
    offset += got;
    return got;
  };
  for (bool short_chunk = false; !short_chunk;) {
    size_t filled = 0;
    while (filled < chunk) {
      DLIO_ASSIGN_OR_RETURN(size_t got, request(chunk - filled, filled));
      if (got == 0) break;
      filled += got;
    }
    short_chunk = filled < chunk;
  }
  for (uint64_t k = 0; k < options_.end_reads; ++k) {
    DLIO_RETURN_NOT_OK(request(chunk, 0).status());
  }
  return file->Close();
}

Status SideIo::ReadAtOffset() {
  const uint64_t n = buffer_.size();
  uint64_t offset;
  if (options_.access == SideIoAccess::kRandom) {
    offset = Below(&rng_, file_size_ - n + 1);
  } else {
    if (cursor_ + n > file_size_) cursor_ = 0;
    offset = cursor_;
    cursor_ += n;
  }
  DLIO_RETURN_NOT_OK(file_->ReadExactAt(offset, static_cast<size_t>(n), buffer_.data()));
  ++reads_done_;
  bytes_read_ += n;
  return Status::OK();
}

Status SideIo::AfterTraining() {
  if (file_) {
    DLIO_RETURN_NOT_OK(file_->Close());
    file_.reset();
  }
  if (options_.write_file.empty() || options_.write_bytes == 0) return Status::OK();
  const std::string& path = options_.write_file;
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    DLIO_RETURN_NOT_OK(storage_->CreateDirs(path.substr(0, slash)));
  }
  const bool json = EndsWith(path, ".json");
  const uint64_t total = options_.write_bytes;
  const uint64_t request =
      options_.write_request_size == 0 ? total : std::min(total, options_.write_request_size);
  std::vector<uint8_t> chunk(static_cast<size_t>(request));
  const uint64_t seed = MixSeed(options_.seed, kContentTag, 1);
  // In place, as the emulated program writes its model or stats file (open with O_TRUNC, write,
  // close): no temporary name and no rename, which would add a create and a rename per file.
  auto file = storage_->Open(path, OpenMode::kWrite);
  if (!file.ok()) return file.status().WithContext("side_io");
  Status status;
  for (uint64_t off = 0; off < total && status.ok();) {
    const size_t n = static_cast<size_t>(std::min(request, total - off));
    FillWriteBytes(json, seed, total, off, chunk.data(), n);
    status = (*file)->WriteAt(off, chunk.data(), n);
    off += n;
  }
  Status closed = (*file)->Close();
  if (status.ok()) status = closed;
  if (!status.ok()) return status.WithContext(StrCat("side_io: writing ", path));
  bytes_written_ += total;
  return Status::OK();
}

}  // namespace dlio
