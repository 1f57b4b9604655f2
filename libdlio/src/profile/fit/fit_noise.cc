// FitTrace stage 1's filter: the I/O of the program's runtime and launcher, which is no part of
// the workload (docs/profiling.md, "Runtime and launcher I/O"). Python's tempfile probe in every
// DataLoader worker, an MPI launcher's shared-memory segment, the interpreter's imports, calls
// fit has no entry for, and a main process that opens the data files only to count them would
// otherwise be fitted as checkpoints, side reads, per-sample events and reader threads.
#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_map>

#include "dlio/str_cat.h"
#include "profile/analysis/analysis_internal.h"
#include "profile/fit/fit_internal.h"

namespace dlio {

std::vector<std::string> DefaultFitIgnorePaths() {
  std::vector<std::string> paths = {
      // the system's folders: kernel files, devices (/dev/shm), libraries, configuration
      "/proc/", "/sys/", "/dev/", "/run/", "/var/run/", "/usr/", "/lib/", "/lib64/", "/etc/",
      "/bin/", "/sbin/",
      // files directly in a temp folder (tempfile's probe, mkstemp's files), not in folders
      // made there (a program's own data or output folder under /tmp stays)
      "/tmp/*", "/var/tmp/*",
      // launchers' and runtimes' session folders, wherever they are made
      "ompi.*/", "openmpi-sessions-*/", "prte.*/", "pymp-*/",
      // the program's code: Python sources, bytecode, packages, shared libraries
      "__pycache__/", "site-packages/", "dist-packages/", "*.py", "*.pyc", "*.so", "*.so.*",
      "*.pth"};
  const char* tmpdir = std::getenv("TMPDIR");
  std::string dir = tmpdir != nullptr ? tmpdir : "";
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!dir.empty() && dir.front() == '/' && dir != "/" && dir != "/tmp" && dir != "/var/tmp" &&
      dir.find_first_of("*?[") == std::string::npos) {
    paths.push_back(dir + "/*");
  }
  return paths;
}

Status CheckFitIgnorePattern(std::string_view pattern) {
  if (pattern.empty())
    return Status::InvalidArgument("--ignore-paths (FitOptions::ignore_paths): an empty pattern");
  const bool absolute = pattern.front() == '/';
  const std::string_view body = pattern.substr(0, pattern.size() - (pattern.back() == '/'));
  if (!absolute && body.find('/') != std::string_view::npos) {
    return Status::InvalidArgument("--ignore-paths (FitOptions::ignore_paths) pattern '", pattern,
                                   "': a name pattern holds no '/' but a trailing one (a folder); "
                                   "a path pattern starts with '/'");
  }
  if (pattern.find_first_not_of("*/") == std::string_view::npos) {
    return Status::InvalidArgument("--ignore-paths (FitOptions::ignore_paths) pattern '", pattern,
                                   "' would leave out every file");
  }
  return Status::OK();
}

Result<std::vector<std::string>> ParseFitIgnorePaths(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view entry = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (entry == "default") {
      for (std::string& p : DefaultFitIgnorePaths()) out.push_back(std::move(p));
      continue;
    }
    DLIO_RETURN_NOT_OK(CheckFitIgnorePattern(entry));
    out.emplace_back(entry);
  }
  return out;
}

namespace fit {
namespace {

using ThreadKey = std::pair<int32_t, int32_t>;  // (pid, tid)

bool Glob(const std::string& pattern, const std::string& text, int flags) {
  return fnmatch(pattern.c_str(), text.c_str(), flags) == 0;
}

// Categories that name a layer of calls in the importers' traces (a DFTracer or dlio .pfw, DXT).
bool CallLayerName(const std::string& category) {
  return category == "POSIX" || category == "STDIO" || category == "MPIIO" || category == "MPI" ||
         category == "strace";
}

void FindCallLayers(const ProfileTrace& t, Noise* noise) {
  int32_t top = -1;
  for (int32_t c : t.category) top = std::max(top, c);
  noise->call_layer.assign(static_cast<size_t>(top + 1), 0);
  for (int32_t c = 0; c <= top; ++c) {
    noise->call_layer[static_cast<size_t>(c)] = CallLayerName(t.String(c));
  }
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.kind[i] != OpKind::kOther && t.category[i] >= 0) {
      noise->call_layer[static_cast<size_t>(t.category[i])] = 1;
    }
  }
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.kind[i] == OpKind::kOther && !IsAppEvent(*noise, t, i)) {
      ++noise->unknown_calls[t.String(t.name[i])];
    }
  }
}

