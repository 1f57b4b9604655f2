// Merging per-rank trace files into one, one process per rank.
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "core/owner_stamp.h"
#include "dlio/tracer.h"

namespace dlio {
namespace {

using json = nlohmann::json;

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// Reads one line (without its newline) of any length; false at end of file.
bool ReadLine(gzFile f, std::string* line, bool* error) {
  line->clear();
  char buf[8192];
  while (gzgets(f, buf, sizeof buf) != nullptr) {
    line->append(buf);
    if (!line->empty() && line->back() == '\n') {
      line->pop_back();
      return true;
    }
  }
  int errnum = 0;
  gzerror(f, &errnum);
  // A gzip stream cut short (a rank killed mid-write) reads as Z_BUF_ERROR: keep what came out.
  *error = errnum != Z_OK && errnum != Z_BUF_ERROR;
  return !line->empty();
}

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}

int64_t RankFor(const std::string& path, size_t index) {
  // "trace-<R>-of-<N>.pfw" (DLIO's and dlio's name) or "trace-<R>.pfw" (dlio's before).
  static const std::regex kRankName(R"((?:^|/)trace-(\d+)(?:-of-\d+)?\.pfw(?:\.gz)?$)");
  std::smatch m;
  if (std::regex_search(path, m, kRankName)) {
    try {
      return std::stoll(m[1].str());
    } catch (const std::exception&) {
    }
  }
  return static_cast<int64_t>(index);
}

// The pid libdlio_preload.so wrote into `path`: its traces open with a process_name metadata
// event carrying the traced process's OS pid (dlio's own tracer names its process last). 0 when
// the file is not such a trace (or cannot be read: the merge reports that).
int64_t PreloadPid(const std::string& path) {
  GzFile in(gzopen(path.c_str(), "rb"));
  if (!in) return 0;
  std::string line;
  bool error = false;
  while (ReadLine(in.get(), &line, &error)) {
    std::string t = Trim(line);
    if (t.empty() || t == "[") continue;
    if (t.back() == ',') t.pop_back();
    const json event = json::parse(t, nullptr, /*allow_exceptions=*/false);
    if (!event.is_object() || event.value("ph", std::string()) != "M" ||
        event.value("name", std::string()) != "process_name") {
      return 0;
    }
    const auto pid = event.find("pid");
    return pid != event.end() && pid->is_number_integer() && pid->get<int64_t>() > 0
               ? pid->get<int64_t>()
               : 0;
  }
  return 0;
}

// Each input's pid in the merged trace, never 0 (Perfetto's advice): a libdlio_preload.so trace
// keeps the OS pid written inside it, whatever the file is called (trace-<pid>-1.pfw after an
// exec); any other input is dlio rank R (from "trace-<R>-of-<N>.pfw" or "trace-<R>.pfw", else its
// position) and gets pid R + 1, its process still named "dlio rank R".
struct InputPid {
  int64_t pid = 0;
  int64_t rank = -1;  // -1: a preload trace, whose own process_name is kept
};

InputPid PidFor(const std::string& path, size_t index) {
  InputPid p;
  p.pid = PreloadPid(path);
  if (p.pid > 0) return p;
  p.rank = RankFor(path, index);
  p.pid = p.rank + 1;
  return p;
}

// Where merged lines go: a plain file or a gzip stream.
class Output {
 public:
  static Result<std::unique_ptr<Output>> Open(const std::string& path, bool gzip) {
    auto out = std::unique_ptr<Output>(new Output());
    out->gzip_ = gzip;
    if (out->gzip_) {
      out->gz_ = gzopen(path.c_str(), "wb6x");  // x: created new, never someone else's file
      if (out->gz_ == nullptr) return Status::FromErrno(errno, "open " + path);
    } else {
      out->file_ = std::fopen(path.c_str(), "wbx");
      if (out->file_ == nullptr) return Status::FromErrno(errno, "open " + path);
    }
    out->path_ = path;
    return out;
  }
  ~Output() { (void)Close(); }

  Status Write(const std::string& s) {
    if (s.empty()) return Status::OK();
    if (gzip_) {
      if (gzwrite(gz_, s.data(), static_cast<unsigned>(s.size())) != static_cast<int>(s.size())) {
        return Status::IOError("write " + path_ + ": gzwrite failed");
      }
    } else if (std::fwrite(s.data(), 1, s.size(), file_) != s.size()) {
      return Status::FromErrno(errno, "write " + path_);
    }
    return Status::OK();
  }

  Status Close() {
    Status st;
    if (gz_ != nullptr && gzclose(gz_) != Z_OK) st = Status::IOError("close " + path_);
    gz_ = nullptr;
    if (file_ != nullptr && std::fclose(file_) != 0)
      st = Status::FromErrno(errno, "close " + path_);
    file_ = nullptr;
    return st;
  }

