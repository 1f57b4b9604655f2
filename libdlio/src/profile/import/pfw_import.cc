// Importer of dlio's .pfw / .pfw.gz trace files (Chrome trace events, one per line).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dlio/profile.h"
#include "profile/import/import_check.h"
#include "profile/import/json_cursor.h"
#include "profile/import/line_reader.h"
#include "profile/import/trace_importer.h"
#include "trace/pfw_codec.h"

namespace dlio {
namespace {

using profile_internal::ImportCheck;
using profile_internal::JsonCursor;
using profile_internal::LineReader;

// The fields of one line; string_views point into the line or into the scratch strings.
struct PfwLine {
  std::string_view name, cat, ph, fname, meta_name;
  std::string fhash, meta_value;  // DFTracer: file-name hash of an event; "value" of an FH event
  int64_t pid = 0, tid = 0, ts = 0, dur = 0;
  int64_t count = -1, offset = -1, ret = -1, faults = -1, run_delay = -1, shm = -1;
  std::string s_name, s_cat, s_ph, s_fname, s_meta, s_key;
};

// Strips whitespace, a leading "[" or trailing "]" and the trailing "," of the array format.
std::string_view TrimLine(std::string_view line) {
  auto trim = [&] {
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  };
  trim();
  if (!line.empty() && line.front() == '[') line.remove_prefix(1);
  trim();
  // Some DFTracer versions start every event but the first with the array's ",".
  if (!line.empty() && line.front() == ',') line.remove_prefix(1);
  trim();
  if (!line.empty() && line.back() == ']') line.remove_suffix(1);
  trim();
  if (!line.empty() && line.back() == ',') line.remove_suffix(1);
  trim();
  return line;
}

// A DFTracer hash, written as a string or a number, as a string.
bool HashString(JsonCursor* c, std::string* out, std::string* scratch) {
  if (c->Peek() == '"') {
    std::string_view v;
    if (!c->String(&v, scratch)) return false;
    out->assign(v);
    return true;
  }
  int64_t n = 0;
  if (!c->Number(&n)) return false;
  *out = std::to_string(n);
  return true;
}

// Newer DFTracer writes "ph" as an integer, its TracePhaseType (dftracer
// src/dftracer/core/common/enumeration.h, "On-disk format: append-only"): 1 COMPLETE ("X"),
// 2 COUNTER ("C"), 3 AGGREGATED (new, no letter), 4 METADATA ("M"), 0 UNKNOWN. Mapped to the
// letters; phases without one keep a name that no branch below takes (counted as skipped).
std::string_view IntegerPhase(int64_t n) {
  switch (n) {
    case 1:
      return "X";
    case 2:
      return "C";
    case 3:
      return "#aggregated";
    case 4:
      return "M";
    default:
      return "#unknown";
  }
}

// The keys the importer reads (dlio's writers name theirs in trace/pfw_codec.h; "fhash", "value"
// and "size" are DFTracer's); everything else is skipped. A key of up to 8 bytes is packed
// into an integer and compared as one (no memcmp calls on the hot path).
enum class Key {
  kOther,
  kName,
  kCat,
  kPh,
  kPid,
  kTid,
  kTs,
  kDur,
  kArgs,
  kFname,
  kFhash,
  kValue,
  kCount,
  kOffset,
  kRet,
  kFaults,
  kRunDelay,
  kShm
};

constexpr uint64_t Pack(std::string_view k) {
  uint64_t v = 0;
  for (size_t i = 0; i < k.size(); ++i) v |= uint64_t{static_cast<unsigned char>(k[i])} << (8 * i);
  return v | uint64_t{k.size()} << 56;  // keys are shorter than 8 bytes
}

Key KeyOf(std::string_view k) {
  if (k.size() > 7) return Key::kOther;
  switch (Pack(k)) {
    case Pack(pfw::kName):
      return Key::kName;
    case Pack(pfw::kCat):
      return Key::kCat;
    case Pack(pfw::kPh):
      return Key::kPh;
    case Pack(pfw::kPid):
      return Key::kPid;
    case Pack(pfw::kTid):
      return Key::kTid;
    case Pack(pfw::kTs):
      return Key::kTs;
    case Pack(pfw::kDur):
      return Key::kDur;
    case Pack(pfw::kArgs):
      return Key::kArgs;
    case Pack(pfw::kFname):
      return Key::kFname;
    case Pack("fhash"):
      return Key::kFhash;
    case Pack("value"):
      return Key::kValue;
    case Pack(pfw::kCount):
    case Pack("size"):
      return Key::kCount;
    case Pack(pfw::kOffset):
      return Key::kOffset;
    case Pack(pfw::kRet):
      return Key::kRet;
    case Pack(pfw::kFaults):
      return Key::kFaults;
    case Pack(pfw::kRunDelay):
      return Key::kRunDelay;
    case Pack(pfw::kSharedCreated):
      return Key::kShm;
    default:
      return Key::kOther;
  }
}

bool ParseArgs(JsonCursor* c, PfwLine* l) {
  if (!c->Expect('{')) return false;
  if (c->Consume('}')) return true;
  do {
    std::string_view key;
    if (!c->String(&key, &l->s_key) || !c->Expect(':')) return false;
    bool ok = true;
    switch (KeyOf(key)) {
      case Key::kFname:
        ok = c->String(&l->fname, &l->s_fname);
        break;
      case Key::kName:
        ok = c->Peek() == '"' ? c->String(&l->meta_name, &l->s_meta) : c->SkipValue();
        break;
      case Key::kFhash:
        ok = HashString(c, &l->fhash, &l->s_key);
        break;
      case Key::kValue:
        ok = c->Peek() == '"' || (c->Peek() >= '0' && c->Peek() <= '9')
                 ? HashString(c, &l->meta_value, &l->s_key)
                 : c->SkipValue();
        break;
      case Key::kCount:
        ok = c->Number(&l->count);
        break;
      case Key::kOffset:
        ok = c->Number(&l->offset);
        break;
      case Key::kRet:
        ok = c->Number(&l->ret);
        break;
      case Key::kFaults:
        ok = c->Number(&l->faults);
        break;
      case Key::kRunDelay:
        ok = c->Number(&l->run_delay);
        break;
      case Key::kShm:
        ok = c->Number(&l->shm);
        break;
      default:
        ok = c->SkipValue();
        break;
    }
    if (!ok) return false;
  } while (c->Consume(','));
  return c->Expect('}');
}

bool ParsePhase(JsonCursor* c, PfwLine* l) {
  if (c->Peek() == '"') return c->String(&l->ph, &l->s_ph);
  int64_t n = 0;
  if (!c->Number(&n)) return false;
  l->ph = IntegerPhase(n);
  return true;
}

bool ParseEvent(JsonCursor* c, PfwLine* l) {
  if (!c->Expect('{')) return false;
  if (c->Consume('}')) return true;
  do {
    std::string_view key;
    if (!c->String(&key, &l->s_key) || !c->Expect(':')) return false;
    bool ok = true;
    switch (KeyOf(key)) {
      case Key::kName:
        ok = c->String(&l->name, &l->s_name);
        break;
      case Key::kCat:
        ok = c->String(&l->cat, &l->s_cat);
        break;
      case Key::kPh:
        ok = ParsePhase(c, l);
        break;
      case Key::kPid:
        ok = c->Number(&l->pid);
        break;
      case Key::kTid:
        ok = c->Number(&l->tid);
        break;
      case Key::kTs:
        ok = c->Number(&l->ts) && l->ts >= -kMaxTraceMicros && l->ts <= kMaxTraceMicros;
        break;
      case Key::kDur:
        ok = c->Number(&l->dur) && l->dur >= -kMaxTraceMicros && l->dur <= kMaxTraceMicros;
        break;
      case Key::kArgs:
        ok = ParseArgs(c, l);
        break;
      default:
        ok = c->SkipValue();
        break;
    }
    if (!ok) return false;
  } while (c->Consume(','));
  return c->Expect('}');
}

// What one import carries across lines. DFTracer names files by hash in events and maps
// hash -> name in "FH" metadata events, which may come after the events that use them:
// resolved when the file is read.
struct PfwState {
  std::unordered_map<std::string, std::string> names;             // hash -> path
  std::vector<std::pair<size_t, std::string>> unresolved_events;  // event index, hash
  // Newer DFTracer writes ts/dur in DFTRACER_TIME_METRIC units and says which in a "CM"
  // metadata event {"name":"time_metric","value":"US"|"NS"|"MS"|"SEC"}; empty: microseconds.
  std::string time_metric;
  // The last call name and category seen, their ids and the call's kind: events come in runs
  // of the same call, which then cost one compare instead of a hash lookup.
  std::string last_name, last_cat;
  int32_t name_id = ProfileTrace::kNoString, cat_id = ProfileTrace::kNoString;
  OpKind kind = OpKind::kOther;

