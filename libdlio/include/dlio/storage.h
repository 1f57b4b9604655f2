// Storage: where files live. Every call of every backend passes through File / Storage's public
// non-virtual methods, which count bytes, time the call and hand it to the Tracer; backends
// implement the protected Do* hooks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>  // SEEK_SET, SEEK_CUR, SEEK_END (File::Seek)
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/clock.h"
#include "dlio/fresh_read_pages.h"
#include "dlio/option_sections.h"
#include "dlio/registry.h"
#include "dlio/status.h"
#include "dlio/tracer.h"

namespace dlio {

enum class OpenMode {
  kRead,       // must exist
  kWrite,      // create or truncate
  kCreateNew,  // create; AlreadyExists if present (never clobbers data we did not create)
  kReadWrite,  // create if missing, keep contents
};

struct FileOptions {
  bool direct = false;  // O_DIRECT on backends that support it; others ignore it
};

// Byte counters of one Storage, updated with relaxed atomics on every call.
struct IoCounters {
  std::atomic<uint64_t> read_ops{0}, read_bytes{0}, write_ops{0}, write_bytes{0};
  std::atomic<uint64_t> opens{0}, closes{0}, syncs{0};
};

struct IoStats {
  uint64_t read_ops = 0, read_bytes = 0, write_ops = 0, write_bytes = 0;
  uint64_t opens = 0, closes = 0, syncs = 0;
};

// Where a File reports its calls. Owned by the Storage; outlives its Files.
struct IoSink {
  const Clock* clock = nullptr;
  Tracer* tracer = nullptr;  // may be a null tracer; never nullptr once bound
  IoCounters* counters = nullptr;
  const char* category = "POSIX";  // trace "cat" of this storage's events
  // Trace names of the per-file calls (string literals): POSIX's by default, fopen/fread/fwrite/
  // fclose for the stdio backend.
  const char* open_name = "open64";
  const char* read_name = "pread";
  const char* write_name = "pwrite";
  const char* close_name = "close";
  const std::string* storage_name = nullptr;  // the Storage's name() (for error messages)
  // Pages dropped before large reads (reader.fresh_page_share); null: none. Shared by the files.
  std::shared_ptr<FreshReadPages> fresh_pages;
};

class File;

// Trace names of a mapping's calls (File::Map): the map, the pages found mapped in when it ends,
// and the unmap. "mmap.touched" is no call: one event per run of pages of the mapping that this
// process had mapped in (offset = file offset, count = bytes), read from /proc/self/pagemap just
// before the unmap; libdlio_preload.so records the same for a traced program's mappings.
inline constexpr char kMmapCallName[] = "mmap";
inline constexpr char kMunmapCallName[] = "munmap";
inline constexpr char kMmapTouchedName[] = "mmap.touched";
// Trace name of File::Seek's lseek (what Python's and most programs' lseek calls resolve to).
inline constexpr char kSeekCallName[] = "lseek64";

// A read-only mapping of a whole file (File::Map), as np.memmap(path, mode='r') makes one:
// reading data() faults its pages in (with the kernel's readahead and fault-around) instead of
// issuing read calls. Unmap() (or destruction) first records which pages were mapped in, then
// unmaps. data() may be read from many threads at once; Unmap requires that no read is in flight.
// The file must not shrink while mapped (reading past its new end raises SIGBUS).
class FileMapping {
 public:
  virtual ~FileMapping();
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Copies `n` bytes at `offset` of the mapping into `out`, touching their pages as
  // np.array(memmap[offset:offset + n]) does. OutOfRange naming the file past the end.
  Status CopyOut(uint64_t offset, size_t n, void* out) const;
  // Records the mapped-in pages (kMmapTouchedName) and unmaps. Idempotent.
  Status Unmap();

