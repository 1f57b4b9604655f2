// The column-oriented trace model and the call-name -> OpKind table.
#include <algorithm>
#include <iterator>
#include <limits>
#include <string>

#include "dlio/profile.h"

namespace dlio {
namespace {

struct KindEntry {
  std::string_view name;
  OpKind kind;
};

// Sorted by name for binary search.
constexpr KindEntry kKinds[] = {
    {"__fxstat", OpKind::kStat},       {"__fxstat64", OpKind::kStat},
    {"__lxstat", OpKind::kStat},       {"__lxstat64", OpKind::kStat},
    {"__xstat", OpKind::kStat},        {"__xstat64", OpKind::kStat},
    {"_llseek", OpKind::kSeek},        {"access", OpKind::kStat},
    {"chdir", OpKind::kMetadata},      {"chmod", OpKind::kMetadata},
    {"close", OpKind::kClose},         {"closedir", OpKind::kMetadata},
    {"creat", OpKind::kOpen},          {"creat64", OpKind::kOpen},
    {"faccessat", OpKind::kStat},      {"faccessat2", OpKind::kStat},
    {"fclose", OpKind::kClose},        {"fcntl", OpKind::kMetadata},
    {"fdatasync", OpKind::kSync},      {"flock", OpKind::kMetadata},
    {"fopen", OpKind::kOpen},          {"fopen64", OpKind::kOpen},
    {"fread", OpKind::kRead},          {"fseek", OpKind::kSeek},
    {"fseeko", OpKind::kSeek},         {"fseeko64", OpKind::kSeek},
    {"fstat", OpKind::kStat},          {"fstat64", OpKind::kStat},
    {"fstatat", OpKind::kStat},        {"fstatat64", OpKind::kStat},
    {"fsync", OpKind::kSync},          {"ftruncate", OpKind::kMetadata},
    {"fwrite", OpKind::kWrite},        {"getdents", OpKind::kMetadata},
    {"getdents64", OpKind::kMetadata}, {"link", OpKind::kMetadata},
    {"llseek", OpKind::kSeek},         {"lseek", OpKind::kSeek},
    {"lseek64", OpKind::kSeek},        {"lstat", OpKind::kStat},
    {"lstat64", OpKind::kStat},        {"mkdir", OpKind::kMetadata},
    {"mkdirat", OpKind::kMetadata},    {"mmap", OpKind::kMmap},
    {"mmap.touched", OpKind::kRead},   {"mmap64", OpKind::kMmap},
    {"munmap", OpKind::kMmap},         {"newfstatat", OpKind::kStat},
    {"open", OpKind::kOpen},           {"open64", OpKind::kOpen},
    {"openat", OpKind::kOpen},         {"openat2", OpKind::kOpen},
    {"openat64", OpKind::kOpen},       {"opendir", OpKind::kMetadata},
    {"pread", OpKind::kRead},          {"pread64", OpKind::kRead},
    {"preadv", OpKind::kRead},         {"preadv2", OpKind::kRead},
    {"preadv64", OpKind::kRead},       {"preadv64v2", OpKind::kRead},
    {"pwrite", OpKind::kWrite},        {"pwrite64", OpKind::kWrite},
    {"pwritev", OpKind::kWrite},       {"pwritev2", OpKind::kWrite},
    {"pwritev64", OpKind::kWrite},     {"pwritev64v2", OpKind::kWrite},
    {"read", OpKind::kRead},           {"readdir", OpKind::kMetadata},
    {"readlink", OpKind::kMetadata},   {"readv", OpKind::kRead},
    {"remove", OpKind::kMetadata},     {"rename", OpKind::kMetadata},
    {"renameat", OpKind::kMetadata},   {"renameat2", OpKind::kMetadata},
    {"rmdir", OpKind::kMetadata},      {"stat", OpKind::kStat},
    {"stat64", OpKind::kStat},         {"statx", OpKind::kStat},
    {"symlink", OpKind::kMetadata},    {"sync", OpKind::kSync},
    {"truncate", OpKind::kMetadata},   {"unlink", OpKind::kMetadata},
    {"unlinkat", OpKind::kMetadata},   {"write", OpKind::kWrite},
    {"writev", OpKind::kWrite},
};

constexpr bool Sorted() {
  for (size_t i = 1; i < std::size(kKinds); ++i) {
    if (!(kKinds[i - 1].name < kKinds[i].name)) return false;
  }
  return true;
}
static_assert(Sorted(), "kKinds must be sorted by name: OpKindOfCall searches it");

}  // namespace

std::string_view OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kRead:
      return "read";
    case OpKind::kWrite:
      return "write";
    case OpKind::kOpen:
      return "open";
    case OpKind::kClose:
      return "close";
    case OpKind::kSeek:
      return "seek";
    case OpKind::kStat:
      return "stat";
    case OpKind::kSync:
      return "sync";
    case OpKind::kMmap:
      return "mmap";
    case OpKind::kMetadata:
      return "metadata";
    case OpKind::kOther:
      return "other";
  }
  return "other";
}

