// profiling.profiler: iostat, as the Python DLIO runs it (profiler/iostat_profiler.py): rank 0
// runs `iostat -mdxtcy -o JSON 1` beside the benchmark, its output going to
// output.folder/iostat.json, and stops it with SIGINT so that iostat closes the JSON document.
// DLIO's post-processor (dlio_postprocessor) reads that file.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "dlio/status.h"

namespace dlio::runner_internal {

class IostatProcess {
 public:
  // Starts iostat, found on PATH, writing to "<folder>/iostat.json" (through a temporary name,
  // renamed by Stop). NotFound naming profiling.profiler when there is no iostat.
  static Result<std::unique_ptr<IostatProcess>> Start(const std::string& folder);
  IostatProcess(const IostatProcess&) = delete;
  IostatProcess& operator=(const IostatProcess&) = delete;
  // Stops a still-running iostat and removes its partial output.
  ~IostatProcess();

  // SIGINT, waits for iostat to end, and renames its output to iostat.json. An iostat that failed
  // (exit status not 0 and not SIGINT) is an error naming its status.
  Status Stop();

 private:
  IostatProcess(pid_t pid, std::string temp, std::string final_path)
      : pid_(pid), temp_(std::move(temp)), final_(std::move(final_path)) {}
  Result<int> Wait();

  pid_t pid_;
  std::string temp_, final_;
};

}  // namespace dlio::runner_internal