 protected:
  FileMapping(std::string path, const uint8_t* data, uint64_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  // Releases the mapping. Backends' destructors call Unmap().
  virtual Status DoUnmap() = 0;

 private:
  friend class File;
  std::string path_;
  const uint8_t* data_;
  uint64_t size_;
  IoSink sink_;
  int32_t file_id_ = -1;
  bool unmapped_ = false;
};

// An open file. ReadAt/WriteAt at explicit offsets are safe for concurrent use from many threads;
// Close/Sync require that no other call is in flight. Destruction closes the file.
class File {
 public:
  virtual ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  // Reads up to `n` bytes at `offset` into `buf`; returns the count read (< n only at end of file).
  Result<size_t> ReadAt(uint64_t offset, size_t n, void* buf);
  // One read request of up to `n` bytes at `offset`, as a single read(2) does: the count may be
  // short anywhere (posix: one pread, retried only on EINTR, so a read reaching past the end
  // returns what is there and issues no second request); 0 at or past the end of file. Counted
  // and traced exactly as ReadAt. Backends without a single-request read do what ReadAt does.
  Result<size_t> ReadSomeAt(uint64_t offset, size_t n, void* buf);
  // Reads exactly `n` bytes or returns Corruption naming the path, offset and the short count.
  Status ReadExactAt(uint64_t offset, size_t n, void* buf);
  // Reads the `n` bytes at `offset` into `buf` and the up to `tail_n` bytes after them into
  // `tail`: one request of n + tail_n bytes where the backend has a vectored read (posix: one
  // preadv, retried as ReadAt would be when short), counted and traced as one read of the sum;
  // elsewhere ReadAt of each range, two requests. Returns the bytes read into both (fewer than
  // n + tail_n only at the end of the file; `tail` is filled only once `buf` is).
  Result<size_t> ReadTwoAt(uint64_t offset, size_t n, void* buf, size_t tail_n, void* tail);
  // Writes all `n` bytes at `offset` (ResourceExhausted on a full disk).
  Status WriteAt(uint64_t offset, const void* buf, size_t n);
  // The file's size. posix: an fstat, but the first call on a file opened for reading returns the
  // size the open's own fstat found (one fstat per open, as a program's open and size check are).
  Result<uint64_t> Size();
  Status Sync();   // fsync (fdatasync is not enough for the checkpoint metadata)
  Status Close();  // idempotent
  // lseek(2) as a program's seek that reaches the kernel issues it: `whence` SEEK_SET, SEEK_CUR
  // or SEEK_END; returns the new offset. dlio's reads are positioned, so the file's offset (0 at
  // open) moves only here: a seek costs what the program's does and changes no read. posix: one
  // lseek of the descriptor, traced as kSeekCallName (offset = the one asked, -1 when negative,
  // as libdlio_preload.so records a program's). Backends without a descriptor (DescriptorSeeks
  // false) compute the offset, SEEK_END from their size, and issue and trace nothing.
  // InvalidArgument naming the file for a target before the start of the file or a bad whence.
  // Callers that share a File share its offset (Python's file objects each own theirs).
  Result<uint64_t> Seek(int64_t offset, int whence);
  // Whether Seek issues a request (a descriptor's lseek, traced); false by default.
  virtual bool DescriptorSeeks() const { return false; }
  // Maps the whole file read-only: an fstat of the descriptor for its size (traced "fstat", as
  // Python's mmap.mmap makes one), then the map (traced as kMmapCallName, offset 0, count = that
  // size). The mapping may outlive this File (as mmap outlives the descriptor it was made from) but
  // not its Storage. Unimplemented naming the storage and the file where files cannot be mapped
  // (StorageCapabilities::map_files false: memory, stdio, mpiio, slow).
  Result<std::unique_ptr<FileMapping>> Map();

  const std::string& path() const { return path_; }
  // Required alignment of offset, size and buffer for direct I/O (1 when none is needed).
  size_t alignment() const { return alignment_; }
  // The file system's preferred I/O size for this file (st_blksize, what Python's open() sizes
  // its buffer by) as the open's own fstat gave it, so that no further call asks for it; 0 where
  // the backend did not learn it at open (not a host file, or a backend that does not say).
  uint64_t block_size() const { return block_size_; }

