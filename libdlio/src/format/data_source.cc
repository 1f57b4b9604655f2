// A DataSource over a Format: readers are opened on demand and kept in an LRU of at most
// max_open_files. Readers are shared_ptrs so an eviction never closes a file another thread is
// still reading; opening happens outside the lock so a slow open does not stall the cache hits,
// and once per file: a thread that needs a file another thread is opening waits for it. A thread
// reading through a cursor (ReadWith) skips the lock while its file is still the most recently
// used one, the case of consecutive samples of one file.
// With open_per_sample no reader is kept: each Read opens the sample's file and closes it after.
// With open_files_at_start every file is opened and closed once when the source is made.
#include "dlio/data_source.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <list>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace dlio {
namespace {

class FormatDataSource final : public DataSource {
 public:
  FormatDataSource(Storage* storage, const Format* format, std::vector<std::string> files,
                   const FormatDataSourceOptions& options)
      : storage_(storage),
        format_(format),
        files_(std::move(files)),
        options_(options),
        max_open_(std::max<size_t>(1, options.max_open_files)) {}

  Status Init() {
    if (options_.open_files_at_start) return OpenEachFileOnce();
    if (options_.samples_per_file > 0) {
      counts_.assign(files_.size(), options_.samples_per_file);
      return Status::OK();
    }
    if (!format_->uses_files()) {
      counts_.assign(files_.size(), std::max<uint64_t>(1, options_.format.samples_per_file));
      return Status::OK();
    }
    counts_.reserve(files_.size());
    for (uint32_t f = 0; f < files_.size(); ++f) {
      // Counted once; a file opened per sample is not kept open meanwhile.
      DLIO_ASSIGN_OR_RETURN(std::shared_ptr<FormatReader> reader,
                            options_.open_per_sample ? OpenReader(f, nullptr) : Acquire(f));
      counts_.push_back(reader->num_samples());
    }
    return Status::OK();
  }

  // reader.open_files_at_start: each file opened, learnt about and closed, in the list's order
  // (a Dataset's __init__); the counts from these opens unless trusted (then checked by them).
  Status OpenEachFileOnce() {
    counts_.reserve(files_.size());
    for (uint32_t f = 0; f < files_.size(); ++f) {
      DLIO_ASSIGN_OR_RETURN(std::shared_ptr<FormatReader> reader, OpenReader(f, nullptr));
      DLIO_RETURN_NOT_OK(reader->ReadOpenedFileFacts());
      counts_.push_back(options_.samples_per_file > 0 ? options_.samples_per_file
                                                      : reader->num_samples());
    }
    return Status::OK();
  }

  size_t num_files() const override { return files_.size(); }
  const std::string& file_path(uint32_t file) const override { return files_.at(file); }
  const std::vector<uint64_t>& samples_per_file() const override { return counts_; }

  Status Read(SampleRef ref, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckRef(ref));
    if (options_.open_per_sample) return ReadOwnOpen(ref, out);
    FirstRead first{ref.index, out};  // served by the open when this thread opens the file
    auto reader = Acquire(ref.file, &first);
    if (!reader.ok()) return reader.status().WithContext(Where(ref));
    if (first.served) return Status::OK();
    return ReadFrom(**reader, ref, out);
  }

  std::unique_ptr<DataSourceCursor> NewCursor() override {
    return std::make_unique<ReaderCursor>();
  }

  // The cursor's reader serves the sample without the lock while its file is still the most
  // recently used (front_ unchanged since): Acquire would find it and leave the LRU as it is.
  Status ReadWith(SampleRef ref, SampleBuffer* out, DataSourceCursor* cursor) override {
    auto* c = static_cast<ReaderCursor*>(cursor);
    if (c == nullptr || options_.open_per_sample) return Read(ref, out);
    DLIO_RETURN_NOT_OK(CheckRef(ref));
    if (c->reader == nullptr || c->file != ref.file ||
        c->front != front_.load(std::memory_order_acquire)) {
      // Let go first: a reader evicted since closes here, before this Acquire opens any file.
      c->reader.reset();
      FirstRead first{ref.index, out};
      uint64_t front = 0;
      auto reader = Acquire(ref.file, &first, &front);
      if (!reader.ok()) return reader.status().WithContext(Where(ref));
      c->reader = std::move(*reader);
      c->file = ref.file;
      c->front = front;
      if (first.served) return Status::OK();
    }
    return ReadFrom(*c->reader, ref, out);
  }