 private:
  Output() = default;
  bool gzip_ = false;
  gzFile gz_ = nullptr;
  FILE* file_ = nullptr;
  std::string path_;
};

// Each input's pid (and rank); InvalidArgument when two would share one. Several preload traces of
// one pid are one process before and after an exec; a rank is one file.
Result<std::vector<InputPid>> AssignPids(const std::vector<std::string>& inputs,
                                         TraceMergeReport* report) {
  std::vector<InputPid> given;
  std::set<int64_t> seen_rank_pids, seen_preload_pids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputPid p = PidFor(inputs[i], i);
    auto& mine = p.rank >= 0 ? seen_rank_pids : seen_preload_pids;
    const auto& other = p.rank >= 0 ? seen_preload_pids : seen_rank_pids;
    if ((p.rank >= 0 && mine.count(p.pid) != 0) || other.count(p.pid) != 0) {
      return Status::InvalidArgument(
          "trace merge: two inputs get pid ", p.pid, " (the second is ", inputs[i],
          "); name them trace-<rank>-of-<ranks>.pfw or pass each rank once");
    }
    mine.insert(p.pid);
    given.push_back(p);
    report->pids.push_back(p.pid);
  }
  return given;
}

// Writes the events of the inputs, one after the other, into one JSON array, renumbering their
// ids and giving each input's events its pid.
class Merger {
 public:
  Merger(Output* out, TraceMergeReport* report) : out_(out), report_(report) {}

  // A line is parsed once the next one is known, so that only the last line may be truncated.
  Status MergeFile(const std::string& path, const InputPid& input) {
    GzFile in(gzopen(path.c_str(), "rb"));
    if (!in) return Status::FromErrno(errno, "open trace " + path);
    std::string line, pending;
    bool have_pending = false, error = false;
    uint64_t line_no = 0, pending_line_no = 0;
    while (ReadLine(in.get(), &line, &error)) {
      ++line_no;
      if (have_pending) DLIO_RETURN_NOT_OK(Emit(path, input, pending, pending_line_no, false));
      pending.swap(line);
      pending_line_no = line_no;
      have_pending = true;
    }
    if (error) return Status::IOError("read trace " + path + ": " + gzerror(in.get(), nullptr));
    if (have_pending) DLIO_RETURN_NOT_OK(Emit(path, input, pending, pending_line_no, true));
    return Status::OK();
  }

 private:
  // One line of `path`: an event written with the input's pid and a new id; a rank's
  // process_name says "dlio rank N", and only a pid's first is kept. A line that is no event is
  // Corruption, or counted as truncated when it is the last.
  Status Emit(const std::string& path, const InputPid& input, const std::string& text, uint64_t no,
              bool last) {
    std::string t = Trim(text);
    if (t.empty() || t == "[" || t == "]") return Status::OK();
    if (t.back() == ',') t.pop_back();
    json event = json::parse(t, nullptr, /*allow_exceptions=*/false);
    if (event.is_discarded() || !event.is_object()) {
      if (last) {
        ++report_->truncated_lines;
        return Status::OK();
      }
      return Status::Corruption(path, ": line ", no, " is not a JSON trace event");
    }
    event["pid"] = input.pid;
    if (event.value("ph", std::string()) == "M" &&
        event.value("name", std::string()) == "process_name") {
      if (!named_.insert(input.pid).second) return Status::OK();
      if (input.rank >= 0) event["args"]["name"] = "dlio rank " + std::to_string(input.rank);
    }
    event["id"] = next_id_++;
    DLIO_RETURN_NOT_OK(
        out_->Write((first_ ? "" : ",\n") +
                    event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
    first_ = false;
    ++report_->events;
    return Status::OK();
  }

  Output* out_;
  TraceMergeReport* report_;
  bool first_ = true;
  std::set<int64_t> named_;  // pids whose process_name is written
  int64_t next_id_ = 1;
};

Status MergeInto(const std::vector<std::string>& inputs, Output* out, TraceMergeReport* report) {
  DLIO_ASSIGN_OR_RETURN(const std::vector<InputPid> given, AssignPids(inputs, report));
  DLIO_RETURN_NOT_OK(out->Write("[\n"));
  Merger merger(out, report);
  for (size_t i = 0; i < inputs.size(); ++i) {
    DLIO_RETURN_NOT_OK(merger.MergeFile(inputs[i], given[i]));
  }
  return out->Write("\n]\n");
}

}  // namespace

Result<TraceMergeReport> MergeTraceFiles(const std::vector<std::string>& inputs,
                                         const std::string& output) {
  if (inputs.empty()) return Status::InvalidArgument("trace merge: no input files");
  for (const auto& in : inputs) {
    if (in == output) {
      return Status::InvalidArgument("trace merge: output " + output + " is also an input");
    }
  }
  // Not through Storage (the storage module depends on this one), but the same temporary names
  // as WriteFileAtomically: "<output>.tmp-<owner token>" (core/owner_stamp.h).
  const std::string tmp = output + ".tmp-" + UniqueOwnerToken();
  TraceMergeReport report;
  Status st;
  {
    const bool gzip = output.size() > 3 && output.compare(output.size() - 3, 3, ".gz") == 0;
    auto out = Output::Open(tmp, gzip);
    if (!out.ok()) return out.status();
    st = MergeInto(inputs, out->get(), &report);
    Status closed = (*out)->Close();
    if (st.ok()) st = closed;
  }
  if (st.ok() && std::rename(tmp.c_str(), output.c_str()) != 0) {
    st = Status::FromErrno(errno, "rename " + tmp + " -> " + output);
  }
  if (!st.ok()) {
    std::remove(tmp.c_str());  // our own temporary
    return st;
  }
  return report;
}

}  // namespace dlio
