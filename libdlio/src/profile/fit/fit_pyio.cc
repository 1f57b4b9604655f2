// FitTrace: whether the data files are read front to back through Python's buffered file
// (reader.io_model pyio), and with which calls: each file's reads, open to close, held against
// the requests io_model pyio makes (FitOptions::pyio_requests) for candidate calls.
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "dlio/config_enums.h"
#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

// Files larger than this are not simulated (a candidate's emulation reads the file's size).
constexpr uint64_t kMaxSimulatedBytes = uint64_t{64} << 20;
constexpr size_t kSessionsChecked = 16;
// The buffer of the traced program's files (st_blksize of a local file system; FitOptions'
// pyio_requests simulates the same).
constexpr uint64_t kPythonBuffer = 4096;
// The size of the calls a tail read in small calls is emulated with: any size under the buffer
// makes the same requests (one buffer fill each time the buffer runs out).
constexpr uint64_t kSmallCallBytes = 64;

// One open-to-close run of one thread's reads of one data file.
struct Session {
  int32_t file = 0;
  std::vector<ReadRequest> reads;
};

// The first complete sessions of the training files (at most kSessionsChecked).
std::vector<Session> CompleteSessions(const ProfileTrace& t, const View& view) {
  std::map<std::string, int32_t> index_of;
  for (size_t f = 0; f < view.files.size(); ++f) {
    index_of[view.files[f].path] = static_cast<int32_t>(f);
  }
  std::map<std::tuple<int32_t, int32_t, int32_t>, Session> open;
  std::vector<Session> done;
  for (size_t i : view.data_events) {
    if (done.size() >= kSessionsChecked) break;
    const auto key = std::make_tuple(t.pid[i], t.tid[i], t.path[i]);
    const auto f = index_of.find(std::string(t.String(t.path[i])));
    if (f == index_of.end() || view.files[static_cast<size_t>(f->second)].valid) continue;
    if (t.kind[i] == OpKind::kOpen) {
      open[key] = Session{f->second, {}};
    } else if (t.kind[i] == OpKind::kClose) {
      const auto s = open.find(key);
      if (s == open.end()) continue;
      if (!s->second.reads.empty()) done.push_back(std::move(s->second));
      open.erase(s);
    } else if (t.kind[i] == OpKind::kRead && open.count(key) > 0) {
      if (t.offset[i] < 0 || t.size_bytes[i] < 0) {
        open.erase(key);  // a read at an unknown offset: nothing to hold against
        continue;
      }
      open[key].reads.emplace_back(static_cast<uint64_t>(t.offset[i]),
                                   static_cast<uint64_t>(t.size_bytes[i]));
    }
  }
  return done;
}

int TrailingZeros(uint64_t v) { return v == 0 ? 64 : __builtin_ctzll(v); }

// Call sizes worth trying for a session's reads: 0 (one call for the rest), each request size,
// and the bytes of a few consecutive requests over 1-4 calls (read(n) splits a call into whole
// buffers and a fill); round sizes first.
std::vector<uint64_t> CandidateSizes(const std::vector<ReadRequest>& reads) {
  std::set<uint64_t> sizes;
  for (const ReadRequest& r : reads) sizes.insert(r.second);
  for (size_t a = 0; a < std::min<size_t>(2, reads.size()); ++a) {
    uint64_t total = 0;
    for (size_t b = a; b < std::min(a + 6, reads.size()); ++b) {
      total += reads[b].second;
      for (uint64_t k = 1; k <= 4; ++k) {
        if (total % k == 0) sizes.insert(total / k);
      }
    }
  }
  sizes.erase(0);
  std::vector<uint64_t> out(sizes.begin(), sizes.end());
  std::stable_sort(out.begin(), out.end(),
                   [](uint64_t x, uint64_t y) { return TrailingZeros(x) > TrailingZeros(y); });
  out.insert(out.begin(), 0);
  return out;
}

// A tail after one call for the rest: its bytes and the size of the calls that read it (0: one).
struct Tail {
  uint64_t bytes = 0, call = 0;
};

