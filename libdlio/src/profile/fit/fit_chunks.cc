// FitDataset's chunk keys: chunked hdf5 from its reads or from the probed files' chunks, and
// chunks the files store compressed (their stored share, codec and compression ratio).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {

// Stored bytes per byte of sample data of the probed files (compression), 1 when none says less.
double StoredFraction(const View& view) {
  for (const DataFile& f : view.files) {
    if (f.probed && f.info.stored_fraction < 1.0) return f.info.stored_fraction;
  }
  return 1.0;
}

bool CompressibleUnits(const DataFile& f) {
  const DataFileInfo& i = f.info;
  return f.probed && i.writes_compression_ratio && i.compression == "gzip" &&
         i.compressed_units > 0 && i.compressed_unit_bytes > 0 && i.stored_unit_mean > 0 &&
         i.stored_fraction < 1.0;
}

bool ProbedSampleGroups(const View& view) {
  return std::any_of(view.files.begin(), view.files.end(), [](const DataFile& f) {
    return f.probed &&
           std::any_of(f.info.writer_keys.begin(), f.info.writer_keys.end(),
                       [](const auto& kv) { return kv.first == "dataset.hdf5_sample_groups"; });
  });
}

bool AnyCompressibleUnits(const View& view) {
  return std::any_of(view.files.begin(), view.files.end(),
                     [](const DataFile& f) { return CompressibleUnits(f); });
}

// hdf5 pieces read at their own size below libhdf5's 64 KiB sieve buffer (which would read a
// contiguous dataset 64 KiB at a time): each is a chunk.
void FitPieceChunks(const View& view, FitResult* out) {
  constexpr int64_t kSieveBytes = 64 * 1024;
  const FitEntry* record = out->Find("dataset.record_length_bytes");
  if (FittedFormat(*out) != "hdf5" || view.files.empty() || record == nullptr ||
      EntryInt(record, 0) >= kSieveBytes || ProbedSampleGroups(view)) {
    return;
  }
  Set(out, "dataset.enable_chunking", "true", FitConfidence::kMedium,
      "pieces below libhdf5's 64 KiB sieve buffer are read at their own size: chunks (a "
      "contiguous dataset is read 64 KiB at a time)");
  Set(out, "dataset.chunk_samples", "1", FitConfidence::kMedium, "one piece per chunk");
}

// hdf5 read in pieces of one size much smaller than a sample: the file is chunked (libhdf5
// reads a chunked dataset chunk by chunk).
void FitChunking(const ProfileTrace& t, const View& view, FitResult* out) {
  const FitEntry* format = out->Find("dataset.format");
  const FitEntry* record = out->Find("dataset.record_length_bytes");
  if (format == nullptr || format->value != "hdf5" || record == nullptr || !record->inferred ||
      ProbedSampleGroups(view)) {
    return;
  }
  std::map<int64_t, int64_t> count;
  int64_t reads = 0;
  for (size_t i : view.data_events) {
    if (t.kind[i] != OpKind::kRead || t.size_bytes[i] <= 0) continue;
    ++count[t.size_bytes[i]];
    ++reads;
  }
  std::pair<int64_t, int64_t> mode{0, 0};
  for (const auto& [size, n] : count) {
    if (n > mode.second) mode = {size, n};
  }
  const int64_t sample = EntryInt(record, 0);
  if (mode.second * 2 < reads || mode.first * 2 > sample) return;
  Set(out, "dataset.enable_chunking", "true", FitConfidence::kMedium,
      StrCat(mode.second, " of ", reads, " data reads are ", mode.first,
             " bytes, a fraction of a sample: chunk by chunk"));
  Set(out, "dataset.chunk_size", std::to_string(mode.first), FitConfidence::kMedium,
      "the most common data read size");
}