bool IsUnlink(const ProfileTrace& t, size_t i) {
  if (t.kind[i] != OpKind::kMetadata) return false;
  const std::string& name = t.String(t.name[i]);
  return name == "unlink" || name == "unlinkat" || name == "remove";
}

// What a scratch file's test needs of each file's life in the trace.
struct Life {
  int64_t first_us = INT64_MAX;  // its first event that is not a stat
  OpKind first = OpKind::kOther;
  int64_t first_write_us = INT64_MAX, first_read_us = INT64_MAX, unlink_us = INT64_MIN;
  ThreadKey writer{0, 0};  // the thread of the first write
};

std::unordered_map<int32_t, Life> Lives(const ProfileTrace& t, const Noise& noise) {
  std::unordered_map<int32_t, Life> lives;
  for (size_t i = 0; i < t.size(); ++i) {
    const int32_t path = t.path[i];
    if (path == ProfileTrace::kNoString || noise.paths.count(path)) continue;
    Life& l = lives[path];
    const int64_t at = t.start_us[i];
    if (t.kind[i] != OpKind::kStat && t.kind[i] != OpKind::kOther && at < l.first_us) {
      l.first_us = at;
      l.first = t.kind[i];
    }
    if (t.kind[i] == OpKind::kWrite && at < l.first_write_us) {
      l.first_write_us = at;
      l.writer = {t.pid[i], t.tid[i]};
    }
    if (t.kind[i] == OpKind::kRead) l.first_read_us = std::min(l.first_read_us, at);
    if (IsUnlink(t, i)) l.unlink_us = std::max(l.unlink_us, at);
  }
  return lives;
}

// Files created and deleted within the run: the first event (stats aside) an open or a write,
// written before any read, unlinked after the first write, by a thread that first wrote no other
// file in between (a checkpoint a later save rotates out was followed by other saves).
void FindScratchFiles(const ProfileTrace& t, Noise* noise) {
  const std::unordered_map<int32_t, Life> lives = Lives(t, *noise);
  std::map<ThreadKey, std::vector<int64_t>> created;  // each thread's first writes, sorted below
  for (const auto& [path, l] : lives) {
    if (l.first_write_us != INT64_MAX) created[l.writer].push_back(l.first_write_us);
  }
  for (auto& [thread, times] : created) std::sort(times.begin(), times.end());
  for (const auto& [path, l] : lives) {
    const bool made_here = l.first == OpKind::kOpen || l.first == OpKind::kWrite;
    if (!made_here || l.first_write_us == INT64_MAX || l.first_read_us < l.first_write_us ||
        l.unlink_us < l.first_write_us) {
      continue;
    }
    const std::vector<int64_t>& times = created[l.writer];
    const auto from = std::upper_bound(times.begin(), times.end(), l.first_write_us);
    const auto to = std::lower_bound(times.begin(), times.end(), l.unlink_us);
    if (from < to) continue;  // the thread made other files meanwhile: a rotated-out output
    noise->paths.insert(path);
    ++noise->scratch_files;
  }
}

}  // namespace

bool MatchesIgnorePattern(std::string_view pattern, std::string_view path) {
  if (pattern.empty() || path.empty()) return false;
  const bool folder = pattern.back() == '/';
  const std::string body(pattern.substr(0, pattern.size() - folder));
  std::string p(path);
  if (pattern.front() == '/') {
    if (!folder) return Glob(body, p, FNM_PATHNAME);
    // The path itself or any folder above it.
    for (size_t k = p.find('/', 1);; k = p.find('/', k + 1)) {
      const std::string prefix = p.substr(0, k);
      if (Glob(body, prefix, FNM_PATHNAME)) return true;
      if (k == std::string::npos) return false;
    }
  }
  if (!folder) return Glob(body, Basename(p), 0);
  size_t start = 0;
  while (start <= p.size()) {
    const size_t end = std::min(p.find('/', start), p.size());
    if (end > start && Glob(body, p.substr(start, end - start), 0)) return true;
    start = end + 1;
  }
  return false;
}

