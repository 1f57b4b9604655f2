// FitTrace stage 3, dataset: format, layout, file count, samples per file and their sizes.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string_view>
#include <system_error>

#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

// The directory all data files are under.
std::string CommonDirectory(const std::vector<DataFile>& files) {
  std::string common = files.front().path.substr(0, files.front().path.rfind('/') + 1);
  for (const DataFile& f : files) {
    while (!common.empty() && f.path.compare(0, common.size(), common) != 0) {
      common.pop_back();
      common.erase(common.rfind('/') + 1);
    }
  }
  return common.empty() ? "." : common;
}

void FitFormat(const View& view, const FitOptions& options, FitResult* out) {
  const std::string by_suffix =
      options.format_of_suffix ? options.format_of_suffix(view.extension) : "";
  std::string by_magic;
  for (const DataFile& f : view.files) {
    if (f.probed && !f.info.format.empty()) {
      by_magic = f.info.format;
      break;
    }
  }
  const std::string suffix = view.extension.empty() ? "(none)" : "." + view.extension;
  if (!by_magic.empty() && (by_magic == by_suffix || by_suffix.empty())) {
    Set(out, "dataset.format", by_magic, FitConfidence::kHigh,
        StrCat("suffix ", suffix,
               " and the probed files (their magic bytes, where the format "
               "has some)"));
  } else if (!by_magic.empty()) {
    Set(out, "dataset.format", by_magic, FitConfidence::kMedium,
        StrCat("magic bytes say ", by_magic, " though the suffix is ", suffix));
  } else if (!by_suffix.empty()) {
    Set(out, "dataset.format", by_suffix, FitConfidence::kMedium,
        StrCat("suffix ", suffix, " (files not probed: magic bytes unchecked)"));
  } else {
    // Files no format claims: raw reads (or maps) exactly the bytes asked for, no header.
    Set(out, "dataset.format", "raw", FitConfidence::kLow,
        StrCat("suffix ", suffix, " is no dlio format and no magic bytes name one",
               view.files.front().probed ? "" : " (files not probed)",
               ": the files are plain bytes"));
  }
}

// A basename longer than this is in no file system (Linux's NAME_MAX): not dlio's.
constexpr size_t kNameMax = 255;
// More files than this in one dataset are no count dlio generates: a name that says so is not
// dlio's (its count would be trusted as dataset.num_files_train).
constexpr int64_t kMaxNamedFiles = 1'000'000'000;

// The digits that end `s` (its longest such suffix, maybe empty).
std::string_view TrailingDigits(std::string_view s) {
  size_t start = s.size();
  while (start > 0 && s[start - 1] >= '0' && s[start - 1] <= '9') --start;
  return s.substr(start);
}

// dlio's own names, <prefix>_<i>_of_<n>.<ext> (a non-empty prefix, i and n digits, an extension
// without dots), parsed by hand from the end in one bounded pass (std::regex recursed once per
// character: a long name overflowed the stack). `total` is n; false when the name is not of that
// form, longer than kNameMax, or n is not a count dlio generates (0, over kMaxNamedFiles).
bool ParseDlioName(std::string_view base, std::string* prefix, int64_t* total) {
  const size_t dot = base.rfind('.');
  if (base.size() > kNameMax || dot == std::string_view::npos || dot + 1 == base.size()) {
    return false;
  }
  std::string_view stem = base.substr(0, dot);
  const std::string_view n = TrailingDigits(stem);
  stem.remove_suffix(n.size());
  constexpr std::string_view kOf = "_of_";
  if (n.empty() || stem.size() < kOf.size() || stem.substr(stem.size() - kOf.size()) != kOf) {
    return false;
  }
  stem.remove_suffix(kOf.size());
  const std::string_view i = TrailingDigits(stem);
  stem.remove_suffix(i.size());
  if (i.empty() || stem.size() < 2 || stem.back() != '_') return false;
  stem.remove_suffix(1);
  if (!ParseDigits(n, total) || *total < 1 || *total > kMaxNamedFiles) return false;
  *prefix = std::string(stem);
  return true;
}

// A name for a reason: whole up to kNameMax characters, else its beginning and its length.
std::string NameForReason(const std::string& base) {
  return base.size() <= kNameMax ? base
                                 : StrCat(base.substr(0, 64), "... (", base.size(), " characters)");
}

