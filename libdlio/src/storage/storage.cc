// The bookkeeping every backend shares: counters, timing and tracing around the Do* hooks.
#include "dlio/storage.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "trace/mapped_pages.h"

namespace dlio {
namespace {

// Times one call and records it when the tracer is enabled; costs one virtual call otherwise.
class CallTrace {
 public:
  CallTrace(const IoSink& sink, const char* name) : sink_(sink), name_(name) {
    enabled_ = sink_.tracer->enabled();
    if (enabled_) {
      start_us_ = sink_.clock->WallMicros();
      t0_ = sink_.clock->NowNanos();
    }
  }
  bool enabled() const { return enabled_; }
  void Done(int32_t file_id, int64_t offset, int64_t count, int64_t ret) {
    if (!enabled_) return;
    TraceEvent ev;
    ev.name = name_;
    ev.cat = sink_.category;
    ev.start_us = start_us_;
    ev.dur_us = (sink_.clock->NowNanos() - t0_) / 1000;
    ev.file_id = file_id;
    ev.offset = offset;
    ev.count = count;
    ev.ret = ret;
    sink_.tracer->Record(ev);
  }
  // For path operations, which have no file id of their own.
  void DonePath(const std::string& path, int64_t ret) {
    if (!enabled_) return;
    Done(sink_.tracer->InternFile(path), -1, -1, ret);
  }

 private:
  const IoSink& sink_;
  const char* name_;
  bool enabled_ = false;
  int64_t start_us_ = 0;
  int64_t t0_ = 0;
};

int64_t RetOf(const Status& st) { return st.ok() ? 0 : -1; }

}  // namespace

// ---- File ----

File::~File() = default;

Result<size_t> File::ReadAt(uint64_t offset, size_t n, void* buf) {
  return TracedRead(offset, n, buf, /*once=*/false);
}

Result<size_t> File::ReadSomeAt(uint64_t offset, size_t n, void* buf) {
  return TracedRead(offset, n, buf, /*once=*/true);
}

Result<size_t> File::TracedRead(uint64_t offset, size_t n, void* buf, bool once) {
  if (closed_) return Status::FailedPrecondition("read " + path_ + ": file is closed");
  if (sink_.fresh_pages != nullptr) sink_.fresh_pages->BeforeRead(buf, n);
  CallTrace t(sink_, sink_.read_name);
  Result<size_t> r = once ? DoReadSomeAt(offset, n, buf) : DoReadAt(offset, n, buf);
  if (r.ok()) {
    sink_.counters->read_ops.fetch_add(1, std::memory_order_relaxed);
    sink_.counters->read_bytes.fetch_add(*r, std::memory_order_relaxed);
  }
  t.Done(file_id_, static_cast<int64_t>(offset), static_cast<int64_t>(n),
         r.ok() ? static_cast<int64_t>(*r) : -1);
  return r;
}

Result<size_t> File::DoReadTwoAt(uint64_t, size_t, void*, size_t, void*) {
  return Status::Unimplemented("read ", path_, ": no vectored read");
}

Result<size_t> File::ReadTwoAt(uint64_t offset, size_t n, void* buf, size_t tail_n, void* tail) {
  if (!HasVectoredRead()) {
    DLIO_ASSIGN_OR_RETURN(size_t got, ReadAt(offset, n, buf));
    if (got < n || tail_n == 0) return got;
    DLIO_ASSIGN_OR_RETURN(size_t more, ReadAt(offset + n, tail_n, tail));
    return got + more;
  }
  if (closed_) return Status::FailedPrecondition("read " + path_ + ": file is closed");
  if (sink_.fresh_pages != nullptr) {
    sink_.fresh_pages->BeforeRead(buf, n);
    sink_.fresh_pages->BeforeRead(tail, tail_n);
  }
  CallTrace t(sink_, sink_.read_name);
  Result<size_t> r = DoReadTwoAt(offset, n, buf, tail_n, tail);
  if (r.ok()) {
    sink_.counters->read_ops.fetch_add(1, std::memory_order_relaxed);
    sink_.counters->read_bytes.fetch_add(*r, std::memory_order_relaxed);
  }
  t.Done(file_id_, static_cast<int64_t>(offset), static_cast<int64_t>(n + tail_n),
         r.ok() ? static_cast<int64_t>(*r) : -1);
  return r;
}

Status File::ReadExactAt(uint64_t offset, size_t n, void* buf) {
  DLIO_ASSIGN_OR_RETURN(size_t got, ReadAt(offset, n, buf));
  if (got != n) {
    return Status::Corruption(path_, ": short read at offset ", offset, ": wanted ", n,
                              " bytes, got ", got, " (file ends early)");
  }
  return Status::OK();
}

Status File::WriteAt(uint64_t offset, const void* buf, size_t n) {
  if (closed_) return Status::FailedPrecondition("write " + path_ + ": file is closed");
  CallTrace t(sink_, sink_.write_name);
  Status st = DoWriteAt(offset, buf, n);
  if (st.ok()) {
    sink_.counters->write_ops.fetch_add(1, std::memory_order_relaxed);
    sink_.counters->write_bytes.fetch_add(n, std::memory_order_relaxed);
  }
  t.Done(file_id_, static_cast<int64_t>(offset), static_cast<int64_t>(n),
         st.ok() ? static_cast<int64_t>(n) : -1);
  return st;
}

Result<uint64_t> File::Size() {
  if (closed_) return Status::FailedPrecondition("fstat " + path_ + ": file is closed");
  CallTrace t(sink_, "fstat");
  Result<uint64_t> r = DoSize();
  t.Done(file_id_, -1, -1, r.ok() ? 0 : -1);
  return r;
}

Status File::Sync() {
  if (closed_) return Status::FailedPrecondition("fsync " + path_ + ": file is closed");
  CallTrace t(sink_, "fsync");
  Status st = DoSync();
  if (st.ok()) sink_.counters->syncs.fetch_add(1, std::memory_order_relaxed);
  t.Done(file_id_, -1, -1, RetOf(st));
  return st;
}

Result<uint64_t> File::Seek(int64_t offset, int whence) {
  if (closed_) return Status::FailedPrecondition("lseek " + path_ + ": file is closed");
  if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) {
    return Status::InvalidArgument("lseek ", path_, ": whence ", whence,
                                   " (SEEK_SET, SEEK_CUR or SEEK_END)");
  }
  if (!DescriptorSeeks()) return DoSeek(offset, whence);
  CallTrace t(sink_, kSeekCallName);
  Result<uint64_t> r = DoSeek(offset, whence);
  t.Done(file_id_, offset >= 0 ? offset : -1, -1, r.ok() ? static_cast<int64_t>(*r) : -1);
  return r;
}

