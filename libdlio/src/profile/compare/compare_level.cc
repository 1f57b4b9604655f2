// The kernel level of a trace (profile_compare.h): its stdio reads and writes replaced by the
// system calls beneath them, which dlio's LD_PRELOAD tracer derives (docs/profiling.md).
#include <algorithm>

#include "dlio/profile_compare.h"

namespace dlio {
namespace {

bool IsStdioData(const ProfileTrace& t, size_t i, int32_t stdio) {
  return t.category[i] == stdio && (t.kind[i] == OpKind::kRead || t.kind[i] == OpKind::kWrite);
}

// The id of category `s` in `t`, kNoString when no event has it.
int32_t FindCategory(const ProfileTrace& t, std::string_view s) {
  int32_t top = ProfileTrace::kNoString;
  for (int32_t id : t.category) top = std::max(top, id);
  for (int32_t id = 0; id <= top; ++id) {
    if (t.String(id) == s) return id;
  }
  return ProfileTrace::kNoString;
}

}  // namespace

bool HasKernelLevel(const ProfileTrace& trace) {
  if (!trace.stdio_kernel.empty()) return true;
  const int32_t stdio = FindCategory(trace, "STDIO");
  if (stdio == ProfileTrace::kNoString) return true;
  for (size_t i = 0; i < trace.size(); ++i) {
    if (IsStdioData(trace, i, stdio)) return false;
  }
  return true;
}

ProfileTrace WithKernelRequests(const ProfileTrace& trace) {
  const int32_t stdio = FindCategory(trace, "STDIO");
  ProfileTrace out;
  out.Reserve(trace.size() + trace.stdio_kernel.size());
  for (size_t i = 0; i < trace.size(); ++i) {
    if (stdio == ProfileTrace::kNoString || !IsStdioData(trace, i, stdio)) out.Add(trace.Get(i));
  }
  for (const StdioKernelRequest& r : trace.stdio_kernel) {
    ProfileEvent e;
    e.pid = r.pid;
    e.tid = r.tid;
    e.name = r.write ? "write" : "read";
    e.category = kStdioKernelCategory;
    e.path = trace.String(r.path);
    e.start_us = r.start_us;
    e.dur_us = r.dur_us;
    e.offset = r.offset;
    e.size = r.size;
    e.ret = r.ret;
    e.kind = r.write ? OpKind::kWrite : OpKind::kRead;
    out.Add(e);
  }
  out.process_names = trace.process_names;
  out.thread_names = trace.thread_names;
  out.ranks = trace.ranks;
  return out;
}

}  // namespace dlio
