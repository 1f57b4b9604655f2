// What FitTrace's stages share: the trace reduced to the files, the data accesses (one sample
// read each), the passes over the data (epochs) and the steps (compute events or bursts).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "dlio/profile.h"
#include "dlio/profile_fit.h"
#include "format/torch/torch_save_file.h"

namespace dlio::fit {

// Reads larger than this are "large" (a sample, a chunk of one); smaller ones are headers and
// indexes, unless a file has no larger read.
inline constexpr int64_t kSmallReadBytes = 4096;

// The shortest gap between requests that may be a step's compute: shorter ones are the
// program's own overhead between two reads (an interpreter's, a loader's), which on an unloaded
// host stays well below it. Absolute, but safe under load: a busy host only lengthens gaps, so
// it never hides a step; the gaps it lengthens past it are told from steps by where they fall
// (FindPeriod), not by this floor.
inline constexpr int64_t kMinPauseUs = 500;

// One file the trace names, with what was done to it.
struct FileUse {
  std::string path;
  int64_t reads = 0, bytes_read = 0, writes = 0, bytes_written = 0;
  int64_t opens = 0, mmaps = 0, syncs = 0;
  int64_t max_end = 0;  // largest offset + size read or written
  int64_t first_us = 0;
};

// A data file: one of the dataset's files.
struct DataFile {
  std::string path;
  bool valid = false;   // under a valid/eval folder (evaluation split)
  int64_t extent = 0;   // file size: the probe's, else the largest read end
  bool probed = false;  // `info` came from the probe
  DataFileInfo info;    // what the probe told
  int64_t opens = 0, reads = 0, bytes_read = 0;
  int64_t items = 0;  // application events naming it (dlio's ai.data.item: one per sample)
  // The calls of its first sessions (one thread, open to close), in order: what one load of the
  // file makes, a read as its offset, an lseek as DataFileInfo::kLoadSeek (fit_access.cc;
  // matched by FitReadVariants).
  std::vector<std::vector<int64_t>> loads;
  // The probe's layout of it is the one the trace reads (ProbedLayoutRead; set by
  // CollectAccesses).
  bool layout_read = false;
};

// One sample read: a run of one thread's reads of one data file (see docs/profiling.md).
struct Access {
  int32_t file = 0;  // index into View::files
  int32_t pid = 0, tid = 0;
  int64_t start_us = 0, end_us = 0;
  int64_t key = -1;         // offset of its first large read (which sample of the file)
  int64_t bytes = 0;        // bytes read
  int64_t large_reads = 0;  // reads > kSmallReadBytes
  int64_t small_reads = 0;
  // Of the large reads whose page faults the trace holds (ProfileEvent::faults): their bytes
  // and the faults taken inside them.
  int64_t faulted_bytes = 0, faults = 0;
  // Its reads' own time (each read's duration, summed) and how many reads it took: the rest of
  // end_us - start_us is the reader's work between them (a stream's parsing).
  int64_t read_us = 0;
  int64_t reads = 0;
  bool session = false;  // began with an open of the file
  int32_t epoch = 0;     // pass over the data it belongs to
};

// A step boundary: a compute event, or the gap after a burst of accesses.
struct Step {
  int64_t start_us = 0, end_us = 0;  // the compute (or the gap) between two batches
  // Of a gap: the run-queue delay the thread that ended it accrued within it (RunDelays), which
  // train.computation_time leaves out. 0 for compute events and traces without the values.
  int64_t run_delay_us = 0;
};

// The run-queue delay threads accrued within pauses (fit_run_delay.cc), from the cumulative
// values the trace holds (ProfileEvent::run_delay_us, read at an event's end): a pause on a busy
// host is the program's work (or sleep) plus the time it waited for a CPU, and only the former
// is the workload's. Within() is 0 for a thread without values on both sides of the pause.
class RunDelays {
 public:
  RunDelays() = default;  // none: Within() is 0
  explicit RunDelays(const ProfileTrace& t);
  // The delay thread (pid, tid) accrued within [from_us, to_us]: the growth between the values
  // read last at or before from_us and first at or after to_us, times the pause's share of the
  // time between those reads; at most the pause.
  int64_t Within(int32_t pid, int32_t tid, int64_t from_us, int64_t to_us) const;

