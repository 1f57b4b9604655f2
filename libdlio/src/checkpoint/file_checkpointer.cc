// Checkpointers that write a fixed set of files per rank through Storage: the DLIO paper's
// five-file pattern ("paper"), a model of a given byte size split over ranks ("model") and DLIO's
// transformer layout ("transformer", sizes from transformer_plan.cc) and the file torch.save
// writes for a state dict ("torch_save", torch_save_file.h), and the HDF5 file h5py writes for a
// model's weights ("h5py_save", format/hdf5/h5py_save.h).
//
// Layout (checkpoint/checkpoint_layout.h): <folder>/<checkpoint.folder_name, ckpt-<id, 6 digits> by
// default>/<file>, one file set per rank (names carry the rank, so ranks never share a file) and a
// manifest per rank written last.
// Files are written in place under their final names, as the emulated frameworks write them
// (WriteAll); dlio's own outputs (summary.json, reports) keep WriteFileAtomically.
// The first id is one past the highest checkpoint folder_name names already in the folder when
// the checkpointer is built (checkpoint_folders.h), so checkpoints of an earlier run are kept;
// ranks agree on it when every rank builds its checkpointer before any rank saves (the runner
// builds them during setup). Later saves use the following ids.
#include "checkpoint/file_checkpointer.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/checkpoint_folders.h"
#include "checkpoint/checkpoint_layout.h"
#include "checkpoint/model_checkpoint_options.h"
#include "checkpoint/per_save_names.h"
#include "checkpoint/torch_save_plan.h"
#include "dlio/ai_events.h"
#include "dlio/checkpointer.h"
#include "dlio/str_cat.h"
#include "format/hdf5/h5py_save.h"
#include "format/torch/torch_save_file.h"
#include "io_models/pyio/buffered_reader.h"
#include "io_models/pyio/python_heap.h"

namespace dlio {
namespace {

using checkpoint_internal::CheckpointFolders;
using checkpoint_internal::PlannedFile;
using checkpoint_internal::StripTrailingSlashes;
using torch_save::LoadTorchSave;
using torch_save::TorchArchiveName;
using torch_save::WriteTorchSave;

// torch_save loads: storages of at least this many bytes are read into fresh pages, as
// torch.load's new storages past the mmap threshold `import torch` leaves, when the framework's
// client work is emulated (reader.client_costs framework); 0 = every read into one buffer the
// checkpointer keeps.
size_t TorchLoadFreshBytes(const CheckpointOptions& options) {
  return options.framework_client_costs ? pyio::PythonImportThreshold(IoModel::kPytorch) : 0;
}

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Records one span on the tracer (if any) when it goes out of scope.
class TraceSpan {
 public:
  TraceSpan(Tracer* tracer, const Clock* clock, const char* name, int64_t index, int64_t epoch,
            int64_t step)
      : tracer_(tracer != nullptr && tracer->enabled() ? tracer : nullptr), clock_(clock) {
    if (tracer_ == nullptr) return;
    event_.name = name;
    event_.cat = ai_events::kCheckpointCat;
    event_.index = index;
    event_.epoch = epoch;
    event_.step = step;
    event_.start_us = clock_->WallMicros();
    start_ns_ = clock_->NowNanos();
  }
  ~TraceSpan() {
    if (tracer_ == nullptr) return;
    event_.dur_us = (clock_->NowNanos() - start_ns_) / 1000;
    tracer_->Record(event_);
  }
  void set_bytes(int64_t bytes) {
    event_.count = bytes;
    event_.ret = bytes;
  }
  TraceSpan(const TraceSpan&) = delete;
  TraceSpan& operator=(const TraceSpan&) = delete;