 protected:
  File(std::string path, size_t alignment) : path_(std::move(path)), alignment_(alignment) {}
  void set_block_size(uint64_t bytes) { block_size_ = bytes; }
  virtual Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) = 0;
  // ReadSomeAt's hook; the default is DoReadAt.
  virtual Result<size_t> DoReadSomeAt(uint64_t offset, size_t n, void* buf) {
    return DoReadAt(offset, n, buf);
  }
  // Whether DoReadTwoAt reads both ranges as one request; false (the default): ReadTwoAt reads
  // each range with ReadAt.
  virtual bool HasVectoredRead() const { return false; }
  // ReadTwoAt's single request, DoReadAt's contract over the two ranges (called only when
  // HasVectoredRead).
  virtual Result<size_t> DoReadTwoAt(uint64_t offset, size_t n, void* buf, size_t tail_n,
                                     void* tail);
  virtual Status DoWriteAt(uint64_t offset, const void* buf, size_t n) = 0;
  virtual Result<uint64_t> DoSize() = 0;
  virtual Status DoSync() = 0;
  virtual Status DoClose() = 0;
  // Map's hooks: the file's size from the descriptor (a kernel fstat, never a cached size), then
  // the mapping of that many bytes. Default of both: Unimplemented naming the storage and the
  // file (nothing traced).
  virtual Result<uint64_t> DoMapSize();
  virtual Result<std::unique_ptr<FileMapping>> DoMap(uint64_t size);
  // Seek's hook, called with a valid whence. Default: the new offset computed from the last one
  // (SEEK_END: from DoSize), no request.
  virtual Result<uint64_t> DoSeek(int64_t offset, int whence);

 private:
  friend class Storage;
  Result<size_t> TracedRead(uint64_t offset, size_t n, void* buf, bool once);
  std::string path_;
  size_t alignment_ = 1;
  uint64_t block_size_ = 0;
  IoSink sink_;
  int32_t file_id_ = -1;
  bool closed_ = false;
  uint64_t seek_offset_ = 0;  // the default DoSeek's offset
};

// An exclusive advisory lock taken by Storage::TryLock, released when destroyed. Requires external
// synchronization (one owner); destroy it before the Storage that made it.
class StorageLock {
 public:
  virtual ~StorageLock() = default;
  StorageLock(const StorageLock&) = delete;
  StorageLock& operator=(const StorageLock&) = delete;

