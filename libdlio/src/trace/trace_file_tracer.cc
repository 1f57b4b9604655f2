// DFTracer-compatible trace file sink.
//
// Layout: "[" on the first line, then one complete event per line, each ending in "," (Chrome's
// JSON Array Format, which tolerates a missing "]" so a crashed run still opens), and a closing
// process_name metadata event without the comma followed by "]". For plain files every Flush()
// writes that footer and the next write overwrites it, so the file is a valid JSON array after each
// Flush. Gzip streams cannot be rewritten, so a ".gz" file gets its footer only when the tracer is
// destroyed; Flush() then does a zlib sync flush so everything written so far is decodable.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "dlio/tracer.h"
#include "trace/pfw_codec.h"
#include "trace/thread_buffers.h"

namespace dlio {
namespace {

constexpr size_t kWriteChunk = 1 << 20;  // formatted bytes per file append

static_assert(TraceEvent::kNoRet == pfw::kNoRet, "one marker of an event that is not a call");

// Encodes a line at out[*used, ...) with `encode(p, cap)` (trace/pfw_codec.h), growing `out`
// (never shrunk: a thread's scratch is reused, so steady state allocates nothing) to `max` free
// bytes first.
template <typename Encode>
void AppendLine(std::string* out, size_t* used, size_t max, const Encode& encode) {
  if (out->size() < *used + max) out->resize(*used + max);
  *used += encode(out->data() + *used, max);
}

// The metadata event naming a process or thread, ended by `line_end`.
std::string NameLine(int64_t id, const char* meta, int64_t pid, int64_t tid, std::string_view value,
                     const char* line_end) {
  std::string out;
  size_t used = 0;
  AppendLine(&out, &used, pfw::MaxEventBytes(0, 0, value.size()), [&](char* p, size_t cap) {
    return pfw::EncodeNameMetadata(id, meta, pid, tid, value.data(), value.size(), line_end, p,
                                   cap);
  });
  out.resize(used);
  return out;
}

// Where formatted bytes go. Not thread-safe: the tracer serialises calls with its file mutex.
class OutputSink {
 public:
  virtual ~OutputSink() = default;
  virtual Status Write(std::string_view data) = 0;
  // Makes everything so far durable/readable; `footer` closes the JSON array where possible.
  virtual Status Checkpoint(std::string_view footer) = 0;
  virtual Status Close(std::string_view footer) = 0;
};

class PlainSink final : public OutputSink {
 public:
  PlainSink(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PlainSink() override {
    if (fd_ >= 0) ::close(fd_);
  }
  Status Write(std::string_view data) override {
    DLIO_RETURN_NOT_OK(WriteAt(end_, data));
    end_ += data.size();
    return Status::OK();
  }
  Status Checkpoint(std::string_view footer) override {
    // The footer sits past end_, so the next Write overwrites it.
    DLIO_RETURN_NOT_OK(WriteAt(end_, footer));
    const auto total = static_cast<off_t>(end_ + footer.size());
    if (::ftruncate(fd_, total) != 0) return Status::FromErrno(errno, "ftruncate " + path_);
    return Status::OK();
  }
  Status Close(std::string_view footer) override {
    Status st = Checkpoint(footer);
    if (::close(fd_) != 0 && st.ok()) st = Status::FromErrno(errno, "close " + path_);
    fd_ = -1;
    return st;
  }

 private:
  Status WriteAt(uint64_t offset, std::string_view data) {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n =
          ::pwrite(fd_, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::FromErrno(errno, "write trace file " + path_);
      }
      done += static_cast<size_t>(n);
    }
    return Status::OK();
  }

  int fd_;
  std::string path_;
  uint64_t end_ = 0;
};

class GzipSink final : public OutputSink {
 public:
  GzipSink(gzFile gz, std::string path) : gz_(gz), path_(std::move(path)) {}
  ~GzipSink() override {
    if (gz_ != nullptr) gzclose(gz_);
  }
  Status Write(std::string_view data) override {
    if (data.empty()) return Status::OK();
    if (gzwrite(gz_, data.data(), static_cast<unsigned>(data.size())) !=
        static_cast<int>(data.size())) {
      return Error("gzwrite");
    }
    return Status::OK();
  }
  Status Checkpoint(std::string_view) override {
    if (gzflush(gz_, Z_SYNC_FLUSH) != Z_OK) return Error("gzflush");
    return Status::OK();
  }
  Status Close(std::string_view footer) override {
    Status st = Write(footer);
    const int rc = gzclose(gz_);
    gz_ = nullptr;
    if (rc != Z_OK && st.ok()) st = Status::IOError("gzclose trace file " + path_ + " failed");
    return st;
  }

 private:
  Status Error(const char* op) {
    int errnum = 0;
    const char* msg = gzerror(gz_, &errnum);
    if (errnum == Z_ERRNO) return Status::FromErrno(errno, std::string(op) + " " + path_);
    return Status::IOError(std::string(op) + " trace file " + path_ + ": " + msg);
  }

  gzFile gz_;
  std::string path_;
};

class TraceFileTracer final : public Tracer {
 public:
  TraceFileTracer(const TraceFileOptions& options, std::unique_ptr<OutputSink> sink)
      : options_(options), buffers_(options.buffer_events), sink_(std::move(sink)) {
    const std::string name = options_.process_name.empty()
                                 ? "dlio pid " + std::to_string(options_.pid)
                                 : options_.process_name;
    footer_ = NameLine(0, pfw::kProcessName, options_.pid, 0, name, pfw::kLastLineEnd);
    const std::string name_line =
        NameLine(0, pfw::kProcessName, options_.pid, 0, name, pfw::kLineEnd);
    std::lock_guard<std::mutex> lock(file_mu_);
    KeepFirstError(sink_->Write("[\n"));
    if (options_.name_process_first) KeepFirstError(sink_->Write(name_line));
  }

