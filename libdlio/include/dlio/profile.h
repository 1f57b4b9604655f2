// I/O profiles: an in-memory trace model, importers that fill it from trace files, and
// Darshan-exact per-file counters computed on it.
//
// The model is column-oriented (one vector per field) so 10 M events take ~60 bytes each and a
// pass over one field touches only that field. Strings (names, categories, paths) are interned in
// one table and referenced by a 32-bit id.
//
// Thread safety: a ProfileTrace requires external synchronization; distinct traces are
// independent. Importers and counters never throw; errors are Status values naming file and line.
#ifndef DLIO_PROFILE_H_
#define DLIO_PROFILE_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dlio/status.h"

namespace dlio {

// What an event does to a file, independent of the exact call name.
enum class OpKind : uint8_t {
  // read, pread, pread64, readv, preadv(2, 64, 64v2), fread; and mmap.touched (no call: the pages
  // of a mapping found mapped in when it ended, docs/profiling.md), so mmap'd reading counts as
  // reads
  kRead,
  kWrite,     // write, pwrite, pwrite64, writev, pwritev(2, 64, 64v2), fwrite
  kOpen,      // open, open64, openat, openat64, creat, fopen
  kClose,     // close, fclose
  kSeek,      // lseek, lseek64, llseek, _llseek, fseek, fseeko, fseeko64
  kStat,      // the stat family, access
  kSync,      // fsync, fdatasync
  kMmap,      // mmap, munmap
  kMetadata,  // other file-system metadata: mkdir, unlink, rename, opendir, ...
  // application events (ai.*, compute, ...) and calls not in the table (`dlio-run fit` tells
  // the two apart by category: docs/profiling.md)
  kOther,
};

// "read", "write", ... (stable; used in reports).
std::string_view OpKindName(OpKind kind);
// The kind of a call by its name ("pread64" -> kRead); kOther when unknown.
OpKind OpKindOfCall(std::string_view name);

// The largest timestamp or duration a trace may hold, in microseconds (2^53: ~285 years). The
// importers refuse larger magnitudes (naming file and line), so no sum of two times overflows.
inline constexpr int64_t kMaxTraceMicros = int64_t{1} << 53;
// The largest file offset, request size or byte count (ret) an event may hold, in bytes (2^53,
// 8 PiB): an offset plus a size never overflows. Importers drop an event beyond it, with a
// warning naming file and line.
inline constexpr int64_t kMaxTraceBytes = int64_t{1} << 53;
// The longest line a trace file may have (64 MiB; a dlio or DFTracer event takes a few hundred
// bytes, a strace line a few KiB): a longer one fails naming file and line, so a small gzip file
// that inflates to one huge line cannot exhaust memory.
inline constexpr size_t kMaxTraceLineBytes = size_t{64} << 20;
// The number of warnings an import keeps (ImportStats::warnings); the others are only counted.
inline constexpr size_t kMaxImportWarnings = 8;

// One event, as importers hand it to ProfileTrace::Add and as Get() returns it.
struct ProfileEvent {
  int32_t pid = 0;
  int32_t tid = 0;
  std::string_view name;      // call or event name ("pread64", "ai.compute.step")
  std::string_view category;  // "POSIX", "STDIO", "ai", "strace", ...
  std::string_view path;      // file; empty when the event has none
  int64_t start_us = 0;       // wall-clock microseconds
  int64_t dur_us = 0;
  int64_t offset = -1;  // file offset of the request; -1 unknown
  int64_t size = -1;    // bytes requested; -1 unknown / does not apply
  // Bytes transferred, new offset (seek), fd (open) or -errno (< -1) of a failed call; -1
  // unknown. -1 is also what a failed call with errno EPERM (1) and a libc-level failure recorded
  // by a tracer ("ret":-1 in a .pfw) read as: the model cannot tell those from "unknown", and
  // ComputeFileCounters then counts the call as done with its requested size.
  int64_t ret = -1;
  // Minor page faults the calling thread took inside the call (the pages a read filled that
  // were not in memory yet); -1 unknown. dlio's LD_PRELOAD tracer records them for data calls
  // of 64 KiB or more (docs/profiling.md).
  int64_t faults = -1;
  // The calling thread's run-queue delay so far (microseconds runnable but waiting for a CPU),
  // when the call ended; -1 unknown. dlio's LD_PRELOAD tracer records it where the kernel keeps
  // schedstats, at most once per 200 us of a thread's time (docs/profiling.md): `fit` takes the
  // delay accrued within a pause out of its compute time.
  int64_t run_delay_us = -1;
  // Shared-memory objects the calling thread created (shm_open with O_CREAT) since its previous
  // traced call; 0 when none or unknown. dlio's LD_PRELOAD tracer records them ("shm"): a
  // PyTorch DataLoader worker collates each batch into a new one, which `fit` reads as the
  // batch's end (docs/profiling.md, "Collates").
  int64_t shm_created = 0;
  OpKind kind = OpKind::kOther;
};

// The category and names of the kernel requests dlio's LD_PRELOAD tracer derives beneath a
// stdio call (docs/profiling.md, "The kernel level").
inline constexpr std::string_view kStdioKernelCategory = "SYSCALL";
inline constexpr std::string_view kStdioKernelRead = "stdio.read";
inline constexpr std::string_view kStdioKernelWrite = "stdio.write";

// One read or write system call beneath a stdio call (fread, fwrite, fseek, fclose), as the
// tracer derived it from the stream's buffer state.
struct StdioKernelRequest {
  int32_t pid = 0, tid = 0;
  int32_t path = -1;  // a string id of the trace that holds it
  int64_t start_us = 0, dur_us = 0;
  int64_t offset = -1, size = -1, ret = -1;  // as ProfileEvent's
  bool write = false;
};

// A trace in memory, struct-of-arrays. Requires external synchronization.
class ProfileTrace {
 public:
  static constexpr int32_t kNoString = -1;

