// FitTrace stage 3, besides the dataset: checkpoint writes (size, files, cadence) and side reads
// (small reads of another file).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>

#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

bool IsDataOrCompanion(const View& view, const std::string& path) {
  for (const DataFile& f : view.files) {
    if (f.path == path) return true;
  }
  return std::find(view.companions.begin(), view.companions.end(), path) != view.companions.end();
}

// Files a run writes that are not checkpoints: dlio's bookkeeping, logs, reports, traces.
bool IsBookkeeping(const std::string& path) {
  const std::string ext = Extension(path);
  return IsDlioInternal(path) || ext == "json" || ext == "log" || ext == "pfw" || ext == "gz" ||
         ext == "txt" || ext == "lock" || ext == "html";
}

// Files written once training reads data (earlier writes are set-up: a generated dataset, a
// side file), besides the dataset and bookkeeping: the checkpoints.
std::set<std::string> CheckpointFiles(const ProfileTrace& t, const View& view) {
  std::set<std::string> ckpt;
  const int64_t start = view.accesses.empty() ? 0 : view.accesses.front().start_us;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.kind[i] != OpKind::kWrite || t.path[i] == ProfileTrace::kNoString ||
        t.start_us[i] < start) {
      continue;
    }
    if (view.noise.paths.count(t.path[i])) continue;  // the runtime's, a launcher's, scratch
    const std::string& path = t.String(t.path[i]);
    if (!IsDataOrCompanion(view, path) && !IsBookkeeping(path)) {
      ckpt.insert(path);
    }
  }
  return ckpt;
}

// Files of the checkpoints' kind (extension) that the run reads and never writes: the checkpoint
// it resumed from (DeepSpeed's load_checkpoint, torch.load of a `latest` tag's files).
std::vector<const FileUse*> ResumeReads(const View& view, const std::set<std::string>& ckpt) {
  std::set<std::string> kinds;
  for (const std::string& path : ckpt) {
    if (!Extension(path).empty()) kinds.insert(Extension(path));
  }
  std::vector<const FileUse*> out;
  for (const FileUse& u : view.uses) {
    if (u.reads > 0 && u.writes == 0 && kinds.count(Extension(u.path)) && !ckpt.count(u.path) &&
        !IsDataOrCompanion(view, u.path) && !IsDlioInternal(u.path)) {
      out.push_back(&u);
    }
  }
  return out;
}

// The number of steps that began before `us` (which step a write follows). Steps found from the
// gaps between bursts of sample reads miss the last one, which ends no gap: a write after the last
// read follows it too.
int64_t StepIndex(const View& view, int64_t us, int64_t last_read_end) {
  auto it = std::upper_bound(view.steps.begin(), view.steps.end(), us,
                             [](int64_t t, const Step& s) { return t < s.start_us; });
  const bool after_last = !view.steps_from_compute && !view.steps.empty() &&
                          it == view.steps.end() && us >= last_read_end;
  return (it - view.steps.begin()) + (after_last ? 1 : 0);
}

// Whether write `i` goes on where write `p` left off: the same file, at the offset `p` ended (both
// offsets known). A save never begins there: torch.save's pieces of one file are one save's.
bool Continues(const ProfileTrace& t, size_t p, size_t i) {
  return t.path[i] == t.path[p] && t.offset[p] >= 0 && t.offset[i] == t.offset[p] + t.size_bytes[p];
}

// A period of W writes a save, unless one of its boundaries cuts a file's writes in two (a busy
// host's stalls that fell W writes apart): 0 then.
int64_t SavePeriod(const ProfileTrace& t, const std::vector<size_t>& writes, int64_t period) {
  if (period <= 0) return 0;
  const size_t every = static_cast<size_t>(period);
  for (size_t k = every; k < writes.size(); k += every) {
    if (Continues(t, writes[k - 1], writes[k])) return 0;
  }
  return period;
}

