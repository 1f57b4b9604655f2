// The h5py request model's reader keys (reader.h5py_reopen, reader.hdf5_lookup_dataset with its
// table's rows, reader.hdf5_lookup_order) and its signature among the io_model guesses
// (GuessH5py): what libhdf5's reads under h5py look like in a trace.
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {

namespace {

// The table a per-sample lookup reads, as libhdf5's sieve buffer reads a small contiguous
// dataset: from the row picked to the table's end. Per file, the small reads ending at the
// offset most of them end at; the row is the greatest common divisor of their sizes.
struct LookupTable {
  int64_t rows = 0, row_bytes = 0, reads = 0;
  std::map<int32_t, int64_t> ends;  // path -> the offset its table reads end at
};

LookupTable FindLookupTable(const ProfileTrace& t, const View& view) {
  std::map<int32_t, std::map<int64_t, std::vector<int64_t>>> by_end;  // path -> end -> sizes
  int64_t small = 0;
  for (size_t i : view.data_events) {
    const int64_t size = t.size_bytes[i];
    if (t.kind[i] != OpKind::kRead || t.offset[i] < 0 || size <= 0 || size > kSmallReadBytes ||
        t.ret[i] == 0) {
      continue;
    }
    ++small;
    by_end[t.path[i]][t.offset[i] + size].push_back(size);
  }
  LookupTable table;
  int64_t row = 0, largest = 0;
  for (const auto& [path, ends] : by_end) {
    const std::vector<int64_t>* best = nullptr;
    for (const auto& [end, sizes] : ends) {
      if (best == nullptr || sizes.size() > best->size()) {
        best = &sizes;
        table.ends[path] = end;
      }
    }
    for (int64_t s : *best) {
      row = std::gcd(row, s);
      largest = std::max(largest, s);
    }
    table.reads += static_cast<int64_t>(best->size());
  }
  if (row <= 0 || table.reads * 2 < small || largest / row < 2) return {};
  table.row_bytes = row;
  table.rows = largest / row;
  return table;
}

// Sample reads (runs with a large read, past each file's first) and the small reads beside them.
struct SampleReads {
  int64_t sessions = 0, samples = 0, small = 0;
};

SampleReads CountSampleReads(const View& view) {
  SampleReads r;
  std::set<int32_t> files_seen;
  for (const Access& a : view.accesses) {
    r.sessions += a.session;
    if (!files_seen.insert(a.file).second && !a.session && a.large_reads > 0) {
      ++r.samples;
      r.small += a.small_reads;
    }
  }
  return r;
}

// About one read of a lookup table (FindLookupTable) per sample read of open files.
bool TableReadPerSample(const LookupTable& table, const SampleReads& r) {
  return table.rows > 0 && r.samples > 0 && table.reads * 10 >= r.samples * 8 &&
         table.reads * 10 <= r.samples * 12;
}

// What a data read is to the lookup rules: a read of the table, of a sample, or neither (the
// file's metadata).
enum class ReadRole { kOther, kSample, kTable };

// Per open of a data file by a thread (or a thread's first read of it), whether a table read or
// a sample read came first: the table read before the sample's data (coordinates that place a
// crop) or after it (a label read once the image is).
struct TableOrder {
  int64_t before = 0, after = 0;
};

TableOrder CountTableOrder(const ProfileTrace& t, const View& view,
                           const std::function<ReadRole(size_t)>& role) {
  TableOrder order;
  std::set<std::tuple<int32_t, int32_t, int32_t>> decided;  // (pid, tid, path)
  for (size_t i : view.data_events) {
    const auto key = std::make_tuple(t.pid[i], t.tid[i], t.path[i]);
    if (t.kind[i] == OpKind::kOpen) {
      decided.erase(key);
      continue;
    }
    if (t.kind[i] != OpKind::kRead || t.offset[i] < 0 || t.size_bytes[i] <= 0 ||
        decided.count(key) > 0) {
      continue;
    }
    const ReadRole r = role(i);
    if (r == ReadRole::kOther) continue;
    ++(r == ReadRole::kTable ? order.before : order.after);
    decided.insert(key);
  }
  return order;
}

// A read of the table FindLookupTable found (a small read ending at its file's table end), of a
// sample (a large read), or neither.
ReadRole FoundTableRole(const ProfileTrace& t, const LookupTable& table, size_t i) {
  const int64_t size = t.size_bytes[i];
  if (size > kSmallReadBytes) return ReadRole::kSample;
  const auto end = table.ends.find(t.path[i]);
  return end != table.ends.end() && t.offset[i] + size == end->second ? ReadRole::kTable
                                                                      : ReadRole::kOther;
}

// reader.hdf5_lookup_order from `order`: after when most opens read a sample before the table;
// left to the reader (auto) when no open read either.
void SetLookupOrder(const TableOrder& order, FitResult* out) {
  const int64_t n = order.before + order.after;
  if (n == 0) return;  // no open read both: the reader's own order (auto)
  const bool after = order.after * 2 > n;
  Set(out, "reader.hdf5_lookup_order", after ? "after" : "before",
      n >= 4 ? FitConfidence::kMedium : FitConfidence::kLow,
      StrCat("in ", after ? order.after : order.before, " of ", n,
             " opens of a data file by a thread, the first of its table and sample reads was ",
             after ? "a sample's (y = f['labels'][i] once x = f['images'][i] is read)"
                   : "the table's (coordinates read before the crop they place)"));
}

// Sample reads that read a file at an offset read before while the file stayed open: h5py then
// made a new dataset object (its chunk cache and sieve buffer start empty) for the read.
int64_t RepeatsWhileOpen(const View& view) {
  std::set<std::pair<int32_t, int64_t>> seen;
  int64_t repeats = 0;
  for (const Access& a : view.accesses) {
    if (a.large_reads == 0) continue;
    if (a.session) seen.clear();  // a new open: nothing is cached any more
    repeats += !seen.insert({a.file, a.key}).second;
  }
  return repeats;
}

// A table of a row per sample the probe found beside the samples (DataFileInfo::row_tables),
// read about once per sample read: per file whose reads the probe's layout describes
// (DataFile::layout_read), the table most of the reads within tables hit.
struct ProbedTableReads {
  int64_t reads = 0, samples = 0, row_bytes = 0;
  TableOrder order;
  bool PerSample() const {
    return row_bytes > 0 && samples > 0 && reads * 10 >= samples * 8 && reads * 10 <= samples * 12;
  }
};

ProbedTableReads CountProbedTableReads(const ProfileTrace& t, const View& view) {
  ProbedTableReads p;
  std::map<std::string, size_t> files;  // path -> index, files whose reads the probe describes
  for (size_t f = 0; f < view.files.size(); ++f) {
    if (view.files[f].layout_read && !view.files[f].info.row_tables.empty()) {
      files[view.files[f].path] = f;
    }
  }
  if (files.empty()) return p;
  std::map<size_t, std::map<size_t, int64_t>> hits;  // file -> table -> reads
  for (size_t i : view.data_events) {
    if (t.kind[i] != OpKind::kRead || t.offset[i] < 0 || t.size_bytes[i] <= 0) continue;
    const auto f = files.find(t.String(t.path[i]));
    if (f == files.end()) continue;
    const auto& tables = view.files[f->second].info.row_tables;
    for (size_t k = 0; k < tables.size(); ++k) {
      if (tables[k].range.Holds(t.offset[i], t.size_bytes[i])) ++hits[f->second][k];
    }
  }
  std::map<int64_t, int64_t> rows;                            // row bytes -> reads
  std::map<std::string, DataFileInfo::FileRange> read_table;  // path -> its most read table
  for (const auto& [file, tables] : hits) {
    const auto best =
        std::max_element(tables.begin(), tables.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    p.reads += best->second;
    const DataFileInfo::RowTable& table = view.files[file].info.row_tables[best->first];
    rows[table.row_bytes] += best->second;
    read_table[view.files[file].path] = table.range;
  }
  p.order = CountTableOrder(t, view, [&](size_t i) {
    const std::string& path = t.String(t.path[i]);
    const auto table = read_table.find(path);
    if (table == read_table.end()) return ReadRole::kOther;
    if (table->second.Holds(t.offset[i], t.size_bytes[i])) return ReadRole::kTable;
    const DataFileInfo::FileRange& samples = view.files[files.at(path)].info.sample_extent;
    return samples.Overlaps(t.offset[i], t.size_bytes[i]) ? ReadRole::kSample : ReadRole::kOther;
  });
  int64_t most = 0;
  for (const auto& [bytes, n] : rows) {
    if (n > most) std::tie(p.row_bytes, most) = std::pair(bytes, n);
  }
  for (const Access& a : view.accesses) p.samples += a.large_reads > 0;
  return p;
}

// The table as dlio's /lookup: a row per sample of the emulation's files, read (from the row to
// its end) with each sample.
void SetProbedTable(const ProbedTableReads& p, FitResult* out) {
  const int64_t rows = EntryInt(out->Find("dataset.num_samples_per_file"), 1);
  Set(out, "dataset.hdf5_lookup_rows", std::to_string(rows), FitConfidence::kMedium,
      "a row per sample of the emulated files (dataset.num_samples_per_file), as the probed "
      "files' table has a row per sample of theirs");
  Set(out, "dataset.hdf5_lookup_row_bytes", std::to_string(p.row_bytes), FitConfidence::kHigh,
      "the probed table's bytes per row (its bytes over the file's samples)");
  Set(out, "reader.hdf5_lookup_dataset", "/lookup", FitConfidence::kMedium,
      StrCat(p.reads,
             " reads within a table of a row per sample that the probed files hold "
             "beside their samples (a second dataset read at the sample's index: "
             "fastMRI's reconstruction beside its k-space), for ",
             p.samples, " sample reads"));
  SetLookupOrder(p.order, out);
}

void FitH5pyReopen(const View& view, int64_t sessions, int64_t table_reads, FitResult* out) {
  const int64_t n = static_cast<int64_t>(view.accesses.size());
  if (sessions * 10 >= n * 8 || OpensPerSample(view)) {
    Set(out, "reader.h5py_reopen", "file", FitConfidence::kMedium,
        StrCat(OpensPerSampleReason(view), ": h5py.File per sample (DLIO's on_demand reader)"));
    return;
  }
  if (table_reads > 0) {
    Set(out, "reader.h5py_reopen", "dataset", FitConfidence::kMedium,
        StrCat(table_reads,
               " reads of a table from a row to its end in open files, about one per sample: "
               "libhdf5's sieve buffer starts empty each time, so each sample opens its datasets "
               "anew (f['labels'][i])"));
    return;
  }
  const int64_t repeats = RepeatsWhileOpen(view);
  if (repeats > 0) {
    Set(out, "reader.h5py_reopen", "dataset", FitConfidence::kMedium,
        StrCat(repeats,
               " sample reads repeat an earlier read of an open file: the dataset "
               "object, and with it libhdf5's caches, is new for each sample"));
  } else {
    Set(out, "reader.h5py_reopen", "none", FitConfidence::kLow,
        StrCat("the files stay open (", sessions, " opens for ", n,
               " sample reads) and no read repeats: the datasets may stay open too"));
  }
}

}  // namespace

// h5py's signatures, for a format that declares it: a group or dataset per sample in the probed
// files, opens per sample (h5py.File per sample), a small table read beside each sample (dset[i]
// per sample), or mostly metadata-sized reads.
std::optional<ModelGuess> GuessH5py(const ProfileTrace& t, const View& view, bool most_sessions,
                                    int64_t small, int64_t reads) {
  if (ProbedSampleGroups(view)) {
    return ModelGuess{"h5py", FitConfidence::kMedium,
                      "the probed files hold a group or a dataset per sample, each opened by "
                      "name (f['sample_<i>'][...]): h5py"};
  }
  if (most_sessions || OpensPerSample(view)) {
    return ModelGuess{
        "h5py", FitConfidence::kMedium,
        StrCat(OpensPerSampleReason(view), ": h5py.File per sample (DLIO's on_demand reader)")};
  }
  const SampleReads r = CountSampleReads(view);
  const LookupTable table = FindLookupTable(t, view);
  if (TableReadPerSample(table, r)) {
    return ModelGuess{
        "h5py", FitConfidence::kMedium,
        StrCat(table.reads, " reads of a small table from a row to its end beside ", r.samples,
               " sample reads (libhdf5's sieve buffer under dset[i] per sample): h5py")};
  }
  if (small * 2 >= reads) {
    return ModelGuess{
        "h5py", FitConfidence::kLow,
        StrCat(small, " of ", reads, " reads are metadata-sized (<= 1 KiB): libhdf5 via h5py")};
  }
  return std::nullopt;
}

void FitH5py(const ProfileTrace& t, const View& view, FitResult* out) {
  // The request model, also under io_model pytorch (whose workers read hdf5 as h5py).
  if (out->request_model != "h5py") return;
  // Small reads per sample read, past each file's first (which reads its metadata). A small
  // read between two sample reads of one file may count with either of them.
  const SampleReads r = CountSampleReads(view);
  const int64_t n = static_cast<int64_t>(view.accesses.size());
  const bool open_files = r.sessions * 10 < n * 8;
  const bool one_each =
      r.samples > 0 && r.small * 10 >= r.samples * 8 && r.small * 10 <= r.samples * 12;
  // The table's reads, about one per sample, may come beside other small reads (the chunk
  // index's nodes of a chunked dataset, read again for a new dataset object).
  if (ProbedSampleGroups(view)) {
    FitH5pyReopen(view, r.sessions, 0, out);
    // A table the probe found beside the samples is in its writer keys (FitWriterKeys).
    const FitEntry* lookup = out->Find("reader.hdf5_lookup_dataset");
    if (lookup == nullptr || !lookup->inferred) {
      Unset(out, "reader.hdf5_lookup_dataset", "",
            "a group per sample: the small reads beside each sample are libhdf5's walk to its "
            "group and datasets");
    }
    return;
  }
  const ProbedTableReads probed = CountProbedTableReads(t, view);
  if (probed.PerSample()) {
    FitH5pyReopen(view, r.sessions, open_files ? probed.reads : 0, out);
    return SetProbedTable(probed, out);
  }
  const LookupTable table = open_files ? FindLookupTable(t, view) : LookupTable{};
  const bool per_sample_table = TableReadPerSample(table, r);
  FitH5pyReopen(view, r.sessions, per_sample_table ? table.reads : 0, out);
  if (per_sample_table || (one_each && table.rows > 0)) {
    Set(out, "dataset.hdf5_lookup_rows", std::to_string(table.rows), FitConfidence::kMedium,
        StrCat("the largest of ", table.reads, " table reads ending at the table's end / its row"));
    Set(out, "dataset.hdf5_lookup_row_bytes", std::to_string(table.row_bytes),
        FitConfidence::kMedium,
        "the greatest common divisor of those reads' sizes (each reads from the row picked to "
        "the table's end, as libhdf5's sieve buffer does)");
    Set(out, "reader.hdf5_lookup_dataset", "/lookup", FitConfidence::kMedium,
        StrCat(table.reads, " table reads beside ", r.samples,
               " sample reads of open files: a table such as labels or coordinates read per "
               "sample"));
    SetLookupOrder(CountTableOrder(t, view, [&](size_t i) { return FoundTableRole(t, table, i); }),
                   out);
  } else if (open_files && one_each) {
    Set(out, "reader.hdf5_lookup_dataset", "/labels", FitConfidence::kLow,
        StrCat(r.small, " small reads beside ", r.samples,
               " sample reads of open files: a table such as coordinates read per sample (its "
               "rows not told: dlio's /labels stands for it)"));
  } else {
    Unset(out, "reader.hdf5_lookup_dataset", "",
          "no small read accompanies each sample read: no per-sample lookup table");
  }
}

}  // namespace dlio::fit