 private:
  Tracer* tracer_;
  const Clock* clock_;
  TraceEvent event_;
  int64_t start_ns_ = 0;
};

class FileCheckpointer final : public Checkpointer {
 public:
  FileCheckpointer(const CheckpointOptions& options, const CheckpointEnv& env,
                   std::vector<PlannedFile> plan, CheckpointFolders folders)
      : options_(options),
        folders_(std::move(folders)),
        through_temporary_(folders_.epoch_step() && options.framework == "tensorflow"),
        storage_(env.storage),
        clock_(env.clock != nullptr ? env.clock : SystemClock()),
        tracer_(env.tracer),
        folder_(StripTrailingSlashes(options.folder)),
        plan_(std::move(plan)),
        next_id_(folders_.first_id()),
        rewrites_one_file_(folders_.flat() && !plan_.empty() && !plan_.front().per_save) {
    uint64_t largest = 0;
    for (const auto& f : plan_) largest = std::max(largest, f.bytes);
    buffer_size_ = static_cast<size_t>(std::min<uint64_t>(largest, options_.transfer_size));
  }

  Result<CheckpointResult> Save(uint64_t epoch, int64_t step) override {
    CheckpointResult result;
    result.id = next_id_++;  // a failed save never reuses its id
    const std::string dir = folders_.DirFor(result.id, epoch, step);
    if (plan_.empty()) {  // root_only on a rank > 0, or no bytes for this rank
      folders_.Add(result.id, epoch, step);
      SetNumbers(folders_.NumbersOf(result.id), &result);
      return result;
    }
    const checkpoint_internal::SaveNumbers numbers{result.id, step,
                                                   checkpoint_internal::NamedEpoch(epoch)};
    const std::vector<PlannedFile> plan = checkpoint_internal::PlanForSave(plan_, numbers);
    TraceSpan span(tracer_, clock_, ai_events::kCapture, static_cast<int64_t>(result.id),
                   static_cast<int64_t>(epoch), step);

    // Refuse before writing anything: a final name that exists is data we did not create.
    std::vector<bool> rewrite(plan.size(), false);  // an earlier run's file of this same save
    for (size_t i = 0; i < plan.size(); ++i) {
      const std::string path = StrCat(dir, "/", plan[i].name);
      DLIO_ASSIGN_OR_RETURN(bool exists, storage_->Exists(path));
      if (!exists) continue;
      // an earlier save of this run wrote it (one name every save rewrites), or this same save
      // of an earlier run did (DLIO's layout)
      bool ours = written_.count(path) != 0;
      if (!ours) {
        DLIO_ASSIGN_OR_RETURN(ours, IsSameSave(path, plan[i], result.id));
      }
      if (!ours) {
        return Status::AlreadyExists("checkpoint file ", path,
                                     " already exists and was not written by this run; refusing "
                                     "to overwrite it (use another checkpoint.checkpoint_folder)");
      }
      rewrite[i] = true;
    }
    DLIO_ASSIGN_OR_RETURN(bool dir_existed, storage_->Exists(dir));
    std::vector<std::string> created;  // what this save made, removed again if it fails
    Status status = WriteAll(dir, plan, rewrite, &created, &result);
    if (status.ok() && options_.read_back) status = ReadBack(dir, plan, &result);
    if (status.ok() && !options_.tag_file.empty() && options_.rank == 0) {
      // The tag names the save's folder, or side by side in one (flat) its first file.
      const std::string tag = folders_.flat() ? plan.front().name : Basename(dir);
      status = checkpoint_internal::WriteTagFile(storage_, TagPath(), tag);
    }
    if (!status.ok()) {
      Undo(created, dir_existed ? std::string() : dir);
      return status;
    }
    folders_.Add(result.id, epoch, step);
    saved_[result.id] = numbers;
    SetNumbers(folders_.NumbersOf(result.id), &result);
    span.set_bytes(static_cast<int64_t>(result.bytes_written));
    return result;
  }

  Result<std::vector<uint64_t>> CompleteIds() override {
    DLIO_ASSIGN_OR_RETURN(auto folders, folders_.Folders(storage_));
    std::vector<uint64_t> complete;
    for (const auto& [id, dir] : folders) {
      DLIO_ASSIGN_OR_RETURN(bool ok, IsComplete(id, dir));
      if (ok) complete.push_back(id);
    }
    return complete;
  }

  uint64_t next_id() const override { return next_id_; }