 private:
  using Sample = std::pair<int64_t, int64_t>;  // (time read, cumulative delay), microseconds
  std::map<std::pair<int32_t, int32_t>, std::vector<Sample>> samples_;
};

// A pause after every `reads` reads of a loop (FindPeriod), or none (`reads` 0).
struct Period {
  int64_t reads = 0;
  // The share of pairs (gap at a period's end, gap within a period) in which the end's gap is at
  // least twice as long, pairs closer than 2x counting half: 0.5 for gaps in no order, 1 when
  // every end stands out.
  double score = 0;
  int64_t ends = 0, within = 0;  // gaps scored at periods' ends and within periods
  int64_t end_median_us = 0, within_median_us = 0;
  int64_t end_low_us = 0;  // the lower quartile of the ends' gaps
  int64_t split_us = 0;    // the geometric mean of the two medians
  int64_t stalls = 0;      // gaps within periods longer than split_us (a busy host's stalls)
  bool per_pass = true;    // counted from each pass's first read (else from the trace's)
};

// The period of a loop's pauses, by where the long gaps fall rather than by how long they are
// (fit_period.cc): `runs` are gap sequences, runs[r][k] the gap after read k of run r (a pass, one
// worker's pass); the first `skip_first` period ends of each run are not scored (a DataLoader
// worker's prefetched batches come back to back). A period stands when its ends outrank the gaps
// within (score >= 0.75, at 3 ends or more), their median is at least 4x the median within (3x
// at a score >= 0.95) and kMinPauseUs, and their lower quartile at least 2x. Of those, the most
// significant (Mann-Whitney's z: many ends outweigh a few that outrank a bit more); then a
// multiple of it when its ends between the multiple's do not stand alone (stalls at every other
// end), or a divisor whose ends between its own do (long and short pauses alternating). Relative
// throughout: a host that stretches every gap, or stalls a few as long as a step, leaves it be.
// Periods up to 4096 reads, over the runs' first 32768 gaps (the search's cost stays bounded on
// traces of millions of reads).
Period FindPeriod(const std::vector<std::vector<int64_t>>& runs, int64_t skip_first);
// How far a period's ends stand out: Mann-Whitney's z of the ends against the gaps within (0 for
// no period), to choose between the periods of two ways of counting.
double Significance(const Period& p);

struct View;

// What FitTrace leaves out as the runtime's and the launcher's I/O, not the workload's
// (fit_noise.cc; docs/profiling.md, "Runtime and launcher I/O").
struct Noise {
  std::unordered_set<int32_t> paths;  // path ids of the files left out
  int64_t ignored_files = 0;          // by FitOptions::ignore_paths
  int64_t scratch_files = 0;          // created and deleted within the run
  // By category id: 1 when it is a layer of calls (POSIX, STDIO, ...: it holds a known call or
  // has a call layer's name), whose unknown names are calls fit does not know, not application
  // events.
  std::vector<int8_t> call_layer;
  std::map<std::string, int64_t> unknown_calls;  // such calls: name -> count
  // Threads that opened, stat'ed or read only headers of the data files (never a sample): not
  // readers; their events on the data files were left out.
  int64_t non_reader_threads = 0, non_reader_events = 0;
  // The most data files one of those threads opened before any reader read a data file (a
  // Dataset's __init__ opening each file to count its samples: reader.open_files_at_start).
  int64_t files_opened_at_start = 0;
};

// Finds the noise of `t` (paths by options.ignore_paths and scratch files, unknown calls).
void FindNoise(const ProfileTrace& t, const FitOptions& options, Noise* noise);
// Whether `pattern` (CheckFitIgnorePattern's) matches `path`.
bool MatchesIgnorePattern(std::string_view pattern, std::string_view path);
// Whether event i is an application event (dlio's item, epoch and compute events): kOther, and
// not an unknown call of a call layer.
bool IsAppEvent(const Noise& noise, const ProfileTrace& t, size_t i);
// Leaves out of view->data_events (and the files' counts) the events of the threads that never
// read a sample (a main process that opens each file for len() and reads its header): every read
// of theirs header-sized, their largest sample read under 1/4 of another thread's median one.
// Files only they touched are dropped. Returns whether any was; view->accesses must then be
// built again.
bool DropNonReaders(const ProfileTrace& t, View* view);
// The notes saying what was left out (nothing when nothing was).
void AddNoiseNotes(const Noise& noise, FitResult* out);

// The trace as FitTrace's stages see it.
struct View {
  std::vector<FileUse> uses;            // every file, by path
  std::vector<DataFile> files;          // the dataset, sorted by path
  std::string extension;                // the data files' suffix ("npz")
  std::vector<std::string> companions;  // index files read beside them (tfrecord .idx)
  std::vector<size_t> data_events;      // trace events on data files, by start time
  std::vector<Access> accesses;         // by start time
  int32_t epochs = 1;
  bool epochs_from_events = false;  // application epoch events gave `epochs`
  bool passes_per_rank = false;     // each rank's own passes gave `epochs` (AssignPasses)
  // The data is read through mappings (MappedReads): its samples leave no reads; `epochs` then
  // comes from the mappings, for this reason (AssignMappedPasses).
  bool mapped = false;
  std::string mapped_passes;
  // Those passes are one process's mappings of a file, anew each pass (PassesByMappings: a loop
  // that re-creates np.memmap every pass), not processes forked per pass.
  bool remapped_per_pass = false;
  // Each pass reads every sample this many times (AssignRepeatedPasses: a file read whole for
  // each sample it holds); train.epochs is then epochs x reads_per_pass, for this reason.
  int64_t reads_per_pass = 1;
  std::string repeated_passes;
  // The passes are generations whose reads are crops of whole-file samples (AssignRepeatedPasses:
  // each access's key set to 0, the file its sample), for this reason; "" otherwise.
  std::string cropped_passes;
  int64_t app_epoch_events = 0;
  std::vector<Step> steps;  // by start time
  bool steps_from_compute = false;
  Period period;  // without compute events: the steps' period (reads 0: pauses by threshold)
  // Without compute events, in several reading processes (DataLoader workers): the period of each
  // worker's own pauses (FindWorkerPeriod); `worker_past_first`: counted past its first batch of
  // a pass. reads 0 otherwise.
  Period worker_period;
  bool worker_past_first = false;
  int32_t compute_tid = -1, compute_pid = -1;
  int64_t items = 0;        // application per-sample events on data files
  bool skip_mpiio = false;  // a DXT trace with POSIX and MPIIO rows: MPIIO ones are left out
  // Ranks of the run: a view of one rank's events sees 1/world of each epoch's samples.
  int32_t world = 1;
  Noise noise;
  RunDelays run_delays;  // the trace's run-queue delays (CollectAccesses)
};

// The time from the end of sample read `prev` to the start of `next` that next's thread did not
// wait for a CPU (0 when they overlap).
int64_t GapLessDelay(const View& view, const Access& prev, const Access& next);

// Whether a sample read is of the training files (not under a valid/eval folder).
inline bool IsTrain(const View& view, const Access& a) {
  return !view.files[static_cast<size_t>(a.file)].valid;
}

// reader.batch_size against the samples a pass read (fit_pass_reads.cc): a fitted batch that does
// not divide the epoch, so that the emulation would read more than 5% fewer samples a pass than
// the program (DLIO drops an epoch's last partial batch), becomes the nearest batch that reads
// them, and the reason says so. `per_access`: samples one training access stands for.
void KeepPassReads(const View& view, int64_t per_access, FitResult* out);

// The natural order of file names: digit runs compare as numbers ("img_9" < "img_10").
bool NaturalLess(std::string_view a, std::string_view b);
// The suffix after the last '.', lower case ("" when none).
std::string Extension(std::string_view path);
std::string Basename(std::string_view path);
// dlio's own bookkeeping: a path with a component starting ".dlio" (the dataset marker, the
// generate lock, generation's temporary folders, checkpoint completion markers).
bool IsDlioInternal(std::string_view path);

// The gap (microseconds) above which a pause between requests ends a burst, 0 when none stands
// out: the biggest jump (at least 4x) between consecutive sorted gaps of at least 500 us, or
// every gap when all are that long.
int64_t PauseThreshold(std::vector<int64_t> gaps);

// One save: a burst of writes to checkpoint files.
struct Save {
  int64_t step = 0;
  int64_t bytes = 0;
  std::set<std::string> files;
  int64_t start_us = 0, end_us = 0;  // first write's start, last write's end
  // The pass over the training data it happened in, from 0 (a save at a pass's end: that pass);
  // -1 when none began before it.
  int32_t epoch = -1;
};

// What the trace writes to checkpoint files (fit_side.cc): the files, the saves (bursts), the
// write sizes (size -> count), the fsync/fdatasync calls, and each file's first write time and
// write requests by start time.
struct CheckpointWrites {
  std::set<std::string> files;
  std::vector<Save> saves;
  std::map<int64_t, int64_t> write_sizes;
  int64_t syncs = 0;
  std::map<std::string, std::pair<int64_t, std::vector<torch_save::TorchWrite>>> per_file;
};

// Whether the checkpoint files are torch.save's (fit_torch.cc): then sets checkpoint.type
// torch_save, torch_state_dict, torch_modules, torch_file_name (and torch_pickle_bytes for a
// nested container), with a state dict per file of a checkpoint whose emulated writes equal the
// traced ones (read from a file that still exists when FitOptions::read_file allows, else
// inferred from the writes). Several files per checkpoint (DeepSpeed's model and optimizer
// states) when they carry 95% of the checkpoint bytes or more.
bool FitTorchSave(const CheckpointWrites& writes, const FitOptions& options, FitResult* out);

// Whether the checkpoint files are h5py's (fit_h5py.cc: HDF5 written by libhdf5 as h5py writes
// it): then sets checkpoint.type h5py_save, h5py_datasets (read from the file when
// FitOptions::read_file allows, else from the data writes' sizes) and h5py_file_name.
bool FitH5pySave(const CheckpointWrites& writes, const FitOptions& options, FitResult* out);

// A name that changes from save to save (model-8.pt, model-16.pt; epoch=0-step=6.ckpt,
// epoch=1-step=12.ckpt): checkpoint.torch_file_name's template for the file each save writes
// named as `example` (its numbers aside), with {id} for a number counting the saves, {step} for
// the global step and {epoch} for the pass each save happened in when it is not the save count
// (fit_folder_name.cc), and why; nullopt when no number varies or one varies otherwise (the
// traced name is then kept).
struct SaveFileName {
  std::string text;
  std::string why;
};
std::optional<SaveFileName> FitSaveFileName(const CheckpointWrites& w, const std::string& example);

// checkpoint.folder_name (fit_folder_name.cc), from the traced checkpoint folders: each save's
// files but the tag file (`tag_path`, "" when none) in one folder of the checkpoint folder, and
// the folder of the `resumed` files. The number in their names that varies becomes {step} when it
// is each save's step plus one offset (the global step: the run's steps after those of the
// checkpoint it resumed from), else {id} when it counts the checkpoints one by one, else {epoch}
// when it is the pass each save happened in; zero-padded
// when the names are. When every save writes its files side by side in one folder and
// checkpoint.torch_file_name (set before) names each save's file anew: "." (no folder per save).
// Nothing set when the saves share a folder otherwise; a reason without a value when their names
// follow neither rule.
void FitFolderName(const CheckpointWrites& w, const std::string& tag_path,
                   const std::vector<const FileUse*>& resumed, FitResult* out);

// Extensions of checkpoints a run resumes from (fit_files.cc): some files of it only written (the
// run's saves), no more of it only read (the checkpoint loaded at start). A dataset's files are
// read and outnumber any output of their kind, so its extension is never one of these.
std::set<std::string> ResumedExtensions(const std::vector<FileUse>& uses);

// Stage 1 (fit_files.cc): files, the data files and their probes, the data events.
Status CollectFiles(const ProfileTrace& trace, const FitOptions& options, View* view);
// Stage 2 (fit_access.cc): accesses, epochs, steps.
void CollectAccesses(const ProfileTrace& trace, View* view);
// Stage 2's folds (fit_fold.cc). An access folded into another has bytes -1 until DropFolded
// removes it. Absorb folds `from` into `into`: its span, bytes, reads and times join `into`'s.
void Absorb(Access* into, Access* from);
void DropFolded(std::vector<Access>* accesses);
// Format probes: sessions of one read at a file's start that the process follows at once with
// another open of the same file (tarfile.open's gz, bz2 and xz tries), folded away.
void MarkProbes(std::vector<Access>* accesses);
// An archive's directory read (a session's first access begun in the file's end record, with
// large reads before it: zipfile's central directory) folded into the next access of its thread
// and file when no open of the file comes between. `first_offset[k]`: where access k's first read
// began.
void FoldDirectoryReads(const View& view, const std::vector<int64_t>& first_offset,
                        std::vector<Access>* accesses);
void CollectSteps(const ProfileTrace& trace, const FitOptions& options, View* view);
// fit_mapped.cc. Whether most bytes read of the data files are pages a mapping took in
// (mmap.touched runs: np.load(mmap_mode='r'), np.memmap), whose rows leave no read.
bool MappedReads(const ProfileTrace& trace, const View& view);
// The passes of mapped data, told by its mappings rather than by samples read again (np.load's
// three opens re-read the header; a process's touched pages cannot show how often it read them):
// when the reading processes come in generations of equal size, each starting after the last
// ended (DataLoader workers forked per epoch), a pass per generation; else as many as the most
// mappings of one data file in one process. Sets the accesses' epochs, view->epochs and
// view->mapped_passes.
void AssignMappedPasses(const ProfileTrace& trace, View* view);
// fit_generations.cc. The generations of the reading processes: a process that starts after
// every process of the current generation ended begins the next one (DataLoader workers forked
// per epoch). `count` 0 unless there are at least two, all of `processes` processes.
struct Generations {
  std::map<int32_t, int32_t> of_pid;  // reading process -> its generation
  int32_t count = 0;
  int64_t processes = 0;
};
Generations FindGenerations(const View& view);
// Passes by generation where samples read again tell none (a pass per generation already found
// is kept): when every sample is read the same r >= 2 times in every generation, a pass per
// generation and view->reads_per_pass = r, with the reason in view->repeated_passes. When reads
// begin at offsets no other read began at (random crops) and every file is read the same r times
// in every generation, the file is the sample (keys set to 0), a pass per generation
// (view->cropped_passes), and r as above when r >= 2.
void AssignRepeatedPasses(View* view);
// One rank's passes taken from the whole run's (`whole`, all ranks): a rank that reads another
// shard each epoch never reads a sample twice in a run, so its own reads cannot show its passes.
// Kept when the rank's trace has application epoch events, or its own passes are as many.
void AlignEpochs(const View& whole, View* part);

// The framework I/O model the data reads look like (fit_model.cc), for the data files of
// `format` (dlio's registry name, "" unknown).
struct ModelGuess {
  std::string model;  // a reader.io_model value
  FitConfidence confidence = FitConfidence::kMedium;
  std::string reason;
  std::vector<std::pair<std::string, std::string>> keys = {};  // the model's own keys, values
  // The model's readers keep state per open file across samples (tarfile_index's member index,
  // loaded once per open): several reading processes are then emulated as processes
  // (reader.loader pytorch_workers), each loading its own, not as threads sharing one.
  bool per_process_state = false;
};
ModelGuess GuessIoModel(const ProfileTrace& trace, const View& view, const std::string& format,
                        const FitOptions& options);
// How GuessPyio holds simulated requests against a file's: exactly, or before the file's end
// (the reads at or past it set aside, the program making at least as many of them as the calls;
// reader.pyio_end_reads makes up the difference).
enum class PyioMatch { kExact, kBeforeEnd };
// pyio with the calls whose requests (options.pyio_requests) are the trace's, file by file
// (fit_pyio.cc); nothing when no candidate holds for 80% of the files' open-to-close reads. Exact,
// with view.cropped_passes also a head then a crop at each read's own offset
// (reader.pyio_crop_bytes); before the end, whole files only.
std::optional<ModelGuess> GuessPyio(const ProfileTrace& trace, const View& view,
                                    const PyioRequestsOf& requests,
                                    PyioMatch match = PyioMatch::kExact);
// pyio over files of equal records (FitFormatTraits::pyio_records): at least 80% of the training
// files' reads follow a seek of their thread to their own offset, the offsets' greatest common
// divisor (the record) divides every file's size at least twice, and 80% of those reads checked
// begin as f.seek(o); f.read(record) (or readinto) requests from an empty buffer, most of them not
// the record alone (fit_pyio.cc): reader.pyio_call, per process state.
std::optional<ModelGuess> GuessPyioRecords(const ProfileTrace& trace, const View& view,
                                           const PyioRequestsOf& requests);
// Whether `model` reads each file whole, once per pass, and serves all its samples from that
// read (pandas.read_csv, tf.data's stream): one access of a file then stands for all of its
// samples, and the batches are not visible in the reads.
bool StreamsWholeFiles(std::string_view model);
// Opens of the data files, and samples read (application sample events when the trace has
// them, else sample reads).
std::pair<int64_t, int64_t> OpensAndSamples(const View& view);
// Whether the data files are opened about once per sample read (np.load, h5py.File per sample).
bool OpensPerSample(const View& view);

// fit_chunks.cc. Stored bytes per byte of sample data of the probed files (compression), 1 when
// none says less.
double StoredFraction(const View& view);
// Whether a probed file's samples are deflated in units (hdf5 chunks, an npz member) its
// format's writer makes of a chosen compression ratio (FormatCapabilities::compression_ratio),
// and whether any probed file's are.
bool CompressibleUnits(const DataFile& f);
bool AnyCompressibleUnits(const View& view);
// dataset.compression, compression_level, compression_ratio and its stdev from such files.
void FitCompressionRatio(const View& view, FitResult* out);
// The keys the probed files' descriptions say their format's writer needs (DataFileInfo::
// writer_keys), where every probed file gives the same value (fit_chunks.cc).
void FitWriterKeys(const View& view, FitResult* out);

// Per file of `view`, whether the probe's layout of it (DataFileInfo::sample_extent and
// row_tables) is the one the trace reads: at least half of its reads over kSmallReadBytes lie in
// the samples' bytes or a table of a row per sample, and some in the samples'. A program that
// reads another dataset than the one the probe took for the samples (h5py_crops: the coordinates
// taken for samples, the volume's chunks read) is not; fit_access.cc.
std::vector<bool> ProbedLayoutRead(const ProfileTrace& t, const View& view);
// The reader keys whose value the traced loads of the probed files match (DataFile::loads against
// DataFileInfo::read_variants), where one value matches most loads and is not the key's default
// (fit_variants.cc).
void FitReadVariants(const View& view, FitResult* out);
// dataset.hdf5_root_attributes from the probed files' root attributes (the value most of them
// have), and reader.h5py_read_attributes when most traced loads of those files make one of the
// reads the probe made reading them (DataFileInfo::attribute_reads; fit_variants.cc).
void FitRootAttributes(const View& view, FitResult* out);
// reader.batch_size (fit_batch.cc): of a loader that streams whole shards (WebDataset over
// tarfile), from the bytes a worker streams between pauses (false when not such a loader or no
// pause stands out); else from the batches DataLoader workers collated into shared memory, the
// workers' pauses, threads that step after every read, the period of the pauses, or the reads
// between pauses.
bool FitStreamBatch(const ProfileTrace& t, const View& view, const ModelGuess& model,
                    FitResult* out);
void FitBatch(const ProfileTrace& t, const View& view, const ModelGuess& model, FitResult* out);
// Samples one access stands for: all of a file's under a model that streams whole files, else 1.
int64_t SamplesPerAccess(const ModelGuess& model, const FitResult& out);
// train.computation_time of a loop fed by DataLoader worker processes without compute events:
// each worker begins a batch every W steps once past the two it prefetches, so a step is the
// median time between one worker's batches over the workers of a pass (fit_reader.cc). False
// (nothing set) without several reading processes, a period of their pauses, or 4 such batches.
bool FitWorkerStep(const View& view, FitResult* out);
// The period of each training-reading process's pauses (FindPeriod over its runs per pass,
// fit_batch.cc), counted from its first read of a pass or past its first batch, whichever stands
// out more (`past_first`); reads 0 with fewer than two such processes. CollectSteps keeps it in
// View::worker_period.
Period FindWorkerPeriod(const View& view, bool* past_first);
// dataset.enable_chunking and chunk_samples 1 for hdf5 pieces below libhdf5's sieve buffer.
void FitPieceChunks(const View& view, FitResult* out);
// Whether a probed file is hdf5 of a group per sample (its description's writer keys name
// dataset.hdf5_sample_groups): its small reads are libhdf5's walk to each sample's group, not
// chunks or a lookup table.
bool ProbedSampleGroups(const View& view);
// dataset.enable_chunking and chunk_size from hdf5 reads of one size a fraction of a sample.
void FitChunking(const ProfileTrace& t, const View& view, FitResult* out);
// The chunking, codec and compression ratio the probed files' chunks of whole samples show; true
// when it set them.
bool FitStoredChunks(const View& view, FitResult* out);
// Why OpensPerSample holds: "N opens of the data files for M samples read", or opens per pass.
std::string OpensPerSampleReason(const View& view);
// reader.file_shuffle and reader.sample_shuffle (fit_order.cc).
void FitShuffle(const ProfileTrace& trace, const View& view, FitResult* out);
// The most common size of the data reads larger than kSmallReadBytes, and its share of them.
std::pair<int64_t, double> CommonLargeRead(const ProfileTrace& trace, const View& view);
// reader.h5py_reopen, reader.hdf5_lookup_dataset and reader.hdf5_lookup_order of data read
// through h5py (fit_h5py_reads.cc).
void FitH5py(const ProfileTrace& trace, const View& view, FitResult* out);
// h5py's signatures, for a format that declares it (fit_h5py_reads.cc): a group or dataset per
// sample in the probed files, opens per sample, a small table read beside each sample, or mostly
// metadata-sized reads (`small` of `reads`); nullopt when none holds.
std::optional<ModelGuess> GuessH5py(const ProfileTrace& trace, const View& view, bool most_sessions,
                                    int64_t small, int64_t reads);
// Sample reads that read (nearly) all of their file: whole-file loads.
int64_t WholeFileAccesses(const View& view);
// The format the dataset section fitted ("" when it could not tell).
std::string FittedFormat(const FitResult& out);

// Reader threads that read in more than one pass live across epochs: then every distinct
// reading thread counts (in one pass a fast thread may have read everything); when every pass
// reads with new threads (DataLoader workers re-forked per epoch, a tf.data pipeline built per
// epoch), the most readers of one pass.
int64_t ReaderCount(const View& view);

// Stage 3: the entries of each section.
void FitDataset(const ProfileTrace& trace, const View& view, const FitOptions& options,
                FitResult* out);
void FitReader(const ProfileTrace& trace, const View& view, const FitOptions& options,
               FitResult* out);
// reader.client_costs (fit_client_costs.cc), after reader.io_model and reader.batch_size:
// `framework` when the readers spend most of their time on their own work between sample reads
// and the consumer waits for them (docs/profiling.md); otherwise left at none, with the figures.
void FitClientCosts(const View& view, const FitOptions& options, FitResult* out);
// train.epochs, train.computation_time and train.total_training_steps (fit_train.cc).
void FitTrain(const View& view, FitResult* out);
void FitCheckpoint(const ProfileTrace& trace, const View& view, const FitOptions& options,
                   FitResult* out);
void FitSideIo(const ProfileTrace& trace, const View& view, FitResult* out);
// A trace that reads no data but writes files: a checkpoint-only workload.
// InvalidArgument when it writes no such file either (nothing to fit).
Status FitCheckpointOnly(const ProfileTrace& trace, const View& view, const FitOptions& options,
                         FitResult* out);

// Stages 1-3 of the whole trace (all ranks): the files, accesses and steps, the run's name and
// workflow, the dataset. `view` and `out` are filled; FitPerRank does the rest.
Status FitGlobal(const ProfileTrace& trace, const FitOptions& options, View* view, FitResult* out);
// Stage 3 of what one rank does: reader, train, checkpoint and side-I/O entries.
void FitPerRank(const ProfileTrace& trace, const View& view, const FitOptions& options,
                FitResult* out);
// The trace-wide notes (events, files, reads, steps) of `view`.
void AddViewNotes(const ProfileTrace& trace, const View& view, FitResult* out);

// Ranks (fit_ranks.cc): the processes of each MPI rank, from ProfileTrace::ranks.
struct RankGroups {
  std::map<int32_t, std::set<int32_t>> pids;  // rank -> its processes
  std::set<int32_t> unranked;                 // processes whose rank the trace does not tell
};
RankGroups GroupRanks(const ProfileTrace& trace);
// The events of the processes `pids`, with their names and ranks.
ProfileTrace SubTrace(const ProfileTrace& trace, const std::set<int32_t>& pids);
// A trace of two or more ranks: the global values from all ranks, the per-rank ones from each
// rank's events (checked to agree), the sharding and the checkpointing ranks.
Result<FitResult> FitRanks(const ProfileTrace& trace, const FitOptions& options,
                           const RankGroups& groups);

// Helpers for building entries.
void Set(FitResult* out, std::string key, std::string value, FitConfidence c, std::string reason);
void Unset(FitResult* out, std::string key, std::string default_value, std::string reason);
// Mean and (population) standard deviation.
struct MeanStdev {
  double mean = 0, stdev = 0;
};
MeanStdev Moments(const std::vector<double>& xs);
int64_t Median(std::vector<int64_t> xs);
// `text` as a whole decimal number of digits only (no sign, no spaces) that fits in int64:
// false otherwise, never an exception (names and values of a trace are anyone's text).
bool ParseDigits(std::string_view text, int64_t* out);
// An entry's value as a number (FitTrace writes its numbers with std::to_string); `fallback`
// when there is no entry or its value is no such number.
int64_t EntryInt(const FitEntry* entry, int64_t fallback);
// a * b for counts read from a trace (never negative): INT64_MAX when the product does not fit.
int64_t SaturatingMul(int64_t a, int64_t b);
// a + b for such counts: INT64_MAX when the sum does not fit.
int64_t SaturatingAdd(int64_t a, int64_t b);
// Bytes as "262144 (256 KiB)" for reasons.
std::string HumanBytes(double bytes);
// Seconds with at most 6 significant digits ("0.0021").
std::string Seconds(double s);

}  // namespace dlio::fit
