// `dlio-run cache-serve CONFIG --socket PATH [--data-dir DIR]... [--allow-group GROUP]
// [--future FILE] [--stats-json FILE]`: builds the cache of the config's `tiered` storage and
// serves the files of its data directories over a Unix socket (dlio/cache_server.h) to the
// programs of this node (libdlio_cache_preload.so), until SIGINT or SIGTERM.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dlio_run {

struct CacheServeOptions {
  std::string config_file;        // a DLIO YAML whose storage: section is storage_type tiered
  std::vector<std::string> sets;  // --set section.key=value overrides
  std::string socket;             // where to listen (required)
  std::string future;             // one absolute path per line: the clairvoyant order
  std::string stats_json;         // written at exit (temp name + rename)
  // The folders whose files are served (absolute or relative to the working directory); empty:
  // the config's dataset.data_folder.
  std::vector<std::string> data_dirs;
  std::string allow_group;  // a group name or gid whose members may connect too; empty: none
};

// Declares the `cache-serve` options on `command` (named and described by main.cc's table), filling
// `options` when parsed.
void DeclareCacheServeOptions(CLI::App* command, CacheServeOptions* options);

// Runs it: 0 after a signal stopped it, 2 for a bad config or option (the message names the key
// or file), 1 when the server cannot start or the statistics cannot be written.
int RunCacheServe(const CacheServeOptions& options);

}  // namespace dlio_run