  Result<CheckpointResult> Load(uint64_t id) override {
    CheckpointResult result;
    result.id = id;
    SetNumbers(folders_.NumbersOf(id), &result);
    if (plan_.empty()) return result;
    TraceSpan span(tracer_, clock_, ai_events::kRestart, static_cast<int64_t>(id), -1, -1);
    DLIO_ASSIGN_OR_RETURN(const std::string dir, folders_.DirOf(id));
    DLIO_ASSIGN_OR_RETURN(const checkpoint_internal::SavedPlan saved, PlanIn(id, dir));
    if (result.step < 0) result.step = saved.step;
    if (result.epoch < 0) result.epoch = saved.epoch;
    FillBuffer(id);
    const int64_t start = clock_->NowNanos();
    if (!options_.tag_file.empty()) {  // as DeepSpeed's load_checkpoint reads `latest` first
      DLIO_RETURN_NOT_OK(checkpoint_internal::ReadTagFile(storage_, TagPath()));
    }
    for (const auto& f : saved.plan) {
      const std::string path = dir + "/" + f.name;
      DLIO_RETURN_NOT_OK(ReadOne(path, f, id));
      written_.insert(path);  // dlio's, as its bytes say: a later save of this run may rewrite it
      result.bytes_read += f.bytes;
      result.files.push_back({path, f.bytes});
    }
    result.read_ns = clock_->NowNanos() - start;
    span.set_bytes(static_cast<int64_t>(result.bytes_read));
    return result;
  }

 private:
  // DLIO's layout names folders by epoch and step, so a rerun of a workload meets its earlier
  // run's files: one whose size and first transfer are what this save writes (same seed, id and
  // rank: 8+ random bytes match) was written by dlio, and is rewritten as DLIO does.
  Result<bool> IsSameSave(const std::string& path, const PlannedFile& f, uint64_t id) {
    if (!folders_.epoch_step() || f.torch || f.bytes == 0) return false;
    DLIO_ASSIGN_OR_RETURN(uint64_t size, storage_->FileSize(path));
    if (size != f.bytes) return false;
    FillBuffer(id);
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buffer_.size(), f.bytes));
    read_buffer_.resize(n);
    DLIO_ASSIGN_OR_RETURN(auto file, storage_->Open(path, OpenMode::kRead));
    DLIO_RETURN_NOT_OK(file->ReadExactAt(0, n, read_buffer_.data()));
    DLIO_RETURN_NOT_OK(file->Close());
    return std::memcmp(read_buffer_.data(), buffer_.data(), n) == 0;
  }

  std::string TagPath() const { return folder_ + "/" + options_.tag_file; }
  static std::string Basename(const std::string& dir) { return dir.substr(dir.rfind('/') + 1); }

  // Whether `dir` holds checkpoint `id`'s complete share of this rank: in DLIO's layout (which
  // has no marker) each planned file at its size; else its manifest too, and only for a folder
  // this checkpointer listed or saved (a rank that writes nothing holds its share of every one).
  Result<bool> IsComplete(uint64_t id, const std::string& dir) {
    if (folders_.epoch_step()) return checkpoint_internal::HasPlannedFiles(storage_, dir, plan_);
    if (id >= next_id_) return false;  // this run's own, not yet written
    DLIO_ASSIGN_OR_RETURN(bool is_dir, storage_->IsDirectory(dir));
    if (!is_dir) return false;
    if (plan_.empty()) return true;
    auto saved = PlanIn(id, dir);
    if (saved.status().code() == StatusCode::kNotFound)
      return false;  // no file named as the template: torn
    DLIO_RETURN_NOT_OK(saved.status());
    // Side by side in one folder there is no manifest (a file of dlio's among the program's):
    // each file at its planned size, as DLIO's layout.
    if (folders_.flat()) return checkpoint_internal::HasPlannedFiles(storage_, dir, saved->plan);
    return checkpoint_internal::IsCompleteShare(storage_, dir, options_.rank, saved->plan);
  }

  // The step and epoch the names of a checkpoint hold, into `result` (-1: none).
  static void SetNumbers(const checkpoint_internal::SaveNumbers& n, CheckpointResult* result) {
    result->step = n.step;
    result->epoch = n.epoch;
  }