  ~TraceFileTracer() override {
    (void)Flush();
    std::lock_guard<std::mutex> lock(file_mu_);
    KeepFirstError(sink_->Close(footer_));
    // A trace that could not store even its first bytes (a full disk) is not left behind as an
    // empty file: this tracer created (or truncated) it, and the error was reported by Flush.
    struct stat st;
    if (!status_.ok() && ::stat(options_.path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size == 0) {
      (void)::unlink(options_.path.c_str());
    }
  }

  bool enabled() const override { return true; }
  int32_t InternFile(std::string_view path) override { return names_.Intern(path); }

  void Record(const TraceEvent& event) override {
    trace_internal::ThreadBuffer* b = buffers_.Local();
    std::lock_guard<std::mutex> lock(b->mu);
    b->events.push_back(event);
    if (b->events.back().tid == 0) b->events.back().tid = b->tid;
    if (b->events.size() >= options_.buffer_events) WriteOut(*b);
  }

  Status Flush() override {
    buffers_.ForEach([this](trace_internal::ThreadBuffer& b) { WriteOut(b); });
    std::lock_guard<std::mutex> lock(file_mu_);
    KeepFirstError(sink_->Checkpoint(footer_));
    return status_;
  }

 private:
  // Formats b's events and appends them to the file. Requires b.mu held.
  void WriteOut(trace_internal::ThreadBuffer& b) {
    if (b.events.empty()) return;
    int64_t id =
        next_id_.fetch_add(static_cast<int64_t>(b.events.size() + 1), std::memory_order_relaxed);
    std::string& out = b.scratch;
    size_t used = 0;
    if (!b.named) {
      AppendLine(&out, &used, pfw::MaxEventBytes(0, 0, b.name.size()), [&](char* p, size_t cap) {
        return pfw::EncodeNameMetadata(id, pfw::kThreadName, options_.pid, b.tid, b.name.data(),
                                       b.name.size(), pfw::kLineEnd, p, cap);
      });
      ++id;
      b.named = true;
    }
    // Consecutive events usually name the same file: look its name up once per run.
    int32_t cached_id = -1;
    std::string_view cached_name;
    for (const TraceEvent& e : b.events) {
      if (e.file_id >= 0 && e.file_id != cached_id) {
        cached_id = e.file_id;
        cached_name = names_.NameView(e.file_id);
      }
      const pfw::Event line = Line(e, id++, cached_name);
      const size_t max = pfw::MaxEventBytes(std::strlen(e.name), std::strlen(e.cat),
                                            e.file_id >= 0 ? cached_name.size() : 0);
      AppendLine(&out, &used, max, [&](char* p, size_t cap) {
        return pfw::EncodeEvent(line, pfw::kLineEnd, p, cap);
      });
      if (used >= kWriteChunk) {
        Append({out.data(), used});
        used = 0;
      }
    }
    Append({out.data(), used});
    b.events.clear();
  }

  void Append(std::string_view data) {
    if (data.empty()) return;
    std::lock_guard<std::mutex> lock(file_mu_);
    if (status_.ok()) KeepFirstError(sink_->Write(data));
  }

  pfw::Event Line(const TraceEvent& e, int64_t id, std::string_view fname) const {
    pfw::Event line;
    line.id = id;
    line.name = e.name;
    line.cat = e.cat;
    line.pid = options_.pid;
    line.tid = e.tid;
    line.ts_us = e.start_us;
    line.dur_us = e.dur_us;
    if (e.file_id >= 0) {
      line.fname = fname.empty() ? "" : fname.data();
      line.fname_len = fname.size();
    }
    line.count = e.count;
    line.offset = e.offset;
    line.ret = e.ret;
    line.epoch = e.epoch;
    line.step = e.step;
    line.index = e.index;
    return line;
  }

  // Requires file_mu_ held.
  void KeepFirstError(Status st) {
    if (status_.ok() && !st.ok()) status_ = std::move(st);
  }

  const TraceFileOptions options_;
  trace_internal::ThreadBuffers buffers_;
  trace_internal::FileNames names_;
  std::atomic<int64_t> next_id_{1};
  std::mutex file_mu_;  // guards sink_ and status_; taken once per buffer_events events
  std::unique_ptr<OutputSink> sink_;
  Status status_;
  std::string footer_;
};

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Result<std::unique_ptr<Tracer>> MakeTraceFileTracer(const TraceFileOptions& options) {
  if (options.path.empty()) return Status::InvalidArgument("trace file path is empty");
  if (options.buffer_events == 0) {
    return Status::InvalidArgument("trace buffer_events must be > 0 (trace file " + options.path +
                                   ")");
  }
  std::unique_ptr<OutputSink> sink;
  if (EndsWith(options.path, ".gz")) {
    const int fd = ::open(options.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Status::FromErrno(errno, "open trace file " + options.path);
    gzFile gz = gzdopen(fd, "wb");
    if (gz == nullptr) {
      ::close(fd);
      return Status::ResourceExhausted("gzdopen trace file " + options.path);
    }
    sink = std::make_unique<GzipSink>(gz, options.path);
  } else {
    const int fd = ::open(options.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Status::FromErrno(errno, "open trace file " + options.path);
    sink = std::make_unique<PlainSink>(fd, options.path);
  }
  return std::unique_ptr<Tracer>(std::make_unique<TraceFileTracer>(options, std::move(sink)));
}

}  // namespace dlio