  // Returns the id of `s` in the string table (the same id every time).
  int32_t Intern(std::string_view s);
  // The string of an id from Intern; "" for kNoString.
  const std::string& String(int32_t id) const;

  // Appends an event (its strings are interned).
  void Add(const ProfileEvent& e);
  // Appends an event whose strings the caller interned already (ids from Intern, path
  // kNoString for none); e's name/category/path are not read. For importers' hot loops.
  void AddInterned(const ProfileEvent& e, int32_t name_id, int32_t category_id, int32_t path_id);
  size_t size() const { return start_us.size(); }
  void Reserve(size_t n);
  // Event i as a row; its string_views live as long as the trace.
  ProfileEvent Get(size_t i) const;

  // Columns, all of size(). name/category/path are string ids (path kNoString when none).
  std::vector<int32_t> pid, tid, name, category, path;
  std::vector<int64_t> start_us, dur_us, offset, size_bytes, ret;
  std::vector<int32_t> faults;        // ProfileEvent::faults, capped at INT32_MAX
  std::vector<int64_t> run_delay_us;  // ProfileEvent::run_delay_us
  std::vector<int32_t> shm_created;   // ProfileEvent::shm_created, capped at INT32_MAX
  std::vector<OpKind> kind;

  // The kernel requests beneath its stdio calls, kept apart from the events so that analyze,
  // report and fit see the calls the program made; `dlio-run compare` scores them in place of
  // the stdio reads and writes (WithKernelRequests in dlio/profile_compare.h).
  std::vector<StdioKernelRequest> stdio_kernel;

  std::map<int32_t, std::string> process_names;                     // pid -> name
  std::map<std::pair<int32_t, int32_t>, std::string> thread_names;  // (pid, tid) -> name
  // pid -> MPI rank, for the processes whose trace tells it (process names "dlio rank R",
  // "dlio rank R worker W", "<comm> (rank R)"; DXT's rank column). `dlio-run fit` groups by it.
  std::map<int32_t, int32_t> ranks;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // A direct-mapped cache in front of ids_ (hash -> id): importers intern the same few names
  // and a working set of paths on every event; a hit costs one hash and one compare.
  struct CacheSlot {
    size_t hash = 0;
    int32_t id = kNoString;
  };
  static constexpr size_t kCacheSlots = 16384;

