#include "cache_serve.h"

#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "dlio/cache.h"
#include "dlio/cache_server.h"
#include "dlio/loop.h"
#include "run_common.h"
#include "trace_cli.h"

namespace dlio_run {
namespace {

// The paths of `file`, one per line (blank lines skipped); each must be absolute.
dlio::Result<std::vector<std::string>> ReadFutureFile(const std::string& file) {
  std::ifstream in(file);
  if (!in) return dlio::Status::NotFound("--future ", file, ": cannot be opened");
  std::vector<std::string> paths;
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    if (line[0] != '/') {
      return dlio::Status::InvalidArgument("--future ", file, " line ", n,
                                           ": not an absolute path: '", line, "'");
    }
    paths.push_back(line);
  }
  return paths;
}

// An earlier --stats-json of cache-serve (CacheStatsJson: its keys sorted, "source" first).
bool IsCacheStatsOutput(std::string_view head) {
  return head.rfind("{\"source\":{", 0) == 0 && head.find("\"level\":\"source\"") != head.npos;
}

// `dir` absolute (relative to the working directory).
std::string Absolute(const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(dir.empty() ? "." : dir, ec);
  return ec ? dir : abs.string();
}

// The data directories: --data-dir, else the config's dataset.data_folder; each must be a
// folder that exists now.
dlio::Result<std::vector<std::string>> DataDirs(const CacheServeOptions& options,
                                                const dlio::WorkloadConfig& config) {
  std::vector<std::string> dirs;
  const bool given = !options.data_dirs.empty();
  for (const std::string& dir :
       given ? options.data_dirs : std::vector<std::string>{config.dataset.data_folder}) {
    const std::string abs = Absolute(dir);
    struct stat st {};
    if (::stat(abs.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return dlio::Status::InvalidArgument(
          given ? "--data-dir " : "dataset.data_folder (the default of --data-dir) ", dir,
          ": not an existing folder; cache-serve serves the files beneath its data directories "
          "only");
    }
    dirs.push_back(abs);
  }
  return dirs;
}

// --allow-group: a group name or a numeric gid.
dlio::Result<int64_t> GroupId(const std::string& name) {
  if (name.empty()) return int64_t{-1};
  if (name.find_first_not_of("0123456789") == std::string::npos && name.size() < 10) {
    return static_cast<int64_t>(std::stoll(name));
  }
  std::vector<char> buf(1 << 16);
  struct group entry {};
  struct group* found = nullptr;
  if (::getgrnam_r(name.c_str(), &entry, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return dlio::Status::InvalidArgument("--allow-group ", name, ": no such group");
  }
  return static_cast<int64_t>(found->gr_gid);
}

void PrintStats(const dlio::CacheStats& stats) {
  std::vector<dlio::CacheTierStats> levels = stats.tiers;
  levels.push_back(stats.source);
  std::printf("%-32s %10s %10s %12s %14s %14s %10s\n", "level", "hits", "misses", "read_through",
              "bytes_served", "bytes_copied", "evictions");
  for (const dlio::CacheTierStats& l : levels) {
    std::printf("%-32s %10llu %10llu %12llu %14llu %14llu %10llu\n", l.name.c_str(),
                static_cast<unsigned long long>(l.hits), static_cast<unsigned long long>(l.misses),
                static_cast<unsigned long long>(l.read_through),
                static_cast<unsigned long long>(l.bytes_served),
                static_cast<unsigned long long>(l.bytes_copied),
                static_cast<unsigned long long>(l.evictions));
  }
  std::fflush(stdout);
}

// The server's options from the command line; errors (exit 2) name the option.
dlio::Result<dlio::CacheServerOptions> ServerOptions(const CacheServeOptions& options,
                                                     const dlio::WorkloadConfig& config) {
  dlio::CacheServerOptions server_options;
  server_options.socket_path = options.socket;
  DLIO_ASSIGN_OR_RETURN(server_options.data_dirs, DataDirs(options, config));
  DLIO_ASSIGN_OR_RETURN(server_options.allow_gid, GroupId(options.allow_group));
  if (!options.future.empty()) {
    DLIO_ASSIGN_OR_RETURN(server_options.default_future, ReadFutureFile(options.future));
  }
  if (!options.stats_json.empty()) {  // refused now, not after serving for hours
    if (auto s = CheckCommandOutput(options.stats_json, IsCacheStatsOutput); !s.ok()) {
      return s.WithContext("--stats-json");
    }
  }
  return server_options;
}

// SIGINT and SIGTERM, blocked. Before any thread starts, so every thread inherits the mask and
// sigwait gets them.
sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

}  // namespace

void DeclareCacheServeOptions(CLI::App* cmd, CacheServeOptions* options) {
  cmd->add_option("config", options->config_file,
                  "DLIO YAML whose storage.storage_type is tiered (its tiers, policy and source)")
      ->required();
  cmd->add_option("--set", options->sets, "override a config key: section.key=value (repeatable)");
  cmd->add_option("--socket", options->socket,
                  "Unix socket path to listen on (a dead server's socket there is replaced; any "
                  "other file is refused)")
      ->required();
  cmd->add_option("--future", options->future,
                  "file with one absolute path per line: the order of future opens for the "
                  "clairvoyant policy, for clients that send none");
  cmd->add_option("--stats-json", options->stats_json,
                  "write the cache's statistics (JSON) here at exit (an existing file only when "
                  "it is an earlier --stats-json)");
  cmd->add_option("--data-dir", options->data_dirs,
                  "serve the files beneath this folder (repeatable; default: the config's "
                  "dataset.data_folder); any other path a client names is refused")
      ->type_name("DIR");
  cmd->add_option("--allow-group", options->allow_group,
                  "also let members of this group (name or gid) connect; the socket is then 0660 "
                  "of that group (default: only the server's own user and root; socket 0600)")
      ->type_name("GROUP");
}

int RunCacheServe(const CacheServeOptions& options) {
  dlio::Registries registries;
  if (auto s = dlio::RegisterBuiltins(&registries); !s.ok()) return Fail(s, kExitRunError);
  RunFlags flags;
  flags.config_file = options.config_file;
  flags.sets = options.sets;
  std::vector<std::string> warnings;
  auto config = BuildConfig(flags, {}, registries, &warnings);
  if (!config.ok()) return Fail(config.status(), kExitUsage);
  const dlio::StorageOptions storage_options = dlio::StorageOptionsFor(*config);
  // The server serves a cache that the ranks of a node may share: a storage that keeps one.
  auto declared = dlio::StorageCapabilitiesFor(storage_options, registries.storages);
  if (!declared.ok()) return Fail(declared.status(), kExitUsage);
  if (!declared->node_shared_cache) {
    return Fail(dlio::Status::InvalidArgument(
                    "cache-serve: storage.storage_type is '", storage_options.name,
                    "', which keeps no cache a node's ranks can share; the cache server needs "
                    "tiered"),
                kExitUsage);
  }
  auto server_options = ServerOptions(options, *config);
  if (!server_options.ok()) return Fail(server_options.status(), kExitUsage);
  const std::vector<std::string> dirs = server_options->data_dirs;
  const sigset_t stop_signals = BlockStopSignals();
  auto served = dlio::MakeServedCache(storage_options, registries.storages, dlio::SystemClock(),
                                      dirs, "--data-dir");
  if (!served.ok()) return Fail(served.status(), kExitUsage);
  dlio::TieredCache* cache = served->cache.get();
  server_options->source_cost = served->source->emulated_cost();
  auto server = dlio::CacheServer::Start(cache, std::move(server_options).value());
  if (!server.ok()) return Fail(server.status(), kExitRunError);
  std::string dir_list;
  for (const std::string& dir : dirs) dir_list += (dir_list.empty() ? "" : ", ") + dir;
  std::fprintf(stderr, "dlio-run cache-serve: %s cache (%s) of %s on %s\n",
               dlio::CachePolicyName(cache->policy()),
               storage_options.backends.Value<dlio::TieredOptions>().source.c_str(),
               dir_list.c_str(), options.socket.c_str());
  int signal = 0;
  sigwait(&stop_signals, &signal);
  server->reset();  // no client is served past this point
  const dlio::CacheStats stats = cache->Stats();
  PrintStats(stats);
  if (!options.stats_json.empty()) {
    const std::string json = dlio::CacheStatsJson(stats) + "\n";
    if (auto s = WriteCommandOutput(options.stats_json, json, IsCacheStatsOutput); !s.ok()) {
      return Fail(s, kExitRunError);
    }
  }
  return kExitOk;
}

}  // namespace dlio_run
