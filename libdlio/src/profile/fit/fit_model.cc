// FitTrace: which framework I/O model (reader.io_model) the data reads look like, from the
// request sizes, opens and whole-file reads of the trace.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dlio/config_enums.h"
#include "dlio/storage.h"
#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {

bool StreamsWholeFiles(std::string_view model) {
  return model == "pandas" || model == "tf.data" || model == "tarfile";
}

// Opens of data files and samples read (application sample events when the trace has them,
// else sample reads): about one open per sample is a loader that opens the file for each.
std::pair<int64_t, int64_t> OpensAndSamples(const View& view) {
  int64_t opens = 0;
  for (const DataFile& f : view.files) opens += f.opens;
  const int64_t samples = view.items > 0 ? view.items : static_cast<int64_t>(view.accesses.size());
  return {opens, samples};
}

// Distinct samples (file offsets of a first large read) each process read from each file in
// each pass: an open per sample reads one after each open, a process that keeps its file open
// (h5py.File once per DataLoader worker) reads many.
int64_t SamplesReadPerProcessPass(const View& view) {
  std::set<std::tuple<int32_t, int32_t, int32_t, int64_t>> seen;
  for (const Access& a : view.accesses) {
    if (a.key >= 0) seen.emplace(a.pid, a.file, a.epoch, a.key);
  }
  return static_cast<int64_t>(seen.size());
}

bool OpensPerSample(const View& view) {
  const auto [opens, samples] = OpensAndSamples(view);
  if (samples > 0 && opens * 10 >= samples * 8) return true;
  // Without sample events, a sample read through a library's index (h5py: B-tree nodes, then
  // chunks out of offset order) is several runs of reads; every file opened again and again
  // in each pass is then what shows an open per sample, unless each open was followed by reads
  // of several samples in its process (one open per worker process and pass).
  const int64_t passes = static_cast<int64_t>(view.files.size()) * std::max(view.epochs, 1);
  return view.items == 0 && passes > 0 && opens >= 2 * passes &&
         SamplesReadPerProcessPass(view) < 2 * opens;
}

std::string OpensPerSampleReason(const View& view) {
  const auto [opens, samples] = OpensAndSamples(view);
  if (view.items > 0 || opens * 10 >= samples * 8) {
    return StrCat(opens, " opens of the data files for ", samples, " samples read");
  }
  return StrCat(opens, " opens of ", view.files.size(), " data files in ", view.epochs,
                " passes: each file is opened again for every sample");
}

std::string FittedFormat(const FitResult& out) {
  const FitEntry* format = out.Find("dataset.format");
  return format != nullptr && format->inferred ? format->value : "";
}

// The most common size of the data reads larger than kSmallReadBytes, and its share of them.
std::pair<int64_t, double> CommonLargeRead(const ProfileTrace& t, const View& view) {
  std::map<int64_t, int64_t> count;
  int64_t total = 0;
  for (size_t i : view.data_events) {
    if (t.kind[i] != OpKind::kRead || t.size_bytes[i] <= kSmallReadBytes) continue;
    ++count[t.size_bytes[i]];
    ++total;
  }
  std::pair<int64_t, int64_t> best{0, 0};
  for (const auto& [size, n] : count) {
    if (n > best.second) best = {size, n};
  }
  return {best.first, total == 0 ? 0 : static_cast<double>(best.second) / total};
}