  // Checkpoint `id`'s files in `dir`: this run's saves by their numbers, an earlier run's by the
  // names in its folder (listed only when a per-save name holds {step} or {epoch} that the
  // folder's name does not tell).
  Result<checkpoint_internal::SavedPlan> PlanIn(uint64_t id, const std::string& dir) {
    auto it = saved_.find(id);
    if (it != saved_.end()) return checkpoint_internal::SavedPlanOf(plan_, it->second);
    if (!checkpoint_internal::NamesHoldNumbers(plan_)) {
      return checkpoint_internal::SavedPlanOf(plan_, {id, -1, -1});
    }
    // The numbers its folder's name holds, or (flat) its file's: the listing's.
    if (const auto n = folders_.NumbersOf(id); checkpoint_internal::KnowsNumbers(plan_, n)) {
      return checkpoint_internal::SavedPlanOf(plan_, n);
    }
    DLIO_ASSIGN_OR_RETURN(const std::vector<std::string> names, storage_->List(dir));
    return checkpoint_internal::SavedPlanIn(plan_, id, dir, names);
  }

  // One transfer's worth of content, reused for every request of every file of checkpoint `id`:
  // the byte at file offset o is buffer_[o % transfer_size], which lets reads verify content.
  // The content pattern of checkpoint `id`'s files; with one file every save rewrites (h5py_save
  // under folder_name "."), the same for every save, so a later run that resumes from the file
  // (whose save's id it cannot know) checks its bytes.
  void FillBuffer(uint64_t id) {
    if (rewrites_one_file_) id = 0;
    if (buffer_id_ == id && buffer_.size() == buffer_size_) return;
    buffer_.resize(buffer_size_);
    uint64_t state =
        options_.seed ^ (id * 0xd1b54a32d192ed03ULL) ^ (static_cast<uint64_t>(options_.rank) << 32);
    size_t i = 0;
    for (; i + 8 <= buffer_.size(); i += 8) {
      const uint64_t word = SplitMix64(&state);
      std::memcpy(buffer_.data() + i, &word, 8);
    }
    if (i < buffer_.size()) {
      const uint64_t word = SplitMix64(&state);
      std::memcpy(buffer_.data() + i, &word, buffer_.size() - i);
    }
    buffer_id_ = id;
  }

  // The files, then the manifest that marks this rank's share complete; every name made is
  // appended to `created`. write_ns: from the first open to the last close (and fsyncs).
  // Each file is written in place, as torch.save and DLIO write theirs: one open of the final
  // name, the writes, (fsync,) close; no temporary name, no rename. A torn file is told by the
  // missing manifest, or in DLIO's layout its size (DLIO itself has no marker). DLIO's
  // tensorflow files go through a temporary name and a rename, as TensorFlow writes its own.
  Status WriteAll(const std::string& dir, const std::vector<PlannedFile>& plan,
                  const std::vector<bool>& rewrite, std::vector<std::string>* created,
                  CheckpointResult* result) {
    const int64_t start = clock_->NowNanos();
    DLIO_RETURN_NOT_OK(storage_->CreateDirs(dir));
    FillBuffer(result->id);
    for (size_t i = 0; i < plan.size(); ++i) {
      const PlannedFile& f = plan[i];
      const std::string path = StrCat(dir, "/", f.name);
      const auto write = [&](File* file) {
        Status status = WriteContent(file, f);
        return status.ok() && options_.fsync ? file->Sync() : status;
      };
      Status written;
      if (f.h5py) {
        written = WriteH5py(path, rewrite[i], f, created);
      } else if (through_temporary_) {
        written = WriteFileAtomically(storage_, path, write);
        if (written.ok()) created->push_back(path);
      } else {
        written = WriteInPlace(path, rewrite[i], created, write);
      }
      if (!written.ok()) return written.WithContext(StrCat("checkpoint: writing ", path));
      written_.insert(path);
      result->bytes_written += f.bytes;
      result->files.push_back({path, f.bytes});
    }
    if (folders_.epoch_step() || folders_.flat()) return Finish(dir, start, result);
    const std::string manifest = StrCat(dir, "/", checkpoint_internal::ManifestName(options_.rank));
    // Empty, so its creation alone makes it whole; not synced by itself: SyncDir below makes its
    // name durable, and a manifest lost in a crash only makes the checkpoint look torn.
    DLIO_RETURN_NOT_OK(WriteInPlace(manifest, false, created, [](File*) {
                         return Status::OK();
                       }).WithContext("checkpoint manifest"));
    return Finish(dir, start, result);
  }

