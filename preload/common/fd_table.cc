#include "fd_table.h"

#include <cstdlib>
#include <cstring>

namespace dlio::preload {

FileRef* NewFileRef(const char* path, size_t len) {
  auto* ref = static_cast<FileRef*>(std::malloc(sizeof(FileRef) + len));
  if (ref == nullptr) return nullptr;
  ref->position.store(FileRef::kUnknownPosition, std::memory_order_relaxed);
  ref->refs.store(1, std::memory_order_relaxed);
  ref->len = static_cast<uint32_t>(len);
  std::memcpy(ref->path, path, len);
  ref->path[len] = '\0';
  ref->plain = true;
  for (size_t i = 0; i < len; ++i) {
    const auto c = static_cast<unsigned char>(path[i]);
    if (c < 0x20 || c == '"' || c == '\\') ref->plain = false;
  }
  return ref;
}

void ReleaseFileRef(FileRef* ref) {
  if (ref != nullptr && ref->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) std::free(ref);
}

int64_t MovePosition(FileRef* ref, int64_t delta, int64_t absolute) {
  int64_t cur = ref->position.load(std::memory_order_relaxed);
  while (cur >= 0 && !ref->position.compare_exchange_weak(
                         cur, absolute >= 0 ? absolute : cur + delta, std::memory_order_relaxed)) {
  }
  return cur;
}

FdTable& FdTable::Get() {
  static FdTable table;  // constant-initialized: usable before any constructor runs
  return table;
}

void FdTable::ForgetPosition(int fd) {
  FileRef* ref = Acquire(fd);
  if (ref == nullptr) return;
  ref->position.store(FileRef::kUnknownPosition, std::memory_order_relaxed);
  ReleaseFileRef(ref);
}

void FdTable::ForgetAllPositions(bool locked) {
  if (!locked) Lock();
  for (auto& entry : entries_) {
    FileRef* ref = entry.load(std::memory_order_relaxed);
    if (ref != nullptr) ref->position.store(FileRef::kUnknownPosition, std::memory_order_relaxed);
  }
  if (!locked) Unlock();
}

}  // namespace dlio::preload
