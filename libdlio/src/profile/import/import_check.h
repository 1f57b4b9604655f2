// What every importer checks of an event before adding it to the trace: values no real trace
// holds (ids beyond 32 bits, negative durations, offsets and sizes past kMaxTraceBytes) are
// dropped or corrected, each with a warning naming file and line, at most kMaxImportWarnings of
// them kept (a hostile file cannot flood the log), all of them counted.
#ifndef DLIO_SRC_PROFILE_IMPORT_CHECK_H_
#define DLIO_SRC_PROFILE_IMPORT_CHECK_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "dlio/profile.h"

namespace dlio::profile_internal {

// Requires external synchronization; `stats` must outlive it.
class ImportCheck {
 public:
  // `what_file` names the file in warnings ("trace a.pfw", "strace log s.txt").
  ImportCheck(std::string what_file, ImportStats* stats)
      : what_file_(std::move(what_file)), stats_(stats) {}

  // A process, thread or rank id: *out = v and true when it lies in [lowest, INT32_MAX];
  // otherwise false and a warning (the caller drops the event: truncated to 32 bits, it would
  // merge with a small id).
  bool Id(int64_t v, std::string_view what, int64_t line, int32_t* out,
          int64_t lowest = std::numeric_limits<int32_t>::min());
  // The event of `line` as it may enter the trace: a negative duration becomes 0 (warning); a
  // start or duration beyond kMaxTraceMicros, an offset or size outside [-1, kMaxTraceBytes] or a
  // ret beyond +-kMaxTraceBytes: false, with a warning (the caller drops it).
  bool Event(ProfileEvent* e, int64_t line);
  // Counts a bad value of `line` and keeps the warning while fewer than kMaxImportWarnings are.
  void Warn(int64_t line, std::string_view what);

 private:
  std::string what_file_;
  ImportStats* stats_;
};

}  // namespace dlio::profile_internal

#endif  // DLIO_SRC_PROFILE_IMPORT_CHECK_H_
