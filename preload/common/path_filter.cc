#include "path_filter.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#include "fd_table.h"

namespace dlio::preload {
namespace {

bool HasSuffix(const char* s, size_t len, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return len >= n && std::memcmp(s + len - n, suffix, n) == 0;
}

// `prefix` names `path` itself or a directory above it ("/data" covers "/data/x", not "/database").
bool UnderPrefix(const char* path, size_t len, const char* prefix, size_t plen) {
  while (plen > 1 && prefix[plen - 1] == '/') --plen;
  if (len < plen || std::memcmp(path, prefix, plen) != 0) return false;
  return len == plen || path[plen] == '/' || prefix[plen - 1] == '/';
}

bool IsCode(const char* path, size_t len) {
  if (HasSuffix(path, len, ".py") || HasSuffix(path, len, ".pyc") || HasSuffix(path, len, ".so")) {
    return true;
  }
  // Versioned shared objects: "libfoo.so.1.2".
  const char* base = static_cast<const char*>(memrchr(path, '/', len));
  base = base == nullptr ? path : base + 1;
  return std::strstr(base, ".so.") != nullptr;
}

}  // namespace

void PathFilter::Configure(const char* data_dirs) {
  count_ = 0;
  if (data_dirs == nullptr) return;
  const size_t total = std::strlen(data_dirs);
  if (total >= sizeof storage_) return;
  std::memcpy(storage_, data_dirs, total + 1);
  char* p = storage_;
  while (*p != '\0' && count_ < kMaxPrefixes) {
    char* end = std::strchr(p, ':');
    const size_t n = end == nullptr ? std::strlen(p) : static_cast<size_t>(end - p);
    if (n > 0) {
      prefixes_[count_] = p;
      lengths_[count_] = n;
      ++count_;
    }
    if (end == nullptr) break;
    *end = '\0';
    p = end + 1;
  }
  AddResolvedPrefixes();
}

// A name with ".." is resolved through symbolic links (AbsolutePath): a prefix reached through
// one also covers its target's path.
void PathFilter::AddResolvedPrefixes() {
  const size_t given = count_;
  size_t used = 0;
  for (size_t i = 0; i < given && count_ < kMaxPrefixes; ++i) {
    char path[PATH_MAX];
    char real[PATH_MAX];
    if (lengths_[i] >= sizeof path) continue;
    std::memcpy(path, prefixes_[i], lengths_[i]);
    path[lengths_[i]] = '\0';
    if (realpath(path, real) == nullptr) continue;
    const size_t n = std::strlen(real);
    if (n == lengths_[i] && std::memcmp(real, prefixes_[i], n) == 0) continue;
    if (used + n + 1 > sizeof resolved_) break;
    std::memcpy(resolved_ + used, real, n + 1);
    prefixes_[count_] = resolved_ + used;
    lengths_[count_] = n;
    ++count_;
    used += n + 1;
  }
}

bool PathFilter::Traced(const char* path, size_t len) const {
  if (len == 0 || IsCode(path, len)) return false;
  for (const char* sys : {"/proc", "/sys", "/dev"}) {
    if (UnderPrefix(path, len, sys, std::strlen(sys))) return false;
  }
  if (count_ == 0) return true;
  for (size_t i = 0; i < count_; ++i) {
    if (UnderPrefix(path, len, prefixes_[i], lengths_[i])) return true;
  }
  return false;
}

namespace {

// Resolves ".", ".." and repeated slashes of the absolute path p[0, len) in place (the result is
// never longer); returns the new length.
size_t Normalize(char* p, size_t len) {
  size_t w = 0;  // p[0, w) is the normalized prefix, without a trailing slash
  size_t r = 0;
  while (r < len) {
    while (r < len && p[r] == '/') ++r;
    size_t end = r;
    while (end < len && p[end] != '/') ++end;
    const size_t n = end - r;
    if (n == 0 || (n == 1 && p[r] == '.')) {
      // nothing
    } else if (n == 2 && p[r] == '.' && p[r + 1] == '.') {
      while (w > 0 && p[w - 1] != '/') --w;
      if (w > 0) --w;  // the slash before the dropped component
    } else {
      p[w++] = '/';
      std::memmove(p + w, p + r, n);
      w += n;
    }
    r = end;
  }
  if (w == 0) p[w++] = '/';
  p[w] = '\0';
  return w;
}

// Where the last ".." component of p[0, len) ends (0: none).
size_t EndOfLastDotDot(const char* p, size_t len) {
  size_t end = 0;
  for (size_t i = 0; i + 1 < len; ++i) {
    const bool starts = i == 0 || p[i - 1] == '/';
    const bool ends = i + 2 == len || p[i + 2] == '/';
    if (starts && ends && p[i] == '.' && p[i + 1] == '.') end = i + 2;
  }
  return end;
}

// A ".." after a symbolic link names the link target's parent, not the link's: the part of the
// absolute path p[0, len) up to its last ".." is resolved by the kernel (realpath: readlink of
// every component, no descriptor), the rest kept as written. Returns the new length, or 0 when
// that part does not resolve (a missing directory: the program's own call fails there too).
size_t ResolveDotDot(char* p, size_t len, size_t cap) {
  const size_t end = EndOfLastDotDot(p, len);
  if (end == 0) return len;
  char prefix[PATH_MAX];
  char resolved[PATH_MAX];
  if (end >= sizeof prefix) return 0;
  std::memcpy(prefix, p, end);
  prefix[end] = '\0';
  if (realpath(prefix, resolved) == nullptr) return 0;
  const size_t head = std::strlen(resolved);
  const size_t tail = len - end;
  if (head + tail + 1 > cap) return 0;
  std::memmove(p + head, p + end, tail);
  std::memcpy(p, resolved, head);
  p[head + tail] = '\0';
  return head + tail;
}

}  // namespace

size_t AbsolutePath(int dirfd, const char* path, char* out, size_t cap) {
  if (path == nullptr || cap < 2) return 0;
  while (path[0] == '.' && path[1] == '/') path += 2;
  size_t base = 0;
  if (path[0] != '/') {
    if (dirfd == AT_FDCWD) {
      // The raw syscall: glibc's getcwd may allocate, and this runs inside hooks.
      const long n = syscall(SYS_getcwd, out, cap);
      if (n <= 0) return 0;
      base = std::strlen(out);
    } else if (FileRef* dir = FdTable::Get().Acquire(dirfd)) {
      if (dir->len >= cap) {
        ReleaseFileRef(dir);
        return 0;
      }
      std::memcpy(out, dir->path, dir->len);
      base = dir->len;
      ReleaseFileRef(dir);
    } else {
      char link[64];
      std::strcpy(link, "/proc/self/fd/");
      size_t k = std::strlen(link);
      char digits[16];
      int d = 0;
      for (unsigned v = static_cast<unsigned>(dirfd); d == 0 || v != 0; v /= 10) {
        digits[d++] = static_cast<char>('0' + v % 10);
      }
      while (d > 0) link[k++] = digits[--d];
      link[k] = '\0';
      const long n = syscall(SYS_readlinkat, AT_FDCWD, link, out, cap - 1);
      if (n <= 0) return 0;
      base = static_cast<size_t>(n);
    }
    if (base > 0 && out[base - 1] != '/') {
      if (base + 1 >= cap) return 0;
      out[base++] = '/';
    }
  }
  const size_t len = std::strlen(path);
  if (base + len + 1 > cap) return 0;
  std::memcpy(out + base, path, len + 1);
  if (out[0] != '/') return base + len;
  const size_t resolved = ResolveDotDot(out, base + len, cap);
  return resolved == 0 ? 0 : Normalize(out, resolved);
}

}  // namespace dlio::preload