Result<uint64_t> File::DoSeek(int64_t offset, int whence) {
  int64_t base = 0;
  if (whence == SEEK_CUR) base = static_cast<int64_t>(seek_offset_);
  if (whence == SEEK_END) {
    DLIO_ASSIGN_OR_RETURN(const uint64_t size, DoSize());
    base = static_cast<int64_t>(size);
  }
  if (offset < -base) {
    return Status::InvalidArgument("lseek ", path_, ": offset ", offset, " from ", base,
                                   " lies before the start of the file");
  }
  seek_offset_ = static_cast<uint64_t>(base + offset);
  return seek_offset_;
}

Status File::Close() {
  if (closed_) return Status::OK();
  closed_ = true;
  CallTrace t(sink_, sink_.close_name);
  Status st = DoClose();
  sink_.counters->closes.fetch_add(1, std::memory_order_relaxed);
  t.Done(file_id_, -1, -1, RetOf(st));
  return st;
}

Result<uint64_t> File::DoMapSize() {
  const std::string storage = sink_.storage_name != nullptr ? *sink_.storage_name : "this";
  return Status::Unimplemented("mmap ", path_, ": the ", storage,
                               " storage cannot map files (reader.io_model mmap needs a "
                               "storage with map_files, e.g. posix)");
}

Result<std::unique_ptr<FileMapping>> File::DoMap(uint64_t) { return DoMapSize().status(); }

