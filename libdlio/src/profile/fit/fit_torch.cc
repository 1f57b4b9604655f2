// Checkpoint files written by torch.save: the state dict that makes checkpoint.type torch_save
// issue the traced write requests. Read from a file that still exists (names, shapes, dtypes:
// checkpoint/torch_load.h), else inferred from the writes alone (docs/profiling.md). Either way
// a candidate is kept only when checkpoint/torch_save_file.h's requests for it equal the trace's.
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "checkpoint/torch_load.h"
#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

using torch_save::StorageOrder;
using torch_save::TorchStateDict;
using torch_save::TorchWrite;

constexpr uint64_t kAlign = 64;                 // torch's record data alignment
constexpr uint64_t kHeaderGap = 16 + 30 + 4;    // data descriptor, local header, "FB" extra field
constexpr uint64_t kEndRecords = 56 + 20 + 22;  // zip64 end, its locator, end of directory
constexpr uint64_t kBufferedMax = 1024;   // a record of this size or more leaves in its own writev
constexpr size_t kMaxTailTensors = 8;     // small tensors tried in the close's write
constexpr size_t kMaxExtraTensors = 256;  // small tensors tried before large ones
constexpr size_t kMaxInferredWrites = 4096;  // files of more writes are not inferred
constexpr size_t kMaxFilesTried = 8;

// The digits of the keys "0" .. "n-1" together.
uint64_t KeyDigits(uint64_t n) {
  uint64_t digits = 0;
  for (uint64_t low = 0, high = 10, width = 1; low < n; low = high, high *= 10, ++width) {
    digits += (std::min(n, high) - low) * width;
  }
  return digits;
}

