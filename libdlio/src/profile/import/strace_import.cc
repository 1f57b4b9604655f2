// Importer of `strace -f -ttt -T` logs: per-process fd tables give every read and write its path
// and offset.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "dlio/profile.h"
#include "profile/import/import_check.h"
#include "profile/import/line_reader.h"
#include "profile/import/strace_fd_table.h"
#include "profile/import/strace_line.h"
#include "profile/import/trace_importer.h"

namespace dlio {
namespace {

using profile_internal::Description;
using profile_internal::FdEntry;
using profile_internal::FdTable;
using profile_internal::ImportCheck;
using profile_internal::LineReader;
using profile_internal::StraceCall;
using profile_internal::StraceLine;

// A process's file-system context: its working directory ("" while unknown: the log does not say
// where it started). Shared by CLONE_FS threads; a fork copies it, sharing the immutable string.
struct Fs {
  std::shared_ptr<const std::string> cwd = std::make_shared<const std::string>();
};

// The longest working directory followed (the most the kernel's getcwd returns): a longer one,
// built by relative chdirs, is unknown from then on, so paths do not grow with every chdir.
constexpr size_t kMaxCwd = 4096;

// The file position after `n` more bytes: -1 (unknown) rather than past kMaxTraceBytes.
int64_t Advance(int64_t pos, int64_t n) {
  return pos >= 0 && n <= kMaxTraceBytes && pos <= kMaxTraceBytes - n ? pos + n : -1;
}

struct Pending {
  std::string call;
  std::string args;  // the text after "call(" up to "<unfinished ...>"
  int64_t ts_us = 0;
};

// Where the path of a call comes from.
enum class PathFrom { kNone, kFd0, kPath0, kAt, kMmapFd };

PathFrom PathSource(std::string_view call) {
  static const std::unordered_map<std::string_view, PathFrom> kSources = {
      {"read", PathFrom::kFd0},       {"write", PathFrom::kFd0},     {"pread64", PathFrom::kFd0},
      {"pwrite64", PathFrom::kFd0},   {"readv", PathFrom::kFd0},     {"writev", PathFrom::kFd0},
      {"preadv", PathFrom::kFd0},     {"pwritev", PathFrom::kFd0},   {"preadv2", PathFrom::kFd0},
      {"pwritev2", PathFrom::kFd0},   {"lseek", PathFrom::kFd0},     {"close", PathFrom::kFd0},
      {"fsync", PathFrom::kFd0},      {"fdatasync", PathFrom::kFd0}, {"fstat", PathFrom::kFd0},
      {"getdents64", PathFrom::kFd0}, {"getdents", PathFrom::kFd0},  {"ftruncate", PathFrom::kFd0},
      {"flock", PathFrom::kFd0},      {"open", PathFrom::kPath0},    {"creat", PathFrom::kPath0},
      {"stat", PathFrom::kPath0},     {"lstat", PathFrom::kPath0},   {"access", PathFrom::kPath0},
      {"mkdir", PathFrom::kPath0},    {"unlink", PathFrom::kPath0},  {"rmdir", PathFrom::kPath0},
      {"rename", PathFrom::kPath0},   {"chdir", PathFrom::kPath0},   {"truncate", PathFrom::kPath0},
      {"openat", PathFrom::kAt},      {"openat2", PathFrom::kAt},    {"newfstatat", PathFrom::kAt},
      {"fstatat64", PathFrom::kAt},   {"statx", PathFrom::kAt},      {"faccessat", PathFrom::kAt},
      {"faccessat2", PathFrom::kAt},  {"unlinkat", PathFrom::kAt},   {"mkdirat", PathFrom::kAt},
      {"renameat", PathFrom::kAt},    {"renameat2", PathFrom::kAt},  {"mmap", PathFrom::kMmapFd},
  };
  auto it = kSources.find(call);
  return it == kSources.end() ? PathFrom::kNone : it->second;
}

class StraceImporter {
 public:
  StraceImporter(std::string path, ProfileTrace* trace)
      : file_(std::move(path)), trace_(trace), check_("strace log " + file_, &stats_) {}

  Result<ImportStats> Run() {
    LineReader reader;
    DLIO_RETURN_NOT_OK(reader.Open(file_));
    std::string_view raw;
    std::string error;
    while (reader.Next(&raw)) {
      ++stats_.lines;
      StraceLine line;
      if (!ParseStracePrefix(raw, &line, &error)) return Bad(reader.line_number(), error);
      // A pid beyond 32 bits (Linux's are below 2^22) would merge with a small one: dropped.
      if (!check_.Id(line.tid, "pid", reader.line_number(), &tid_)) continue;
      DLIO_RETURN_NOT_OK(Handle(line, reader.line_number()));
    }
    DLIO_RETURN_NOT_OK(reader.status());
    for (const auto& [pid, rank] : rank_) trace_->ranks[pid] = rank;
    return stats_;
  }