bool IsAppEvent(const Noise& noise, const ProfileTrace& t, size_t i) {
  if (t.kind[i] != OpKind::kOther) return false;
  const int32_t c = t.category[i];
  return c < 0 || static_cast<size_t>(c) >= noise.call_layer.size() ||
         noise.call_layer[static_cast<size_t>(c)] == 0;
}

void FindNoise(const ProfileTrace& t, const FitOptions& options, Noise* noise) {
  FindCallLayers(t, noise);
  int32_t top = -1;
  for (int32_t path : t.path) top = std::max(top, path);
  std::vector<int8_t> seen(static_cast<size_t>(top + 1), 0);
  for (int32_t path : t.path) {
    if (path == ProfileTrace::kNoString || seen[static_cast<size_t>(path)]) continue;
    seen[static_cast<size_t>(path)] = 1;
    const std::string& name = t.String(path);
    for (const std::string& pattern : options.ignore_paths) {
      if (MatchesIgnorePattern(pattern, name)) {
        noise->paths.insert(path);
        ++noise->ignored_files;
        break;
      }
    }
  }
  if (options.ignore_scratch_files) FindScratchFiles(t, noise);
}

}  // namespace fit

ProfileTrace WithoutRuntimeIo(const ProfileTrace& trace,
                              const std::vector<std::string>& ignore_paths, bool scratch_files,
                              RuntimeIoLeftOut* left_out) {
  FitOptions options;
  options.ignore_paths = ignore_paths;
  options.ignore_scratch_files = scratch_files;
  fit::Noise noise;
  fit::FindNoise(trace, options, &noise);
  ProfileTrace kept;
  size_t n = 0;
  for (int32_t path : trace.path) n += noise.paths.count(path) == 0;
  kept.Reserve(n);
  for (size_t i = 0; i < trace.size(); ++i) {
    if (noise.paths.count(trace.path[i]) == 0) kept.Add(trace.Get(i));
  }
  for (const StdioKernelRequest& r : trace.stdio_kernel) {
    if (noise.paths.count(r.path) != 0) continue;
    kept.stdio_kernel.push_back(r);
    kept.stdio_kernel.back().path = kept.Intern(trace.String(r.path));
  }
  kept.process_names = trace.process_names;
  kept.thread_names = trace.thread_names;
  kept.ranks = trace.ranks;
  *left_out = {noise.ignored_files, noise.scratch_files,
               static_cast<int64_t>(trace.size() - kept.size())};
  return kept;
}