  // Opens `path` under its final name and runs `write` on it. A name the pre-check found free is
  // created with kCreateNew (O_EXCL: the same one open call as torch.save's O_TRUNC, but a file
  // someone made since the check is refused, not truncated); `rewrite` (this same save's file of
  // an earlier run) truncates, as DLIO does. The name goes to `created` once it is ours.
  Status WriteInPlace(const std::string& path, bool rewrite, std::vector<std::string>* created,
                      const std::function<Status(File*)>& write) {
    auto file = storage_->Open(path, rewrite ? OpenMode::kWrite : OpenMode::kCreateNew);
    if (!file.ok()) return file.status();
    created->push_back(path);
    Status status = write(file->get());
    Status closed = (*file)->Close();
    return status.ok() ? closed : status;
  }

  Status Finish(const std::string& dir, int64_t start, CheckpointResult* result) {
    if (options_.fsync) {
      DLIO_RETURN_NOT_OK(storage_->SyncDir(dir));  // the new file names
      if (dir != folder_) {
        DLIO_RETURN_NOT_OK(storage_->SyncDir(folder_));  // the new checkpoint folder's entry
      }
    }
    result->write_ns = clock_->NowNanos() - start;
    return Status::OK();
  }

  // h5py_save's file, written by libhdf5 through the Storage as h5py writes it (it opens the
  // file itself: new, or truncated with `rewrite`). The name goes to `created` once it is ours.
  Status WriteH5py(const std::string& path, bool rewrite, const PlannedFile& f,
                   std::vector<std::string>* created) {
    Status status = h5py_save::WriteH5pySave(
        storage_, path, rewrite, *f.h5py,
        [this](uint64_t offset, size_t n, char* dst) { FillPattern(offset, n, dst); },
        &tensor_memory_);
    if (status.ok() || rewrite ||
        (status.code() != StatusCode::kAlreadyExists && storage_->Exists(path).ValueOr(false))) {
      created->push_back(path);
    }
    return status;
  }

  // `n` bytes of the content pattern from `offset` on.
  void FillPattern(uint64_t offset, size_t n, char* dst) const {
    for (size_t k = 0; k < n;) {
      const size_t at = static_cast<size_t>((offset + k) % buffer_.size());
      const size_t m = std::min(n - k, buffer_.size() - at);
      std::memcpy(dst + k, buffer_.data() + at, m);
      k += m;
    }
  }

