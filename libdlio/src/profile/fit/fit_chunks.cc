// FitDataset's chunk keys: chunked hdf5 from its reads or from the probed files' chunks, and
// chunks the files store compressed (their stored share, codec and compression ratio).
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

// The first probed file whose samples are stored in gzip chunks of whole samples, compressed,
// and whose format's writer makes such chunks of a chosen ratio
// (dataset.compression_ratio); nullptr when none.
const DataFileInfo* CompressibleChunks(const View& view) {
  for (const DataFile& f : view.files) {
    const DataFileInfo& i = f.info;
    if (f.probed && i.writes_compression_ratio && i.compression == "gzip" &&
        i.samples_per_chunk > 0 && i.stored_chunk_mean > 0 && i.stored_fraction < 1.0) {
      return &i;
    }
  }
  return nullptr;
}

// hdf5 pieces read at their own size below libhdf5's 64 KiB sieve buffer (which would read a
// contiguous dataset 64 KiB at a time): each is a chunk.
void FitPieceChunks(const View& view, FitResult* out) {
  constexpr int64_t kSieveBytes = 64 * 1024;
  const FitEntry* record = out->Find("dataset.record_length_bytes");
  if (FittedFormat(*out) != "hdf5" || view.files.empty() || record == nullptr ||
      EntryInt(record, 0) >= kSieveBytes) {
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
  if (format == nullptr || format->value != "hdf5" || record == nullptr || !record->inferred)
    return;
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

namespace {

// Chunks stored gzip-compressed, of a format that writes them so: the codec, its level and the
// ratio (with its spread) of the chunks' own bytes to their stored ones, so the emulation's chunks
// take what the program's take on disk, chunk by chunk.
void FitCompressionRatio(const View& view, int64_t samples_per_chunk, FitResult* out) {
  const DataFileInfo* info = CompressibleChunks(view);
  const FitEntry* record = out->Find("dataset.record_length_bytes");
  if (info == nullptr || record == nullptr || EntryInt(record, 0) <= 0) return;
  const double chunk = static_cast<double>(samples_per_chunk * EntryInt(record, 0));
  const double mean = info->stored_chunk_mean, stdev = info->stored_chunk_stdev;
  Set(out, "dataset.compression", "gzip", FitConfidence::kHigh,
      "the probed files' chunks pass through the deflate filter");
  if (info->compression_level >= 0) {
    Set(out, "dataset.compression_level", std::to_string(info->compression_level),
        FitConfidence::kHigh, "the deflate filter's level in the files");
  }
  char ratio[32], spread[32];
  std::snprintf(ratio, sizeof ratio, "%.4f", chunk / mean);
  std::snprintf(spread, sizeof spread, "%.4f", chunk * stdev / (mean * mean));
  Set(out, "dataset.compression_ratio", ratio, FitConfidence::kHigh,
      StrCat("a chunk's ", HumanBytes(chunk), " are stored in ", HumanBytes(mean),
             " on average in the files (dlio's random bytes would not compress)"));
  Set(out, "dataset.compression_ratio_stdev", spread, FitConfidence::kHigh,
      StrCat("the stored chunks' standard deviation (", HumanBytes(stdev),
             "), as a spread of the ratio"));
}

}  // namespace

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
  FitCompressionRatio(view, k, out);
  return true;
}

}  // namespace dlio::fit