Result<std::unique_ptr<FileMapping>> File::Map() {
  if (closed_) return Status::FailedPrecondition("mmap " + path_ + ": file is closed");
  CallTrace s(sink_, "fstat");
  Result<uint64_t> size = DoMapSize();
  if (!size.ok() && size.status().code() == StatusCode::kUnimplemented) return size.status();
  s.Done(file_id_, -1, -1, size.ok() ? 0 : -1);
  DLIO_RETURN_NOT_OK(size.status());
  CallTrace t(sink_, kMmapCallName);
  Result<std::unique_ptr<FileMapping>> r = DoMap(*size);
  if (!r.ok()) {
    t.Done(file_id_, 0, -1, -1);
    return r;
  }
  FileMapping* m = r->get();
  m->sink_ = sink_;
  m->file_id_ = file_id_;
  t.Done(file_id_, 0, static_cast<int64_t>(m->size()), 0);
  return r;
}

// ---- FileMapping ----

FileMapping::~FileMapping() = default;

Status FileMapping::CopyOut(uint64_t offset, size_t n, void* out) const {
  if (offset > size_ || n > size_ - offset) {
    return Status::OutOfRange("read ", path_, " (mapped): ", n, " bytes at offset ", offset,
                              " end past the mapping of ", size_, " bytes");
  }
  if (n > 0) std::memcpy(out, data_ + offset, n);
  if (sink_.counters != nullptr) {
    sink_.counters->read_ops.fetch_add(1, std::memory_order_relaxed);
    sink_.counters->read_bytes.fetch_add(n, std::memory_order_relaxed);
  }
  return Status::OK();
}

Status FileMapping::Unmap() {
  if (unmapped_) return Status::OK();
  unmapped_ = true;
  if (sink_.tracer != nullptr && sink_.tracer->enabled()) {
    const int64_t now = sink_.clock->WallMicros();
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    mapped_pages::ForEachPresentRun(data_, size_, [&](uint64_t first, uint64_t pages) {
      const uint64_t begin = first * page;
      TraceEvent ev;
      ev.name = kMmapTouchedName;
      ev.cat = sink_.category;
      ev.start_us = now;
      ev.dur_us = 0;
      ev.file_id = file_id_;
      ev.offset = static_cast<int64_t>(begin);
      ev.count = static_cast<int64_t>(std::min(pages * page, size_ - begin));
      ev.ret = ev.count;
      sink_.tracer->Record(ev);
    });
  }
  if (sink_.tracer == nullptr) return DoUnmap();
  CallTrace t(sink_, kMunmapCallName);
  Status st = DoUnmap();
  t.Done(file_id_, -1, static_cast<int64_t>(size_), RetOf(st));
  return st;
}

// ---- Storage ----

Storage::Storage(std::string name) : name_(std::move(name)), own_null_tracer_(MakeNullTracer()) {
  sink_.clock = SystemClock();
  sink_.tracer = own_null_tracer_.get();
  sink_.counters = &counters_;
  sink_.storage_name = &name_;
}

Storage::~Storage() = default;

void Storage::Bind(const Clock* clock, Tracer* tracer) {
  sink_.clock = clock != nullptr ? clock : SystemClock();
  sink_.tracer = tracer != nullptr ? tracer : own_null_tracer_.get();
}

Result<std::unique_ptr<File>> Storage::Open(const std::string& path, OpenMode mode,
                                            const FileOptions& options) {
  CallTrace t(sink_, sink_.open_name);
  Result<std::unique_ptr<File>> r = DoOpen(path, mode, options);
  if (!r.ok()) {
    t.DonePath(path, -1);
    return r;
  }
  File* f = r->get();
  f->sink_ = sink_;
  if (t.enabled()) f->file_id_ = sink_.tracer->InternFile(path);
  counters_.opens.fetch_add(1, std::memory_order_relaxed);
  t.Done(f->file_id_, -1, -1, 0);
  return r;
}