// Tails worth trying after the body (one call for the rest, or calls of a size): none; the bytes
// from a session's last read to the end when that read asks past the end from less than a buffer
// before it (a last f.read(n) of a trailer, as pickle's opcodes after an array: its buffer fill
// finds the end); and the bytes from the first of the session's last buffer fills in a row (two or
// more, the last one reaching the end) to the end, read in calls smaller than the buffer (pickle's
// many small opcodes after its array: a list of labels or file names).
std::vector<Tail> CandidateTails(const std::vector<ReadRequest>& reads, uint64_t extent) {
  std::vector<Tail> tails = {{}};
  if (reads.size() < 2) return tails;
  const ReadRequest& last = reads.back();
  if (last.first >= extent || last.first + last.second < extent) return tails;
  if (extent - last.first < kPythonBuffer) tails.push_back({extent - last.first, 0});
  size_t first = reads.size() - 1;
  while (first > 1 && reads[first - 1].second == kPythonBuffer &&
         reads[first - 1].first + kPythonBuffer == reads[first].first) {
    --first;
  }
  if (first + 1 < reads.size()) tails.push_back({extent - reads[first].first, kSmallCallBytes});
  return tails;
}

std::string DescribeCalls(const PyioCalls& c);

std::string Describe(const PyioCalls& c) {
  if (c.end_reads == 0) return DescribeCalls(c);
  return StrCat(DescribeCalls(c), ", then ", c.end_reads, " f.read(1) at the end (each finds it)");
}

std::string DescribeCalls(const PyioCalls& c) {
  const std::string call(EnumName(c.call));
  const bool readinto = c.call == PyioCall::kReadinto;
  const std::string head = c.head_bytes > 0 ? StrCat("f.read(", c.head_bytes, "), then ") : "";
  if (c.crop_bytes > 0) {
    return StrCat(head, "f.seek to an offset that differs from read to read, then ",
                  readinto ? "f.readinto of a buffer of " : "f.read(", c.crop_bytes,
                  readinto ? " bytes" : ")",
                  " (a random crop: the wave module's setpos and "
                  "readframes)");
  }
  if (c.tail_bytes > 0) {
    const std::string body =
        c.read_size > 0 ? StrCat(readinto ? "f.readinto of buffers of " : "f.read(", c.read_size,
                                 readinto ? " bytes" : ")", " (the last call what is left)")
                        : std::string(readinto ? "f.readinto of a buffer" : "f.read(n)");
    return StrCat(head, body, " of all but the last ", c.tail_bytes, " bytes, then ",
                  c.tail_read_size > 0
                      ? StrCat("calls smaller than the buffer for them (f.read(", c.tail_read_size,
                               ") until they are read: a pickle's small opcodes)")
                      : StrCat("f.read(", c.tail_bytes, ")"));
  }
  if (c.read_size == 0) {
    return head + (readinto ? "f.readinto of a buffer holding the rest" : "f.read()");
  }
  return StrCat(head, "f.", call, "(", c.read_size, ") until it returns nothing");
}

// `reads` without those at or past `extent`.
std::vector<ReadRequest> BeforeEnd(std::vector<ReadRequest> reads, uint64_t extent) {
  reads.erase(std::remove_if(reads.begin(), reads.end(),
                             [extent](const ReadRequest& r) { return r.first >= extent; }),
              reads.end());
  return reads;
}

// Whether `simulated` are a session's `reads`: exactly, or (PyioMatch::kBeforeEnd) before the
// file's end: the reads at or past it are left out of both, the session making at least as many
// of them. Those return nothing, and how many a stack makes depends on its layers, not on the
// calls: gzip.open's reader over a buffered file probes the end 5 or 6 times (its header parse,
// its text layer's retries) where one loop of calls finds it once or twice. A session making fewer
// (a C loop that stops at its short read) is read by other calls than these.
bool SameRequests(const std::vector<ReadRequest>& simulated, const std::vector<ReadRequest>& reads,
                  uint64_t extent, PyioMatch how) {
  if (how == PyioMatch::kExact) return simulated == reads;
  std::vector<ReadRequest> sim = BeforeEnd(simulated, extent), real = BeforeEnd(reads, extent);
  return simulated.size() - sim.size() <= reads.size() - real.size() && sim == real;
}

