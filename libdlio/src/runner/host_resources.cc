// MeasureHostResources: this host's memory, its ranks and the free space where a run writes.
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "core/host_memory.h"
#include "dlio/loop.h"
#include "dlio/preflight.h"
#include "dlio/registries.h"

namespace dlio {
namespace {

namespace fs = std::filesystem;

// What the storage `name` declares it can do (nothing when it is not registered).
StorageCapabilities CapabilitiesOf(const std::string& name, const StorageConfig& s,
                                   const Registries& registries) {
  StorageOptions options;
  options.name = name;
  options.backends = s.backends;  // slow's inner storage, tiered's source
  auto capabilities = StorageCapabilitiesFor(options, registries.storages);
  return capabilities.ok() ? *capabilities : StorageCapabilities{};
}

// Whether the storage `name` declares that its files are files of a file system of this host.
bool OnLocalFileSystem(const std::string& name, const StorageConfig& s,
                       const Registries& registries) {
  return CapabilitiesOf(name, s, registries).host_files;
}

// Free bytes an unprivileged writer has on the file system of `path`, or of its closest existing
// ancestor (the folder may not exist yet); kUnknownBytes when statvfs fails.
uint64_t FreeBytes(const std::string& path) {
  fs::path p(path);
  std::error_code ec;
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  if (p.empty()) p = ".";
  struct statvfs st;
  if (::statvfs(p.c_str(), &st) != 0) return kUnknownBytes;
  const uint64_t blocks = st.f_bavail, size = st.f_frsize;
  return blocks != 0 && size > UINT64_MAX / blocks ? UINT64_MAX : blocks * size;
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Regular files in `dir` (and, with subfolders, one level below it) named as a split of `n`
// files names them: "<prefix>_<i>_of_<n>[.<ext>]". Costs one directory entry per file present,
// however large `n` is.
uint64_t CountPresent(const std::string& dir, const DatasetConfig& d, uint64_t n,
                      const std::string& ext, bool subfolders) {
  const std::string head = d.file_prefix + "_";
  const std::string tail = "_of_" + std::to_string(n) + (ext.empty() ? "" : "." + ext);
  uint64_t count = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (subfolders && it->is_directory(ec)) {
      if (StartsWith(name, ".")) continue;  // staging folders hold no finished file
      count += CountPresent(it->path().string(), d, n, ext, false);
    } else if (it->is_regular_file(ec) && StartsWith(name, head) && EndsWith(name, tail)) {
      ++count;
    }
  }
  return count;
}

// The ranks of `comm` on this rank's host (by host name). Collective.
Result<uint64_t> RanksOnHost(Comm* comm) {
  if (comm == nullptr || comm->size() <= 1) return uint64_t{1};
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) return uint64_t{1};
  std::vector<std::string> hosts;
  DLIO_RETURN_NOT_OK(comm->Gather(host, 0, &hosts));
  std::string counts;
  if (comm->rank() == 0) {
    std::map<std::string, uint64_t> per_host;
    for (const auto& h : hosts) ++per_host[h];
    for (const auto& h : hosts) counts += std::to_string(per_host[h]) + " ";
  }
  DLIO_RETURN_NOT_OK(comm->Broadcast(&counts, 0));
  std::istringstream in(counts);
  uint64_t mine = 1;
  for (int r = 0; r <= comm->rank() && (in >> mine); ++r) {
  }
  return mine;
}

// Whether a data file holds exactly its payload, so the payload bounds the bytes written.
bool ExactFiles(const WorkloadConfig& c, const Format* format) {
  const std::string& z = c.dataset.compression;
  return format != nullptr && format->uses_files() && format->exact_sample_sizes() &&
         (z.empty() || z == "none");
}

void MeasureData(const WorkloadConfig& c, const Format& format, HostResources* h) {
  const DatasetConfig& d = c.dataset;
  h->data_free_bytes = FreeBytes(d.data_folder);
  const uint64_t files = d.num_files_train + d.num_files_eval;
  const uint64_t file_bytes = EstimateRunFootprint(c, 1).file_bytes;
  const bool fits_all = file_bytes == 0 || files <= h->data_free_bytes / file_bytes;
  if (fits_all || h->data_free_bytes == kUnknownBytes) return;
  const std::string folder = d.data_folder.empty() ? "." : d.data_folder;
  h->train_files_present = CountPresent(folder + "/train", d, d.num_files_train, format.extension(),
                                        d.num_subfolders_train > 1);
  h->eval_files_present = CountPresent(folder + "/valid", d, d.num_files_eval, format.extension(),
                                       d.num_subfolders_eval > 1);
}

}  // namespace

Result<HostResources> MeasureHostResources(const WorkloadConfig& c, const Format* format,
                                           Comm* comm, const Registries& registries) {
  HostResources h;
  h.memory_bytes = HostMemoryBytes();
  DLIO_ASSIGN_OR_RETURN(h.ranks_on_host, RanksOnHost(comm));
  const StorageConfig& s = c.storage;
  const StorageCapabilities storage = CapabilitiesOf(s.storage_type, s, registries);
  h.dataset_in_memory = storage.in_process_memory;
  h.storage_needs_mpi = storage.needs_mpi;
  h.streaming_format = format != nullptr && SamplesStream(c, *format);
  h.pipeline = PipelineCapabilitiesFor(c, registries.pipelines);
  h.pipelines = &registries.pipelines;
  if (c.workflow.generate_data && ExactFiles(c, format) &&
      OnLocalFileSystem(s.storage_type, s, registries)) {
    MeasureData(c, *format, &h);
  }
  const std::string& checkpoint_storage =
      c.checkpoint.storage_type.empty() ? s.storage_type : c.checkpoint.storage_type;
  if (c.workflow.checkpoint && OnLocalFileSystem(checkpoint_storage, s, registries)) {
    h.checkpoint_free_bytes = FreeBytes(c.checkpoint.checkpoint_folder);
  }
  return h;
}

}  // namespace dlio