namespace {

// tarfile.open(path)'s member index (TarFile.next): before each header that follows a member's
// data, seek(offset - 1) and read(1), tarfile's check that the data is there, through Python's
// buffered file: a read that starts one byte short of a 512-byte block. A stream (r|) and dlio's
// native reads start on blocks. At least one read in five so is tarfile's random access.
std::optional<ModelGuess> GuessTarfileIndex(const ProfileTrace& t, const View& view,
                                            int64_t reads) {
  int64_t checks = 0;
  for (size_t i : view.data_events) {
    if (t.kind[i] != OpKind::kRead) continue;
    checks += t.offset[i] >= 511 && t.offset[i] % 512 == 511;
  }
  if (checks == 0 || checks * 5 < reads) return std::nullopt;
  ModelGuess g{"tarfile_index", FitConfidence::kMedium,
               StrCat(checks, " of ", reads,
                      " reads start one byte before a 512-byte tar block: tarfile.open(path)'s "
                      "member index (seek(offset - 1) and read(1) before each header), then "
                      "members read by offset (extractfile(name).read())")};
  g.per_process_state = true;
  return g;
}

// Reads at offset 0 of a data file that come before its mapping in the same process, one per
// mapping (the first since the process's last mapping of the file; touched runs are no reads):
// how many mappings had one, and the median size of those reads; and how many mappings their
// process unmapped before it mapped anything again (a load that drops its mapping: PIL's
// Image.close).
struct HeadsBeforeMaps {
  int64_t maps = 0, headed = 0, bytes = 0, unmapped = 0;
};
HeadsBeforeMaps FindHeadsBeforeMaps(const ProfileTrace& t, const View& view) {
  HeadsBeforeMaps h;
  std::map<std::pair<int32_t, int32_t>, int64_t> pending;  // (pid, path): the head read's size
  std::map<int32_t, bool> mapped;                          // pid: a mapping not yet unmapped
  std::vector<int64_t> sizes;
  for (size_t i : view.data_events) {
    const auto key = std::make_pair(t.pid[i], t.path[i]);
    if (t.kind[i] == OpKind::kRead && t.offset[i] == 0 && t.size_bytes[i] > 0 &&
        t.String(t.name[i]) != kMmapTouchedName) {
      pending.emplace(key, t.size_bytes[i]);
    } else if (t.kind[i] == OpKind::kMmap && t.String(t.name[i]) == "munmap") {
      h.unmapped += std::exchange(mapped[t.pid[i]], false);
    } else if (t.kind[i] == OpKind::kMmap) {
      ++h.maps;
      mapped[t.pid[i]] = true;
      const auto p = pending.find(key);
      if (p == pending.end()) continue;
      sizes.push_back(p->second);
      pending.erase(p);
    }
  }
  h.headed = static_cast<int64_t>(sizes.size());
  if (!sizes.empty()) {
    std::nth_element(sizes.begin(), sizes.begin() + sizes.size() / 2, sizes.end());
    h.bytes = sizes[sizes.size() / 2];
  }
  return h;
}

// Data mapped by the program: each process maps the files it reads on its own (worker processes,
// not threads sharing one mapping). With a format whose mmap reader reads a head first
// (FitFormatTraits::mmap_head), reader.mmap_head_bytes when at least 80% of the mappings come after
// a read of the file's start in their process (PIL's Image.open, then ImageFile.load's map), and
// reader.open_per_sample when at least 80% are unmapped before their process maps again (each
// load closes its files and drops its mapping, as Image.close does; dlio's readers otherwise keep
// a file and its mapping open for the worker's life).
ModelGuess MmapGuess(const ProfileTrace& t, const View& view, int64_t mmaps, bool head_model) {
  ModelGuess g{"mmap", FitConfidence::kHigh, StrCat(mmaps, " mmap calls on data files")};
  g.per_process_state = true;
  if (!head_model) return g;
  const HeadsBeforeMaps h = FindHeadsBeforeMaps(t, view);
  if (h.maps == 0 || h.headed * 10 < h.maps * 8) return g;
  g.reason += StrCat(", ", h.headed, " of ", h.maps,
                     " mappings after a read of the file's start in their process (a header "
                     "parsed through Python's file first: PIL's Image.open, then the map of "
                     "ImageFile.load), of ",
                     h.bytes, " bytes (median)");
  g.keys = {{"reader.mmap_head_bytes", std::to_string(h.bytes)}};
  if (h.unmapped * 10 >= h.maps * 8) {
    g.reason += StrCat("; ", h.unmapped,
                       " of them unmapped before their process mapped again: "
                       "each load closes its file and drops the mapping (Image.close)");
    g.keys.emplace_back("reader.open_per_sample", "true");
  }
  return g;
}

}  // namespace

