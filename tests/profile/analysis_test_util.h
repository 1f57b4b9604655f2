// Builds small traces by hand for the analysis tests.
#pragma once

#include <string_view>

#include "dlio/profile.h"

namespace dlio::testing {

// Adds one event; the kind comes from the call name (kOther for application events).
inline void AddEvent(ProfileTrace* t, int32_t pid, int32_t tid, std::string_view name,
                     int64_t start_us, int64_t dur_us, std::string_view path = "",
                     int64_t offset = -1, int64_t size = -1, int64_t ret = -1,
                     int64_t faults = -1) {
  ProfileEvent e;
  e.pid = pid;
  e.tid = tid;
  e.name = name;
  e.kind = OpKindOfCall(name);
  e.category = e.kind == OpKind::kOther ? "ai" : "POSIX";
  e.path = path;
  e.start_us = start_us;
  e.dur_us = dur_us;
  e.offset = offset;
  e.size = size;
  e.ret = ret;
  e.faults = faults;
  t->Add(e);
}

}  // namespace dlio::testing