// The stem of a base name (without its last extension).
std::string Stem(const std::string& base) { return base.substr(0, base.rfind('.')); }

// A prefix that makes dlio's names (<prefix>_<i>_of_<n>, i padded to n's digits) as long as the
// traced ones, for a format whose files hold their own name (DataFileInfo::stores_file_name):
// every traced stem of one length, and room for a prefix. "" otherwise.
std::string SameLengthPrefix(const View& view, int64_t files) {
  bool stores = false;
  for (const DataFile& f : view.files) stores |= f.probed && f.info.stores_file_name;
  const size_t length = Stem(Basename(view.files.front().path)).size();
  for (const DataFile& f : view.files) {
    if (Stem(Basename(f.path)).size() != length) return "";
  }
  const size_t digits = std::to_string(std::max<int64_t>(files, 1)).size();
  if (!stores || length <= 5 + 2 * digits) return "";
  std::string prefix = Stem(Basename(view.files.front().path)).substr(0, length - 5 - 2 * digits);
  for (char& c : prefix) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = 'x';
  }
  return prefix;
}

void FitLayout(const View& view, const FitOptions& options, FitResult* out) {
  Set(out, "dataset.data_folder", options.data_folder, FitConfidence::kHigh,
      StrCat("the emulation generates its own files; the traced ones were under ",
             CommonDirectory(view.files)));
  const std::string base = Basename(view.files.front().path);
  std::string prefix;
  int64_t named_total = -1;
  if (ParseDlioName(base, &prefix, &named_total)) {
    Set(out, "dataset.file_prefix", prefix, FitConfidence::kHigh,
        StrCat("file names ", base, ", ... follow dlio's <prefix>_<i>_of_<n>"));
  } else if (const std::string same =
                 SameLengthPrefix(view, static_cast<int64_t>(view.files.size()));
             !same.empty()) {
    named_total = -1;
    Set(out, "dataset.file_prefix", same, FitConfidence::kMedium,
        StrCat("file names (", NameForReason(base),
               ") are not dlio's, and the files hold their own names (", FittedFormat(*out),
               "): a prefix that makes dlio's names <prefix>_<i>_of_<n> as long"));
  } else {
    named_total = -1;
    Unset(out, "dataset.file_prefix", "img",
          StrCat("file names (", NameForReason(base),
                 ") have no dlio prefix (<prefix>_<i>_of_<n>.<ext>, n from 1 to ", kMaxNamedFiles,
                 ", at most ", kNameMax, " characters)"));
  }
  int64_t train = 0, valid = 0;
  for (const DataFile& f : view.files) ++(f.valid ? valid : train);
  if (train > 0 && named_total > train) {
    Set(out, "dataset.num_files_train", std::to_string(named_total), FitConfidence::kMedium,
        StrCat(train, " files read, their names say _of_", named_total));
  } else if (train > 0) {
    Set(out, "dataset.num_files_train", std::to_string(train),
        view.epochs > 1 ? FitConfidence::kHigh : FitConfidence::kMedium,
        StrCat(train, " distinct data files read",
               view.epochs > 1 ? " in every pass" : " (files never read are not in a trace)"));
  } else {
    Unset(out, "dataset.num_files_train", "8", "every data file read is under a valid/ folder");
  }
  if (valid > 0) {
    Set(out, "dataset.num_files_eval", std::to_string(valid), FitConfidence::kMedium,
        StrCat(valid, " data files read under a valid/eval folder"));
  }
}

}  // namespace

int64_t WholeFileAccesses(const View& view) {
  int64_t whole = 0;
  for (const Access& a : view.accesses) {
    const int64_t extent = view.files[static_cast<size_t>(a.file)].extent;
    if (extent > 0 && a.bytes * 10 >= extent * 9) ++whole;
  }
  return whole;
}

