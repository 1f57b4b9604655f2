// The .pfw line codec: the key names of dlio's trace lines (DFTracer's / Chrome's trace-event
// JSON, one object per line) and an encoder of event and metadata lines into a caller's buffer.
// Shared by the writers (libdlio's trace-file tracer, trace/trace_file_tracer.cc, and the
// LD_PRELOAD tracer, preload/trace/event_writer.cc) and named by the reader
// (profile/import/pfw_import.cc), so the three agree on every key.
//
// Header-only and async-signal-safe enough for the interposer: no allocation, no locale, no
// stdio or iostream, no exceptions; only stores into the caller's buffer, never past its end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

namespace dlio::pfw {

// Keys of an event object.
inline constexpr char kId[] = "id";
inline constexpr char kName[] = "name";
inline constexpr char kCat[] = "cat";
inline constexpr char kPid[] = "pid";
inline constexpr char kTid[] = "tid";
inline constexpr char kTs[] = "ts";    // start, wall-clock microseconds
inline constexpr char kDur[] = "dur";  // microseconds
inline constexpr char kPh[] = "ph";    // "X" complete event, "M" metadata
inline constexpr char kArgs[] = "args";
// Keys inside "args".
inline constexpr char kFname[] = "fname";
inline constexpr char kCount[] = "count";  // bytes requested
inline constexpr char kOffset[] = "offset";
inline constexpr char kRet[] = "ret";
// Minor page faults the calling thread took inside the call: the pages a read filled that were
// not in memory yet (fresh allocations). The LD_PRELOAD tracer writes it for data calls of
// kFaultsMinBytes or more; absent elsewhere.
inline constexpr char kFaults[] = "minflt";
inline constexpr int64_t kFaultsMinBytes = int64_t{16} << 10;
// The calling thread's run-queue delay so far, microseconds (the second field of Linux's
// /proc/thread-self/schedstat: time spent runnable but waiting for a CPU), read when the call
// ended. The LD_PRELOAD tracer writes it at most once per kRunDelayEveryUs of a thread's time
// (so always after a pause at least that long) where the kernel keeps schedstats; absent
// elsewhere.
inline constexpr char kRunDelay[] = "rqd";
inline constexpr int64_t kRunDelayEveryUs = 200;
// Shared-memory objects the calling thread created (shm_open with O_CREAT) since its previous
// traced call, written with the next traced call when at least 1: a PyTorch DataLoader worker
// collates each batch into a new one (docs/profiling.md, "Collates"). The LD_PRELOAD tracer
// writes it; absent elsewhere.
inline constexpr char kSharedCreated[] = "shm";
inline constexpr char kEpoch[] = "epoch";
inline constexpr char kStep[] = "step";
inline constexpr char kIndex[] = "index";
inline constexpr char kSortIndex[] = "sort_index";
// Names of metadata events ("ph":"M"); their "args" hold kName (or kSortIndex).
inline constexpr char kProcessName[] = "process_name";
inline constexpr char kThreadName[] = "thread_name";
inline constexpr char kProcessSortIndex[] = "process_sort_index";
inline constexpr char kMetadataCat[] = "dlio";

// `ret` of an event that is not a call (an AI span): no "ret" key is written.
inline constexpr int64_t kNoRet = std::numeric_limits<int64_t>::min();

// One complete event. Strings need not be terminated where a length is given; all are escaped.
struct Event {
  int64_t id = 0;
  const char* name = "";
  const char* cat = "";
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t ts_us = 0;
  int64_t dur_us = 0;
  const char* fname = nullptr;  // nullptr: no "fname"
  size_t fname_len = 0;
  bool fname_plain = false;  // the caller knows no byte of fname needs escaping: copied as is
  // Written when >= 0 (count, offset, epoch, step, index do not apply below 0).
  int64_t count = -1;
  int64_t offset = -1;
  // The call's return value, written whatever it is (a failure's -1 or -errno included) unless
  // kNoRet: every call has one, and a reader must tell a failed call from an event that is not
  // a call.
  int64_t ret = kNoRet;
  int64_t epoch = -1;
  int64_t step = -1;
  int64_t index = -1;
  int64_t faults = -1;     // kFaults
  int64_t run_delay = -1;  // kRunDelay
  int64_t shm = -1;        // kSharedCreated: written when >= 1
};

// What ends a line: the array separator, or the last object's close of the array.
inline constexpr char kLineEnd[] = ",\n";
inline constexpr char kLastLineEnd[] = "\n]\n";

// Appends to [p, end). Past the end nothing is stored and ok() turns false: the caller learns
// that its buffer was too small and keeps (or drops) what it had, never a partial line.
class Out {
 public:
  Out(char* begin, size_t cap) : begin_(begin), p_(begin), end_(begin + cap) {}

  bool ok() const { return ok_; }
  // Bytes written; 0 when the buffer was too small.
  size_t size() const { return ok_ ? static_cast<size_t>(p_ - begin_) : 0; }