 protected:
  StorageLock() = default;
};

struct StorageOptions {
  std::string name = "posix";  // registry name: posix, memory, slow, mpiio, tiered, s3
  bool direct = false;         // posix: open data files with O_DIRECT (reader.odirect)
  size_t direct_alignment = 4096;
  uint64_t seed = 0;  // seeds what a storage draws (slow: its latency)
  // The folders of the dataset's data files (dataset.data_folder's train and valid), for the
  // storages that treat them apart from other files (mpiio: its collective reads, every file
  // opened for reading when the list is empty).
  std::vector<std::string> data_dirs;
  // The options of the implementations that declare their own keys (the s3 storage's S3Options,
  // storage/s3/s3_options.h; slow's SlowOptions, storage/slow_options.h; mpiio's MpiioOptions,
  // storage/mpiio_options.h; tiered's TieredOptions, dlio/cache_options.h), copied whole from the
  // config's StorageConfig::backends.
  OptionSections backends;
};

// What a storage can do, so callers ask instead of comparing backend names. Every field defaults to
// false: a backend that declares nothing gets no special treatment.
struct StorageCapabilities {
  // Paths are files of a file system of this host (posix, stdio, mpiio): the generator's
  // preflight measures their free space.
  bool host_files = false;
  // Formats with their own MPI-IO path (parallel HDF5) may write one path from many ranks at once,
  // outside this storage's Files (posix, mpiio; not slow, whose latency that would bypass).
  bool shared_write = false;
  // Honours storage.mpiio_collective (the mpiio storage's own MpiioOptions): collective reads.
  bool collective_reads = false;
  // Needs MPI initialized before it is built, even in a single process (mpiio).
  bool needs_mpi = false;
  // Files live in this process's memory (memory): a dataset stored there counts against the
  // host's memory in the preflight (dlio/preflight.h).
  bool in_process_memory = false;
  // Files can be memory-mapped (File::Map): reader.io_model mmap reads through page faults
  // (posix). A decorator that adds latency per call (slow) cannot: page faults bypass it.
  bool map_files = false;
  // Decides where a file is served from when it is opened (tiered): a run closes its readers'
  // files at each epoch's start as reader.reopen_files_each_epoch does, so a file kept open across
  // epochs does not keep reading the level it was first opened from.
  bool reopen_each_epoch = false;
  // Keeps a cache that the ranks of a node may share through one rank's cache server (tiered):
  // with storage.cache_scope node its NodeSharedStorageFn builds it once per node.
  bool node_shared_cache = false;
  // Its statistics are those of a cache the node's ranks share (tiered with storage.cache_scope
  // node): the run synchronises the ranks at each epoch's start, after each reset them
  // (TakeEpochStats), so none opens a file of the epoch before the counts restart.
  bool shared_by_node = false;
};

// What a storage adds to each read or write call to emulate a slower one (Storage::emulated_cost).
struct EmulatedCost {
  uint64_t latency_ns = 0;   // mean added latency per call
  uint64_t bytes_per_s = 0;  // bandwidth cap (adds bytes / bytes_per_s per call); 0: none
};

// What a run will read from an epoch on (Storage::OnEpochPlan), for a storage that prepares ahead
// of its reader (the clairvoyant cache prefetches the coming files).
struct EpochPlan {
  uint64_t first_epoch = 0;  // 0-based: the epoch about to start
  uint64_t last_epoch = 0;   // 0-based: the run's last training epoch
  // Appends to `paths` the files this rank opens in epoch `epoch` (0-based), in order, each run of
  // samples of one file counted as one open. Costs a sampler plan: call it only when needed, and
  // only during OnEpochPlan (it refers to the run's loop).
  std::function<Status(uint64_t epoch, std::vector<std::string>* paths)> files_of;
};

// One named block of statistics a storage reports for an epoch (Storage::TakeEpochStats). The
// runner writes it without knowing what it holds: in {rank}_per_epoch_stats.json, the epoch's
// "<name>" is `epoch_json`; in summary.json (rank 0's), "<name>" is the object `summary_json` plus
// "epochs": one entry per training epoch, {"epoch": N} with epoch_json's fields (an object), or
// with epoch_json under `epoch_key` when that is set.
struct StatsBlock {
  std::string name;                 // "cache", "s3": the key in both files
  std::string epoch_json;           // a JSON value
  std::string epoch_key;            // empty: epoch_json is an object merged into the entry
  std::string summary_json = "{}";  // a JSON object: the summary's fields besides "epochs"
  std::string progress;             // added to the epoch's progress line ("s3 4 requests ...")
};

// Where TakeEpochStats reports, and about which epoch.
struct EpochStatsSink {
  uint64_t epoch = 0;  // 1-based, as the reports number epochs
  int64_t end_us = 0;  // wall time the epoch ended (stamps trace events of the statistics)
  // The run's tracer, for storages that also trace their statistics; may be null.
  Tracer* tracer = nullptr;
  std::vector<StatsBlock> blocks;
};

// A namespace of files. All methods are safe for concurrent use. Files it opens must be destroyed
// before it (they report to its counters), and the bound tracer must outlive both.
class Storage {
 public:
  virtual ~Storage();

  // Binds where calls are reported. Called once by the factory helper below; tracer may be null
  // (then a null tracer is used).
  void Bind(const Clock* clock, Tracer* tracer);

  Result<std::unique_ptr<File>> Open(const std::string& path, OpenMode mode,
                                     const FileOptions& options = {});
  Result<uint64_t> FileSize(const std::string& path);
  Result<bool> Exists(const std::string& path);
  Result<bool> IsDirectory(const std::string& path);
  Status CreateDirs(const std::string& path);  // like mkdir -p
  // Names (not paths) of the entries of a directory, sorted.
  Result<std::vector<std::string>> List(const std::string& dir);
  Status Rename(const std::string& from, const std::string& to);  // atomic replace on POSIX
  Status Remove(const std::string& path);                         // a file, never a directory
  Status RemoveEmptyDir(const std::string& path);
  Status SyncDir(const std::string& dir);  // makes a rename durable
  // Takes an exclusive advisory lock named by the file `path`, without waiting: the lock, or
  // nullptr when another holder has it. The file is created when missing (empty); an existing one
  // is used as it is (never truncated) and must be a regular file (a symbolic link is refused).
  // Locks exclude only other TryLock calls. posix (and stdio, slow, mpiio over it): flock(2), so a
  // lock excludes every other TryLock on this host, in this process too, and on other hosts where
  // the file system's flock is cluster-wide (NFSv4; Lustre mounted with -o flock); the kernel
  // releases it when the holder dies, so no lock outlives its process. A holder may remove the
  // file before releasing it: a later TryLock then locks a new file. memory: within this storage.
  // Unimplemented where there is no lock (storages without one, file systems without flock).
  Result<std::unique_ptr<StorageLock>> TryLock(const std::string& path);