namespace {

// Samples per file and how sure (one sample when every read pass covers the whole file).
// Samples per file as the probed files store them (median; 0 when none was probed).
int64_t ProbedSamples(const View& view, size_t* files) {
  std::vector<int64_t> per_file;
  for (const DataFile& f : view.files) {
    if (f.probed && f.info.samples > 0) {
      per_file.push_back(f.info.samples);
    }
  }
  *files = per_file.size();
  return Median(per_file);
}

std::pair<int64_t, FitConfidence> SamplesPerFile(const View& view, const ModelGuess& model,
                                                 std::string* reason) {
  std::vector<int64_t> per_file;
  size_t probed_files = 0;
  const int64_t probed = ProbedSamples(view, &probed_files);
  if (view.items > 0) {
    // dlio's ai.data.item: one per sample read; a dropped last batch reads fewer than stored.
    for (const DataFile& f : view.files) {
      if (f.items > 0) per_file.push_back((f.items + view.epochs / 2) / view.epochs);
    }
    const int64_t s = std::max<int64_t>(Median(per_file), 1);
    if (probed >= s) {
      *reason = StrCat("stored in the files (median of ", probed_files, "); ", s,
                       " per file and epoch were read");
      return {probed, FitConfidence::kHigh};
    }
    *reason = StrCat("application sample events per file per epoch (median of ", per_file.size(),
                     " files)");
    return {s, FitConfidence::kHigh};
  }
  const int64_t whole = WholeFileAccesses(view);
  const bool most_whole = whole * 10 >= static_cast<int64_t>(view.accesses.size()) * 8;
  if (most_whole && probed > 0 && StreamsWholeFiles(model.model)) {
    *reason = StrCat("stored in the files (median of ", probed_files, "); ", whole, " of ",
                     view.accesses.size(), " file reads cover the whole file, as ", model.model,
                     " reads a file: once per pass, all of its samples");
    return {probed, FitConfidence::kHigh};
  }
  if (most_whole) {
    *reason = StrCat(whole, " of ", view.accesses.size(),
                     " reads of a file cover all of it (a whole-file load per sample)");
    return {1, FitConfidence::kMedium};
  }
  if (probed > 0) {
    *reason = StrCat("stored in the files (median of ", probed_files, ")");
    return {probed, FitConfidence::kHigh};
  }
  std::vector<std::vector<int64_t>> keys(view.files.size());
  for (const Access& a : view.accesses) {
    if (a.epoch == 0) keys[static_cast<size_t>(a.file)].push_back(a.key);
  }
  for (auto& k : keys) {
    if (k.empty()) continue;
    std::sort(k.begin(), k.end());
    per_file.push_back(std::unique(k.begin(), k.end()) - k.begin());
  }
  *reason = "distinct offsets of sample reads per file in the first pass (median)";
  return {std::max<int64_t>(Median(per_file), 1), FitConfidence::kMedium};
}

// Mean of the sample sizes the probe found (0 when none).
double ProbedMeanSize(const View& view) {
  std::vector<double> sizes;
  for (const DataFile& f : view.files) {
    for (int64_t s : f.info.sample_sizes) sizes.push_back(static_cast<double>(s));
  }
  return Moments(sizes).mean;
}

// Whether at least 80% of the data reads of `piece` bytes start at a probed sample's first byte
// within the probed samples' extent: libhdf5's sieve buffer (64 KiB) filled from the sample that
// a fresh dataset object reads (h5py's f['x'][j] per sample, samples smaller than the buffer),
// which are reads of the probed samples, not pieces of another dataset.
bool ReadsFromProbedSamples(const ProfileTrace& t, const View& view, int64_t piece) {
  std::map<std::string, const DataFile*> by_path;
  for (const DataFile& f : view.files) by_path[f.path] = &f;
  int64_t reads = 0, at_samples = 0;
  for (size_t i : view.data_events) {
    if (t.kind[i] != OpKind::kRead || t.size_bytes[i] != piece) continue;
    ++reads;
    const DataFile* f = by_path.at(t.String(t.path[i]));
    const DataFileInfo::FileRange& extent = f->info.sample_extent;
    const std::vector<int64_t>& sizes = f->info.sample_sizes;
    if (extent.bytes <= 0 || sizes.empty() || sizes.front() <= 0) continue;
    const int64_t at = t.offset[i];
    at_samples += extent.Overlaps(at, 1) && (at - extent.offset) % sizes.front() == 0;
  }
  return reads > 0 && at_samples * 10 >= reads * 8;
}

// The data reads are mostly of one size, far larger than the samples the probe found (e.g.
// chunk-sized crops of an hdf5 volume beside a small table the probe took for the samples): the
// samples are those pieces. True when it set the entries.
bool FitPieces(const ProfileTrace& t, const View& view, FitResult* out) {
  if (view.mapped) return false;  // touched runs of a mapping: the kernel's pages, not reads
  if (WholeFileAccesses(view) * 10 >= static_cast<int64_t>(view.accesses.size()) * 8) {
    return false;  // whole files: a loader's fixed-size reads of them, not pieces
  }
  const auto [piece, share] = CommonLargeRead(t, view);
  const double probed = ProbedMeanSize(view);
  if (probed <= 0 || share < 0.8 || static_cast<double>(piece) < 4 * probed) return false;
  if (ReadsFromProbedSamples(t, view, piece)) return false;
  std::vector<int64_t> per_file;
  for (const DataFile& f : view.files) {
    if (f.extent >= piece) per_file.push_back(f.extent / piece);
  }
  if (per_file.empty()) return false;
  Set(out, "dataset.num_samples_per_file", std::to_string(Median(per_file)), FitConfidence::kMedium,
      StrCat("file size / ", piece, " (median of ", per_file.size(),
             " files): the reads are pieces of another dataset than the one probed"));
  Set(out, "dataset.record_length_bytes", std::to_string(piece), FitConfidence::kMedium,
      StrCat(std::llround(share * 100), "% of the large data reads are ",
             HumanBytes(static_cast<double>(piece)), ", ",
             std::llround(static_cast<double>(piece) / probed),
             "x the probed samples: the program reads pieces of that size"));
  Set(out, "dataset.record_length_bytes_stdev", "0", FitConfidence::kMedium,
      "the pieces are all of one size");
  return true;
}

// Stored bytes per byte of record length of the probed files' format (csv text: ~2.65).
double StoredPerRecordByte(const View& view) {
  for (const DataFile& f : view.files) {
    if (f.probed && f.info.stored_bytes_per_record_byte > 0) {
      return f.info.stored_bytes_per_record_byte;
    }
  }
  return 1.0;
}

// At most this many distinct sizes, in a cycle of at most kMaxSizeCycle, are a list of sizes
// rather than a distribution (images and their masks, a few resolutions).
constexpr size_t kMaxDistinctSizes = 4;
constexpr int64_t kMaxSizeCycle = 16;

// dataset.record_length_bytes_sizes `list` (the generator cycles through it file by file), with
// its `mean` as record_length_bytes and no draw.
void SetSizeList(const std::string& list, int64_t mean, FitConfidence c, const std::string& why,
                 FitResult* out) {
  Set(out, "dataset.record_length_bytes_sizes", list, c, why);
  Set(out, "dataset.record_length_bytes", std::to_string(mean), c,
      "their mean (dlio derives it from the list)");
  Set(out, "dataset.record_length_bytes_stdev", "0", c, "the list gives the sizes (no draw)");
}

// Exact sizes that take a few values (2 to kMaxDistinctSizes), each as often as a cycle of at
// most kMaxSizeCycle files repeats them: dataset.record_length_bytes_sizes, which the generator
// cycles through file by file, instead of a normal draw of their mean and stdev (which would
// make sizes the program never reads). False (nothing set) otherwise.
bool FitSizeList(const std::vector<double>& sizes, double ratio, const std::string& source,
                 FitResult* out) {
  std::map<int64_t, int64_t> count;
  for (double s : sizes) ++count[std::llround(s / ratio)];
  if (count.size() < 2 || count.size() > kMaxDistinctSizes) return false;
  int64_t g = 0;
  for (const auto& [size, n] : count) g = std::gcd(g, n);
  std::vector<std::string> cycle;
  for (const auto& [size, n] : count) {
    for (int64_t k = 0; k < n / g; ++k) cycle.push_back(std::to_string(size));
  }
  if (static_cast<int64_t>(cycle.size()) > kMaxSizeCycle) return false;
  std::string list = "[", shares;
  for (const std::string& s : cycle) list += (list.size() > 1 ? ", " : "") + s;
  for (const auto& [size, n] : count) {
    shares += StrCat(shares.empty() ? "" : ", ", n, " of ", HumanBytes(static_cast<double>(size)));
  }
  SetSizeList(list + "]", std::llround(Moments(sizes).mean / ratio), FitConfidence::kHigh,
              StrCat(sizes.size(), " ", source, " take ", count.size(), " sizes (", shares,
                     "): the files cycle through them"),
              out);
  return true;
}

// Files read in random crops (View::cropped_passes) whose sizes are known only as the largest
// offset read in each: the kMaxSizeCycle quantiles of those, which the files cycle through
// (dataset.record_length_bytes_sizes), so that every generated file holds its crop; a normal draw
// of their mean and stdev makes files shorter than the shortest the program read, where a crop
// comes back short (requests of 0 bytes the program never made). False (nothing set) with fewer
// files than that.
bool FitCropSizes(std::vector<double> sizes, const std::string& source, FitResult* out) {
  if (static_cast<int64_t>(sizes.size()) < kMaxSizeCycle) return false;
  std::sort(sizes.begin(), sizes.end());
  std::string list = "[";
  double sum = 0;
  for (int64_t q = 0; q < kMaxSizeCycle; ++q) {
    // the middle of the q-th of kMaxSizeCycle equal shares of the sorted sizes
    const size_t k =
        static_cast<size_t>((2 * q + 1) * static_cast<int64_t>(sizes.size()) / (2 * kMaxSizeCycle));
    list += StrCat(q > 0 ? ", " : "", std::llround(sizes[k]));
    sum += static_cast<double>(std::llround(sizes[k]));
  }
  SetSizeList(list + "]", std::llround(sum / static_cast<double>(kMaxSizeCycle)),
              FitConfidence::kMedium,
              StrCat(kMaxSizeCycle, " quantiles of ", sizes.size(), " ", source, " (",
                     HumanBytes(sizes.front()), " to ", HumanBytes(sizes.back()),
                     "): read in random crops (train.epochs), each file must hold its crop, "
                     "which a normal draw of their mean and stdev would not"),
              out);
  return true;
}

void FitRecords(const ProfileTrace& t, const View& view, const ModelGuess& model, FitResult* out) {
  if (FitPieces(t, view, out)) {
    FitPieceChunks(view, out);
    return;
  }
  std::string why;
  const auto [samples, confidence] = SamplesPerFile(view, model, &why);
  Set(out, "dataset.num_samples_per_file", std::to_string(samples), confidence, why);
  std::vector<double> sizes;
  bool exact = false;
  for (const DataFile& f : view.files) {
    if (f.probed && f.info.samples == samples && !f.info.sample_sizes.empty()) {
      for (int64_t s : f.info.sample_sizes) sizes.push_back(static_cast<double>(s));
      exact = true;
    }
  }
  // Compressed in the files: the emulation writes them compressed as much (the ratio, below)
  // when its format can, else records of the stored size, which dlio's random bytes keep.
  const double fraction = AnyCompressibleUnits(view) ? 1.0 : StoredFraction(view);
  for (double& size : sizes) size *= fraction;
  std::string source = "sample sizes stored in the files";
  if (!exact && samples == 1) {
    // A whole-file load per sample of a file storing several (np.load of an array): the
    // record is the data the file holds, without the format's header the writer adds again.
    for (const DataFile& f : view.files) {
      if (f.probed && f.info.data_bytes > 0)
        sizes.push_back(static_cast<double>(f.info.data_bytes) * fraction);
    }
    exact = !sizes.empty();
    source = "data bytes stored in the files (a whole-file load per sample)";
  }
  if (!exact) {
    sizes.clear();
    const bool probed = std::any_of(view.files.begin(), view.files.end(),
                                    [](const DataFile& f) { return f.probed && f.info.size >= 0; });
    for (const DataFile& f : view.files) {
      if (f.extent > 0)
        sizes.push_back(static_cast<double>(f.extent) / static_cast<double>(samples));
    }
    source = StrCat(probed ? "file sizes" : "largest offset read per file",
                    samples > 1 ? StrCat(" / ", samples, " samples") : "");
  }
  if (sizes.empty()) {
    Unset(out, "dataset.record_length_bytes", "65536", "no read gave an offset (sizes unknown)");
    return;
  }
  // One sample per file: the list's sizes are the files' (the generator cycles it file by file).
  if (exact && samples == 1 && FitSizeList(sizes, StoredPerRecordByte(view), source, out)) return;
  if (!exact && samples == 1 && !view.cropped_passes.empty() && FitCropSizes(sizes, source, out))
    return;
  const MeanStdev m = Moments(sizes);
  const FitConfidence c = exact ? FitConfidence::kHigh : FitConfidence::kMedium;
  // What the format stores is an encoding of the record (csv: text): the record length that
  // makes the writer store samples of these sizes.
  const double ratio = exact ? StoredPerRecordByte(view) : 1.0;
  std::string encoded =
      ratio == 1.0 ? ""
                   : StrCat(" / ", ratio, ", the bytes the format's writer stores per record byte");
  if (exact && fraction < 1.0) {
    encoded += StrCat("; compressed in the files to ", std::llround(fraction * 100),
                      "% of their data: dlio's generated records do not compress, so records of "
                      "the stored size make the same reads");
  } else if (exact && AnyCompressibleUnits(view)) {
    encoded += StrCat("; their own bytes, stored gzip-compressed to ",
                      std::llround(StoredFraction(view) * 100), "% (dataset.compression_ratio)");
  }
  Set(out, "dataset.record_length_bytes", std::to_string(std::llround(m.mean / ratio)), c,
      StrCat("mean of ", sizes.size(), " ", source, " (", HumanBytes(m.mean), ")", encoded));
  Set(out, "dataset.record_length_bytes_stdev", std::to_string(std::llround(m.stdev / ratio)), c,
      StrCat("their standard deviation (", HumanBytes(m.stdev), ")", encoded));
}

// Images (jpeg, png) whose probed headers all declare 3 channels: dataset.image_channels 3, so
// the generated images hold the program's pixels (a side of sqrt(record / 3)) and their encoded
// sizes, and the chunks a decoder reads them by, follow the program's (DLIO's generators write
// grayscale). Mixed, gray or other channel counts keep the default.
void FitImageChannels(const View& view, FitResult* out) {
  int32_t channels = 0;
  int64_t images = 0;
  for (const DataFile& f : view.files) {
    if (!f.probed || f.info.image_channels <= 0) continue;
    if (channels != 0 && f.info.image_channels != channels) return;
    channels = f.info.image_channels;
    ++images;
  }
  if (channels != 3) return;
  Set(out, "dataset.image_channels", "3", FitConfidence::kHigh,
      StrCat("the ", images, " probed images are RGB (DLIO's generators write grayscale)"));
}

}  // namespace