  std::vector<std::string> strings_;
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> ids_;
  std::vector<CacheSlot> cache_;
};

// What an importer saw besides the events it added.
struct ImportStats {
  int64_t lines = 0;            // lines read
  int64_t events = 0;           // events added to the trace
  int64_t metadata_events = 0;  // process/thread names and other metadata
  int64_t stdio_kernel = 0;     // kernel requests beneath stdio calls (ProfileTrace::stdio_kernel)
  int64_t skipped = 0;          // well-formed lines that carry no event (other ph, signals, ...)
  int64_t truncated_lines = 0;  // an unparseable last line (a process killed mid-write), skipped
  // Unparseable DFTracer metadata records ("cat":"dftracer", "ph":"M"), skipped: one DFTracer
  // version prints "pid":%dq (e.g. "pid":42q) in its non-string metadata (core_affinity).
  int64_t malformed_metadata = 0;
  // Events dropped, or fields corrected, for values no real trace holds: a pid, tid or rank that
  // does not fit 32 bits (dropped: it would be merged with a small one), a negative duration (set
  // to 0), an offset, size or byte count beyond kMaxTraceBytes (dropped). Each has a warning
  // naming file and line; `warnings` keeps the first kMaxImportWarnings of them.
  int64_t bad_values = 0;
  std::vector<std::string> warnings;
};

// dlio's own and DFTracer's trace files (.pfw, .pfw.gz; gzip is detected by content, not name):
// JSON lines of Chrome trace events, optionally inside "[" ... "]" with trailing commas. "X"
// events become events (args fname/count/size/offset/ret); "M" process_name/thread_name set
// names, and a process name that names a rank (RankOfProcessName) sets its `ranks` entry;
// DFTracer's "FH" metadata events (args name = path, value = hash) give the path of events that
// carry only "fhash" (unknown hashes become "fhash:<hash>"); other phases are counted as skipped. A
// malformed line fails with Corruption naming file and line, except the last line of the file,
// which a process killed mid-write leaves cut short: it is skipped and counted in truncated_lines
// (as trace-merge does). A value nested deeper than 512 levels fails on any line. Newer DFTracer's
// integer "ph" is mapped (1 "X", 2 counter, 3 aggregated, 4 "M"; counters and aggregated records
// are skipped), its "CM" time_metric event (US/NS/MS/SEC) scales ts/dur to microseconds, and lines
// that start with the array's "," are accepted. Concatenated gzip members (DFTracer compresses each
// block alone) are all read.
// dlio's tracer's kernel requests beneath stdio calls (category kStdioKernelCategory, names
// kStdioKernelRead/Write) go to trace->stdio_kernel, not to the events (stats->stdio_kernel).
Result<ImportStats> ImportPfw(const std::string& path, ProfileTrace* trace);

// The MPI rank a process name tells: "dlio rank R" and "dlio rank R worker W" (dlio-run's own
// traces and trace-merge's), "<comm> (rank R)" (libdlio_preload.so under a launcher); -1 none.
int32_t RankOfProcessName(std::string_view name);

// The environment variables MPI launchers give each process its rank in, in the order dlio reads
// them: Open MPI's mpirun, PMIx launchers, MPICH/Hydra and Slurm's PMI, Slurm's srun.
inline constexpr std::array<std::string_view, 4> kLauncherRankVariables = {
    "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};

// `strace -f -ttt -T` output (with or without -o; "[pid N]" prefixes or leading pids). Each file
// call becomes one event with its real offset: per-process fd tables follow open/openat/creat,
// dup/dup2/dup3/fcntl(F_DUPFD), close, lseek, read/write positions, fork/clone (tables copied
// in O(1), as persistent maps; shared with CLONE_FILES; open file descriptions and their offsets
// shared as in the kernel) and
// execve (O_CLOEXEC fds dropped). "<unfinished ...>"/"resumed" pairs are joined. Relative paths
// are joined (lexically) with the process's cwd, followed through chdir/fchdir, copied by fork
// and shared by CLONE_FS (unknown before the first chdir: paths stay relative); openat with a
// directory fd joins its path. readv/writev/preadv/pwritev request the sum of the iov_len strace
// prints (-1 when it abbreviated the array). Writes on an O_APPEND fd (open or F_SETFL) have
// offset -1: the file's end is not in the log; the position stays unknown until a seek. Failed
// calls: ret = -errno for every errno name glibc knows. Calls on fds of unknown files (pipes,
// stdin) get no path. A line that cannot be parsed fails naming file and line. Ranks: with
// `strace -v`, an execve prints its environment; one that holds a kLauncherRankVariables
// variable (the first of them, as dlio reads them) sets the process's `ranks` entry, and
// processes it forks keep it (DataLoader workers). Without -v the environment is abbreviated
// and no rank is known.
Result<ImportStats> ImportStrace(const std::string& path, ProfileTrace* trace);

// Categories ImportDxt gives the rows of its two layers (an MPI-IO transfer appears in both).
inline constexpr std::string_view kDxtPosixCategory = "POSIX";
inline constexpr std::string_view kDxtMpiioCategory = "MPIIO";

// Text printed by `darshan-dxt-parser` (DXT_POSIX and DXT_MPIIO sections). Each trace row becomes
// a read or write event: category exactly "POSIX" (X_POSIX rows) or "MPIIO" (X_MPIIO rows; the
// same I/O seen one layer up: an analysis should count one layer), pid = rank, tid = the thread
// column when the header has one else the rank, path from "# DXT, file_name:", start/end seconds
// relative to the job start ("# start_time:" of the preamble, whole or fractional seconds, is
// added). Offsets printed as N/A, or absent (3.1's MPIIO rows have no Offset column), are -1;
// Lustre "[OST]" columns are ignored. Every rank's `ranks` entry is set (pid = rank). A row that
// does not match its header fails naming file and line.
Result<ImportStats> ImportDxt(const std::string& path, ProfileTrace* trace);

// Darshan's ten access-size bins: 0-100, 101-1K, 1K+1-10K, 10K+1-100K, 100K+1-1M, 1M+1-4M,
// 4M+1-10M, 10M+1-100M, 100M+1-1G, 1G+ (K = 1024, edges inclusive as in DARSHAN_BUCKET_INC).
int DarshanSizeBin(int64_t bytes);
std::string_view DarshanSizeBinName(int bin);

// Darshan POSIX-module counters of one file, computed per process in time order exactly as
// darshan-posix.c does, then summed over processes (max for MAX_BYTE_*).
struct FileCounters {
  std::string path;
  int64_t opens = 0, closes = 0, reads = 0, writes = 0, seeks = 0, stats = 0, syncs = 0, mmaps = 0;
  int64_t bytes_read = 0, bytes_written = 0;
  int64_t max_byte_read = -1, max_byte_written = -1;  // -1: nothing read / written
  int64_t seq_reads = 0, consec_reads = 0, seq_writes = 0, consec_writes = 0;
  int64_t rw_switches = 0;
  std::array<int64_t, 10> size_read_bins{}, size_write_bins{};
  // Up to four (access size, count) pairs as Darshan's ACCESS1..4 (darshan-common.h 3.4): most
  // common first, ties larger value first; 0 never listed; only the first 32 distinct values of
  // a (process, file) record are counted; records of several processes add their four slots.
  std::vector<std::pair<int64_t, int64_t>> common_access;
  // Up to four (stride, count) pairs of reads and writes, as Darshan's STRIDE1..4 (same rules).
  std::vector<std::pair<int64_t, int64_t>> common_strides;
  double read_time_s = 0, write_time_s = 0, meta_time_s = 0;
  std::vector<int32_t> pids;  // processes that touched the file
};

// Counters of every file the trace names, sorted by path. Events with kind kOther or no path are
// ignored; a read or write with offset -1 uses the file position Darshan would track (0 after
// open, advanced by transfers, set by seeks whose ret is the new offset).
std::vector<FileCounters> ComputeFileCounters(const ProfileTrace& trace);

}  // namespace dlio

#endif  // DLIO_PROFILE_H_