uint64_t AlignUp(uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

int TrailingZeros(uint64_t x) {
  int n = 0;
  while (x != 0 && (x & 1) == 0) {
    x >>= 1;
    ++n;
  }
  return n;
}

// The k-th shortest name: 0-9, a-z, A-Z, then two characters, ...
std::string ShortName(size_t k) {
  static constexpr char kDigits[] =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  constexpr size_t kBase = sizeof(kDigits) - 1;
  std::string name;
  size_t width = 1, count = kBase;
  while (k >= count) {
    k -= count;
    ++width;
    count *= kBase;
  }
  for (size_t i = 0; i < width; ++i, k /= kBase) name.insert(name.begin(), kDigits[k % kBase]);
  return name;
}

// A state dict of 1-D tensors with `sizes` (file order) whose data.pkl is `pickle` bytes (or as
// near above it as names allow): the shortest names (0, 1, ..., a, b, ...), padded with '_'.
TorchStateDict Synthesize(const std::vector<uint64_t>& sizes, uint64_t pickle, bool metadata) {
  TorchStateDict sd;
  sd.metadata = metadata;
  if (metadata) sd.modules.push_back({"", 1});
  sd.tensors.resize(sizes.size());
  const std::vector<size_t> order = StorageOrder(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    torch_save::TorchTensor& t = sd.tensors[order[i]];
    const bool fp32 = sizes[i] % 4 == 0;
    t.storage = fp32 ? "FloatStorage" : "ByteStorage";
    t.element_size = fp32 ? 4 : 1;
    t.shape = {sizes[i] / t.element_size};
  }
  for (size_t k = 0; k < sd.tensors.size(); ++k) sd.tensors[k].name = ShortName(k);
  const uint64_t base = torch_save::TorchPickle(sd).size();
  if (pickle > base && !sd.tensors.empty()) {
    const uint64_t pad = pickle - base, n = sd.tensors.size();
    for (size_t k = 0; k < n; ++k) {
      sd.tensors[k].name.append(static_cast<size_t>(pad / n + (k < pad % n ? 1 : 0)), '_');
    }
  }
  return sd;
}

struct Guess {
  TorchStateDict sd;
  std::string how;  // what was observable, for the reason
};

// The sizes (file order) of the records torch.save wrote in `writes` for a file whose archive
// folder name is `archive` bytes long, with data.pkl alone in the first writev or not, and
// `tail` small tensors buffered into the close's write. Fails when the writes do not fit.
class WriteInference {
 public:
  WriteInference(size_t archive, const std::vector<TorchWrite>& writes)
      : archive_(archive), writes_(writes), by_size_(writes.size()) {
    for (size_t i = 0; i < by_size_.size(); ++i) by_size_[i] = i;
    std::stable_sort(by_size_.begin(), by_size_.end(),
                     [&](size_t a, size_t b) { return writes_[a].size > writes_[b].size; });
  }

  // Where the first tensor's data may start when data.pkl is buffered with it (its size is
  // known only within the alignment): every 64-byte step, the roundest tensor size first.
  std::vector<uint64_t> FirstStarts() const {
    std::vector<uint64_t> starts;
    const uint64_t pkl_at = AlignUp(30 + archive_ + 9 + 4);
    for (uint64_t p = 1; p < kBufferedMax; p += kAlign) {
      const uint64_t at = AlignUp(pkl_at + p + kHeaderGap + Name(StorageOrder(1), 0));
      // One write in all: the file's tensors are all in the close's write.
      const bool fits = writes_.size() < 2 || at < End(0);
      if (fits && (starts.empty() || starts.back() != at)) starts.push_back(at);
    }
    std::stable_sort(starts.begin(), starts.end(), [this](uint64_t a, uint64_t b) {
      return TrailingZeros(End(0) - a) > TrailingZeros(End(0) - b);
    });
    return starts;
  }

  // With data.pkl alone in the first writev or not (then the first tensor's data at
  // `h.first_at`), `h.extra` small tensors buffered before large ones (in the largest writevs)
  // and `h.tail` small tensors buffered into the close's write: the tensor sizes (file order)
  // and the range data.pkl's size is in. False when the writes do not fit.
  struct Hypothesis {
    bool pickle_alone = false;
    size_t tail = 0, extra = 0;
    uint64_t first_at = 0;
  };
  bool Try(const Hypothesis& h, std::vector<uint64_t>* sizes, uint64_t* pickle_lo,
           uint64_t* pickle_hi) const {
    const size_t n = writes_.size();
    const size_t big = Big(h.pickle_alone);
    if (n < 1 + (h.pickle_alone ? 1 : 0) || big + h.tail == 0 || (big == 0 && h.extra > 0)) {
      return false;
    }
    const size_t tensors = big + h.tail + h.extra;
    const std::vector<size_t>& order = Order(tensors);
    auto name = [&](size_t i) { return Name(order, i); };
    const uint64_t pkl_at = AlignUp(30 + archive_ + 9 + 4);
    sizes->clear();
    const size_t w0 = h.pickle_alone ? 1 : 0;
    uint64_t cursor = 0;
    if (h.pickle_alone) {
      if (End(0) <= pkl_at) return false;
      *pickle_lo = *pickle_hi = End(0) - pkl_at;
      cursor = End(0) + 16;
    } else {  // data.pkl is buffered: its size only within the alignment
      if (h.first_at < pkl_at + kHeaderGap + name(0) + 1) return false;
      const uint64_t room = h.first_at - kHeaderGap - name(0) - pkl_at;  // largest data.pkl
      *pickle_hi = std::min<uint64_t>(kBufferedMax - 1, room);
      *pickle_lo = room >= kAlign ? room - kAlign + 1 : 1;
      if (*pickle_lo > *pickle_hi) return false;
      cursor = pkl_at + *pickle_hi + 16;  // for the tail when no tensor has its own writev
    }
    const std::vector<size_t> before = SmallBefore(w0, big, h.extra);
    size_t pos = 0;  // file position of the next record
    for (size_t i = 0; i < big; ++i) {
      const size_t w = w0 + i;
      for (size_t k = 0; k <= before[i]; ++k, ++pos) {
        const uint64_t at =
            pos == 0 && !h.pickle_alone ? h.first_at : AlignUp(cursor + 34 + name(pos));
        const uint64_t size = k < before[i] ? 4 : (End(w) > at ? End(w) - at : 0);
        if (size == 0) return false;
        sizes->push_back(size);
        cursor = k < before[i] ? at + size + 16 : End(w) + 16;
      }
    }
    return Tail(pos, tensors, cursor, sizes);
  }

  // Whether a file of `tensors` storage records can end where the writes do (the version
  // record, 64-byte aligned, then the central directory and the end records).
  bool EndFits(size_t tensors) const { return VersionAt(tensors) % kAlign == 0; }
  // The writevs that end a tensor: all but data.pkl's own and the close's, and the central
  // directory's own (18 tensors and more: a directory of 1 KiB leaves in a writev, and the close
  // writes the end records alone).
  size_t Big(bool pickle_alone) const {
    const bool end_alone = writes_.size() >= 2 && writes_.back().size == kEndRecords;
    const size_t skip = 1 + (pickle_alone ? 1 : 0) + (end_alone ? 1 : 0);
    return writes_.size() >= skip ? writes_.size() - skip : 0;
  }

 private:
  uint64_t End(size_t w) const { return writes_[w].offset + writes_[w].size; }
  // The length of the i-th record's name in file order ("<archive>/data/<key>").
  uint64_t Name(const std::vector<size_t>& order, size_t i) const {
    return archive_ + 6 + std::to_string(order[i]).size();
  }

  // Where the version record's data starts in a file of `tensors` storages that ends where the
  // writes do (1 when the file is too small for them: never aligned).
  uint64_t VersionAt(size_t tensors) const {
    uint64_t cd = 46 * (tensors + 2) + (archive_ + 9) + (archive_ + 8);
    cd += tensors * (archive_ + 6) + KeyDigits(tensors);
    const uint64_t file_end = End(writes_.size() - 1);
    if (file_end < cd + kEndRecords + 18 + kAlign) return 1;
    return file_end - kEndRecords - cd - 16 - 2;
  }

  // How many of `extra` small tensors go before the large tensor of each of the `big` writevs
  // from `w0`: up to 32 in each, the largest writevs first (where they change the sizes least).
  std::vector<size_t> SmallBefore(size_t w0, size_t big, size_t extra) const {
    std::vector<size_t> before(big, 0);
    for (size_t w : by_size_) {
      if (extra == 0) break;
      if (w < w0 || w >= w0 + big) continue;
      before[w - w0] = std::min<size_t>(extra, 32);
      extra -= before[w - w0];
    }
    return before;
  }

  // StorageOrder(n), computed once per n.
  const std::vector<size_t>& Order(size_t n) const {
    auto it = orders_.find(n);
    if (it == orders_.end()) it = orders_.emplace(n, StorageOrder(n)).first;
    return it->second;
  }

  // The small tensors after `cursor`: all but the last of 4 bytes, the last filling up to where
  // the version record must start for the file to end where it does.
  bool Tail(size_t first, size_t tensors, uint64_t cursor, std::vector<uint64_t>* sizes) const {
    const std::vector<size_t>& order = Order(tensors);
    const uint64_t version_at = VersionAt(tensors);
    if (version_at % kAlign != 0) return false;
    for (size_t i = first; i < tensors; ++i) {
      const uint64_t at = AlignUp(cursor + 34 + archive_ + 6 + std::to_string(order[i]).size());
      uint64_t size = 4;
      if (i + 1 == tensors) {  // the largest end e with AlignUp(e + 16 + 30 + name + 4) == v
        const uint64_t last = version_at - (kHeaderGap + archive_ + 8);
        if (last < at + 1) return false;
        size = last - at;
        if (size >= 4) size -= size % 4;
      }
      sizes->push_back(size);
      cursor = at + size + 16;
    }
    return AlignUp(cursor + 34 + archive_ + 8) == version_at;
  }

  size_t archive_;
  const std::vector<TorchWrite>& writes_;
  std::vector<size_t> by_size_;                           // writes, largest first
  mutable std::map<size_t, std::vector<size_t>> orders_;  // Order's cache
};

// What the writes told of the inferred state dict, for the reason.
std::string Observed(const std::vector<uint64_t>& sizes, uint64_t lo, uint64_t hi, size_t tail,
                     size_t extra) {
  uint64_t bytes = 0;
  for (uint64_t s : sizes) bytes += s;
  return StrCat("from the writes: ", sizes.size(), " storages of ",
                HumanBytes(static_cast<double>(bytes)), ", data.pkl of ",
                lo == hi ? StrCat(lo, " bytes") : StrCat(lo, "-", hi, " bytes"),
                tail + extra > 0 ? StrCat("; ", tail + extra,
                                          " small ones, buffered into later writes, sized "
                                          "only to 64 bytes")
                                 : "",
                extra > 0 ? StrCat(" (", extra, " of them placed before the largest tensors)") : "",
                "; names, shapes and dtypes are not in the writes: 1-D tensors with names "
                "padded to data.pkl's size");
}

// A state dict whose torch.save file under `archive` issues `writes`, from the writes alone.
Result<Guess> InferFromWrites(const std::string& archive, const std::vector<TorchWrite>& writes) {
  if (writes.size() > kMaxInferredWrites) {
    return Status::NotFound("more than ", kMaxInferredWrites, " writes: not inferred");
  }
  WriteInference inference(archive.size(), writes);
  const std::vector<uint64_t> starts = inference.FirstStarts();
  for (size_t tail = 0; tail <= kMaxTailTensors; ++tail) {
    for (size_t extra = 0; extra <= kMaxExtraTensors; ++extra) {
      for (bool alone : {false, true}) {
        if (!inference.EndFits(inference.Big(alone) + tail + extra)) continue;
        for (uint64_t first_at : alone ? std::vector<uint64_t>{0} : starts) {
          std::vector<uint64_t> sizes;
          uint64_t lo = 0, hi = 0;
          if (!inference.Try({alone, tail, extra, first_at}, &sizes, &lo, &hi)) continue;
          for (bool metadata : {true, false}) {
            TorchStateDict sd = Synthesize(sizes, lo, metadata);
            const uint64_t pickle = torch_save::TorchPickle(sd).size();
            if (pickle > hi) continue;
            auto requests = torch_save::TorchSaveRequests(archive, sd);
            if (!requests.ok() || *requests != writes) continue;
            return Guess{std::move(sd), Observed(sizes, lo, hi, tail, extra)};
          }
        }
      }
    }
  }
  return Status::NotFound("no state dict of 1-D tensors reproduces the ", writes.size(), " writes");
}

// The state dict read from the file, when it still exists.
Result<Guess> ReadFromFile(const FitOptions& options, const std::string& path,
                           const std::vector<TorchWrite>& writes) {
  const TorchWrite& last = writes.back();
  DLIO_ASSIGN_OR_RETURN(checkpoint_internal::TorchSaveContents c,
                        checkpoint_internal::ReadTorchSave(
                            path, last.offset + last.size, [&](uint64_t offset, uint64_t n) {
                              return options.read_file(path, offset, n);
                            }));
  const size_t n = c.state_dict.tensors.size();
  const double bytes = static_cast<double>(c.state_dict.bytes());
  return Guess{std::move(c.state_dict), StrCat("read from ", Basename(path), "'s data.pkl: ", n,
                                               " tensors, ", HumanBytes(bytes))};
}

// Each file's writes, by start time, with their file's path (first written first).
std::vector<std::pair<std::string, std::vector<TorchWrite>>> WritesOf(const CheckpointWrites& w) {
  std::vector<std::pair<std::string, std::vector<TorchWrite>>> out;
  for (const auto& [path, writes] : w.per_file) out.emplace_back(path, writes.second);
  std::sort(out.begin(), out.end(), [&w](const auto& a, const auto& b) {
    return w.per_file.at(a.first).first < w.per_file.at(b.first).first;
  });
  return out;
}

bool Sequential(const std::vector<TorchWrite>& writes) {
  uint64_t at = 0;
  for (const TorchWrite& r : writes) {
    if (r.offset != at || r.size == 0) return false;
    at += r.size;
  }
  return !writes.empty();
}

}  // namespace