 private:
  Status Bad(int64_t line, const std::string& error) const {
    return Status::Corruption("strace log ", file_, " line ", line, ": ", error);
  }

  Status Handle(const StraceLine& line, int64_t line_no) {
    switch (line.type) {
      case StraceLine::Type::kNoise:
        ++stats_.skipped;
        return Status::OK();
      case StraceLine::Type::kUnfinished:
        pending_[tid_] = {std::string(line.call), std::string(line.rest), line.ts_us};
        if (line.call == "clone" || line.call == "clone3" || line.call == "fork" ||
            line.call == "vfork") {
          cloning_[tid_] = std::string(line.rest);
        }
        return Status::OK();
      case StraceLine::Type::kResumed: {
        auto it = pending_.find(tid_);
        if (it == pending_.end() || it->second.call != line.call) {
          ++stats_.skipped;  // its start was before the log began
          return Status::OK();
        }
        Pending p = std::move(it->second);
        pending_.erase(it);
        cloning_.erase(tid_);
        const std::string text = p.args + std::string(line.rest);
        return Complete(p.call, text, tid_, p.ts_us, line_no);
      }
      case StraceLine::Type::kCall:
        return Complete(line.call, line.rest, tid_, line.ts_us, line_no);
    }
    return Status::OK();
  }

  // The fd table of a thread, created on first sight (a child seen before its parent's clone
  // returned inherits from the one clone in progress).
  FdTable& Table(int32_t tid) {
    auto it = tables_.find(tid);
    if (it != tables_.end()) return *it->second;
    if (cloning_.size() == 1) {
      const auto& [parent, args] = *cloning_.begin();
      AddChild(parent, tid, args);
      cloning_.clear();
      return *tables_[tid];
    }
    tables_[tid] = std::make_shared<FdTable>();
    fs_[tid] = std::make_shared<Fs>();
    tgid_[tid] = tid;
    return *tables_[tid];
  }

  void AddChild(int32_t parent, int32_t child, std::string_view args) {
    if (tables_.count(child) != 0) return;
    Table(parent);
    const bool shares_files = args.find("CLONE_FILES") != std::string_view::npos;
    const bool thread = args.find("CLONE_THREAD") != std::string_view::npos;
    // A copy of a table or of a file-system context costs O(1): both share what they hold.
    tables_[child] = shares_files ? tables_[parent] : std::make_shared<FdTable>(*tables_[parent]);
    const bool shares_fs = args.find("CLONE_FS") != std::string_view::npos;
    fs_[child] = shares_fs ? fs_[parent] : std::make_shared<Fs>(*fs_[parent]);
    tgid_[child] = thread ? tgid_[parent] : child;
    auto rank = rank_.find(tgid_[parent]);
    if (!thread && rank != rank_.end()) rank_[child] = rank->second;
  }

  // The rank an execve's printed environment gives (strace -v), -1 when none does.
  static int32_t RankOfEnvironment(std::string_view args) {
    for (std::string_view name : kLauncherRankVariables) {
      std::string key;  // "NAME= (built with append: GCC 12 warns on `"\"" + name + "="`)
      key.reserve(name.size() + 2);
      key.append(1, '"').append(name).append(1, '=');
      const size_t at = args.find(key);
      if (at == std::string_view::npos) continue;
      int64_t rank = -1;
      const size_t from = at + key.size();
      const size_t end = args.find('"', from);
      if (end != std::string_view::npos &&
          profile_internal::StraceInt(args.substr(from, end - from), &rank) && rank >= 0 &&
          rank <= INT32_MAX) {
        return static_cast<int32_t>(rank);
      }
    }
    return -1;
  }

  Status Complete(std::string_view call, std::string_view text, int32_t tid, int64_t ts,
                  int64_t line_no) {
    StraceCall c;
    std::string error;
    if (!ParseStraceCall(text, &c, &error)) return Bad(line_no, error);
    FdTable& table = Table(tid);
    if ((call == "clone" || call == "clone3" || call == "fork" || call == "vfork") && c.has_ret &&
        c.ret > 0) {
      int32_t child = 0;
      if (check_.Id(c.ret, "child pid", line_no, &child)) AddChild(tid, child, c.raw_args);
      return Status::OK();
    }
    if (call == "execve" && c.has_ret && c.ret == 0) {
      table.EraseCloexec();
      const int32_t rank = RankOfEnvironment(c.raw_args);
      if (rank >= 0) rank_[tgid_[tid]] = rank;
    }
    if (call == "dup" || call == "dup2" || call == "dup3" || call == "fcntl") Dup(call, c, &table);
    if (call == "fcntl") SetFlags(c, &table);
    if (call == "fchdir" && c.has_ret && c.ret == 0 && !c.args.empty()) {
      int64_t fd = -1;
      profile_internal::StraceInt(c.args[0], &fd);
      const FdEntry* entry = table.Find(fd);
      if (entry != nullptr) SetCwd(tid, entry->desc->path);
    }
    const OpKind kind = OpKindOfCall(call);
    if (kind == OpKind::kOther) {
      ++stats_.skipped;
      return Status::OK();
    }
    Emit(call, kind, c, tid, ts, line_no, &table);
    return Status::OK();
  }

