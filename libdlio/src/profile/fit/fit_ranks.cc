// FitTrace over the traces of several MPI ranks: the global values (files, samples, epochs) from
// all of them, the per-rank ones (reader, compute, checkpoint share) from each rank's own events,
// checked to agree; which rank read which samples (reader.sharding); which ranks checkpoint.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

struct RankFit {
  int32_t rank = 0;
  View view;
  FitResult out;
};

// Keys each rank decides for itself (the rest are the run's: name, workflow, dataset, epochs).
bool IsPerRankKey(const std::string& key) {
  if (key == "train.epochs") return false;
  return key.rfind("reader.", 0) == 0 || key.rfind("train.", 0) == 0 ||
         key.rfind("side_io.", 0) == 0 || key.rfind("checkpoint.", 0) == 0 ||
         key == "workflow.checkpoint";
}

// Keys whose values the ranks of one run share; a rank that differs gets a note.
constexpr const char* kAgreeKeys[] = {"reader.batch_size",          "reader.read_threads",
                                      "reader.data_loader",         "reader.io_model",
                                      "reader.file_shuffle",        "reader.sample_shuffle",
                                      "reader.transfer_size",       "reader.client_costs",
                                      "train.total_training_steps", "train.computation_time"};

// The mean of a computation_time value ("0.01" or "{mean: 0.01, stdev: 0.002}").
double MeanOf(const std::string& v) {
  const size_t at = v.find("mean:");
  return std::strtod(v.c_str() + (at == std::string::npos ? 0 : at + 5), nullptr);
}

bool SameValue(const std::string& key, const FitEntry* a, const FitEntry* b) {
  if (a == nullptr || b == nullptr) return a == b;
  if (a->inferred != b->inferred) return false;
  if (key != "train.computation_time") return a->value == b->value;
  const double x = MeanOf(a->value), y = MeanOf(b->value);
  return std::abs(x - y) <= 0.25 * std::max(std::abs(x), std::abs(y));
}

// Puts `e` into `out`, replacing the entry of its key.
void Put(FitResult* out, const FitEntry& e) {
  for (FitEntry& have : out->entries) {
    if (have.key == e.key) {
      have = e;
      return;
    }
  }
  out->entries.push_back(e);
}

std::string RankList(const std::vector<int32_t>& ranks) {
  std::string s;
  for (int32_t r : ranks) s += StrCat(s.empty() ? "" : ", ", r);
  return s;
}

// Fits rank `rank`'s events; the dataset entries of `global` stand (caps on batch and steps).
Result<RankFit> FitOneRank(const ProfileTrace& trace, const FitOptions& options, const View& whole,
                           const FitResult& global, int32_t world, int32_t rank,
                           const std::set<int32_t>& pids) {
  const ProfileTrace sub = SubTrace(trace, pids);
  RankFit r;
  r.rank = rank;
  DLIO_RETURN_NOT_OK(CollectFiles(sub, options, &r.view));
  CollectAccesses(sub, &r.view);
  AlignEpochs(whole, &r.view);
  r.view.world = world;
  CollectSteps(sub, options, &r.view);
  for (const FitEntry& e : global.entries) {
    if (!IsPerRankKey(e.key)) r.out.entries.push_back(e);
  }
  if (!r.view.accesses.empty()) FitPerRank(sub, r.view, options, &r.out);
  return r;
}

// Per-rank keys from the first rank that read data; a note for every rank that differs.
void MergeReader(const std::vector<RankFit>& ranks, const RankFit& ref, FitResult* out) {
  for (const FitEntry& e : ref.out.entries) {
    if (IsPerRankKey(e.key) && e.key.rfind("checkpoint.", 0) != 0 && e.key != "workflow.checkpoint")
      Put(out, e);
  }
  for (const char* key : kAgreeKeys) {
    const FitEntry* mine = ref.out.Find(key);
    std::vector<int32_t> differ;
    for (const RankFit& r : ranks) {
      if (r.view.accesses.empty() || SameValue(key, mine, r.out.Find(key))) continue;
      differ.push_back(r.rank);
      const FitEntry* theirs = r.out.Find(key);
      out->notes.push_back(StrCat("rank ", r.rank, " differs: ", key, " ",
                                  theirs == nullptr ? "unset" : theirs->value, " (rank ", ref.rank,
                                  ": ", mine == nullptr ? "unset" : mine->value, ")"));
    }
    if (mine == nullptr || !mine->inferred) continue;
    FitEntry e = *mine;
    e.reason += differ.empty() ? StrCat("; per rank, the same on all ", ranks.size(), " ranks")
                               : StrCat("; per rank, from rank ", ref.rank, " (ranks ",
                                        RankList(differ), " differ)");
    Put(out, e);
  }
}