namespace {

// One torch.save file of every checkpoint (a flat state dict's, or one of a nested container's
// files: DeepSpeed's model states, then its optimizer states): the guess that reproduces it and
// its traced name.
struct Role {
  size_t guess = 0;
  std::string name;
  size_t files = 0;    // traced files whose writes the guess reproduces
  size_t first = 0;    // the first of them, in write order
  uint64_t bytes = 0;  // their bytes
};

// checkpoint.torch_modules' value for `sd`: "" when the names imply its _metadata.
std::string ModulesText(const TorchStateDict& sd, const std::string& text) {
  if (!sd.metadata) return "none";
  auto implicit = torch_save::ParseTorchStateDict(text, "");
  if (implicit.ok() && implicit->modules.size() == sd.modules.size() &&
      std::equal(sd.modules.begin(), sd.modules.end(), implicit->modules.begin(),
                 [](const auto& a, const auto& b) {
                   return a.name == b.name && a.version == b.version;
                 })) {
    return "";
  }
  std::string modules;
  for (size_t k = 1; k < sd.modules.size(); ++k) {
    modules += StrCat(k == 1 ? "" : ", ", sd.modules[k].name,
                      sd.modules[k].version == 1 ? "" : StrCat("=", sd.modules[k].version));
  }
  return modules;
}

// The roles, in write order: repeatedly the guess and name that reproduce the most files not yet
// taken, while one reproduces at least half as many as the first role, and at most `max_roles`
// (the files a save writes: a save of one file whose name changes from save to save, as
// model-8.pt and model-16.pt, is one role however its names' lengths differ).
std::vector<Role> FindRoles(
    const std::vector<Guess>& guesses,
    const std::vector<std::pair<std::string, std::vector<TorchWrite>>>& files, size_t max_roles) {
  std::vector<bool> taken(files.size(), false);
  std::vector<Role> roles;
  while (roles.size() < std::min(max_roles, kMaxFilesTried)) {
    Role best;
    std::vector<size_t> best_files;
    for (size_t g = 0; g < guesses.size(); ++g) {
      // The requests depend on the archive folder's length only: one name of each length.
      std::map<size_t, bool> tried;
      for (size_t f = 0; f < files.size(); ++f) {
        if (taken[f]) continue;
        const std::string name = Basename(files[f].first);
        const std::string archive = torch_save::TorchArchiveName(name);
        if (tried[archive.size()]) continue;
        tried[archive.size()] = true;
        auto mine = torch_save::TorchSaveRequests(archive, guesses[g].sd);
        if (!mine.ok()) continue;
        std::vector<size_t> matched;
        for (size_t k = 0; k < files.size(); ++k) {
          if (!taken[k] && *mine == files[k].second) matched.push_back(k);
        }
        if (matched.size() > best_files.size()) {
          best = {g, name, matched.size(), matched.front(), 0};
          best_files = std::move(matched);
        }
      }
    }
    if (best_files.empty() || (!roles.empty() && 2 * best.files < roles.front().files)) break;
    for (size_t k : best_files) {
      taken[k] = true;
      for (const TorchWrite& r : files[k].second) best.bytes += r.size;
    }
    roles.push_back(std::move(best));
  }
  std::sort(roles.begin(), roles.end(),
            [](const Role& a, const Role& b) { return a.first < b.first; });
  return roles;
}

// Joins the roles' `part`s with `sep`; one value when they are all the same and `collapse`.
template <typename F>
std::string Joined(const std::vector<Role>& roles, const char* sep, bool collapse, F&& part) {
  std::string out;
  bool same = true;
  for (size_t k = 0; k < roles.size(); ++k) {
    const std::string p = part(roles[k]);
    if (k > 0) same = same && p == part(roles[0]);
    out += (k ? sep : "") + p;
  }
  return collapse && same ? part(roles[0]) : out;
}

// InferFromWrites, searched once per distinct list of writes: the files of a checkpoint series
// are written alike, and what the search finds depends on the archive name's length alone (the
// zip headers' sizes), not on its letters.
class InferenceMemo {
 public:
  const std::optional<Guess>& Infer(const std::string& archive,
                                    const std::vector<TorchWrite>& writes) {
    std::vector<uint64_t> key{archive.size()};
    for (const TorchWrite& r : writes) key.insert(key.end(), {r.offset, r.size});
    auto [it, fresh] = found_.try_emplace(std::move(key));
    if (fresh) {
      if (auto inferred = InferFromWrites(archive, writes); inferred.ok()) {
        it->second = std::move(*inferred);
      }
    }
    return it->second;
  }