  void Name(std::string_view name, ProfileTrace* trace) {
    if (name_id == ProfileTrace::kNoString || name != last_name) {
      last_name.assign(name);
      name_id = trace->Intern(name);
      kind = OpKindOfCall(name);
    }
  }
  int32_t Category(std::string_view cat, ProfileTrace* trace) {
    if (cat_id == ProfileTrace::kNoString || cat != last_cat) {
      last_cat.assign(cat);
      cat_id = trace->Intern(cat);
    }
    return cat_id;
  }
};

// Scales ts/dur of events [first, end) from `metric` units to microseconds.
Status ScaleTimes(const std::string& path, const std::string& metric, size_t first,
                  ProfileTrace* trace) {
  int64_t mul = 1, div = 1;
  if (metric == "NS") {
    div = 1000;
  } else if (metric == "MS") {
    mul = 1000;
  } else if (metric == "SEC") {
    mul = 1000000;
  } else if (!metric.empty() && metric != "US") {
    return Status::Corruption("trace ", path, ": unknown DFTracer time_metric '", metric, "'");
  }
  if (mul == 1 && div == 1) return Status::OK();
  for (size_t i = first; i < trace->size(); ++i) {
    if (std::max(std::abs(trace->start_us[i]), std::abs(trace->dur_us[i])) >
        kMaxTraceMicros / mul) {
      return Status::Corruption("trace ", path, ": a time of event ", i - first + 1,
                                " exceeds 2^53 us once scaled from ", metric);
    }
    trace->start_us[i] = trace->start_us[i] * mul / div;
    trace->dur_us[i] = trace->dur_us[i] * mul / div;
  }
  return Status::OK();
}

void Store(const PfwLine& l, int64_t line, ProfileTrace* trace, ImportStats* stats,
           PfwState* hashes, ImportCheck* check) {
  int32_t pid = 0, tid = 0;
  if (!check->Id(l.pid, "pid", line, &pid) || !check->Id(l.tid, "tid", line, &tid)) return;
  if (l.ph == "M") {
    ++stats->metadata_events;
    if (l.name == "FH" && !l.meta_value.empty()) {
      hashes->names[l.meta_value] = std::string(l.meta_name);
    }
    if (l.name == pfw::kProcessName) {
      trace->process_names[pid] = std::string(l.meta_name);
      const int32_t rank = RankOfProcessName(l.meta_name);
      if (rank >= 0) trace->ranks[pid] = rank;
    }
    if (l.name == "CM" && l.meta_name == "time_metric") hashes->time_metric = l.meta_value;
    if (l.name == pfw::kThreadName) trace->thread_names[{pid, tid}] = std::string(l.meta_name);
    return;
  }
  if (l.ph != "X") {
    ++stats->skipped;
    return;
  }
  ProfileEvent e;
  e.pid = pid;
  e.tid = tid;
  e.start_us = l.ts;
  e.dur_us = l.dur;
  e.offset = l.offset;
  e.size = l.count;
  e.ret = l.ret;
  e.faults = l.faults;
  e.run_delay_us = l.run_delay;
  e.shm_created = std::max<int64_t>(l.shm, 0);
  if (!check->Event(&e, line)) return;
  if (l.cat == kStdioKernelCategory &&
      (l.name == kStdioKernelRead || l.name == kStdioKernelWrite)) {
    trace->stdio_kernel.push_back({pid, tid, trace->Intern(l.fname), e.start_us, e.dur_us, e.offset,
                                   e.size, e.ret, l.name == kStdioKernelWrite});
    ++stats->stdio_kernel;
    return;
  }
  hashes->Name(l.name, trace);
  e.kind = hashes->kind;
  if (l.fname.empty() && !l.fhash.empty()) {
    hashes->unresolved_events.emplace_back(trace->size(), l.fhash);
  }
  trace->AddInterned(e, hashes->name_id, hashes->Category(l.cat, trace),
                     l.fname.empty() ? ProfileTrace::kNoString : trace->Intern(l.fname));
  ++stats->events;
}

// A DFTracer metadata record, judged from its text (it did not parse). Its writer prints these
// fields in this order ("name", "cat":"dftracer", ..., "ph":"M"), see PerfettoChromeWriterBase.
bool IsDfTracerMetadata(std::string_view line) {
  return line.find("\"cat\":\"dftracer\"") != std::string_view::npos &&
         line.find("\"ph\":\"M\"") != std::string_view::npos;
}

}  // namespace

int32_t RankOfProcessName(std::string_view name) {
  auto digits = [](std::string_view s) {
    size_t n = 0;
    while (n < s.size() && n < 9 && s[n] >= '0' && s[n] <= '9') ++n;
    return n;
  };
  auto number = [](std::string_view s) {
    int32_t v = 0;
    for (char c : s) v = v * 10 + (c - '0');
    return v;
  };
  constexpr std::string_view kDlio = "dlio rank ";
  if (name.rfind(kDlio, 0) == 0) {
    const std::string_view rest = name.substr(kDlio.size());
    const size_t n = digits(rest);
    if (n > 0 && (n == rest.size() || rest[n] == ' ')) return number(rest.substr(0, n));
    return -1;
  }
  constexpr std::string_view kSuffix = " (rank ";
  const size_t at = name.rfind(kSuffix);
  if (at == std::string_view::npos || name.back() != ')') return -1;
  const std::string_view inner = name.substr(at + kSuffix.size());
  const size_t n = digits(inner);
  return n > 0 && n + 1 == inner.size() ? number(inner.substr(0, n)) : -1;
}

namespace profile_internal {

bool SniffPfw(std::string_view head) {
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b) {
    return true;  // gzip
  }
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return false;
  // "[pid N] ..." is strace without -o; any other "[" or "{" opens JSON.
  return head.compare(first, 4, "[pid") != 0 && (head[first] == '[' || head[first] == '{');
}

}  // namespace profile_internal

