#include "runner/checkpoint_select.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <string_view>

#include "dlio/str_cat.h"

namespace dlio::runner_internal {
namespace {

// Ids travel as space-separated decimals; an error as "!", 'N' (NotFound) or 'E' (another
// error, as a rank reported it), then its message.
std::string Encode(const Result<std::vector<uint64_t>>& ids) {
  if (!ids.ok()) return StrCat("!E", ids.status().ToString());
  std::string text;
  for (uint64_t id : *ids) text += StrCat(text.empty() ? "" : " ", id);
  return text;
}

std::vector<uint64_t> Decode(std::string_view text) {
  std::vector<uint64_t> ids;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    uint64_t id = 0;
    const auto r = std::from_chars(p, end, id);
    if (r.ec != std::errc()) break;  // written by Encode: cannot happen
    ids.push_back(id);
    p = r.ptr + (r.ptr < end ? 1 : 0);
  }
  return ids;
}

// Rank 0: the encoded answer from every rank's encoded list.
std::string Choose(const std::vector<std::string>& gathered, uint64_t count,
                   const std::string& folder, bool oldest) {
  std::vector<uint64_t> common;
  for (size_t r = 0; r < gathered.size(); ++r) {
    if (!gathered[r].empty() && gathered[r][0] == '!') {
      return StrCat("!Erank ", r, ": ", gathered[r].substr(2));
    }
    std::vector<uint64_t> ids = Decode(gathered[r]);
    if (r == 0) {
      common = std::move(ids);
      continue;
    }
    std::vector<uint64_t> both;
    std::set_intersection(common.begin(), common.end(), ids.begin(), ids.end(),
                          std::back_inserter(both));
    common = std::move(both);
  }
  if (common.size() < count) {
    return StrCat("!Ncheckpoint.num_checkpoints_read is ", count,
                  " and checkpoint.num_checkpoints_write 0, but ", folder, " holds ", common.size(),
                  " complete checkpoint(s) only (a save that was interrupted leaves no manifest "
                  "and is skipped): a read-only run reads what earlier runs of the same workload "
                  "wrote");
  }
  if (oldest) {
    common.resize(count);
  } else {
    common.erase(common.begin(), common.end() - static_cast<std::ptrdiff_t>(count));
  }
  return Encode(common);
}

}  // namespace

Result<std::vector<uint64_t>> NewestCompleteCheckpoints(Checkpointer* checkpointer, Comm* comm,
                                                        uint64_t count, const std::string& folder,
                                                        bool oldest) {
  std::vector<std::string> gathered;
  DLIO_RETURN_NOT_OK(comm->Gather(Encode(checkpointer->CompleteIds()), 0, &gathered));
  std::string answer = comm->rank() == 0 ? Choose(gathered, count, folder, oldest) : std::string();
  DLIO_RETURN_NOT_OK(comm->Broadcast(&answer, 0));
  if (answer.size() >= 2 && answer[0] == '!') {
    const std::string message = answer.substr(2);
    return answer[1] == 'N' ? Status::NotFound(message) : Status::IOError(message);
  }
  return Decode(answer);
}

}  // namespace dlio::runner_internal
