// RunDelays: the run-queue delay a thread accrued within a pause, from the cumulative values
// dlio's LD_PRELOAD tracer records with its events (ProfileEvent::run_delay_us).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "profile/fit/fit_internal.h"

namespace dlio::fit {

RunDelays::RunDelays(const ProfileTrace& t) {
  if (t.run_delay_us.size() != t.size()) return;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.run_delay_us[i] < 0) continue;
    samples_[{t.pid[i], t.tid[i]}].push_back({t.start_us[i] + t.dur_us[i], t.run_delay_us[i]});
  }
  for (auto& entry : samples_) std::sort(entry.second.begin(), entry.second.end());
}

int64_t RunDelays::Within(int32_t pid, int32_t tid, int64_t from_us, int64_t to_us) const {
  if (to_us <= from_us) return 0;
  auto it = samples_.find({pid, tid});
  if (it == samples_.end()) return 0;
  const std::vector<Sample>& s = it->second;
  // The last value read at or before the pause began, the first at or after it ended.
  auto after = std::lower_bound(s.begin(), s.end(), Sample{to_us, INT64_MIN});
  auto before = std::upper_bound(s.begin(), s.end(), Sample{from_us, INT64_MAX});
  if (after == s.end() || before == s.begin()) return 0;
  --before;
  const int64_t delay = after->second - before->second;
  const int64_t window = after->first - before->first;
  if (delay <= 0 || window <= 0) return 0;
  // The reads bracket the pause and a little more (the call after it, at most
  // pfw::kRunDelayEveryUs of calls before it): the delay taken as spread evenly over the window.
  const int64_t pause = to_us - from_us;
  const double share =
      static_cast<double>(delay) * static_cast<double>(pause) / static_cast<double>(window);
  return std::clamp<int64_t>(static_cast<int64_t>(share), 0, pause);
}

int64_t GapLessDelay(const View& view, const Access& prev, const Access& next) {
  const int64_t gap = next.start_us - prev.end_us;
  if (gap <= 0) return 0;
  return gap - view.run_delays.Within(next.pid, next.tid, prev.end_us, next.start_us);
}

}  // namespace dlio::fit
