#include "format/torch/torch_records.h"

#include <map>

namespace dlio::format_internal {
namespace {

// The storage key of a record name after its folder ("data/12" -> 12), or -1.
int64_t StorageKey(const std::string& rest) {
  if (rest.size() <= 5 || rest.compare(0, 5, "data/") != 0 || rest.size() > 5 + 18) return -1;
  int64_t key = 0;
  for (size_t i = 5; i < rest.size(); ++i) {
    if (rest[i] < '0' || rest[i] > '9') return -1;
    key = key * 10 + (rest[i] - '0');
  }
  return key;
}

}  // namespace

Result<TorchRecords> FindTorchRecords(const std::string& path, const ZipDirectory& dir) {
  TorchRecords out;
  std::map<int64_t, const ZipMember*> storages;
  for (const ZipMember& m : dir.members) {
    const size_t slash = m.name.find('/');
    const std::string rest = slash == std::string::npos ? "" : m.name.substr(slash + 1);
    const int64_t key = StorageKey(rest);
    const bool wanted = rest == "version" || rest == ".data/version" || rest == "data.pkl";
    if (!wanted && key < 0) continue;
    if (m.method != kZipStored) {
      return Status::Unimplemented(path, ": offset ", m.local_offset, ": record '", m.name,
                                   "' is compressed (method ", m.method,
                                   "); torch.save stores its records");
    }
    if (m.compressed_size != m.uncompressed_size) {
      return Status::Corruption(path, ": offset ", m.local_offset, ": stored record '", m.name,
                                "' of ", m.compressed_size, " bytes claims ", m.uncompressed_size,
                                " (not the zip torch.save writes)");
    }
    if (rest == "data.pkl") out.pickle = &m;
    if (rest == "version" || rest == ".data/version") out.version = &m;
    if (key >= 0 && !storages.emplace(key, &m).second) {
      return Status::Corruption(path, ": offset ", m.local_offset, ": storage record '", m.name,
                                "' appears twice (not the zip torch.save writes)");
    }
  }
  if (out.pickle == nullptr) {
    return Status::Corruption(path, ": offset ", dir.cd_offset,
                              ": no data.pkl record in the central directory (not the zip "
                              "torch.save writes)");
  }
  // Storages are disjoint records before the directory: a size past it, or sizes that add up to
  // more, is a lie (and would size the sample's buffer by it).
  uint64_t total = 0;
  for (const auto& [key, m] : storages) {
    if (m->local_offset > dir.cd_offset || m->compressed_size > dir.cd_offset - m->local_offset ||
        m->compressed_size > dir.cd_offset - total) {
      return Status::Corruption(path, ": offset ", m->local_offset, ": storage record '", m->name,
                                "' of ", m->compressed_size,
                                " bytes runs past the central directory at offset ", dir.cd_offset,
                                " (not the zip torch.save writes)");
    }
    total += m->compressed_size;
    out.storages.push_back(m);
  }
  return out;
}

}  // namespace dlio::format_internal