  void SetCwd(int32_t tid, const std::string& path) {
    fs_[tid]->cwd = std::make_shared<const std::string>(path.size() <= kMaxCwd ? path : "");
  }

  void Dup(std::string_view call, const StraceCall& c, FdTable* table) {
    int64_t old_fd = 0;
    if (!c.has_ret || c.ret < 0 || c.args.empty() ||
        !profile_internal::StraceInt(c.args[0], &old_fd))
      return;
    bool cloexec = false;
    if (call == "fcntl") {
      if (c.args.size() < 2 || c.args[1].substr(0, 7) != "F_DUPFD") return;
      cloexec = c.args[1] == "F_DUPFD_CLOEXEC";
    }
    if (call == "dup3") cloexec = c.raw_args.find("O_CLOEXEC") != std::string_view::npos;
    const FdEntry* old = table->Find(old_fd);
    if (old == nullptr) {
      table->Erase(c.ret);
      return;
    }
    table->Set(c.ret, FdEntry{old->desc, cloexec});
  }

  // fcntl(fd, F_SETFL, flags) turns O_APPEND on or off.
  static void SetFlags(const StraceCall& c, FdTable* table) {
    int64_t fd = -1;
    if (!c.has_ret || c.ret != 0 || c.args.size() < 3 || c.args[1] != "F_SETFL" ||
        !profile_internal::StraceInt(c.args[0], &fd))
      return;
    const FdEntry* entry = table->Find(fd);
    if (entry != nullptr)
      entry->desc->append = c.args[2].find("O_APPEND") != std::string_view::npos;
  }

  // Fills path/offset/size/ret of one file call and updates the fd table.
  void Emit(std::string_view call, OpKind kind, const StraceCall& c, int32_t tid, int64_t ts,
            int64_t line_no, FdTable* table) {
    ProfileEvent e;
    e.pid = tgid_[tid];
    e.tid = tid;
    e.name = call;
    e.category = "strace";
    e.start_us = ts;
    e.dur_us = c.dur_us;
    e.ret = c.has_ret ? c.ret : -1;
    e.kind = kind;
    std::shared_ptr<Description> desc;
    std::string path;
    int64_t fd = -1;
    switch (PathSource(call)) {
      case PathFrom::kFd0:
        if (!c.args.empty()) {
          profile_internal::StraceInt(c.args[0], &fd);
          path = profile_internal::StraceFdPath(c.args[0]);  // -y; the fd table takes precedence
        }
        break;
      case PathFrom::kPath0:
        if (!c.args.empty() && profile_internal::StraceString(c.args[0], &path)) {
          path = profile_internal::JoinPath(*fs_[tid]->cwd, path);
        }
        break;
      case PathFrom::kAt:
        if (c.args.size() >= 2) {
          int64_t dirfd = -100;
          profile_internal::StraceInt(c.args[0], &dirfd);
          profile_internal::StraceString(c.args[1], &path);
          if (path.empty()) {
            fd = dirfd;  // AT_EMPTY_PATH: the call is about dirfd itself
          } else if (dirfd == -100) {
            path = profile_internal::JoinPath(*fs_[tid]->cwd, path);  // AT_FDCWD
          } else if (dirfd >= 0) {
            const FdEntry* d = table->Find(dirfd);
            if (d != nullptr) path = profile_internal::JoinPath(d->desc->path, path);
          }
        }
        break;
      case PathFrom::kMmapFd:
        if (c.args.size() >= 6) {
          profile_internal::StraceInt(c.args[4], &fd);
          profile_internal::StraceInt(c.args[1], &e.size);
          profile_internal::StraceInt(c.args[5], &e.offset);
        }
        break;
      case PathFrom::kNone:
        break;
    }
    if (fd >= 0) {
      const FdEntry* entry = table->Find(fd);
      if (entry != nullptr) {
        desc = entry->desc;
        path = desc->path;
      }
    }
    e.path = path;
    Position(call, kind, c, fd, desc.get(), table, &e);
    if (kind == OpKind::kOpen && c.has_ret && c.ret >= 0) {
      auto d = std::make_shared<Description>();
      d->path = path;
      d->append = c.raw_args.find("O_APPEND") != std::string_view::npos;
      table->Set(c.ret, FdEntry{d, c.raw_args.find("O_CLOEXEC") != std::string_view::npos});
    }
    if (call == "chdir" && c.has_ret && c.ret == 0 && !path.empty() && path.front() == '/') {
      SetCwd(tid, path);
    }
    if (!check_.Event(&e, line_no)) return;
    trace_->Add(e);
    ++stats_.events;
  }

