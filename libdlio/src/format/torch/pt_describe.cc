#include "format/torch/pt_describe.h"

#include "dlio/str_cat.h"
#include "format/io_util.h"

namespace dlio::format_internal {

torch_save::TorchStateDict PtSampleDict(uint64_t bytes) {
  torch_save::TorchStateDict sd;
  sd.metadata = false;
  torch_save::TorchTensor x;
  x.name = "x";
  x.shape = {bytes};
  x.storage = "ByteStorage";
  x.element_size = 1;
  sd.tensors = {x};
  return sd;
}

std::string DescribePt(const std::string& path, const std::string& io_model, uint64_t file_size,
                       uint64_t pickle_bytes, const std::vector<uint64_t>& storages) {
  uint64_t total = 0;
  std::string sizes;
  for (uint64_t s : storages) {
    sizes += StrCat(sizes.empty() ? "" : ",", s);
    total += s;
  }
  const bool writable = pickle_bytes >= torch_save::TorchOwnPickleSize(PtSampleDict(total));
  return StrCat(
      "{\"format\":\"pt\",",
      io_model.empty() ? "" : StrCat("\"io_model\":", JsonString(io_model), ","),
      "\"path\":", JsonString(path), ",\"file_size\":", file_size, ",",
      FixedSampleSizesJson(1, total), ",\"storages\":[", sizes, "],\"pickle_bytes\":", pickle_bytes,
      ",\"stores_file_name\":true",
      writable ? StrCat(",\"writer_keys\":{\"dataset.pt_pickle_bytes\":\"", pickle_bytes, "\"}")
               : "",
      "}");
}

}  // namespace dlio::format_internal
