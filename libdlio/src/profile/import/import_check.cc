#include "profile/import/import_check.h"

namespace dlio::profile_internal {

void ImportCheck::Warn(int64_t line, std::string_view what) {
  ++stats_->bad_values;
  if (stats_->warnings.size() < kMaxImportWarnings) {
    stats_->warnings.push_back(StrCat(what_file_, " line ", line, ": ", what));
  }
}

bool ImportCheck::Id(int64_t v, std::string_view what, int64_t line, int32_t* out, int64_t lowest) {
  if (v < lowest || v > std::numeric_limits<int32_t>::max()) {
    Warn(line, StrCat(what, " ", v, " is outside [", lowest, ", ",
                      std::numeric_limits<int32_t>::max(), "]; dropped"));
    return false;
  }
  *out = static_cast<int32_t>(v);
  return true;
}

bool ImportCheck::Event(ProfileEvent* e, int64_t line) {
  if (e->start_us < -kMaxTraceMicros || e->start_us > kMaxTraceMicros ||
      e->dur_us < -kMaxTraceMicros || e->dur_us > kMaxTraceMicros) {
    Warn(line, StrCat("time ", e->start_us, " us or duration ", e->dur_us,
                      " us beyond 2^53 us; event dropped"));
    return false;
  }
  auto bytes = [&](int64_t v, int64_t lowest) { return v >= lowest && v <= kMaxTraceBytes; };
  if (!bytes(e->offset, -1) || !bytes(e->size, -1) || !bytes(e->ret, -kMaxTraceBytes)) {
    Warn(line, StrCat("offset ", e->offset, ", size ", e->size, " or ret ", e->ret,
                      " beyond 2^53 bytes (or below -1); event dropped"));
    return false;
  }
  if (e->dur_us < 0) {
    Warn(line, StrCat("negative duration ", e->dur_us, " us, taken as 0"));
    e->dur_us = 0;
  }
  return true;
}

}  // namespace dlio::profile_internal