// Checkpoint keys from the first rank that writes them; the model size summed over the writers
// (each writes its share); rank_mode root when rank 0 alone writes.
void MergeCheckpoint(const std::vector<RankFit>& ranks, const RankFit& ref, int32_t world,
                     FitResult* out) {
  std::vector<const RankFit*> writers;
  for (const RankFit& r : ranks) {
    const FitEntry* c = r.out.Find("workflow.checkpoint");
    if (c != nullptr && c->value == "true") writers.push_back(&r);
  }
  if (writers.empty()) {
    if (const FitEntry* none = ref.out.Find("workflow.checkpoint")) Put(out, *none);
    return;
  }
  for (const FitEntry& e : writers.front()->out.entries) {
    if (e.key.rfind("checkpoint.", 0) == 0 || e.key == "workflow.checkpoint") Put(out, e);
  }
  int64_t total = 0;
  std::vector<int32_t> who;
  for (const RankFit* w : writers) {
    const FitEntry* size = w->out.Find("checkpoint.model_size_bytes");
    total += EntryInt(size, 0);
    who.push_back(w->rank);
  }
  // Set appends: replace the first writer's own size in place.
  Put(out,
      {"checkpoint.model_size_bytes", std::to_string(total), true, FitConfidence::kHigh,
       StrCat("median bytes per save, summed over the ", writers.size(), " writing rank",
              writers.size() == 1 ? "" : "s", " (", HumanBytes(static_cast<double>(total)), ")")});
  if (who.size() == 1 && who.front() == 0) {
    Set(out, "checkpoint.rank_mode", "root", FitConfidence::kHigh,
        StrCat("only rank 0 of ", world, " writes checkpoint files"));
  } else if (static_cast<int32_t>(who.size()) == world) {
    Set(out, "checkpoint.rank_mode", "all", FitConfidence::kHigh,
        StrCat("all ", world, " ranks write checkpoint files (model_files per rank)"));
  } else {
    Set(out, "checkpoint.rank_mode", "all", FitConfidence::kLow,
        StrCat("ranks ", RankList(who), " of ", world,
               " write checkpoint files; dlio has all ranks or rank 0 only"));
  }
}

// Whether the files of one sample each that the ranks read in the first pass (file -> ranks)
// are a run of consecutive files per rank (block), and whether rank r read the files i with
// i mod world = r (round robin).
std::pair<bool, bool> ShardShape(const std::map<int32_t, std::set<int32_t>>& file_ranks,
                                 int32_t world) {
  bool round_robin = true;
  std::map<int32_t, std::pair<int32_t, int32_t>> span;  // rank -> first, last file
  std::map<int32_t, int32_t> count;
  for (const auto& [file, who] : file_ranks) {
    const int32_t r = *who.begin();
    round_robin = round_robin && file % world == r;
    auto [it, fresh] = span.try_emplace(r, file, file);
    it->second.second = file;
    ++count[r];
  }
  bool block = true;
  for (const auto& [r, s] : span) block = block && s.second - s.first + 1 == count[r];
  return {block, round_robin};
}

// Each rank keeps one set of files over its passes (the run's passes are the ranks' own), a
// block or every world-th file in name order, in a new order each pass: dlio's sharding of the
// files in name order, then its rank-local shuffle (sample_shuffle; file_shuffle would reshuffle
// the whole list before sharding, giving each rank other files every epoch).
void FixedShuffledShard(bool block, int32_t world, FitResult* out) {
  const std::string kept = block ? "a run of consecutive files"
                                 : StrCat("the files i with i mod ", world, " = its rank");
  Set(out, "reader.sharding", block ? "block" : "round_robin", FitConfidence::kMedium,
      StrCat("each rank reads ", kept, " (in name order) and keeps them over its passes"));
  Put(out, {"reader.file_shuffle", "off", true, FitConfidence::kMedium,
            StrCat("each rank keeps its files over its passes, ", kept,
                   ": the list is sharded in name order (a global file shuffle would give a rank "
                   "other files every epoch)")});
  Put(out, {"reader.sample_shuffle", "seed", true, FitConfidence::kMedium,
            "each rank reads its files in a new order every pass: the rank-local shuffle"});
}

