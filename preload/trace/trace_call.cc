#include "trace_call.h"

#include <sys/resource.h>

#include "common/path_filter.h"

namespace dlio::preload {

void RecordCall(const char* name, const char* cat, int64_t t0, int64_t t1, const FileRef* file,
                int64_t offset, int64_t count, int64_t ret, int64_t faults) {
  IoEvent e;
  e.name = name;
  e.cat = cat;
  e.start_us = t0;
  e.dur_us = t1 - t0;
  e.file = file;
  e.offset = offset;
  e.count = count;
  e.ret = ret;
  e.faults = faults;
  RecordEvent(e);
}

int64_t ThreadMinorFaults() {
  struct rusage u {};
  return getrusage(RUSAGE_THREAD, &u) == 0 ? static_cast<int64_t>(u.ru_minflt) : -1;
}

FileRef* FilteredFile(int dirfd, const char* path) {
  char abs[4096];
  const size_t len = AbsolutePath(dirfd, path, abs, sizeof abs);
  if (len == 0 || Filter() == nullptr || !Filter()->Traced(abs, len)) return nullptr;
  return NewFileRef(abs, len);
}

}  // namespace dlio::preload
