// What `dlio-run inspect` says of a pt file (a torch.save file per sample), whichever reader
// opened it: its storages, data.pkl's size, and that size as the writer key that lays a file out
// so (fit reads "writer_keys": docs/profiling.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/str_cat.h"
#include "format/io_util.h"

namespace dlio::format_internal {

// `io_model`: the request model's name, "" for the native reader.
inline std::string DescribePt(const std::string& path, const std::string& io_model,
                              uint64_t file_size, uint64_t pickle_bytes,
                              const std::vector<uint64_t>& storages) {
  uint64_t total = 0;
  std::string sizes;
  for (uint64_t s : storages) {
    sizes += StrCat(sizes.empty() ? "" : ",", s);
    total += s;
  }
  return StrCat("{\"format\":\"pt\",",
                io_model.empty() ? "" : StrCat("\"io_model\":", JsonString(io_model), ","),
                "\"path\":", JsonString(path), ",\"file_size\":", file_size, ",",
                FixedSampleSizesJson(1, total), ",\"storages\":[", sizes,
                "],\"pickle_bytes\":", pickle_bytes,
                ",\"stores_file_name\":true,\"writer_keys\":{\"dataset.pt_pickle_bytes\":\"",
                pickle_bytes, "\"}}");
}

}  // namespace dlio::format_internal