// reader.sharding from which ranks read the first pass's samples.
void FitSharding(const View& whole, const std::map<int32_t, int32_t>& rank_of, int32_t world,
                 FitResult* out) {
  std::map<std::pair<int32_t, int64_t>, std::set<int32_t>> readers;  // sample -> ranks
  std::map<int32_t, std::set<int32_t>> file_ranks;                   // file -> ranks
  std::map<int32_t, std::set<int64_t>> file_samples;
  for (const Access& a : whole.accesses) {
    auto r = rank_of.find(a.pid);
    if (a.epoch != 0 || whole.files[static_cast<size_t>(a.file)].valid || r == rank_of.end())
      continue;
    readers[{a.file, a.key}].insert(r->second);
    file_ranks[a.file].insert(r->second);
    file_samples[a.file].insert(a.key);
  }
  if (readers.empty()) return;
  int64_t shared = 0;
  for (const auto& [sample, who] : readers) shared += who.size() > 1;
  const auto samples = static_cast<int64_t>(readers.size());
  if (shared * 2 > samples) {
    Set(out, "reader.sharding", "none", FitConfidence::kMedium,
        StrCat(shared, " of ", samples, " samples of the first pass are read by several ranks"));
    return;
  }
  int64_t files_shared = 0, split_able = 0;
  for (const auto& [file, who] : file_ranks) {
    files_shared += who.size() > 1;
    split_able += static_cast<int64_t>(file_samples[file].size()) >= world;
  }
  const auto files = static_cast<int64_t>(file_ranks.size());
  const std::string seen = StrCat(files_shared, " of ", files, " files are read by several ranks");
  if (split_able * 2 >= files) {  // files of >= world samples: round robin splits each of them
    if (files_shared <= world - 1) {
      Set(out, "reader.sharding", "block", FitConfidence::kMedium,
          StrCat(seen, ": each rank reads a contiguous block of the samples"));
    } else if (files_shared * 2 >= files) {
      Set(out, "reader.sharding", "round_robin", FitConfidence::kMedium,
          StrCat(seen, ": ranks take turns through each file's samples"));
    } else {
      Unset(out, "reader.sharding", "block", StrCat(seen, ": neither block nor round robin"));
    }
    return;
  }
  // One sample per file: in name order, block gives each rank a run of files, round robin every
  // world-th file (only when the files are not shuffled, or each rank keeps its files).
  const auto [block, round_robin] = ShardShape(file_ranks, world);
  const FitEntry* shuffle = out->Find("reader.file_shuffle");
  if (shuffle != nullptr && shuffle->value != "off" && whole.passes_per_rank &&
      block != round_robin) {
    FixedShuffledShard(block, world, out);
    return;
  }
  if (shuffle == nullptr || shuffle->value != "off") {
    Unset(out, "reader.sharding", "block",
          "files are shuffled and hold one sample each: block and round robin look alike");
    return;
  }
  if (block != round_robin) {
    Set(out, "reader.sharding", block ? "block" : "round_robin", FitConfidence::kMedium,
        StrCat("files read in name order; each rank reads ",
               block ? "a run of consecutive files" : "every ",
               block ? "" : StrCat(world, "th file")));
  } else {
    Unset(out, "reader.sharding", "block", "which rank read which file fits neither mode alone");
  }
}

// A trace of several ranks that reads no data: each rank's saves fitted on their own, merged as
// MergeCheckpoint does. InvalidArgument when no rank writes a checkpoint.
Result<FitResult> FitCheckpointRanks(const ProfileTrace& trace, const FitOptions& options,
                                     const RankGroups& groups, int32_t world, FitResult* out) {
  std::vector<RankFit> ranks;
  for (const auto& [rank, pids] : groups.pids) {
    RankFit r;
    r.rank = rank;
    const ProfileTrace sub = SubTrace(trace, pids);
    DLIO_RETURN_NOT_OK(CollectFiles(sub, options, &r.view));
    // A rank that writes nothing is no writer: its error is not the run's.
    if (FitCheckpointOnly(sub, r.view, options, &r.out).ok()) ranks.push_back(std::move(r));
  }
  if (ranks.empty()) {
    // Nothing written by any one rank: the whole trace's error.
    View whole;
    DLIO_RETURN_NOT_OK(CollectFiles(trace, options, &whole));  // the noise to leave out
    DLIO_RETURN_NOT_OK(FitCheckpointOnly(trace, whole, options, out));
    return *out;
  }
  for (const char* key : {"workflow.generate_data", "workflow.train"}) {
    if (const FitEntry* e = ranks.front().out.Find(key)) Put(out, *e);
  }
  MergeCheckpoint(ranks, ranks.front(), world, out);
  for (const FitEntry& e : ranks.front().out.entries) {
    if (out->Find(e.key) == nullptr) Put(out, e);  // num_checkpoints_write, time_between_...
  }
  out->notes.push_back(StrCat(trace.size(), " events of ", world,
                              " ranks; no data file read: checkpoint writes only, per rank"));
  AddNoiseNotes(ranks.front().view.noise, out);
  return *out;
}

}  // namespace