// The probed files store whole samples in chunks of one count (hdf5 chunks (k, ...)): the
// emulation's files are chunked so, which is what sets the reads a chunked dataset takes (one per
// chunk, and, compressed, the chunk's stored bytes). True when it set the entries.
bool FitStoredChunks(const View& view, FitResult* out) {
  std::set<int64_t> counts;
  int64_t files = 0;
  for (const DataFile& f : view.files) {
    if (!f.probed || f.info.samples_per_chunk <= 0) continue;
    counts.insert(f.info.samples_per_chunk);
    ++files;
  }
  if (counts.size() != 1) return false;
  const int64_t k = *counts.begin();
  Set(out, "dataset.enable_chunking", "true", FitConfidence::kHigh,
      StrCat("the ", files, " probed files store their samples in chunks of ", k,
             k == 1 ? " sample" : " samples"));
  Set(out, "dataset.chunk_samples", std::to_string(k), FitConfidence::kHigh,
      "whole samples per chunk, as stored in the files");
  return true;
}

void FitWriterKeys(const View& view, FitResult* out) {
  std::map<std::string, std::set<std::string>> values;
  std::map<std::string, int64_t> told;
  int64_t files = 0;
  for (const DataFile& f : view.files) {
    if (!f.probed) continue;
    ++files;
    for (const auto& [key, value] : f.info.writer_keys) {
      values[key].insert(value);
      ++told[key];
    }
  }
  for (const auto& [key, seen] : values) {
    if (seen.size() != 1 || told[key] != files) continue;
    Set(out, key, *seen.begin(), FitConfidence::kHigh,
        StrCat("the ", files, " probed files are laid out so (their format's description)"));
  }
}

namespace {

// The ratio of the probed files' compressed units (hdf5 chunks, npz members) to the bytes they
// take on disk, and its spread, pooled over the files: each file's units weigh as many, their
// spread within a file (unit bytes x stdev / mean^2) and the files' ratios around the mean both
// count.
struct PooledRatio {
  double mean = 0, stdev = 0, unit_bytes = 0, stored_mean = 0;
  int64_t units = 0, files = 0;
  int32_t level = -1;
};

PooledRatio PoolRatios(const View& view) {
  PooledRatio p;
  double sum = 0, sum_sq = 0, bytes = 0, stored = 0;
  for (const DataFile& f : view.files) {
    if (!CompressibleUnits(f)) continue;
    const DataFileInfo& i = f.info;
    const double unit = static_cast<double>(i.compressed_unit_bytes);
    const double ratio = unit / i.stored_unit_mean;
    const double within = unit * i.stored_unit_stdev / (i.stored_unit_mean * i.stored_unit_mean);
    const double n = static_cast<double>(i.compressed_units);
    sum += n * ratio;
    sum_sq += n * (within * within + ratio * ratio);
    bytes += n * unit;
    stored += n * i.stored_unit_mean;
    p.units += i.compressed_units;
    ++p.files;
    if (i.compression_level >= 0) p.level = i.compression_level;
  }
  if (p.units == 0) return p;
  const double n = static_cast<double>(p.units);
  p.mean = sum / n;
  p.stdev = std::sqrt(std::max(0.0, sum_sq / n - p.mean * p.mean));
  p.unit_bytes = bytes / n;
  p.stored_mean = stored / n;
  return p;
}

}  // namespace

void FitCompressionRatio(const View& view, FitResult* out) {
  const PooledRatio p = PoolRatios(view);
  if (p.units == 0) return;
  Set(out, "dataset.compression", "gzip", FitConfidence::kHigh,
      "the probed files' samples are deflated (gzip)");
  if (p.level >= 0) {
    Set(out, "dataset.compression_level", std::to_string(p.level), FitConfidence::kHigh,
        "the deflate filter's level in the files");
  }
  char ratio[32], spread[32];
  std::snprintf(ratio, sizeof ratio, "%.4f", p.mean);
  std::snprintf(spread, sizeof spread, "%.4f", p.stdev);
  Set(out, "dataset.compression_ratio", ratio, FitConfidence::kHigh,
      StrCat(p.units, " compressed units (chunks or members) of ", p.files,
             " probed files: ", HumanBytes(p.unit_bytes), " stored in ", HumanBytes(p.stored_mean),
             " on average (dlio's random bytes would not compress)"));
  Set(out, "dataset.compression_ratio_stdev", spread, FitConfidence::kHigh,
      "the spread of their ratios, within files and between them");
}

}  // namespace dlio::fit