OpKind OpKindOfCall(std::string_view name) {
  const auto* end = std::end(kKinds);
  const auto* it =
      std::lower_bound(std::begin(kKinds), end, name,
                       [](const KindEntry& e, std::string_view n) { return e.name < n; });
  return it != end && it->name == name ? it->kind : OpKind::kOther;
}

int32_t ProfileTrace::Intern(std::string_view s) {
  const size_t h = Hash{}(s);
  if (cache_.empty()) cache_.resize(kCacheSlots);
  CacheSlot& slot = cache_[h & (kCacheSlots - 1)];
  if (slot.id != kNoString && slot.hash == h && strings_[slot.id] == s) return slot.id;
  int32_t id;
  auto it = ids_.find(s);
  if (it != ids_.end()) {
    id = it->second;
  } else {
    id = static_cast<int32_t>(strings_.size());
    strings_.emplace_back(s);
    ids_.emplace(strings_.back(), id);
  }
  slot = CacheSlot{h, id};
  return id;
}

const std::string& ProfileTrace::String(int32_t id) const {
  static const std::string kEmpty;
  return id < 0 || static_cast<size_t>(id) >= strings_.size() ? kEmpty : strings_[id];
}

void ProfileTrace::Add(const ProfileEvent& e) {
  AddInterned(e, Intern(e.name), Intern(e.category), e.path.empty() ? kNoString : Intern(e.path));
}

void ProfileTrace::AddInterned(const ProfileEvent& e, int32_t name_id, int32_t category_id,
                               int32_t path_id) {
  pid.push_back(e.pid);
  tid.push_back(e.tid);
  name.push_back(name_id);
  category.push_back(category_id);
  path.push_back(path_id);
  start_us.push_back(e.start_us);
  dur_us.push_back(e.dur_us);
  offset.push_back(e.offset);
  size_bytes.push_back(e.size);
  ret.push_back(e.ret);
  faults.push_back(
      static_cast<int32_t>(std::clamp<int64_t>(e.faults, -1, std::numeric_limits<int32_t>::max())));
  run_delay_us.push_back(e.run_delay_us);
  shm_created.push_back(static_cast<int32_t>(
      std::clamp<int64_t>(e.shm_created, 0, std::numeric_limits<int32_t>::max())));
  kind.push_back(e.kind);
}

void ProfileTrace::Reserve(size_t n) {
  for (auto* v : {&pid, &tid, &name, &category, &path, &faults, &shm_created}) v->reserve(n);
  for (auto* v : {&start_us, &dur_us, &offset, &size_bytes, &ret, &run_delay_us}) v->reserve(n);
  kind.reserve(n);
}

ProfileEvent ProfileTrace::Get(size_t i) const {
  ProfileEvent e;
  e.pid = pid[i];
  e.tid = tid[i];
  e.name = String(name[i]);
  e.category = String(category[i]);
  e.path = String(path[i]);
  e.start_us = start_us[i];
  e.dur_us = dur_us[i];
  e.offset = offset[i];
  e.size = size_bytes[i];
  e.ret = ret[i];
  e.faults = faults[i];
  e.run_delay_us = run_delay_us[i];
  e.shm_created = shm_created[i];
  e.kind = kind[i];
  return e;
}

}  // namespace dlio