 private:
  std::map<std::vector<uint64_t>, std::optional<Guess>> found_;
};

}  // namespace

bool FitTorchSave(const CheckpointWrites& w, const FitOptions& options, FitResult* out) {
  const auto files = WritesOf(w);
  std::vector<Guess> guesses;
  std::string not_read;
  InferenceMemo memo;
  for (size_t k = 0; k < files.size() && guesses.size() < kMaxFilesTried; ++k) {
    const auto& [path, writes] = files[k];
    if (!Sequential(writes)) continue;
    const std::string archive = torch_save::TorchArchiveName(path);
    if (options.read_file) {
      auto read = ReadFromFile(options, path, writes);
      if (read.ok()) {
        auto mine = torch_save::TorchSaveRequests(archive, read->sd);
        const bool same = mine.ok() && *mine == writes;
        guesses.push_back(std::move(*read));
        if (same) continue;
        if (not_read.empty()) not_read = StrCat(Basename(path), " holds other tensors now");
      } else if (not_read.empty()) {
        not_read = read.status().message();
      }
    }
    if (const std::optional<Guess>& inferred = memo.Infer(archive, writes)) {
      guesses.push_back(*inferred);
    }
  }
  std::vector<int64_t> per_save;
  for (const Save& s : w.saves) per_save.push_back(static_cast<int64_t>(s.files.size()));
  const auto files_per_save = static_cast<size_t>(std::max<int64_t>(Median(per_save), 1));
  const std::vector<Role> roles = FindRoles(guesses, files, files_per_save);
  if (roles.empty()) return false;
  // One file per save, or files of torch.save's that carry nearly all the checkpoint bytes (the
  // rest: a tag file such as DeepSpeed's `latest`).
  uint64_t total = 0, reproduced = 0;
  size_t matched = 0;
  for (const auto& [path, writes] : files) {
    for (const TorchWrite& r : writes) total += r.size;
  }
  for (const Role& r : roles) {
    reproduced += r.bytes;
    matched += r.files;
  }
  if (!(Median(per_save) == 1 && roles.size() == 1) && reproduced < total - total / 20) {
    return false;
  }
  std::vector<std::string> texts;
  for (const Role& r : roles) {
    auto text = torch_save::TorchStateDictText(guesses[r.guess].sd);
    if (!text.ok()) return false;
    texts.push_back(*text);
  }
  const auto text_of = [&](const Role& r) { return texts[static_cast<size_t>(&r - roles.data())]; };
  bool read = true, padded = false;
  for (const Role& r : roles) {
    read = read && guesses[r.guess].how.rfind("read from", 0) == 0;
    padded = padded || guesses[r.guess].sd.pickle_bytes > 0;
  }
  const std::string observed = StrCat(
      "torch.save's zip (data.pkl, aligned storage records, central directory): the state "
      "dict's writes equal the trace's in ",
      matched, " of ", files.size(), " files",
      roles.size() > 1 ? StrCat(", ", roles.size(), " files per checkpoint") : "");
  Set(out, "checkpoint.type", "torch_save", FitConfidence::kHigh, observed);
  std::string how = Joined(roles, "; ", false, [&](const Role& r) { return guesses[r.guess].how; });
  Set(out, "checkpoint.torch_state_dict", Joined(roles, "; ", false, text_of),
      read ? FitConfidence::kHigh : FitConfidence::kMedium,
      StrCat(how, !read && !not_read.empty() ? StrCat(" (not read: ", not_read, ")") : ""));
  const std::string modules = Joined(roles, "; ", true, [&](const Role& r) {
    return ModulesText(guesses[r.guess].sd, text_of(r));
  });
  Set(out, "checkpoint.torch_modules", modules.empty() ? "\"\"" : modules,
      read ? FitConfidence::kHigh : FitConfidence::kLow,
      read ? "state_dict()'s _metadata, read from the file"
           : "not in the writes: the one that gives data.pkl its size");
  if (padded) {
    Set(out, "checkpoint.torch_pickle_bytes",
        Joined(roles, ", ", true,
               [&](const Role& r) { return std::to_string(guesses[r.guess].sd.pickle_bytes); }),
        FitConfidence::kHigh,
        "data.pkl's size in the file: the saved object is a container of more than its tensors");
  }
  std::string renamed;  // why names are templates, when they change from save to save
  const std::string names = Joined(roles, ", ", false, [&](const Role& r) {
    auto t = FitSaveFileName(w, r.name);
    if (!t) return r.name;
    renamed += StrCat(renamed.empty() ? "; " : ", ", t->why);
    return t->text;
  });
  Set(out, "checkpoint.torch_file_name", names, FitConfidence::kHigh,
      StrCat("the traced names, whose lengths set the zip's header and directory sizes", renamed));
  return true;
}

}  // namespace dlio::fit