void FitDataset(const ProfileTrace& trace, const View& view, const FitOptions& options,
                FitResult* out) {
  FitFormat(view, options, out);
  FitLayout(view, options, out);
  FitRecords(trace, view, GuessIoModel(trace, view, FittedFormat(*out), options), out);
  FitImageChannels(view, out);
  if (!FitStoredChunks(view, out)) FitChunking(trace, view, out);
  FitCompressionRatio(view, out);
  FitWriterKeys(view, out);
  FitReadVariants(view, out);
  FitRootAttributes(view, out);
}

void Set(FitResult* out, std::string key, std::string value, FitConfidence c, std::string reason) {
  out->entries.push_back({std::move(key), std::move(value), true, c, std::move(reason)});
}

bool ParseDigits(std::string_view text, int64_t* out) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return false;  // no sign
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  *out = v;
  return true;
}

int64_t EntryInt(const FitEntry* entry, int64_t fallback) {
  int64_t v = 0;
  return entry != nullptr && ParseDigits(entry->value, &v) ? v : fallback;
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<int64_t>::max() : product;
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<int64_t>::max() : sum;
}

void Unset(FitResult* out, std::string key, std::string default_value, std::string reason) {
  out->entries.push_back(
      {std::move(key), std::move(default_value), false, FitConfidence::kLow, std::move(reason)});
}

MeanStdev Moments(const std::vector<double>& xs) {
  MeanStdev m;
  if (xs.empty()) return m;
  for (double x : xs) m.mean += x;
  m.mean /= static_cast<double>(xs.size());
  double var = 0;
  for (double x : xs) var += (x - m.mean) * (x - m.mean);
  m.stdev = std::sqrt(var / static_cast<double>(xs.size()));
  return m;
}

int64_t Median(std::vector<int64_t> xs) {
  if (xs.empty()) return 0;
  std::nth_element(xs.begin(), xs.begin() + static_cast<ptrdiff_t>(xs.size() / 2), xs.end());
  return xs[xs.size() / 2];
}

std::string HumanBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[u]);
  return buf;
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", s);
  return buf;
}

}  // namespace dlio::fit
