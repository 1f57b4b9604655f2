// Importer of dlio's .pfw / .pfw.gz trace files (Chrome trace events, one per line).
#include <string>

#include "dlio/profile.h"
#include "profile/json_cursor.h"
#include "profile/line_reader.h"

namespace dlio {
namespace {

using profile_internal::JsonCursor;
using profile_internal::LineReader;

// The fields of one line; string_views point into the line or into the scratch strings.
struct PfwLine {
  std::string_view name, cat, ph, fname, meta_name;
  int64_t pid = 0, tid = 0, ts = 0, dur = 0;
  int64_t count = -1, offset = -1, ret = -1;
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
  if (!line.empty() && line.back() == ']') line.remove_suffix(1);
  trim();
  if (!line.empty() && line.back() == ',') line.remove_suffix(1);
  trim();
  return line;
}

bool ParseArgs(JsonCursor* c, PfwLine* l) {
  if (!c->Expect('{')) return false;
  if (c->Consume('}')) return true;
  do {
    std::string_view key;
    if (!c->String(&key, &l->s_key) || !c->Expect(':')) return false;
    bool ok = true;
    if (key == "fname") {
      ok = c->String(&l->fname, &l->s_fname);
    } else if (key == "name") {
      ok = c->Peek() == '"' ? c->String(&l->meta_name, &l->s_meta) : c->SkipValue();
    } else if (key == "count" || key == "size") {
      ok = c->Number(&l->count);
    } else if (key == "offset") {
      ok = c->Number(&l->offset);
    } else if (key == "ret") {
      ok = c->Number(&l->ret);
    } else {
      ok = c->SkipValue();
    }
    if (!ok) return false;
  } while (c->Consume(','));
  return c->Expect('}');
}

bool ParseEvent(JsonCursor* c, PfwLine* l) {
  if (!c->Expect('{')) return false;
  if (c->Consume('}')) return true;
  do {
    std::string_view key;
    if (!c->String(&key, &l->s_key) || !c->Expect(':')) return false;
    bool ok = true;
    if (key == "name") {
      ok = c->String(&l->name, &l->s_name);
    } else if (key == "cat") {
      ok = c->String(&l->cat, &l->s_cat);
    } else if (key == "ph") {
      ok = c->String(&l->ph, &l->s_ph);
    } else if (key == "pid") {
      ok = c->Number(&l->pid);
    } else if (key == "tid") {
      ok = c->Number(&l->tid);
    } else if (key == "ts") {
      ok = c->Number(&l->ts);
    } else if (key == "dur") {
      ok = c->Number(&l->dur);
    } else if (key == "args") {
      ok = ParseArgs(c, l);
    } else {
      ok = c->SkipValue();
    }
    if (!ok) return false;
  } while (c->Consume(','));
  return c->Expect('}');
}

void Store(const PfwLine& l, ProfileTrace* trace, ImportStats* stats) {
  const auto pid = static_cast<int32_t>(l.pid);
  const auto tid = static_cast<int32_t>(l.tid);
  if (l.ph == "M") {
    ++stats->metadata_events;
    if (l.name == "process_name") trace->process_names[pid] = std::string(l.meta_name);
    if (l.name == "thread_name") trace->thread_names[{pid, tid}] = std::string(l.meta_name);
    return;
  }
  if (l.ph != "X") {
    ++stats->skipped;
    return;
  }
  ProfileEvent e;
  e.pid = pid;
  e.tid = tid;
  e.name = l.name;
  e.category = l.cat;
  e.path = l.fname;
  e.start_us = l.ts;
  e.dur_us = l.dur;
  e.offset = l.offset;
  e.size = l.count;
  e.ret = l.ret;
  e.kind = OpKindOfCall(l.name);
  trace->Add(e);
  ++stats->events;
}

}  // namespace

Result<ImportStats> ImportPfw(const std::string& path, ProfileTrace* trace) {
  LineReader reader;
  DLIO_RETURN_NOT_OK(reader.Open(path));
  ImportStats stats;
  PfwLine l;
  std::string_view raw;
  while (reader.Next(&raw)) {
    ++stats.lines;
    const std::string_view line = TrimLine(raw);
    if (line.empty()) continue;
    l.name = l.cat = l.ph = l.fname = l.meta_name = {};
    l.pid = l.tid = l.ts = l.dur = 0;
    l.count = l.offset = l.ret = -1;
    JsonCursor c(line);
    if (!ParseEvent(&c, &l)) {
      return Status::Corruption("trace ", path, " line ", reader.line_number(),
                                ": malformed event: ", c.error());
    }
    if (!c.AtEnd()) {
      return Status::Corruption("trace ", path, " line ", reader.line_number(),
                                ": text after the event at column ", c.column());
    }
    Store(l, trace, &stats);
  }
  DLIO_RETURN_NOT_OK(reader.status());
  return stats;
}

}  // namespace dlio
