// One page of a ListObjectsV2 answer, read and checked: what a server sends is never trusted to
// be the listing it should be (a body cut short, an entry without a key, a size that is no
// number, keys outside the prefix asked for).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dlio/status.h"

namespace dlio::s3 {

struct ListPage {
  std::vector<std::pair<std::string, uint64_t>> objects;  // key, size
  std::vector<std::string> prefixes;                      // CommonPrefixes
  bool truncated = false;                                 // IsTruncated: more pages follow
  std::string next_token;                                 // NextContinuationToken (truncated)
};

// The page in `body`, whose keys and prefixes must all start with `prefix`; InvalidArgument
// saying what is malformed (the caller names the request).
Result<ListPage> ParseListPage(std::string_view body, std::string_view prefix);

}  // namespace dlio::s3