// How many more reads of the end the sessions read as `calls` (before the end) make than the calls
// do: the mean over those sessions of their reads at or past the end less the calls', rounded (0
// when the calls make as many or more). Sessions read otherwise say nothing of these calls.
template <typename Extent>
uint64_t EndReadsMissing(const std::vector<Session>& sessions, const PyioCalls& calls,
                         const Extent& extent, const PyioRequestsOf& requests) {
  auto at_end = [](const std::vector<ReadRequest>& reads, uint64_t end) {
    return static_cast<int64_t>(std::count_if(
        reads.begin(), reads.end(), [end](const ReadRequest& r) { return r.first >= end; }));
  };
  int64_t more = 0, n = 0;
  for (const Session& s : sessions) {
    if (extent(s) > kMaxSimulatedBytes) continue;
    const std::vector<ReadRequest> simulated = requests(extent(s), calls);
    if (!SameRequests(simulated, s.reads, extent(s), PyioMatch::kBeforeEnd)) continue;
    more += at_end(s.reads, extent(s)) - at_end(simulated, extent(s));
    ++n;
  }
  return more <= 0 || n == 0 ? 0 : static_cast<uint64_t>((more + n / 2) / n);
}

// How many of `sessions` read as `calls` make a file of their extent read.
template <typename Extent>
size_t SessionsMatching(const std::vector<Session>& sessions, const PyioCalls& calls,
                        const Extent& extent, const PyioRequestsOf& requests, PyioMatch how) {
  size_t match = 0;
  for (const Session& s : sessions) {
    match += extent(s) <= kMaxSimulatedBytes &&
             SameRequests(requests(extent(s), calls), s.reads, extent(s), how);
  }
  return match;
}

ModelGuess PyioGuess(const PyioCalls& calls, size_t match, size_t sessions,
                     PyioMatch how = PyioMatch::kExact) {
  ModelGuess g{"pyio", FitConfidence::kMedium,
               StrCat("each file is read ", calls.crop_bytes > 0 ? "" : "front to back ",
                      "through Python's buffered file: ", match, " of ", sessions,
                      " open-to-close reads are, request for request",
                      how == PyioMatch::kBeforeEnd
                          ? " up to the file's end (the reads that find the end return "
                            "nothing and are set aside: how often a program probes the end "
                            "depends on its layers of readers, not on these calls)"
                          : "",
                      ", ", Describe(calls))};
  g.keys = {{"reader.pyio_head_bytes", std::to_string(calls.head_bytes)},
            {"reader.pyio_read_size", std::to_string(calls.read_size)},
            {"reader.pyio_call", std::string(EnumName(calls.call))}};
  if (calls.tail_bytes > 0) {
    g.keys.emplace_back("reader.pyio_tail_bytes", std::to_string(calls.tail_bytes));
  }
  if (calls.tail_read_size > 0) {
    g.keys.emplace_back("reader.pyio_tail_read_size", std::to_string(calls.tail_read_size));
  }
  if (calls.crop_bytes > 0) {
    g.keys.emplace_back("reader.pyio_crop_bytes", std::to_string(calls.crop_bytes));
  }
  if (calls.end_reads > 0) {
    g.keys.emplace_back("reader.pyio_end_reads", std::to_string(calls.end_reads));
  }
  return g;
}

// The crop a session's reads make after a head of `head` bytes (0, or a head served by one fill of
// the buffer at 0): where its first read past the head begins and the calls' sizes worth trying
// (readinto's exact size, the total of its reads; read(n)'s largest n with those requests: the
// total less one, whole buffers straight and one fill).
struct CropCandidate {
  uint64_t at = 0;
  std::vector<std::pair<PyioCall, uint64_t>> calls;
};
std::optional<CropCandidate> CropOf(const Session& s, uint64_t head) {
  size_t first = 0;
  if (head > 0) {
    if (s.reads.empty() || s.reads.front().first != 0 || s.reads.front().second != kPythonBuffer)
      return std::nullopt;
    first = 1;
  }
  if (first >= s.reads.size() || s.reads[first].first < kPythonBuffer) return std::nullopt;
  uint64_t total = 0;
  for (size_t k = first; k < s.reads.size(); ++k) total += s.reads[k].second;
  CropCandidate c{s.reads[first].first, {{PyioCall::kRead, total - 1}}};
  c.calls.emplace_back(PyioCall::kReadinto, total);
  return c;
}