std::vector<Save> Saves(const ProfileTrace& t, const View& view, const std::set<std::string>& ckpt,
                        CheckpointWrites* out) {
  std::map<int64_t, int64_t>* write_sizes = &out->write_sizes;
  int64_t* syncs = &out->syncs;
  std::vector<size_t> writes;
  const int64_t start = view.accesses.empty() ? 0 : view.accesses.front().start_us;
  int64_t last_read_end = 0;
  for (const Access& a : view.accesses) last_read_end = std::max(last_read_end, a.end_us);
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.path[i] == ProfileTrace::kNoString || t.start_us[i] < start ||
        !ckpt.count(t.String(t.path[i]))) {
      continue;
    }
    if (t.kind[i] == OpKind::kSync) ++*syncs;
    if (t.kind[i] == OpKind::kWrite && t.size_bytes[i] > 0) writes.push_back(i);
  }
  std::stable_sort(writes.begin(), writes.end(),
                   [&t](size_t a, size_t b) { return t.start_us[a] < t.start_us[b]; });
  // Without steps: saves are the writes between the pauses of a period (FindPeriod: W writes a
  // save, wherever a busy host stalls them; none that cuts a file's writes, SavePeriod), else
  // bursts of writes apart by a pause that stands out, else by more than 1 s (gaps in no order: a
  // stall of the host is milliseconds, so writes closer than a second are taken as one save).
  std::vector<int64_t> gaps;
  for (size_t k = 1; k < writes.size(); ++k) {
    const size_t p = writes[k - 1], i = writes[k];
    gaps.push_back(std::max<int64_t>(t.start_us[i] - t.start_us[p] - t.dur_us[p], 0));
  }
  const int64_t period =
      view.steps.empty() ? SavePeriod(t, writes, FindPeriod({gaps}, 0).reads) : 0;
  const int64_t pause = PauseThreshold(gaps);
  const int64_t kSaveGapUs = pause > 0 ? pause : 1'000'000;
  std::vector<Save> saves;
  int64_t last_end = 0;
  for (size_t k = 0; k < writes.size(); ++k) {
    const size_t i = writes[k];
    const int64_t step = StepIndex(view, t.start_us[i], last_read_end);
    const bool apart = !view.steps.empty() ? saves.empty() || saves.back().step != step
                                           : (period > 0 ? static_cast<int64_t>(k) % period == 0
                                                         : t.start_us[i] - last_end > kSaveGapUs);
    if (saves.empty() || apart) saves.push_back({step, 0, {}, t.start_us[i], 0});
    saves.back().bytes += t.size_bytes[i];
    saves.back().end_us = std::max(saves.back().end_us, t.start_us[i] + t.dur_us[i]);
    saves.back().files.insert(t.String(t.path[i]));
    ++(*write_sizes)[t.size_bytes[i]];
    auto& file = out->per_file[t.String(t.path[i])];
    if (file.second.empty()) file.first = t.start_us[i];
    file.second.push_back({static_cast<uint64_t>(std::max<int64_t>(t.offset[i], 0)),
                           static_cast<uint64_t>(t.size_bytes[i])});
    last_end = std::max(last_end, t.start_us[i] + t.dur_us[i]);
  }
  return saves;
}

// The pass over the training data each save follows, when every save falls between two passes
// (that pass's last training read ends before the save begins, the next pass's first begins after
// it ends) and the saves follow passes one cadence apart; empty otherwise. Which passes read what
// does not move on a busy host, the pauses that make steps do.
std::vector<int32_t> PassesBeforeSaves(const View& view, const std::vector<Save>& saves) {
  const auto passes = static_cast<size_t>(std::max(view.epochs, 1));
  std::vector<int64_t> first(passes, INT64_MAX), last(passes, INT64_MIN);
  for (const Access& a : view.accesses) {
    if (!IsTrain(view, a) || a.epoch < 0 || static_cast<size_t>(a.epoch) >= passes) continue;
    first[static_cast<size_t>(a.epoch)] = std::min(first[static_cast<size_t>(a.epoch)], a.start_us);
    last[static_cast<size_t>(a.epoch)] = std::max(last[static_cast<size_t>(a.epoch)], a.end_us);
  }
  std::vector<int32_t> after;
  for (const Save& s : saves) {
    int32_t pass = -1;  // the last pass whose reads all end before the save
    for (size_t e = 0; e < passes && last[e] != INT64_MIN && last[e] <= s.start_us; ++e) {
      pass = static_cast<int32_t>(e);
    }
    const auto next = static_cast<size_t>(pass + 1);
    if (pass < 0 || (next < passes && first[next] < s.end_us)) return {};
    if (!after.empty() && pass <= after.back()) return {};
    after.push_back(pass);
  }
  for (size_t k = 2; k < after.size(); ++k) {
    if (after[k] - after[k - 1] != after[1] - after[0]) return {};
  }
  return after;
}