void Storage::RecordExternalIo(IoKind kind, const char* category, const char* name,
                               const std::string& path, int64_t offset, int64_t count,
                               int64_t start_us, int64_t dur_ns) {
  const bool read = kind == IoKind::kRead;
  if (kind != IoKind::kOther) {
    auto& ops = read ? counters_.read_ops : counters_.write_ops;
    auto& bytes = read ? counters_.read_bytes : counters_.write_bytes;
    ops.fetch_add(1, std::memory_order_relaxed);
    if (count > 0) bytes.fetch_add(static_cast<uint64_t>(count), std::memory_order_relaxed);
  }
  if (!sink_.tracer->enabled()) return;
  TraceEvent ev;
  ev.name = name;
  ev.cat = category;
  ev.start_us = start_us;
  ev.dur_us = dur_ns / 1000;
  ev.file_id = sink_.tracer->InternFile(path);
  ev.offset = offset;
  ev.count = count;
  ev.ret = count;
  sink_.tracer->Record(ev);
}

Result<uint64_t> Storage::FileSize(const std::string& path) {
  CallTrace t(sink_, "stat");
  Result<uint64_t> r = DoFileSize(path);
  t.DonePath(path, r.ok() ? 0 : -1);
  return r;
}

Result<bool> Storage::Exists(const std::string& path) {
  CallTrace t(sink_, "access");
  Result<bool> r = DoExists(path);
  t.DonePath(path, r.ok() && *r ? 0 : -1);
  return r;
}

Result<bool> Storage::IsDirectory(const std::string& path) {
  CallTrace t(sink_, "stat");
  Result<bool> r = DoIsDirectory(path);
  t.DonePath(path, r.ok() ? 0 : -1);
  return r;
}

Status Storage::CreateDirs(const std::string& path) {
  CallTrace t(sink_, "mkdir");
  Status st = DoCreateDirs(path);
  t.DonePath(path, RetOf(st));
  return st;
}

Result<std::vector<std::string>> Storage::List(const std::string& dir) {
  CallTrace t(sink_, "opendir");
  Result<std::vector<std::string>> r = DoList(dir);
  t.DonePath(dir, r.ok() ? static_cast<int64_t>(r->size()) : -1);
  return r;
}

Status Storage::Rename(const std::string& from, const std::string& to) {
  CallTrace t(sink_, "rename");
  Status st = DoRename(from, to);
  t.DonePath(from, RetOf(st));
  return st;
}

Status Storage::Remove(const std::string& path) {
  CallTrace t(sink_, "unlink");
  Status st = DoRemove(path);
  t.DonePath(path, RetOf(st));
  return st;
}

Status Storage::RemoveEmptyDir(const std::string& path) {
  CallTrace t(sink_, "rmdir");
  Status st = DoRemoveEmptyDir(path);
  t.DonePath(path, RetOf(st));
  return st;
}

Status Storage::SyncDir(const std::string& dir) {
  CallTrace t(sink_, "fsync");
  Status st = DoSyncDir(dir);
  if (st.ok()) counters_.syncs.fetch_add(1, std::memory_order_relaxed);
  t.DonePath(dir, RetOf(st));
  return st;
}

Result<std::unique_ptr<StorageLock>> Storage::TryLock(const std::string& path) {
  CallTrace t(sink_, "flock");
  Result<std::unique_ptr<StorageLock>> r = DoTryLock(path);
  t.DonePath(path, r.ok() && *r != nullptr ? 0 : -1);
  return r;
}

Result<std::unique_ptr<StorageLock>> Storage::DoTryLock(const std::string& path) {
  return Status::Unimplemented("lock " + path + ": storage " + name_ + " has no file locks");
}

void Storage::set_trace_names(const char* category, const char* open, const char* read,
                              const char* write, const char* close) {
  sink_.category = category;
  sink_.open_name = open;
  sink_.read_name = read;
  sink_.write_name = write;
  sink_.close_name = close;
}

IoStats Storage::stats() const {
  IoStats s;
  s.read_ops = counters_.read_ops.load(std::memory_order_relaxed);
  s.read_bytes = counters_.read_bytes.load(std::memory_order_relaxed);
  s.write_ops = counters_.write_ops.load(std::memory_order_relaxed);
  s.write_bytes = counters_.write_bytes.load(std::memory_order_relaxed);
  s.opens = counters_.opens.load(std::memory_order_relaxed);
  s.closes = counters_.closes.load(std::memory_order_relaxed);
  s.syncs = counters_.syncs.load(std::memory_order_relaxed);
  return s;
}