  IoStats stats() const;
  // Adds to stats() the calls a copy of this storage made in another process (the pytorch
  // pipeline's forked workers), which this process's counters could not see. Safe for concurrent
  // use.
  void AddOtherProcessStats(const IoStats& delta);
  const std::string& name() const { return name_; }

  // Parallel I/O that bypasses Files. A format with its own MPI-IO path (parallel HDF5, which
  // reads through HDF5's MPI-IO driver) asks here whether this storage wants `path` read
  // collectively: if so, the answer is a pointer to the MPI_Comm to open it on (every rank of
  // MPI_COMM_WORLD for the mpiio storage with storage.mpiio_collective), typed void so public
  // headers need no mpi.h; nullptr otherwise (every other backend; decorators ask the storage they
  // wrap).
  virtual const void* CollectiveMpiComm(const std::string& path) const {
    (void)path;
    return nullptr;
  }
  // Reports I/O made on `path` outside this storage's Files (by such a format), so counters and
  // the trace still show it: a read (or write) of `count` bytes at `offset` that started at wall
  // time `start_us` (clock()->WallMicros()) and took `dur_ns`, traced as `name` in category
  // `category` (both string literals). kRead and kWrite add to stats(); kOther (opens, closes) only
  // traces. Safe for concurrent use.
  enum class IoKind { kRead, kWrite, kOther };
  void RecordExternalIo(IoKind kind, const char* category, const char* name,
                        const std::string& path, int64_t offset, int64_t count, int64_t start_us,
                        int64_t dur_ns);
  // The clock calls are timed with (for RecordExternalIo's durations).
  const Clock* clock() const { return sink_.clock; }
  // Whether the bound tracer records anything (callers may skip timing when not).
  bool tracing() const { return sink_.tracer->enabled(); }
  // Files opened from now on drop pages of their large reads' destinations first, as
  // FreshReadPages says (reader.fresh_page_share); null stops it for files opened later. Call it
  // before the files are opened, with no other call in flight.
  void set_fresh_read_pages(std::shared_ptr<FreshReadPages> pages) {
    sink_.fresh_pages = std::move(pages);
  }
  // Whether FileOptions::direct has an effect here.
  virtual bool SupportsDirect() const { return false; }
  // What this storage can do (the same answer its registry entry gives for its options).
  virtual StorageCapabilities capabilities() const { return {}; }
  // The cost it emulates per call (slow: its mean latency and bandwidth), for code that reads the
  // same files outside it (a cache server's clients read sources with plain system calls); zero
  // for storages that emulate nothing. Decorators report the storage they wrap.
  virtual EmulatedCost emulated_cost() const { return {}; }

  // Per-epoch lifecycle hooks of the run (training.cc), so the runner knows no backend by type.
  // Decorators forward them to the storage they wrap; both default to doing nothing.
  // Before a training epoch starts: what this rank will read from it on (EpochPlan).
  virtual Status OnEpochPlan(const EpochPlan& plan) {
    (void)plan;
    return Status::OK();
  }
  // The statistics counted since the last call, appended to `sink` as named blocks (StatsBlock),
  // then reset; `sink` null only resets them (an epoch's start). Called by one thread, at epoch
  // boundaries (a storage shared by a node's ranks is called by each of them).
  virtual void TakeEpochStats(EpochStatsSink* sink) { (void)sink; }
  // What a run on this storage should warn about once (settings that weaken security), each a
  // whole sentence naming the key.
  virtual std::vector<std::string> RunWarnings() const { return {}; }