namespace fit {
namespace {

// Per thread: the largest read of a data file, and the bytes of its sample reads (of those with
// a read over kSmallReadBytes apart).
struct ThreadReads {
  int64_t largest_read = 0;
  std::vector<int64_t> access_bytes, large_access_bytes;
  // The median of the sample reads with a large read, else of all: a loader that maps its files
  // reads each one's header apart from the touched run of its rows, which would be the median.
  int64_t TypicalAccess() const {
    return Median(large_access_bytes.empty() ? access_bytes : large_access_bytes);
  }
};

// The threads that never read a sample (see DropNonReaders).
std::set<ThreadKey> NonReaders(const ProfileTrace& t, const View& view) {
  std::map<ThreadKey, ThreadReads> threads;
  for (size_t i : view.data_events) {
    if (t.kind[i] != OpKind::kRead) continue;
    int64_t& l = threads[{t.pid[i], t.tid[i]}].largest_read;
    l = std::max(l, profile::TransferredBytes(t, i));
  }
  for (const Access& a : view.accesses) {
    ThreadReads& r = threads[{a.pid, a.tid}];
    r.access_bytes.push_back(a.bytes);
    if (a.large_reads > 0) r.large_access_bytes.push_back(a.bytes);
  }
  int64_t typical = 0;  // the largest typical sample read of a thread
  for (const auto& [thread, r] : threads) {
    if (!r.access_bytes.empty()) typical = std::max(typical, r.TypicalAccess());
  }
  std::set<ThreadKey> none;
  for (const auto& [thread, r] : threads) {
    if (r.access_bytes.empty()) continue;
    const int64_t most = *std::max_element(r.access_bytes.begin(), r.access_bytes.end());
    // A quarter: h5py.File in a Dataset's __init__ reads ~7 KiB of a file's metadata where a
    // worker's sample read of a 32 KiB slice reads ~54 KiB (fastMRI's SliceDataset).
    if (r.largest_read <= kSmallReadBytes && most * 4 < typical) none.insert(thread);
  }
  return none;
}

// The most data files one of the `none` threads opened before any other thread read a data
// file (a Dataset's __init__ opening each file to count its samples).
int64_t FilesOpenedAtStart(const ProfileTrace& t, const View& view,
                           const std::set<ThreadKey>& none) {
  std::map<ThreadKey, std::set<int32_t>> opened;
  for (size_t i : view.data_events) {
    const ThreadKey thread{t.pid[i], t.tid[i]};
    if (!none.count(thread)) {
      if (t.kind[i] == OpKind::kRead) break;
      continue;
    }
    if (t.kind[i] == OpKind::kOpen) opened[thread].insert(t.path[i]);
  }
  size_t most = 0;
  for (const auto& [thread, paths] : opened) most = std::max(most, paths.size());
  return static_cast<int64_t>(most);
}

}  // namespace

bool DropNonReaders(const ProfileTrace& t, View* view) {
  const std::set<ThreadKey> none = NonReaders(t, *view);
  if (none.empty()) return false;
  view->noise.files_opened_at_start = FilesOpenedAtStart(t, *view, none);
  std::unordered_map<std::string, size_t> index_of;
  for (size_t f = 0; f < view->files.size(); ++f) index_of[view->files[f].path] = f;
  std::vector<size_t> kept;
  std::vector<int64_t> events(view->files.size(), 0);
  for (size_t i : view->data_events) {
    const size_t f = index_of.at(t.String(t.path[i]));
    // Application events (dlio's item events) stay, whichever thread wrote them.
    if (!none.count({t.pid[i], t.tid[i]}) || t.kind[i] == OpKind::kOther) {
      kept.push_back(i);
      ++events[f];
      continue;
    }
    ++view->noise.non_reader_events;
    DataFile& file = view->files[f];
    file.opens -= t.kind[i] == OpKind::kOpen;
    if (t.kind[i] == OpKind::kRead) {
      --file.reads;
      file.bytes_read -= profile::TransferredBytes(t, i);
    }
  }
  view->noise.non_reader_threads = static_cast<int64_t>(none.size());
  view->data_events = std::move(kept);
  std::vector<DataFile> files;
  for (size_t f = 0; f < view->files.size(); ++f) {
    if (events[f] > 0) files.push_back(std::move(view->files[f]));
  }
  view->files = std::move(files);
  return true;
}

void AddNoiseNotes(const Noise& noise, FitResult* out) {
  if (noise.ignored_files > 0 || noise.scratch_files > 0) {
    out->notes.push_back(
        StrCat("left out as the runtime's and launcher's I/O: ", noise.ignored_files,
               " files under system, temp, launcher or code paths (--ignore-paths), ",
               noise.scratch_files, " scratch files created and deleted within the run"));
  }
  if (!noise.unknown_calls.empty()) {
    std::string calls;
    size_t n = 0;
    for (const auto& [name, count] : noise.unknown_calls) {
      if (++n > 8) {
        calls += StrCat(", ", noise.unknown_calls.size() - 8, " more");
        break;
      }
      calls += StrCat(calls.empty() ? "" : ", ", name, " x", count);
    }
    out->notes.push_back(
        StrCat("ignored: calls fit does not know (no application events): ", calls));
  }
  if (noise.non_reader_threads > 0) {
    out->notes.push_back(StrCat(
        noise.non_reader_threads, " threads opened, stat'ed or read only headers of the data ",
        "files, never a sample (a main process counting them): no readers; their ",
        noise.non_reader_events, " events on the data files left out"));
  }
}

}  // namespace fit
}  // namespace dlio
