// Checkpointer: writes (and reads back) model/optimizer state at a cadence.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/registry.h"
#include "dlio/status.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"

namespace dlio {

struct CheckpointOptions {
  std::string name = "paper";  // paper: 2 x 1 KB, 4 KB, 64 KB, 4 MB files; model: model_size_bytes
  std::string folder = "./checkpoints";
  uint64_t model_size_bytes = 0;  // model: bytes per checkpoint (split over ranks by rank_mode)
  bool fsync = false;             // fsync every file (and the folder after the rename)
  bool read_back = false;         // read every file back after writing it
  uint64_t transfer_size = 4 << 20;  // bytes per write/read request
  int rank = 0;
  int world = 1;
  bool root_only = false;  // only rank 0 writes (L2HMC); others return empty results
  uint64_t seed = 0;
};

struct CheckpointFileResult {
  std::string path;
  uint64_t bytes = 0;
};

struct CheckpointResult {
  uint64_t id = 0;            // checkpoint number, from 0
  uint64_t bytes_written = 0;
  int64_t write_ns = 0;       // from the first open to the last rename (and fsyncs)
  uint64_t bytes_read = 0;
  int64_t read_ns = 0;
  std::vector<CheckpointFileResult> files;
};

// Not thread-safe: called from the training loop.
class Checkpointer {
 public:
  virtual ~Checkpointer() = default;
  // Writes checkpoint for (epoch, step): every file goes to "<name>.tmp" first, then is renamed,
  // so a crash never leaves a partial file under the final name.
  virtual Result<CheckpointResult> Save(uint64_t epoch, int64_t step) = 0;
  // Reads back checkpoint `id` written by this checkpointer; verifies sizes.
  virtual Result<CheckpointResult> Load(uint64_t id) = 0;
};

struct CheckpointEnv {
  Storage* storage = nullptr;  // not owned
  const Clock* clock = nullptr;
  Tracer* tracer = nullptr;
};

using CheckpointerFactory = std::function<Result<std::unique_ptr<Checkpointer>>(
    const CheckpointOptions&, const CheckpointEnv&)>;

}  // namespace dlio
