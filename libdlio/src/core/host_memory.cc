#include "core/host_memory.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace dlio {
namespace {

uint64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

// A cgroup limit file's value; 0 for "max", a missing file or anything unreadable.
uint64_t ReadLimit(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    return 0;
  }
  try {
    return std::stoull(text);
  } catch (...) {
    return 0;
  }
}

// The limit files that may apply: the visible hierarchy's root (a container usually sees its own
// cgroup there) and this process's cgroup as /proc/self/cgroup names it.
std::vector<std::string> LimitFiles() {
  std::vector<std::string> files = {"/sys/fs/cgroup/memory.max",
                                    "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (path.empty() || path == "/") continue;
    if (controllers.empty()) files.push_back("/sys/fs/cgroup" + path + "/memory.max");
    if (controllers == "memory") {
      files.push_back("/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes");
    }
  }
  return files;
}

}  // namespace

uint64_t HostMemoryBytes() {
  uint64_t bytes = PhysicalMemoryBytes();
  for (const std::string& file : LimitFiles()) {
    const uint64_t limit = ReadLimit(file);
    if (limit > 0 && (bytes == 0 || limit < bytes)) bytes = limit;
  }
  return bytes;
}

}  // namespace dlio