// The per-epoch cadence of saves that fall between passes (PassesBeforeSaves); false when they
// do not.
bool FitEpochCadence(const View& view, const std::vector<Save>& saves, FitResult* out) {
  const std::vector<int32_t> after = PassesBeforeSaves(view, saves);
  if (after.empty()) return false;
  const int32_t every = after.size() > 1 ? after[1] - after[0] : 1;
  std::string passes;
  for (size_t k = 0; k < after.size() && k < 4; ++k) passes += StrCat(k ? ", " : "", after[k] + 1);
  if (after.size() > 4) passes += ", ...";
  const FitConfidence c = saves.size() > 2 ? FitConfidence::kMedium : FitConfidence::kLow;
  Set(out, "checkpoint.checkpoint_after_epoch", std::to_string(after.front() + 1), c,
      StrCat("each save falls between two passes over the data, after pass ", passes, " of ",
             view.epochs));
  Set(out, "checkpoint.epochs_between_checkpoints", std::to_string(every), c,
      StrCat(saves.size(), " saves ", every, " pass", every == 1 ? "" : "es", " apart"));
  return true;
}

void FitCadence(const View& view, const std::vector<Save>& saves, FitResult* out) {
  if (FitEpochCadence(view, saves, out)) return;
  const int64_t batches =
      static_cast<int64_t>(view.steps.size()) + (view.steps_from_compute ? 0 : 1);
  const int64_t per_epoch = view.epochs > 0 ? batches / view.epochs : 0;
  if (view.steps.empty() || per_epoch <= 0) {
    Unset(out, "checkpoint.steps_between_checkpoints", "-1",
          "no steps are visible, so the cadence is not; dlio checkpoints after every epoch");
    return;
  }
  std::vector<int64_t> diffs;
  for (size_t k = 1; k < saves.size(); ++k) diffs.push_back(saves[k].step - saves[k - 1].step);
  const int64_t every = saves.size() > 1 ? Median(diffs) : saves.front().step;
  const FitConfidence c = saves.size() > 2 ? FitConfidence::kMedium : FitConfidence::kLow;
  if (every > 0 && every % per_epoch == 0 && saves.front().step % per_epoch == 0) {
    Set(out, "checkpoint.checkpoint_after_epoch", std::to_string(saves.front().step / per_epoch), c,
        StrCat("the first save follows step ", saves.front().step, " of ", per_epoch,
               " per epoch"));
    Set(out, "checkpoint.epochs_between_checkpoints", std::to_string(every / per_epoch), c,
        StrCat(saves.size(), " saves ", every, " steps (", every / per_epoch, " epochs) apart"));
  } else if (every > 0) {
    Set(out, "checkpoint.steps_between_checkpoints", std::to_string(every), c,
        StrCat(saves.size(), " saves, a median of ", every, " steps apart"));
  } else {
    Unset(out, "checkpoint.steps_between_checkpoints", "-1",
          "the saves come before the first step: no cadence");
  }
}

// Each save's Save::epoch: the last pass over the training data whose first read began before
// the save did (a save at a pass's end: that pass; the next begins after it).
void SetSaveEpochs(const View& view, std::vector<Save>* saves) {
  std::vector<int64_t> first;  // by pass: its first training read's start
  for (const Access& a : view.accesses) {
    if (!IsTrain(view, a) || a.epoch < 0) continue;
    const auto pass = static_cast<size_t>(a.epoch);
    if (first.size() <= pass) first.resize(pass + 1, INT64_MAX);
    first[pass] = std::min(first[pass], a.start_us);
  }
  for (Save& s : *saves) {
    for (size_t e = 0; e < first.size(); ++e) {
      if (first[e] < s.start_us) s.epoch = static_cast<int32_t>(e);
    }
  }
}

CheckpointWrites FindCheckpointWrites(const ProfileTrace& t, const View& view) {
  CheckpointWrites w;
  w.files = CheckpointFiles(t, view);
  if (!w.files.empty()) w.saves = Saves(t, view, w.files, &w);
  SetSaveEpochs(view, &w.saves);
  return w;
}

// A small file every save rewrites from offset 0 in one write (DeepSpeed's `latest`, naming the
// newest checkpoint folder): its path, "" when there is none.
std::string TagFilePath(const CheckpointWrites& w) {
  constexpr uint64_t kMaxTag = 256;
  for (const auto& [path, file] : w.per_file) {
    const auto& writes = file.second;
    const bool tag = writes.size() == w.saves.size() &&
                     std::all_of(writes.begin(), writes.end(), [&](const auto& r) {
                       return r.offset == 0 && r.size > 0 && r.size <= kMaxTag;
                     });
    if (tag) return path;
  }
  return std::string();
}