  Status WriteContent(File* file, const PlannedFile& f) {
    if (f.torch) {  // tensor bytes: the content pattern at their file offsets
      return WriteTorchSave(
          file, TorchArchiveName(f.name), *f.torch,
          [this](uint64_t offset, size_t n, char* dst) { FillPattern(offset, n, dst); },
          &tensor_memory_);
    }
    for (uint64_t offset = 0; offset < f.bytes;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(buffer_.size(), f.bytes - offset));
      DLIO_RETURN_NOT_OK(file->WriteAt(offset, buffer_.data(), n));
      offset += n;
    }
    return Status::OK();
  }

  Status ReadBack(const std::string& dir, const std::vector<PlannedFile>& plan,
                  CheckpointResult* result) {
    const int64_t read_start = clock_->NowNanos();
    for (const auto& f : plan) {
      DLIO_RETURN_NOT_OK(ReadOne(StrCat(dir, "/", f.name), f, result->id));
      result->bytes_read += f.bytes;
    }
    result->read_ns = clock_->NowNanos() - read_start;
    return Status::OK();
  }

  // A failed save removes what it made (the manifest first, so the set never looks complete),
  // including the file it failed in and an earlier run's file of the same save it had truncated,
  // then `dir` when it made it and nothing else is in it (other ranks' files stay). Best effort:
  // the save's own error is what the caller reports.
  void Undo(const std::vector<std::string>& created, const std::string& dir) {
    for (auto it = created.rbegin(); it != created.rend(); ++it) (void)storage_->Remove(*it);
    if (!dir.empty()) (void)storage_->RemoveEmptyDir(dir);
  }

  // The file's size, then its content: front to back in transfer_size requests, or, for a
  // torch_save file, with torch.load's requests (its tensors' bytes are the pattern).
  Status ReadOne(const std::string& path, const PlannedFile& f, uint64_t id) {
    const uint64_t expected = f.bytes;
    DLIO_ASSIGN_OR_RETURN(uint64_t size, storage_->FileSize(path));
    if (size != expected) {
      return Status::Corruption("checkpoint file ", path, " has ", size, " bytes, expected ",
                                expected);
    }
    FillBuffer(id);
    const auto check = [&](uint64_t offset, const uint8_t* data, size_t n) {
      for (size_t k = 0; k < n;) {  // the pattern repeats every buffer_.size() bytes
        const size_t at = static_cast<size_t>((offset + k) % buffer_.size());
        const size_t m = std::min(n - k, buffer_.size() - at);
        if (std::memcmp(data + k, buffer_.data() + at, m) != 0) {
          size_t i = 0;
          while (data[k + i] == buffer_[at + i]) ++i;
          return Status::Corruption("checkpoint file ", path, ": content differs at offset ",
                                    offset + k + i);
        }
        k += m;
      }
      return Status::OK();
    };
    if (f.h5py) {  // h5py.File(path, 'r') and each dataset read whole
      return h5py_save::LoadH5pySave(storage_, path, *f.h5py, check, &tensor_memory_);
    }
    DLIO_ASSIGN_OR_RETURN(auto file, storage_->Open(path, OpenMode::kRead));
    if (f.torch) {
      const size_t python_buffer = pyio::PythonBufferSize(storage_, *file);
      DLIO_RETURN_NOT_OK(LoadTorchSave(file.get(), TorchArchiveName(f.name), *f.torch,
                                       python_buffer, check, &read_buffer_,
                                       TorchLoadFreshBytes(options_)));
      return file->Close();
    }
    read_buffer_.resize(buffer_.size());
    for (uint64_t offset = 0; offset < expected;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(buffer_.size(), expected - offset));
      DLIO_RETURN_NOT_OK(file->ReadExactAt(offset, n, read_buffer_.data()));
      DLIO_RETURN_NOT_OK(check(offset, read_buffer_.data(), n));
      offset += n;
    }
    return file->Close();
  }

  CheckpointOptions options_;
  CheckpointFolders folders_;  // which folder holds each checkpoint id
  // TensorFlow's BundleWriter writes each file to a temporary name and renames it into place.
  bool through_temporary_;
  Storage* storage_;
  const Clock* clock_;
  Tracer* tracer_;
  std::string folder_;
  std::vector<PlannedFile> plan_;  // per-save names as their templates (PlanFor, PlanIn)
  std::map<uint64_t, checkpoint_internal::SaveNumbers> saved_;  // this run's saves, by id
  uint64_t next_id_;
  // The files this checkpointer wrote or loaded (dlio's, so a later save may rewrite them).
  std::set<std::string> written_;
  bool rewrites_one_file_;  // h5py_save's one file under folder_name ".": every save rewrites it
  size_t buffer_size_ = 0;
  std::vector<uint8_t> buffer_;
  uint64_t buffer_id_ = UINT64_MAX;
  std::vector<uint8_t> read_buffer_;
  std::vector<char> tensor_memory_;  // torch_save: the model's tensors, kept between saves
};

}  // namespace

namespace checkpoint_internal {

Result<std::unique_ptr<Checkpointer>> NewFileCheckpointer(const CheckpointOptions& options,
                                                          const CheckpointEnv& env,
                                                          std::vector<PlannedFile> plan,
                                                          CheckpointFolders folders) {
  return std::unique_ptr<Checkpointer>(
      std::make_unique<FileCheckpointer>(options, env, std::move(plan), std::move(folders)));
}

}  // namespace checkpoint_internal
}  // namespace dlio
