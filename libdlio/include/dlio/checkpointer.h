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
  uint64_t model_files = 1;  // model: files a rank's share is split into (>= 1)
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

// Built-ins (RegisterBuiltinCheckpointers): "paper" and "model". Files live in
// <folder>/ckpt-<id as 6 digits>/, named per rank: paper writes rank<r>-index-a.bin (1 KiB),
// rank<r>-index-b.bin (1 KiB), rank<r>-meta.bin (4 KiB), rank<r>-optimizer.bin (64 KiB) and
// rank<r>-model.bin (4 MiB) -- the paper's "KB/MB" are 1024-based as in its code; model writes
// model-rank<r>.bin with its share of model_size_bytes (the first total % world ranks get one
// byte more; a rank with no bytes writes nothing); with model_files = k > 1 that share is split
// into model-rank<r>-<i>of<k>.bin, i = 1..k, the first (share % k) one byte larger. A file of at
// most transfer_size bytes is written with one request (L2HMC: one fwrite per file). Content is seeded from (seed, id, rank).
// Ids: the first Save uses one past the highest ckpt-NNNNNN already in the folder when the
// checkpointer was built (earlier runs' checkpoints are kept), then counts up; in multi-rank runs
// every rank must build its checkpointer before any rank saves. A final file name that already
// exists is refused with AlreadyExists, never overwritten. Tracing: "checkpoint.capture" (Save) and
// "checkpoint.restart" (Load), cat "checkpoint", index = id.
// Not thread-safe: called from the training loop.
class Checkpointer {
 public:
  virtual ~Checkpointer() = default;
  // Writes checkpoint for (epoch, step): every file goes to "<name>.tmp" first, then is renamed,
  // so a crash never leaves a partial file under the final name.
  virtual Result<CheckpointResult> Save(uint64_t epoch, int64_t step) = 0;
  // With root_only on a rank > 0 both return an empty result (no files) without touching storage.
  // A failed Save removes its .tmp file and returns the error naming the path; its id is not
  // reused. Reads back checkpoint `id` written by this checkpointer; verifies sizes and content
  // (Corruption naming the file and offset).
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