// checkpoint.tag_file: TagFilePath's file.
void FitTagFile(const CheckpointWrites& w, FitResult* out) {
  const std::string path = TagFilePath(w);
  if (path.empty()) return;
  Set(out, "checkpoint.tag_file", Basename(path), FitConfidence::kMedium,
      StrCat("rewritten from offset 0 in one write of ", w.per_file.at(path).second.front().size,
             " bytes by each of the ", w.saves.size(),
             " saves: a tag naming the newest checkpoint (DeepSpeed's latest)"));
}

// The keys every fit with checkpoints sets: what one save writes.
void FitSaves(const FitOptions& options, const CheckpointWrites& w, FitResult* out) {
  const std::set<std::string>& ckpt = w.files;
  const std::vector<Save>& saves = w.saves;
  const std::map<int64_t, int64_t>& write_sizes = w.write_sizes;
  const int64_t syncs = w.syncs;
  std::vector<int64_t> bytes, files;
  for (const Save& s : saves) {
    bytes.push_back(s.bytes);
    files.push_back(static_cast<int64_t>(s.files.size()));
  }
  Set(out, "workflow.checkpoint", "true", FitConfidence::kHigh,
      StrCat(saves.size(), " save", saves.size() == 1 ? "" : "s", " to ", ckpt.size(),
             " files that are not the dataset"));
  Set(out, "checkpoint.checkpoint_folder", options.checkpoint_folder, FitConfidence::kHigh,
      StrCat("the emulation's own; the traced saves went under ",
             ckpt.begin()->substr(0, ckpt.begin()->rfind('/') + 1)));
  FitTagFile(w, out);
  if (FitTorchSave(w, options, out) ||  // one file per save, or torch.save's files
      FitH5pySave(w, options, out)) {   // h5py's HDF5 file
    Set(out, "checkpoint.fsync", syncs > 0 ? "true" : "false", FitConfidence::kHigh,
        StrCat(syncs, " fsync/fdatasync calls on the checkpoint files"));
    return;
  }
  Set(out, "checkpoint.type", "model", FitConfidence::kMedium,
      "a fixed number of bytes split over files, as observed");
  Set(out, "checkpoint.model_size_bytes", std::to_string(Median(bytes)), FitConfidence::kHigh,
      StrCat("median bytes written per save (", HumanBytes(static_cast<double>(Median(bytes))),
             ")"));
  Set(out, "checkpoint.model_files", std::to_string(std::clamp<int64_t>(Median(files), 1, 65536)),
      FitConfidence::kHigh, "median files written per save");
  // The write size that moves the most bytes (a serializer's few small header writes aside).
  std::pair<int64_t, int64_t> common{0, 0};
  int64_t total = 0;
  for (const auto& [size, n] : write_sizes) {
    total += size * n;
    if (size * n > common.first * common.second) common = {size, n};
  }
  Set(out, "checkpoint.transfer_size",
      std::to_string(std::clamp<int64_t>(common.first, 1, int64_t{1} << 30)),
      FitConfidence::kMedium,
      StrCat("the write size that moves the most bytes (", common.second, " writes, ",
             std::llround(100.0 * static_cast<double>(common.first * common.second) /
                          static_cast<double>(std::max<int64_t>(total, 1))),
             "% of the bytes)"));
  Set(out, "checkpoint.fsync", syncs > 0 ? "true" : "false", FitConfidence::kHigh,
      StrCat(syncs, " fsync/fdatasync calls on the checkpoint files"));
}

}  // namespace

void FitCheckpoint(const ProfileTrace& t, const View& view, const FitOptions& options,
                   FitResult* out) {
  const CheckpointWrites w = FindCheckpointWrites(t, view);
  const std::vector<Save>& saves = w.saves;
  if (saves.empty()) {
    Set(out, "workflow.checkpoint", "false", FitConfidence::kHigh,
        "no file besides the dataset and logs is written during training");
    return;
  }
  FitSaves(options, w, out);
  FitCadence(view, saves, out);
  const std::vector<const FileUse*> resumed = ResumeReads(view, w.files);
  if (!resumed.empty()) {
    int64_t bytes = 0;
    for (const FileUse* u : resumed) bytes += u->bytes_read;
    Set(out, "checkpoint.resume", "true", FitConfidence::kMedium,
        StrCat(resumed.size(), " files of the checkpoints' kind read (",
               HumanBytes(static_cast<double>(bytes)), ") and never written, starting with ",
               Basename(resumed.front()->path), ": the checkpoint the run resumed from"));
  }
  FitFolderName(w, TagFilePath(w), resumed, out);
}