RankGroups GroupRanks(const ProfileTrace& trace) {
  RankGroups g;
  std::set<int32_t> pids(trace.pid.begin(), trace.pid.end());
  for (int32_t pid : pids) {
    auto r = trace.ranks.find(pid);
    if (r == trace.ranks.end()) {
      g.unranked.insert(pid);
    } else {
      g.pids[r->second].insert(pid);
    }
  }
  return g;
}

ProfileTrace SubTrace(const ProfileTrace& trace, const std::set<int32_t>& pids) {
  ProfileTrace sub;
  size_t n = 0;
  for (int32_t p : trace.pid) n += pids.count(p);
  sub.Reserve(n);
  for (size_t i = 0; i < trace.size(); ++i) {
    if (pids.count(trace.pid[i])) sub.Add(trace.Get(i));
  }
  for (int32_t p : pids) {
    if (auto it = trace.process_names.find(p); it != trace.process_names.end())
      sub.process_names[p] = it->second;
    if (auto it = trace.ranks.find(p); it != trace.ranks.end()) sub.ranks[p] = it->second;
  }
  for (const auto& [key, name] : trace.thread_names) {
    if (pids.count(key.first)) sub.thread_names[key] = name;
  }
  return sub;
}

Result<FitResult> FitRanks(const ProfileTrace& trace, const FitOptions& options,
                           const RankGroups& groups) {
  View whole;
  FitResult out;
  DLIO_RETURN_NOT_OK(FitGlobal(trace, options, &whole, &out));
  const int32_t world = groups.pids.rbegin()->first + 1;
  out.ranks = world;
  if (whole.files.empty()) return FitCheckpointRanks(trace, options, groups, world, &out);
  FitResult epochs;
  FitTrain(whole, &epochs);
  Put(&out, *epochs.Find("train.epochs"));
  std::vector<RankFit> ranks;
  for (const auto& [rank, pids] : groups.pids) {
    DLIO_ASSIGN_OR_RETURN(RankFit r, FitOneRank(trace, options, whole, out, world, rank, pids));
    ranks.push_back(std::move(r));
  }
  // Each rank's thread count is a lower bound (a fast thread may read a whole pass): the rank
  // that shows the most readers speaks for all, the lowest such rank on a tie.
  const RankFit* ref = &ranks.front();
  int64_t most = -1;
  for (const RankFit& r : ranks) {
    const FitEntry* t = r.out.Find("reader.read_threads");
    const int64_t n = r.view.accesses.empty() ? -2 : EntryInt(t, -1);
    if (n > most) {
      most = n;
      ref = &r;
    }
  }
  MergeReader(ranks, *ref, &out);
  out.request_model = ref->out.request_model;
  MergeCheckpoint(ranks, *ref, world, &out);
  std::map<int32_t, int32_t> rank_of;
  for (const auto& [rank, pids] : groups.pids) {
    for (int32_t p : pids) rank_of[p] = rank;
  }
  FitSharding(whole, rank_of, world, &out);
  std::vector<int32_t> idle, present;
  for (const RankFit& r : ranks) {
    present.push_back(r.rank);
    if (r.view.accesses.empty()) idle.push_back(r.rank);
  }
  out.notes.push_back(StrCat(world, " ranks (", present.size(), " traced: ", RankList(present),
                             "): files, samples and epochs from all of them; reader, compute and "
                             "side reads from rank ",
                             ref->rank, "'s events"));
  if (static_cast<int32_t>(present.size()) < world) {
    out.notes.push_back(StrCat("ranks missing from the trace: ", world - present.size()));
  }
  if (!idle.empty()) out.notes.push_back(StrCat("ranks that read no data: ", RankList(idle)));
  if (!groups.unranked.empty()) {
    out.notes.push_back(StrCat(groups.unranked.size(),
                               " processes name no rank: counted in the global values only"));
  }
  AddViewNotes(trace, whole, &out);
  return out;
}

}  // namespace dlio::fit