ModelGuess GuessIoModel(const ProfileTrace& t, const View& view, const std::string& format,
                        const FitOptions& options) {
  int64_t mmaps = 0, sessions = 0, whole = 0, small = 0, reads = 0, four_k = 0;
  for (size_t i : view.data_events) {
    if (t.kind[i] == OpKind::kMmap) ++mmaps;
    if (t.kind[i] != OpKind::kRead) continue;
    ++reads;
    small += t.size_bytes[i] <= 1024;
    four_k += t.size_bytes[i] == 4096;
  }
  for (const Access& a : view.accesses) sessions += a.session;
  whole = WholeFileAccesses(view);
  const int64_t n = static_cast<int64_t>(view.accesses.size());
  auto most = [n](int64_t k) { return n > 0 && k * 10 >= n * 8; };
  const FitFormatTraits traits =
      options.format_traits ? options.format_traits(format) : FitFormatTraits{};
  if (mmaps > 0) return MmapGuess(t, view, mmaps, traits.mmap_head);
  const auto [common, share] = CommonLargeRead(t, view);
  // Each rule is a model's request signature, asked only of a format that declares the model.
  auto declares = [&](const char* model) {
    return !options.format_declares || options.format_declares(format, model);
  };
  // Whole files, or crops of them when the passes found each read beginning where no other did.
  if (declares("pyio") && most(sessions) && (most(whole) || !view.cropped_passes.empty())) {
    if (auto g = GuessPyio(t, view, options.pyio_requests)) return *g;
  }
  if (declares("numpy") && most(sessions) && most(whole) && four_k > 0) {
    return {"numpy", FitConfidence::kMedium,
            StrCat("each sample is an open and a whole-file read with 4 KiB buffered reads (",
                   four_k, " of ", reads, " reads): np.load")};
  }
  if (declares("pil") && most(sessions) && four_k > 0 && (common == 65536 || common == 61440)) {
    return {"pil", FitConfidence::kMedium,
            StrCat("each sample is an open, a 4 KiB read and reads of up to 64 KiB to 64 KiB "
                   "boundaries (",
                   std::llround(share * 100), "% of large reads are ", common,
                   " bytes): PIL's Image.open and load")};
  }
  if (declares("tarfile_index")) {
    if (auto g = GuessTarfileIndex(t, view, reads)) return *g;
  }
  if (declares("zipfile") && reads > 0) {
    // No other reader of a zip's members is modelled: zipfile's requests are the default's.
    ModelGuess g{"zipfile", FitConfidence::kMedium,
                 StrCat(reads,
                        " reads of members inside a zip archive: zipfile.ZipFile(path) "
                        "(the end record, the central directory), then read(name) per "
                        "member")};
    g.per_process_state = true;
    return g;
  }
  if (declares("torch_load") && reads > 0) {
    // No other reader of a torch.save file is modelled: torch.load's requests are the default's.
    return {"torch_load", FitConfidence::kMedium,
            StrCat(reads,
                   " reads of torch.save files: torch.load(path) per sample (the magic, the "
                   "end records, the central directory, data.pkl, then each storage)")};
  }
  if (declares("tarfile") && most(whole)) {
    // tarfile's stream: 10240-byte records, split into 4096/8192-byte calls when the shard came
    // as Python's file object (WebDataset), one call each when tarfile opened the path.
    const bool file_object = common != 10240;
    ModelGuess g{"tarfile", FitConfidence::kMedium,
                 StrCat("each shard is read front to back once per pass (", whole, " of ", n,
                        " file reads cover all of it), ",
                        file_object ? "in 4 and 8 KiB requests: tarfile's stream over Python's "
                                      "file object (WebDataset)"
                                    : "in 10240-byte records: tarfile.open(path) in stream mode")};
    g.keys = {{"reader.tarfile_open",
               std::string(EnumName(file_object ? TarfileOpen::kFileObject : TarfileOpen::kPath))}};
    return g;
  }
  if (declares("tf.data") && view.companions.empty() && common == 262144 && share >= 0.8) {
    return {"tf.data", FitConfidence::kMedium,
            StrCat(std::llround(share * 100),
                   "% of large reads are 256 KiB and no .idx is read: TFRecordDataset's stream")};
  }
  if (declares("h5py")) {
    if (auto g = GuessH5py(t, view, most(sessions), small, reads)) return *g;
  }
  if (declares("pandas") && most(whole) &&
      view.accesses.size() <= view.files.size() * static_cast<size_t>(view.epochs)) {
    return {"pandas", FitConfidence::kMedium, "each file is read whole, once per pass: read_csv"};
  }
  // Last, before dlio's own reader: whole files read through Python's buffered file whose reader
  // looks past the end more often than its calls would (gzip.open, scipy.io.loadmat), matched on
  // the requests before the end; after every rule of a library's own.
  if (declares("pyio") && most(sessions) && most(whole)) {
    if (auto g = GuessPyio(t, view, options.pyio_requests, PyioMatch::kBeforeEnd)) return *g;
  }
  // Records of a file read through a Python file each reader keeps (f.seek, then one call).
  if (declares("pyio") && traits.pyio_records && !most(whole)) {
    if (auto g = GuessPyioRecords(t, view, options.pyio_requests)) return *g;
  }
  return {"native", FitConfidence::kMedium,
          "sample-sized reads (or fixed chunks) beside format headers: dlio's own reader"};
}

}  // namespace dlio::fit