Status FitCheckpointOnly(const ProfileTrace& t, const View& view, const FitOptions& options,
                         FitResult* out) {
  const CheckpointWrites w = FindCheckpointWrites(t, view);
  const std::vector<Save>& saves = w.saves;
  if (saves.empty()) {
    return Status::InvalidArgument(
        "fit: the trace reads no data file and writes no checkpoint (nothing to fit; trace the "
        "program with its data, e.g. `dlio-run profile --data-dir DATA -- ...`)");
  }
  Set(out, "workflow.generate_data", "false", FitConfidence::kHigh, "no data file is read");
  Set(out, "workflow.train", "false", FitConfidence::kHigh,
      "no data file is read: a checkpoint-only workload");
  FitSaves(options, w, out);
  FitFolderName(w, TagFilePath(w), {}, out);
  Set(out, "checkpoint.num_checkpoints_write",
      std::to_string(std::min<size_t>(saves.size(), 1048576)), FitConfidence::kHigh,
      StrCat(saves.size(), " bursts of writes to checkpoint files"));
  if (saves.size() > 1) {
    std::vector<double> between;
    for (size_t k = 1; k < saves.size(); ++k) {
      between.push_back(static_cast<double>(saves[k].start_us - saves[k - 1].end_us) / 1e6);
    }
    const MeanStdev m = Moments(between);
    Set(out, "checkpoint.time_between_checkpoints", Seconds(std::min(m.mean, 3600.0)),
        FitConfidence::kMedium, StrCat("mean pause between ", saves.size(), " saves"));
  }
  return Status::OK();
}

namespace {

// The reads of one side file, in trace order: what each asked for, what it got, where, when.
struct SideReads {
  std::vector<int64_t> asked, got, offsets, starts;
  size_t size() const { return asked.size(); }
};

SideReads ReadsOf(const ProfileTrace& t, const std::string& path) {
  SideReads r;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.kind[i] != OpKind::kRead || t.path[i] == ProfileTrace::kNoString ||
        t.String(t.path[i]) != path) {
      continue;
    }
    r.asked.push_back(std::max<int64_t>(t.size_bytes[i], 0));
    r.got.push_back(t.ret[i] >= 0 ? t.ret[i] : -1);
    r.offsets.push_back(t.offset[i]);
    r.starts.push_back(t.start_us[i]);
  }
  return r;
}

// Passes over the whole file (side_io.access whole): every read continues where the previous one
// ended, from offset 0, until reads return nothing at the end; a read at offset 0 after the end
// begins the next pass. Empty when the reads are not such passes.
struct WholePasses {
  std::vector<int64_t> starts;     // each pass's first read
  std::vector<int64_t> end_reads;  // per pass: empty reads after its first empty one
  int64_t first_size = 0;          // the first read's request size
};

WholePasses FindWholePasses(const SideReads& r) {
  WholePasses w;
  int64_t at = 0, empties = 0;
  for (size_t k = 0; k < r.size(); ++k) {
    if (r.got[k] < 0) return {};  // what a read got is unknown
    const bool fresh = r.offsets[k] == 0 && (k == 0 || empties > 0);
    if (fresh) {
      if (k > 0) w.end_reads.push_back(empties - 1);
      w.starts.push_back(r.starts[k]);
      at = 0, empties = 0;
    } else if (r.offsets[k] != at || (empties > 0 && r.got[k] != 0)) {
      return {};  // a jump, or data after the end
    }
    at += r.got[k];
    empties += r.got[k] == 0;
  }
  if (w.starts.empty() || empties == 0) return {};
  w.end_reads.push_back(empties - 1);
  w.first_size = r.asked.front();
  return w;
}