 protected:
  // Starts bound to SystemClock() and a null tracer, so a backend built directly (NewPosixStorage)
  // works before, or without, Bind().
  explicit Storage(std::string name);
  virtual Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                               const FileOptions& options) = 0;
  virtual Result<uint64_t> DoFileSize(const std::string& path) = 0;
  virtual Result<bool> DoExists(const std::string& path) = 0;
  virtual Result<bool> DoIsDirectory(const std::string& path) = 0;
  virtual Status DoCreateDirs(const std::string& path) = 0;
  virtual Result<std::vector<std::string>> DoList(const std::string& dir) = 0;
  virtual Status DoRename(const std::string& from, const std::string& to) = 0;
  virtual Status DoRemove(const std::string& path) = 0;
  virtual Status DoRemoveEmptyDir(const std::string& path) = 0;
  virtual Status DoSyncDir(const std::string& dir) = 0;
  virtual Result<std::unique_ptr<StorageLock>> DoTryLock(const std::string& path);
  const IoSink& sink() const { return sink_; }
  // The trace "cat" of this storage's events ("POSIX" unless a backend says otherwise); a string
  // literal, set in the backend's constructor.
  void set_trace_category(const char* category) { sink_.category = category; }
  // How this storage's events appear in traces: the "cat" and the names of open, read, write and
  // close (string literals). Set in the backend's constructor.
  void set_trace_names(const char* category, const char* open, const char* read, const char* write,
                       const char* close);

 private:
  std::string name_;
  IoCounters counters_;
  IoSink sink_;
  std::unique_ptr<Tracer> own_null_tracer_;
};

// What a storage factory gets besides the options: whoever builds the storage (MakeStorage) hands
// down its registry, so decorators (slow, tiered) build the backend they wrap, and its clock, which
// they bind that backend to (a test's fake clock then reaches every layer).
class StorageRegistry;
struct StorageBuildEnv {
  const StorageRegistry& storages;
  const Clock* clock;  // never null: MakeStorage passes SystemClock() when given none
};
using StorageFactory = std::function<Result<std::unique_ptr<Storage>>(const StorageOptions& options,
                                                                      const StorageBuildEnv& env)>;

// What a registered storage declares it can do with `options`, before one is built (config
// validation, and choosing MPI before a storage exists). Decorators ask the registry for the
// storage they wrap. An entry without one declares nothing.
using StorageCapabilitiesFn = std::function<StorageCapabilities(const StorageOptions& options,
                                                                const StorageRegistry& storages)>;

// The storages by name (Registries::storages). A class rather than an alias because its factories
// take it.
class StorageRegistry : public Registry<StorageFactory, StorageCapabilitiesFn> {
 public:
  using Registry::Registry;
};

// Registers the built-in storages (posix, stdio, memory, slow, mpiio, s3); called by
// RegisterBuiltins.
Status RegisterBuiltinStorages(StorageRegistry* storages);

// The capabilities the storage named options.name declares for `options` (NotFound when no storage
// of that name is registered).
Result<StorageCapabilities> StorageCapabilitiesFor(const StorageOptions& options,
                                                   const StorageRegistry& storages);

// What a node-shared storage factory (NodeSharedStorageFn) gets besides the storage's options.
class Comm;
struct NodeShareEnv {
  const StorageRegistry* storages = nullptr;
  const Clock* clock = nullptr;
  Tracer* tracer = nullptr;  // the storage's (bound to it)
  Comm* comm = nullptr;      // the run's ranks
  // The folders whose files the node's shared part may hand out (the run's dataset and checkpoint
  // folders, absolute).
  std::vector<std::string> data_dirs;
};

// What keeps the part of a storage the ranks of a node share alive (the node's cache server, on
// its first rank). Not thread-safe: the run's thread. Destroy it after the storage.
class NodeShare {
 public:
  virtual ~NodeShare() = default;
  // After the run: waits for every rank of the node, so the shared part outlives their last
  // call, then stops it. Collective over the node.
  virtual Status Finish() = 0;
};

// Builds the run's storage of `options` for a storage registered in
// Registries::node_shared_storages under its name: a variant whose state the ranks of a node share
// when its options ask for one (tiered with storage.cache_scope node: one cache a node), kept
// alive by `*share`, else the storage MakeStorage builds (`*share` left null). Collective over
// env.comm: every rank fails, naming the cause where it happened, when one could not get its
// storage, so no rank waits for another forever.
using NodeSharedStorageFn = std::function<Result<std::unique_ptr<Storage>>(
    const StorageOptions& options, const NodeShareEnv& env, std::unique_ptr<NodeShare>* share)>;
// The node-shared variants by storage name (Registries::node_shared_storages).
using NodeSharedStorageRegistry = Registry<NodeSharedStorageFn>;