void Storage::AddOtherProcessStats(const IoStats& d) {
  counters_.read_ops.fetch_add(d.read_ops, std::memory_order_relaxed);
  counters_.read_bytes.fetch_add(d.read_bytes, std::memory_order_relaxed);
  counters_.write_ops.fetch_add(d.write_ops, std::memory_order_relaxed);
  counters_.write_bytes.fetch_add(d.write_bytes, std::memory_order_relaxed);
  counters_.opens.fetch_add(d.opens, std::memory_order_relaxed);
  counters_.closes.fetch_add(d.closes, std::memory_order_relaxed);
  counters_.syncs.fetch_add(d.syncs, std::memory_order_relaxed);
}

Result<StorageCapabilities> StorageCapabilitiesFor(const StorageOptions& options,
                                                   const StorageRegistry& storages) {
  DLIO_ASSIGN_OR_RETURN(const auto entry, storages.Find(options.name));
  if (!entry.capabilities) return StorageCapabilities{};
  return entry.capabilities(options, storages);
}

Result<std::unique_ptr<Storage>> MakeStorage(const StorageOptions& options,
                                             const StorageRegistry& storages, const Clock* clock,
                                             Tracer* tracer) {
  DLIO_ASSIGN_OR_RETURN(StorageFactory factory, storages.Get(options.name));
  const StorageBuildEnv env{storages, clock != nullptr ? clock : SystemClock()};
  DLIO_ASSIGN_OR_RETURN(std::unique_ptr<Storage> storage, factory(options, env));
  if (storage == nullptr) {
    return Status::Internal("storage factory '" + options.name + "' returned null");
  }
  storage->Bind(env.clock, tracer);
  return storage;
}

// ---- AlignedBuffer ----

AlignedBuffer::~AlignedBuffer() {
  if (owned_) std::free(data_);
}

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : data_(other.data_),
      size_(other.size_),
      capacity_(other.capacity_),
      alignment_(other.alignment_),
      owned_(other.owned_) {
  other.data_ = nullptr;
  other.size_ = other.capacity_ = 0;
  other.owned_ = true;
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    if (owned_) std::free(data_);
    data_ = other.data_;
    size_ = other.size_;
    capacity_ = other.capacity_;
    alignment_ = other.alignment_;
    owned_ = other.owned_;
    other.data_ = nullptr;
    other.size_ = other.capacity_ = 0;
    other.owned_ = true;
  }
  return *this;
}

void AlignedBuffer::Borrow(uint8_t* data, size_t capacity) {
  if (owned_) std::free(data_);
  data_ = data;
  capacity_ = data != nullptr ? capacity : 0;
  size_ = 0;
  owned_ = false;
}

namespace {
constexpr size_t kHugePageBytes = size_t{2} << 20;
}  // namespace

Status AlignedBuffer::Resize(size_t n) {
  if (n > capacity_) {
    if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0) {
      return Status::InvalidArgument("AlignedBuffer alignment ", alignment_,
                                     " is not a power of two");
    }
    size_t align = alignment_ < sizeof(void*) ? sizeof(void*) : alignment_;
    // Large sample buffers are cycled through by the pipeline: on 4 KiB pages the kernel's copy
    // into them spends much of its time on TLB misses, so ask for transparent huge pages (this
    // machine's THP mode is "madvise"), which needs 2 MiB alignment.
    const bool huge = n >= kHugePageBytes;
    if (huge && align < kHugePageBytes) align = kHugePageBytes;
    const size_t cap = (n + align - 1) / align * align;
    void* p = std::aligned_alloc(align, cap);
    if (p == nullptr) {
      return Status::ResourceExhausted("cannot allocate ", cap, " aligned bytes");
    }
    if (huge) madvise(p, cap, MADV_HUGEPAGE);  // advisory: failure only costs speed
    if (owned_) std::free(data_);
    data_ = static_cast<uint8_t*>(p);
    capacity_ = cap;
    owned_ = true;
  }
  size_ = n;
  return Status::OK();
}

}  // namespace dlio
