#include "cache_serve.h"

#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>

#include "dlio/cache.h"
#include "dlio/cache_server.h"
#include "dlio/loop.h"
#include "run_common.h"

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

dlio::Status WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text << "\n";
    if (!out.flush()) return dlio::Status::IOError("writing ", tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return dlio::Status::FromErrno(errno, "renaming " + tmp + " to " + path);
  }
  return dlio::Status::OK();
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

}  // namespace

CLI::App* AddCacheServeCommand(CLI::App* app, CacheServeOptions* options) {
  auto* cmd = app->add_subcommand(
      "cache-serve",
      "serve the tiered cache of a config's storage: section over a Unix socket to the "
      "processes of this node (libdlio_cache_preload.so), until SIGINT/SIGTERM "
      "(docs/caching.md)");
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
                  "write the cache's statistics (JSON) here at exit");
  return cmd;
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
  if (storage_options.name != "tiered") {
    return Fail(
        dlio::Status::InvalidArgument("cache-serve: storage.storage_type is '",
                                      storage_options.name, "'; the cache server needs tiered"),
        kExitUsage);
  }
  dlio::CacheServerOptions server_options;
  server_options.socket_path = options.socket;
  if (!options.future.empty()) {
    auto future = ReadFutureFile(options.future);
    if (!future.ok()) return Fail(future.status(), kExitUsage);
    server_options.default_future = std::move(future).value();
  }
  // Blocked before any thread starts, so every thread inherits the mask and sigwait gets them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto storage = dlio::MakeStorage(storage_options, registries, dlio::SystemClock(), nullptr);
  if (!storage.ok()) return Fail(storage.status(), kExitUsage);
  dlio::TieredCache* cache = dlio::CacheOf(storage->get());
  server_options.source_cost = (*storage)->emulated_cost();
  auto server = dlio::CacheServer::Start(cache, std::move(server_options));
  if (!server.ok()) return Fail(server.status(), kExitRunError);
  std::fprintf(stderr, "dlio-run cache-serve: %s cache (%s) on %s\n",
               dlio::CachePolicyName(cache->policy()), storage_options.tiered_source.c_str(),
               options.socket.c_str());
  int signal = 0;
  sigwait(&stop_signals, &signal);
  server->reset();  // no client is served past this point
  const dlio::CacheStats stats = cache->Stats();
  PrintStats(stats);
  if (!options.stats_json.empty()) {
    if (auto s = WriteAtomically(options.stats_json, dlio::CacheStatsJson(stats)); !s.ok()) {
      return Fail(s, kExitRunError);
    }
  }
  return kExitOk;
}

}  // namespace dlio_run
