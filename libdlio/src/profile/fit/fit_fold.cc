// FitTrace stage 2, beside fit_access.cc: the sample reads that are no samples of their own, folded
// into others or dropped (a load's pieces, format probes, an archive's directory).
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

// The most an archive's end record search reads before the end (zipfile's _EndRecData: the
// 22-byte record and a comment of up to 64 KiB).
constexpr int64_t kEndRecordSearch = (int64_t{1} << 16) + 22;

}  // namespace

void Absorb(Access* into, Access* from) {
  into->start_us = std::min(into->start_us, from->start_us);
  into->end_us = std::max(into->end_us, from->end_us);
  into->bytes += from->bytes;
  into->reads += from->reads;
  into->large_reads += from->large_reads;
  into->small_reads += from->small_reads;
  into->faulted_bytes += from->faulted_bytes;
  into->faults += from->faults;
  into->read_us = SaturatingAdd(into->read_us, from->read_us);
  if (into->key < 0) into->key = from->key;
  into->session = into->session || from->session;
  from->bytes = -1;
}

void DropFolded(std::vector<Access>* accesses) {
  size_t kept = 0;
  for (size_t k = 0; k < accesses->size(); ++k) {
    if ((*accesses)[k].bytes >= 0) (*accesses)[kept++] = (*accesses)[k];
  }
  accesses->resize(kept);
}

// Format probes: sessions of one read at a file's start that the process follows at once with
// another open of the same file (tarfile.open's gz, bz2 and xz tries before it opens the archive
// itself). Two or more in a row are the library finding out how to read the file, not sample
// reads: a pass reads a sample once, so one process does not read the same one twice in a row.
// Marked as folded (bytes -1) for DropFolded.
void MarkProbes(std::vector<Access>* accesses) {
  std::unordered_map<int32_t, std::vector<size_t>> pending;  // by pid: one-read sessions at 0
  auto probe = [](const Access& a) { return a.session && a.reads == 1 && a.key == 0; };
  for (size_t k = 0; k < accesses->size(); ++k) {
    Access& a = (*accesses)[k];
    std::vector<size_t>& run = pending[a.pid];
    const bool same_file = !run.empty() && (*accesses)[run.front()].file == a.file;
    if (probe(a)) {
      if (!same_file) run.clear();
      run.push_back(k);
      continue;
    }
    if (same_file && a.session && run.size() >= 2) {
      for (size_t p : run) (*accesses)[p].bytes = -1;
    }
    run.clear();
  }
}

// An archive's directory read when its reader opens it: a session's first access that began at
// the file's end (the end record) and read its large data just before it (zipfile's central
// directory), nothing else. It is the open of the sample read that follows in the same thread and
// file before another open (the archive kept open), not a sample of its own: folded into that one
// (bytes -1 for DropFolded). A file opened again first (np.load of an npz, its end records then its
// data) keeps it: that was one load.
void FoldDirectoryReads(const View& view, const std::vector<int64_t>& first_offset,
                        std::vector<Access>* accesses) {
  std::map<std::tuple<int32_t, int32_t, int32_t>, size_t> pending;  // (pid, tid, file) -> access
  for (size_t k = 0; k < accesses->size(); ++k) {
    Access& a = (*accesses)[k];
    const auto where = std::make_tuple(a.pid, a.tid, a.file);
    auto it = pending.find(where);
    if (it != pending.end() && a.session) {
      pending.erase(it);  // the file was opened again: the directory read was a whole load's
    } else if (it != pending.end()) {
      Absorb(&a, &(*accesses)[it->second]);
      pending.erase(it);
    }
    const int64_t extent = view.files[static_cast<size_t>(a.file)].extent;
    const int64_t first = first_offset[k];
    // Its bytes, from its first large read on, reach the end record: the directory alone (a
    // sample read there too would begin far before it).
    if (a.session && a.bytes >= 0 && extent > 0 && a.key >= 0 && first > a.key &&
        first >= extent - kEndRecordSearch && a.key + a.bytes >= first) {
      pending[where] = k;
    }
  }
}

}  // namespace dlio::fit