  Out& Char(char c) {
    if (p_ == end_) {
      ok_ = false;
    } else {
      *p_++ = c;
    }
    return *this;
  }
  // Bytes written as they are (text known to need no escape).
  Out& Bytes(const char* s, size_t len) {
    if (!ok_ || len > static_cast<size_t>(end_ - p_)) {
      ok_ = false;
    } else {
      std::memcpy(p_, s, len);
      p_ += len;
    }
    return *this;
  }
  // A string written as is (keys, literals known to need no escape).
  Out& Raw(const char* s) {
    while (*s != '\0' && ok_) Char(*s++);
    return *this;
  }
  Out& Int(int64_t v) {
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    do {
      tmp[n++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u != 0);
    if (v < 0) Char('-');
    while (n > 0) Char(tmp[--n]);
    return *this;
  }
  // The JSON string body of s[0, len): '"' and '\\' escaped, control bytes as \u00XX, other
  // bytes (UTF-8 included) as they are.
  Out& Escaped(const char* s, size_t len) {
    static constexpr char kHex[] = "0123456789abcdef";
    for (size_t i = 0; i < len && ok_; ++i) {
      const auto u = static_cast<unsigned char>(s[i]);
      if (s[i] == '"' || s[i] == '\\') {
        Char('\\').Char(s[i]);
      } else if (u < 0x20) {
        Raw("\\u00").Char(kHex[u >> 4]).Char(kHex[u & 0xf]);
      } else {
        Char(s[i]);
      }
    }
    return *this;
  }
  Out& Escaped(const char* s) { return Escaped(s, Length(s)); }
  // "key": (the first key of an object when `first`, else preceded by a comma).
  Out& Key(const char* key, bool first = false) {
    if (!first) Char(',');
    return Char('"').Raw(key).Raw("\":");
  }
  Out& IntField(const char* key, int64_t v, bool first = false) { return Key(key, first).Int(v); }
  Out& StringField(const char* key, const char* s, size_t len, bool first = false) {
    return Key(key, first).Char('"').Escaped(s, len).Char('"');
  }

  static size_t Length(const char* s) {
    size_t n = 0;
    while (s[n] != '\0') ++n;
    return n;
  }

 private:
  char* begin_;
  char* p_;
  char* end_;
  bool ok_ = true;
};

// The largest line EncodeEvent can write for an event whose strings have these lengths (every
// byte escaped as \u00XX, every integer at its widest).
constexpr size_t MaxEventBytes(size_t name_len, size_t cat_len, size_t fname_len) {
  return 512 + 6 * (name_len + cat_len + fname_len);
}

// Writes `e` and `line_end` into buf[0, cap); returns the bytes written, or 0 (nothing usable
// written) when they do not fit.
inline size_t EncodeEvent(const Event& e, const char* line_end, char* buf, size_t cap) {
  Out o(buf, cap);
  o.Char('{').IntField(kId, e.id, /*first=*/true);
  o.StringField(kName, e.name, Out::Length(e.name));
  o.StringField(kCat, e.cat, Out::Length(e.cat));
  o.IntField(kPid, e.pid).IntField(kTid, e.tid).IntField(kTs, e.ts_us).IntField(kDur, e.dur_us);
  o.Key(kPh).Raw("\"X\"").Key(kArgs).Char('{');
  bool first = true;
  if (e.fname != nullptr) {
    if (e.fname_plain) {
      o.Key(kFname, first).Char('"').Bytes(e.fname, e.fname_len).Char('"');
    } else {
      o.StringField(kFname, e.fname, e.fname_len, first);
    }
    first = false;
  }
  auto arg = [&](const char* key, int64_t v, bool written) {
    if (!written) return;
    o.IntField(key, v, first);
    first = false;
  };
  arg(kCount, e.count, e.count >= 0);
  arg(kOffset, e.offset, e.offset >= 0);
  arg(kRet, e.ret, e.ret != kNoRet);
  arg(kEpoch, e.epoch, e.epoch >= 0);
  arg(kStep, e.step, e.step >= 0);
  arg(kIndex, e.index, e.index >= 0);
  arg(kFaults, e.faults, e.faults >= 0);
  arg(kRunDelay, e.run_delay, e.run_delay >= 0);
  arg(kSharedCreated, e.shm, e.shm >= 1);
  o.Raw("}}").Raw(line_end);
  return o.size();
}

// A metadata event naming the process (meta kProcessName, tid 0) or a thread (kThreadName):
// {"id":..,"name":meta,"cat":"dlio","pid":..,"tid":..,"ph":"M","args":{"name":value}}.
inline size_t EncodeNameMetadata(int64_t id, const char* meta, int64_t pid, int64_t tid,
                                 const char* value, size_t value_len, const char* line_end,
                                 char* buf, size_t cap) {
  Out o(buf, cap);
  o.Char('{').IntField(kId, id, /*first=*/true).Key(kName).Char('"').Raw(meta).Char('"');
  o.Key(kCat).Char('"').Raw(kMetadataCat).Char('"').IntField(kPid, pid).IntField(kTid, tid);
  o.Key(kPh).Raw("\"M\"").Key(kArgs).Char('{').StringField(kName, value, value_len, true);
  o.Raw("}}").Raw(line_end);
  return o.size();
}

// The metadata event giving the process its place among processes in a viewer.
inline size_t EncodeSortIndexMetadata(int64_t pid, int64_t sort_index, const char* line_end,
                                      char* buf, size_t cap) {
  Out o(buf, cap);
  o.Char('{').IntField(kId, 0, /*first=*/true).Key(kName).Char('"').Raw(kProcessSortIndex);
  o.Char('"').Key(kCat).Char('"').Raw(kMetadataCat).Char('"').IntField(kPid, pid);
  o.IntField(kTid, 0).Key(kPh).Raw("\"M\"").Key(kArgs).Char('{').IntField(kSortIndex, sort_index,
                                                                          true);
  o.Raw("}}").Raw(line_end);
  return o.size();
}

}  // namespace dlio::pfw