// Sessions that each read a head, then one crop at an offset of their own (seek, one call): the
// same calls in at least 80% of them, each simulated at its own offset.
std::optional<ModelGuess> GuessCrop(const std::vector<Session>& sessions,
                                    const std::function<uint64_t(const Session&)>& extent,
                                    const PyioRequestsOf& requests) {
  std::set<uint64_t> offsets;
  for (const Session& s : sessions) {
    if (!s.reads.empty()) offsets.insert(s.reads.back().first);
  }
  if (sessions.size() < 2 || offsets.size() * 2 < sessions.size()) return std::nullopt;
  const Session& first = sessions.front();
  for (const uint64_t head : {uint64_t{0}, uint64_t{128}}) {
    const std::optional<CropCandidate> crop = CropOf(first, head);
    if (!crop) continue;
    for (const auto& [call, bytes] : crop->calls) {
      if (bytes == 0) continue;
      size_t match = 0;
      for (const Session& s : sessions) {
        const std::optional<CropCandidate> own = CropOf(s, head);
        if (!own || extent(s) > kMaxSimulatedBytes || extent(s) < own->at + bytes) continue;
        const PyioCalls calls{head, 0, call, 0, 0, bytes, own->at};
        match += requests(extent(s), calls) == s.reads;
      }
      if (match * 10 < sessions.size() * 8) continue;
      return PyioGuess(PyioCalls{head, 0, call, 0, 0, bytes, 0}, match, sessions.size());
    }
  }
  return std::nullopt;
}

// Sessions that each read the whole file with one set of calls (the first session's candidates,
// then at least 80% of them matching).
std::optional<ModelGuess> GuessWholeFile(const std::vector<Session>& sessions,
                                         const std::function<uint64_t(const Session&)>& extent,
                                         const PyioRequestsOf& requests, PyioMatch how) {
  const Session& first = sessions.front();
  const std::vector<Tail> tails =
      CandidateTails(how == PyioMatch::kExact ? first.reads : BeforeEnd(first.reads, extent(first)),
                     extent(first));
  for (const uint64_t size : CandidateSizes(first.reads)) {
    for (const Tail& tail : tails) {
      for (const uint64_t head : {uint64_t{0}, uint64_t{128}}) {
        for (const PyioCall call : {PyioCall::kRead, PyioCall::kReadinto, PyioCall::kRead1}) {
          if (call == PyioCall::kRead1 && (size == 0 || tail.bytes > 0)) continue;  // chunks
          const PyioCalls calls{head, size, call, tail.bytes, tail.call};
          if (!SameRequests(requests(extent(first), calls), first.reads, extent(first), how)) {
            continue;
          }
          const size_t match = SessionsMatching(sessions, calls, extent, requests, how);
          if (match * 10 < sessions.size() * 8) continue;
          if (how == PyioMatch::kExact) return PyioGuess(calls, match, sessions.size(), how);
          PyioCalls probing = calls;
          probing.end_reads = EndReadsMissing(sessions, calls, extent, requests);
          return PyioGuess(probing, match, sessions.size(), how);
        }
      }
    }
  }
  return std::nullopt;
}

// One data read that followed a seek of its thread to its own offset (Python's f.seek, which
// reaches the kernel when the target is not buffered), on a training file.
struct SeekedRead {
  int32_t file = 0;
  uint64_t offset = 0, size = 0;
};

// The training files' reads that follow such a seek, and how many reads the training files had.
std::pair<std::vector<SeekedRead>, size_t> SeekedReads(const ProfileTrace& t, const View& view) {
  std::map<int32_t, int32_t> file_of;  // path id -> training file
  for (size_t i : view.data_events) {
    if (file_of.count(t.path[i]) > 0) continue;
    for (size_t f = 0; f < view.files.size(); ++f) {
      if (!view.files[f].valid && view.files[f].path == t.String(t.path[i])) {
        file_of[t.path[i]] = static_cast<int32_t>(f);
      }
    }
  }
  std::map<std::tuple<int32_t, int32_t, int32_t>, int64_t> seek_to;  // (pid, tid, path) -> target
  std::vector<SeekedRead> seeked;
  size_t reads = 0;
  for (size_t i : view.data_events) {
    const auto f = file_of.find(t.path[i]);
    if (f == file_of.end()) continue;
    const auto key = std::make_tuple(t.pid[i], t.tid[i], t.path[i]);
    const auto pending = seek_to.find(key);
    const int64_t target = pending == seek_to.end() ? -1 : pending->second;
    seek_to.erase(key);
    if (t.kind[i] == OpKind::kSeek) {
      seek_to[key] = t.offset[i];
    } else if (t.kind[i] == OpKind::kRead) {
      ++reads;
      if (target >= 0 && t.offset[i] == target && t.size_bytes[i] > 0) {
        seeked.push_back(
            {f->second, static_cast<uint64_t>(target), static_cast<uint64_t>(t.size_bytes[i])});
      }
    }
  }
  return {std::move(seeked), reads};
}