  // What ReadWith of each sample would do while its cursor's reader is still the one to use.
  uint64_t ViewsOfHeld(SampleRef first, uint64_t n, SampleBuffer* out, DataSourceCursor* cursor,
                       SampleSpan* spans) override {
    auto* c = static_cast<ReaderCursor*>(cursor);
    if (c == nullptr || c->reader == nullptr || c->file != first.file ||
        c->front != front_.load(std::memory_order_acquire) || first.file >= files_.size() ||
        first.index >= counts_[first.file]) {
      return 0;
    }
    n = std::min(n, counts_[first.file] - first.index);  // past the file's end: ReadWith fails
    return c->reader->ViewsOfHeld(first.index, n, out, spans);
  }

  void CloseAll() override {
    std::unordered_map<uint32_t, Slot> drop;
    {
      std::lock_guard<std::mutex> lock(mu_);
      drop.swap(open_);
      lru_.clear();
      front_.fetch_add(1, std::memory_order_release);
    }
  }

 private:
  struct Slot {
    std::shared_ptr<FormatReader> reader;
    std::list<uint32_t>::iterator lru;
  };

  // The reader of the file a thread read last, and front_ when that file was the LRU's front.
  struct ReaderCursor final : DataSourceCursor {
    uint32_t file = 0;
    uint64_t front = 0;
    std::shared_ptr<FormatReader> reader;
  };

  Status CheckRef(SampleRef ref) const {
    if (ref.file >= files_.size()) {
      return Status::OutOfRange("file index ", ref.file, " past the ", files_.size(),
                                " files of the data source");
    }
    if (ref.index >= counts_[ref.file]) {
      return Status::OutOfRange(files_[ref.file], " sample ", ref.index, ": past the ",
                                counts_[ref.file], " samples of the file");
    }
    return Status::OK();
  }

  std::string Where(SampleRef ref) const { return StrCat(files_[ref.file], " sample ", ref.index); }

  // open_per_sample: the sample's file opened for it alone, outside the cache, and closed when
  // the reader goes out of scope here.
  Status ReadOwnOpen(SampleRef ref, SampleBuffer* out) const {
    FirstRead first{ref.index, out};
    auto reader = OpenReader(ref.file, &first);
    if (!reader.ok()) return reader.status().WithContext(Where(ref));
    if (first.served) return Status::OK();
    return ReadFrom(**reader, ref, out);
  }

  Status ReadFrom(FormatReader& reader, SampleRef ref, SampleBuffer* out) const {
    Status st = reader.ReadSample(ref.index, out);
    if (!st.ok()) return st.WithContext(Where(ref));
    return st;
  }