// Builds the named storage and binds it to clock (SystemClock() when null) and tracer; the factory
// gets the same registry and clock (StorageBuildEnv).
Result<std::unique_ptr<Storage>> MakeStorage(const StorageOptions& options,
                                             const StorageRegistry& storages, const Clock* clock,
                                             Tracer* tracer);

// Checks the just-opened `fd` of `path` as the file-system backends (posix, stdio) do: a directory
// is refused whatever the mode, and with `reading` anything but a regular file (FIFO, socket,
// character or block device) is refused ("open <path>: not a regular file (a FIFO)"); they open
// for reading with O_NONBLOCK, as opening a FIFO blocks until a writer appears, and on success
// with `reading` this clears it again. On error, closes `fd`. `call` names the operation in
// messages ("open", "fopen"). On success `*block_size`, when given, is the file's st_blksize from
// the same fstat (File::block_size).
Status CheckOpenedFile(int fd, const std::string& path, const char* call, bool reading,
                       uint64_t* block_size = nullptr);

// The same refusal by path, for when open(2) itself failed (O_DIRECT on a FIFO is EINVAL): an
// error when `path` exists and is not a regular file, OK otherwise.
Status CheckRegularPath(const std::string& path, const char* call);

// Backends available without a registry (also registered by RegisterBuiltins).
std::unique_ptr<Storage> NewPosixStorage(const StorageOptions& options);
// C stdio streams (fopen, fseeko + fread / fwrite, fflush, fclose), traced as category "STDIO"
// with those names: the API of codes that write through stdio (L2HMC's checkpoints). Path
// operations are POSIX calls. Each file's stream is behind a mutex (it has one position), so
// concurrent calls on one file are serialized.
std::unique_ptr<Storage> NewStdioStorage();
std::unique_ptr<Storage> NewMemoryStorage();

// How WriteFileAtomically makes the file durable.
enum class AtomicSync {
  kNone,        // no fsync (the rename still never exposes a partial file to readers)
  kFile,        // fsync the file before the rename
  kFileAndDir,  // fsync the file, rename, then SyncDir the parent so the rename survives a crash
};

// Infix of WriteFileAtomically's temporary names: "<path>.tmp-<owner token>".
inline constexpr char kAtomicTmpInfix[] = ".tmp-";

// Writes `bytes` so that `path` never holds part of them: they go to a temporary name beside it,
// "<path>.tmp-<token>" (the token names this process, so a later run can tell a killed writer's
// leftover from a live one's file), created with OpenMode::kCreateNew (never a file someone else
// made), synced as `sync` says, then renamed over `path` (replacing what is there: callers that
// must not replace check first). On any failure the temporary is removed and the error names
// `path`. Safe for concurrent use on different paths.
Status WriteFileAtomically(Storage* storage, const std::string& path, std::string_view bytes,
                           AtomicSync sync = AtomicSync::kNone);
// The same with the content written by `write` into the open temporary file (content too large
// to hold in memory, or written in requests of a given size).
Status WriteFileAtomically(Storage* storage, const std::string& path,
                           const std::function<Status(File* file)>& write,
                           AtomicSync sync = AtomicSync::kNone);
// The same for a writer that creates the file itself (a Format's Write, which opens it with
// kCreateNew): `write` gets the temporary's path, which does not exist yet. `sync` beyond kNone
// syncs the parent folder only (the writer syncs its file if it must).
Status WriteFileAtomicallyAt(Storage* storage, const std::string& path,
                             const std::function<Status(const std::string& tmp_path)>& write,
                             AtomicSync sync = AtomicSync::kNone);

// A heap buffer aligned for direct I/O that is reused across reads (never shrinks).
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t alignment = 4096) : alignment_(alignment) {}
  ~AlignedBuffer();
  AlignedBuffer(AlignedBuffer&& other) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  // Ensures capacity >= n (reallocating without keeping contents) and sets size to n.
  Status Resize(size_t n);
  // Uses `capacity` bytes at `data` (caller-owned, already allocated and touched, e.g. memory
  // shared with another process) instead of the heap, until a Resize needs more; the caller
  // keeps that memory alive as long as the buffer uses it. Size becomes 0.
  void Borrow(uint8_t* data, size_t capacity);
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0, capacity_ = 0, alignment_;
  bool owned_ = true;  // data_ came from aligned_alloc (false: borrowed)
};

}  // namespace dlio