// Of `reads` (at most kRecordsChecked of them, spread over all), how many begin as `call` of one
// `record` after f.seek to their offset does from an empty buffer, and how many of those are the
// record itself (what dlio's own reader requests).
struct RecordMatch {
  size_t checked = 0, match = 0, exact = 0;
};
constexpr size_t kRecordsChecked = 256;
RecordMatch MatchRecords(const std::vector<SeekedRead>& reads, const View& view, uint64_t record,
                         PyioCall call, const PyioRequestsOf& requests) {
  RecordMatch m;
  const size_t step = std::max<size_t>(1, reads.size() / kRecordsChecked);
  for (size_t k = 0; k < reads.size(); k += step) {
    const SeekedRead& r = reads[k];
    const auto extent = static_cast<uint64_t>(view.files[static_cast<size_t>(r.file)].extent);
    ++m.checked;
    if (extent > kMaxSimulatedBytes || r.offset + record > extent) continue;
    const std::vector<ReadRequest> made =
        requests(extent, PyioCalls{0, 0, call, 0, 0, record, r.offset});
    if (made.empty() || made.front() != ReadRequest{r.offset, r.size}) continue;
    ++m.match;
    m.exact += r.size == record;
  }
  return m;
}

}  // namespace

std::optional<ModelGuess> GuessPyioRecords(const ProfileTrace& t, const View& view,
                                           const PyioRequestsOf& requests) {
  if (!requests) return std::nullopt;
  const auto [seeked, reads] = SeekedReads(t, view);
  if (seeked.size() < kSessionsChecked || seeked.size() * 10 < reads * 8) return std::nullopt;
  uint64_t record = 0;  // the offsets' greatest common divisor
  for (const SeekedRead& r : seeked) record = std::gcd(record, r.offset);
  if (record == 0) return std::nullopt;
  for (const SeekedRead& r : seeked) {
    const int64_t extent = view.files[static_cast<size_t>(r.file)].extent;
    if (extent <= 0 || static_cast<uint64_t>(extent) % record != 0 ||
        static_cast<uint64_t>(extent) / record < 2) {
      return std::nullopt;
    }
  }
  for (const PyioCall call : {PyioCall::kRead, PyioCall::kReadinto}) {
    const RecordMatch m = MatchRecords(seeked, view, record, call, requests);
    if (m.match * 10 < m.checked * 8 || m.exact * 2 >= m.match) continue;
    ModelGuess g{
        "pyio", FitConfidence::kMedium,
        StrCat("files of ", record,
               "-byte records read through a Python file kept open: ", seeked.size(), " of ", reads,
               " data reads follow a seek to their own offset (offsets divisible by ", record,
               "), and ", m.match, " of ", m.checked, " checked are what f.seek(o); f.",
               EnumName(call), "(", record, ") requests from an empty buffer (", m.match - m.exact,
               " of them not the record alone)")};
    g.keys = {{"reader.pyio_call", std::string(EnumName(call))}};
    g.per_process_state = true;  // each process's Python file keeps its own buffer
    return g;
  }
  return std::nullopt;
}

std::optional<ModelGuess> GuessPyio(const ProfileTrace& t, const View& view,
                                    const PyioRequestsOf& requests, PyioMatch match) {
  if (!requests) return std::nullopt;
  const std::vector<Session> sessions = CompleteSessions(t, view);
  if (sessions.empty()) return std::nullopt;
  auto extent = [&](const Session& s) {
    return static_cast<uint64_t>(
        std::max<int64_t>(view.files[static_cast<size_t>(s.file)].extent, 0));
  };
  if (extent(sessions.front()) == 0 || extent(sessions.front()) > kMaxSimulatedBytes) {
    return std::nullopt;
  }
  if (auto g = GuessWholeFile(sessions, extent, requests, match)) return g;
  if (match == PyioMatch::kBeforeEnd || view.cropped_passes.empty()) return std::nullopt;
  return GuessCrop(sessions, extent, requests);
}

}  // namespace dlio::fit