  // One thread opens a file at a time: another that needs it waits for that open rather than
  // opening it too (an open can read the file, e.g. the numpy model's first np.load, which
  // the sample then uses: a second open would be a load no sample asked for). `front`, when
  // given, gets front_ as it was with f at the LRU's front.
  Result<std::shared_ptr<FormatReader>> Acquire(uint32_t f, FirstRead* first = nullptr,
                                                uint64_t* front = nullptr) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (true) {
        auto it = open_.find(f);
        if (it != open_.end()) {
          if (lru_.front() != f) {
            lru_.splice(lru_.begin(), lru_, it->second.lru);
            front_.fetch_add(1, std::memory_order_release);
          }
          if (front != nullptr) *front = front_.load(std::memory_order_relaxed);
          return it->second.reader;
        }
        if (opening_.insert(f).second) break;  // this thread opens it
        opened_cv_.wait(lock);
      }
    }
    Result<std::shared_ptr<FormatReader>> opened = OpenReader(f, first);
    std::vector<std::shared_ptr<FormatReader>> evicted;  // closed after unlocking
    {
      std::lock_guard<std::mutex> lock(mu_);
      opening_.erase(f);
      if (opened.ok()) Insert(f, *opened, &evicted);
      if (front != nullptr) *front = front_.load(std::memory_order_relaxed);
    }
    opened_cv_.notify_all();  // a waiter finds the reader, or opens the file itself after an error
    return opened;
  }

  Result<std::shared_ptr<FormatReader>> OpenReader(uint32_t f, FirstRead* first) const {
    std::unique_ptr<FormatReader> opened;
    if (first != nullptr) {
      FormatOptions options = options_.format;
      options.first_read = first;
      DLIO_ASSIGN_OR_RETURN(opened, format_->Open(storage_, files_[f], options));
    } else {
      DLIO_ASSIGN_OR_RETURN(opened, format_->Open(storage_, files_[f], options_.format));
    }
    DLIO_RETURN_NOT_OK(CheckTrustedCount(f, *opened));
    return std::shared_ptr<FormatReader>(std::move(opened));
  }

  // Adds an opened reader (mu_ held), evicting the least recently used past max_open_.
  void Insert(uint32_t f, std::shared_ptr<FormatReader> reader,
              std::vector<std::shared_ptr<FormatReader>>* evicted) {
    lru_.push_front(f);
    front_.fetch_add(1, std::memory_order_release);
    open_.emplace(f, Slot{std::move(reader), lru_.begin()});
    while (open_.size() > max_open_) {
      const uint32_t victim = lru_.back();
      lru_.pop_back();
      auto v = open_.find(victim);
      evicted->push_back(std::move(v->second.reader));
      open_.erase(v);
    }
  }

  // A trusted sample count is checked against every file when it is opened (before any of its
  // samples is read): a file that holds another count would otherwise be read wrong, silently.
  Status CheckTrustedCount(uint32_t f, const FormatReader& reader) const {
    if (options_.samples_per_file == 0 || reader.num_samples() == options_.samples_per_file) {
      return Status::OK();
    }
    return Status::InvalidArgument(
        files_[f], " holds ", reader.num_samples(),
        " samples, but dataset.num_samples_per_file is ", options_.samples_per_file,
        " (dlio reads a file as it is; regenerate the dataset or set the key to match;"
        " `dlio-run inspect ",
        files_[f], "` shows how the file is read)");
  }

  Storage* storage_;
  const Format* format_;
  std::vector<std::string> files_;
  FormatDataSourceOptions options_;
  size_t max_open_;
  std::vector<uint64_t> counts_;
  std::mutex mu_;                      // guards open_, lru_ and opening_
  std::condition_variable opened_cv_;  // an open of a file in opening_ finished
  std::unordered_map<uint32_t, Slot> open_;
  std::unordered_set<uint32_t> opening_;  // files a thread is opening now
  std::list<uint32_t> lru_;               // most recently used first
  // Changes (under mu_) whenever lru_'s front does and at CloseAll; read without the lock by
  // ReadWith, whose cursor's file is still the front while this is what it was.
  std::atomic<uint64_t> front_{0};
};

}  // namespace

Result<std::unique_ptr<DataSource>> MakeFormatDataSource(Storage* storage, const Format* format,
                                                         std::vector<std::string> files,
                                                         const FormatDataSourceOptions& options) {
  if (format == nullptr) return Status::InvalidArgument("MakeFormatDataSource: format is null");
  if (options.open_files_at_start && !format->uses_files()) {
    return Status::InvalidArgument("reader.open_files_at_start: dataset.format '", format->name(),
                                   "' has no files to open");
  }
  if (storage == nullptr && format->uses_files()) {
    return Status::InvalidArgument("MakeFormatDataSource: storage is null for format '" +
                                   format->name() + "'");
  }
  auto source = std::make_unique<FormatDataSource>(storage, format, std::move(files), options);
  DLIO_RETURN_NOT_OK(source->Init());
  return std::unique_ptr<DataSource>(std::move(source));
}

}  // namespace dlio