// side_io.schedule and side_io.reads from when the `n` side reads (or passes) began.
void FitSideSchedule(const View& view, const std::vector<int64_t>& starts, const char* what,
                     const char* whats, FitResult* out) {
  const int64_t first_data = view.accesses.empty() ? 0 : view.accesses.front().start_us;
  const int64_t n = static_cast<int64_t>(starts.size());
  const int64_t before = std::count_if(starts.begin(), starts.end(),
                                       [first_data](int64_t us) { return us < first_data; });
  const int64_t batches =
      static_cast<int64_t>(view.steps.size()) + (view.steps_from_compute ? 0 : 1);
  if (before == n) {
    Set(out, "side_io.schedule", "before_training", FitConfidence::kMedium,
        StrCat("every side ", what, " precedes the first data read"));
    Set(out, "side_io.reads", std::to_string(n), FitConfidence::kHigh,
        StrCat(whats, " of the side file"));
  } else if (!view.steps.empty() && n >= batches) {
    Set(out, "side_io.schedule", "per_step", FitConfidence::kMedium,
        StrCat(n, " side ", whats, " over ", batches, " steps"));
    Set(out, "side_io.reads", std::to_string(std::llround(static_cast<double>(n) / batches)),
        FitConfidence::kMedium, StrCat("side ", whats, " per step"));
  } else {
    Set(out, "side_io.schedule", "spread", FitConfidence::kMedium,
        StrCat("fewer side ", whats, " than steps, during training"));
    Set(out, "side_io.reads", std::to_string(n), FitConfidence::kHigh,
        StrCat(whats, " of the side file"));
  }
}

// side_io.access whole: the reads are passes over the whole file (FindWholePasses).
bool FitWholeSideReads(const View& view, const SideReads& r, FitResult* out) {
  const WholePasses w = FindWholePasses(r);
  if (w.starts.empty()) return false;
  const int64_t end_reads = Median(w.end_reads);
  Set(out, "side_io.access", "whole", FitConfidence::kMedium,
      StrCat("the ", r.size(), " reads are ", w.starts.size(), " pass",
             w.starts.size() == 1 ? "" : "es",
             " over the whole file, each from offset 0 to reads that return nothing"));
  Set(out, "side_io.read_size",
      std::to_string(std::clamp<int64_t>(w.first_size, 1, int64_t{1} << 30)), FitConfidence::kHigh,
      "the size the first read of a pass asks for (Python's f.read() asks for the file's size + "
      "1, pandas' CSV parser 262144)");
  Set(out, "side_io.end_reads", std::to_string(std::min<int64_t>(end_reads, 1024)),
      FitConfidence::kMedium,
      StrCat("median reads per pass after the first that returned nothing (",
             end_reads == 0 ? "none: the reader stops at the end" : "the reader asks again", ")"));
  FitSideSchedule(view, w.starts, "pass", "passes", out);
  return true;
}

}  // namespace

void FitSideIo(const ProfileTrace& t, const View& view, FitResult* out) {
  std::vector<const FileUse*> side;
  const std::set<std::string> ckpt = CheckpointFiles(t, view);
  const std::vector<const FileUse*> resumed = ResumeReads(view, ckpt);
  for (const FileUse& u : view.uses) {
    if (u.reads > 0 && !ckpt.count(u.path) && !IsDataOrCompanion(view, u.path) &&
        !IsDlioInternal(u.path) && std::find(resumed.begin(), resumed.end(), &u) == resumed.end()) {
      side.push_back(&u);
    }
  }
  if (side.empty()) {
    Unset(out, "side_io.read_file", "\"\"", "no reads of files besides the dataset");
    return;
  }
  const FileUse* f = *std::max_element(
      side.begin(), side.end(), [](const auto* a, const auto* b) { return a->reads < b->reads; });
  const SideReads r = ReadsOf(t, f->path);
  Set(out, "side_io.read_file", Basename(f->path), FitConfidence::kMedium,
      StrCat("the most-read file besides the dataset (", r.size(), " reads",
             side.size() > 1 ? StrCat("; ", side.size() - 1, " other files not emulated") : "",
             ")"));
  Set(out, "side_io.read_file_size", std::to_string(std::max<int64_t>(f->max_end, 1)),
      FitConfidence::kMedium, "its largest offset read (generated when missing)");
  if (FitWholeSideReads(view, r, out)) return;
  Set(out, "side_io.read_size",
      std::to_string(std::clamp<int64_t>(Median(r.asked), 1, int64_t{1} << 30)),
      FitConfidence::kHigh, "median size of its reads");
  FitSideSchedule(view, r.starts, "read", "reads", out);
  int64_t up = 0;
  for (size_t k = 1; k < r.size(); ++k) up += r.offsets[k] == r.offsets[k - 1] + r.asked[k - 1];
  const bool sequential = r.size() > 1 && up * 10 >= static_cast<int64_t>(r.size() - 1) * 8;
  Set(out, "side_io.access", sequential ? "sequential" : "random",
      r.size() > 4 ? FitConfidence::kMedium : FitConfidence::kLow,
      StrCat(up, " of ", r.size() == 0 ? 0 : r.size() - 1,
             " side reads start where the previous ended"));
}

}  // namespace dlio::fit