  static void Position(std::string_view call, OpKind kind, const StraceCall& c, int64_t fd,
                       Description* desc, FdTable* table, ProfileEvent* e) {
    const bool positional = call.substr(0, 2) == "pr" || call.substr(0, 2) == "pw";
    if (kind == OpKind::kRead || kind == OpKind::kWrite) {
      const bool vectored = call.find('v') != std::string_view::npos;
      if (!vectored && c.args.size() >= 3) profile_internal::StraceInt(c.args[2], &e->size);
      if (vectored && c.args.size() >= 3)
        e->size = profile_internal::StraceIovSize(c.args[1], c.args[2]);
      // O_APPEND: writes (pwrite too, on Linux) go to the file's end, which the log does not
      // show: offset -1, and the position is unknown until a seek.
      const bool appends = kind == OpKind::kWrite && desc != nullptr && desc->append;
      int64_t at = -1;
      if (positional && c.args.size() >= 4) profile_internal::StraceInt(c.args[3], &at);
      if (appends) {
        e->offset = -1;
        if (!positional) desc->pos = -1;
      } else if (positional && at >= 0) {
        e->offset = at;  // preadv2/pwritev2 with offset -1 use the position, below
      } else if (desc != nullptr) {
        e->offset = desc->pos;
        if (c.has_ret && c.ret > 0) desc->pos = Advance(desc->pos, c.ret);
      }
    } else if (kind == OpKind::kSeek) {
      // lseek returns the new position; _llseek returns 0 and writes it through a pointer.
      const bool position = call == "lseek" && c.has_ret && c.ret >= 0;
      if (desc != nullptr && position) desc->pos = c.ret;
      e->offset = position ? c.ret : -1;
    } else if (kind == OpKind::kClose && c.has_ret && c.ret == 0) {
      table->Erase(fd);
    }
  }

  std::string file_;
  ProfileTrace* trace_;
  ImportStats stats_;
  ImportCheck check_;
  int32_t tid_ = 0;  // the thread of the line being handled
  // By tid: CLONE_FILES threads share one table object, CLONE_FS threads one Fs.
  std::unordered_map<int32_t, std::shared_ptr<FdTable>> tables_;
  std::unordered_map<int32_t, std::shared_ptr<Fs>> fs_;
  std::unordered_map<int32_t, int32_t> tgid_;         // tid -> process id
  std::map<int32_t, int32_t> rank_;                   // process id -> MPI rank
  std::unordered_map<int32_t, Pending> pending_;      // by tid
  std::unordered_map<int32_t, std::string> cloning_;  // tid -> clone args
};

}  // namespace

namespace profile_internal {
namespace {

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "<sec>.<usec> name(" after an optional "<pid> " or "[pid N] " prefix (strace -f -ttt).
bool IsStraceLine(std::string_view line) {
  if (line.rfind("[pid", 0) == 0) return true;
  size_t sp = line.find(' ');
  if (sp != std::string_view::npos && IsDigits(line.substr(0, sp))) line.remove_prefix(sp + 1);
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  sp = line.find(' ');
  if (sp == std::string_view::npos) return false;
  const std::string_view time = line.substr(0, sp);
  const size_t dot = time.find('.');
  if (dot == std::string_view::npos || !IsDigits(time.substr(0, dot)) ||
      !IsDigits(time.substr(dot + 1))) {
    return false;
  }
  const std::string_view rest = line.substr(sp + 1);
  if (rest.rfind("+++", 0) == 0 || rest.rfind("---", 0) == 0 || rest.rfind("<...", 0) == 0) {
    return true;
  }
  const size_t paren = rest.find('(');
  return paren != std::string_view::npos && paren > 0 &&
         std::all_of(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(paren), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

}  // namespace

bool SniffStrace(std::string_view head) { return IsStraceLine(FirstTextLine(head)); }

}  // namespace profile_internal

Result<ImportStats> ImportStrace(const std::string& path, ProfileTrace* trace) {
  return StraceImporter(path, trace).Run();
}

}  // namespace dlio