Result<ImportStats> ImportPfw(const std::string& path, ProfileTrace* trace) {
  LineReader reader;
  DLIO_RETURN_NOT_OK(reader.Open(path));
  const size_t first_event = trace->size();
  // Lines are rarely shorter than 64 bytes and trace text compresses less than 16x; reserved
  // pages that are never touched cost no memory.
  if (reader.file_size() > 0) {
    const int64_t guess = reader.file_size() / (reader.gzip() ? 4 : 64);
    trace->Reserve(first_event + static_cast<size_t>(std::min<int64_t>(guess, int64_t{1} << 28)));
  }
  ImportStats stats;
  ImportCheck check("trace " + path, &stats);
  PfwState hashes;
  Status pending_error;
  PfwLine l;
  std::string_view raw;
  while (reader.Next(&raw)) {
    ++stats.lines;
    const std::string_view line = TrimLine(raw);
    if (line.empty()) continue;
    l.name = l.cat = l.ph = l.fname = l.meta_name = {};
    l.pid = l.tid = l.ts = l.dur = 0;
    l.count = l.offset = l.ret = l.faults = l.run_delay = l.shm = -1;
    l.fhash.clear();
    l.meta_value.clear();
    DLIO_RETURN_NOT_OK(pending_error);  // a malformed line that was not the last
    JsonCursor c(line);
    if (!ParseEvent(&c, &l)) {
      if (c.too_deep()) {  // not a line cut short: refused wherever it is
        return Status::Corruption("trace ", path, " line ", reader.line_number(), ": ", c.error());
      }
      if (IsDfTracerMetadata(line)) {
        ++stats.malformed_metadata;  // names no I/O: nothing is lost
        continue;
      }
      pending_error = Status::Corruption("trace ", path, " line ", reader.line_number(),
                                         ": malformed event: ", c.error());
      continue;
    }
    if (!c.AtEnd()) {
      return Status::Corruption("trace ", path, " line ", reader.line_number(),
                                ": text after the event at column ", c.column());
    }
    Store(l, reader.line_number(), trace, &stats, &hashes, &check);
  }
  DLIO_RETURN_NOT_OK(reader.status());
  // The last line of a process killed mid-write is cut short: skipped and counted.
  if (!pending_error.ok()) ++stats.truncated_lines;
  for (const auto& [index, hash] : hashes.unresolved_events) {
    auto it = hashes.names.find(hash);
    trace->path[index] = trace->Intern(it != hashes.names.end() ? it->second : "fhash:" + hash);
  }
  DLIO_RETURN_NOT_OK(ScaleTimes(path, hashes.time_metric, first_event, trace));
  return stats;
}

}  // namespace dlio
