// Side I/O: the reads and writes a training code does beside its training data, as the DLIO paper
// found them: FRNN's many ~100-byte reads of a metadata ("signal shots") file before each step,
// climate segmentation's 50 random 500-byte reads of a 4 KB HDF5 stats file over the run and the
// 4 MB JSON model file every rank writes at the end. One side file is read on a schedule; one
// file per rank is written after training. Everything goes through a Storage, so it is traced and
// counted like the data reads. The runner drives it from the side_io.* keys; a training loop of
// its own (examples/) builds it with SideIoOptionsFor and calls the same hooks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/config.h"
#include "dlio/registries.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio {

struct SideIoOptions {
  std::string read_file;        // path of the side file ("" = no reads)
  uint64_t read_file_size = 0;  // GenerateSideFile creates it with this many bytes (0 = never)
  std::string read_file_format = "raw";  // raw, or a Format registry name (one sample written)
  uint64_t read_size = 4096;             // bytes per read (the whole file when it is smaller,
                                         // except with kWhole: the requests' size)
  uint64_t reads = 0;                    // per step (kPerStep) or in all; kWhole: passes
  SideIoSchedule schedule = SideIoSchedule::kPerStep;
  // kRandom: seeded random offsets; kSequential: consecutive, wrapping around; kWhole: each read
  // is a pass over the whole file (ReadWholeFile).
  SideIoAccess access = SideIoAccess::kRandom;
  uint64_t end_reads = 0;  // kWhole: requests returning nothing after each pass found the end
  std::string write_file;  // path written after training ("" or write_bytes 0 = none)
  uint64_t write_bytes = 0;
  uint64_t write_request_size = 0;  // bytes per write request (0 = one request)
  uint64_t seed = 0;       // this rank's offsets, spread steps and written content derive from it
  uint64_t file_seed = 0;  // content of the generated side file (the same on every rank)
};

// The options of `config`'s side_io section for `rank`: a relative read_file is under
// dataset.data_folder, write_file under output.folder with {rank} replaced.
Result<SideIoOptions> SideIoOptionsFor(const WorkloadConfig& config, int rank);

// Creates options.read_file (when read_file_size > 0 and it does not exist yet) through `storage`:
// raw = read_file_size seeded bytes; a format name = that format's writer storing one sample of
// read_file_size bytes (so the file is a little larger: the format's headers). Written through
// WriteFileAtomically (a temporary name, then a rename). Call it on one rank. NotFound naming
// side_io.read_file_format for an unknown format.
Status GenerateSideFile(const SideIoOptions& options, const Registries& registries,
                        Storage* storage);

// Not thread-safe: called from the training loop. Storage must outlive it.
class SideIo {
 public:
  // Opens nothing yet; InvalidArgument for read_size 0 with a read file.
  static Result<std::unique_ptr<SideIo>> Make(const SideIoOptions& options, Storage* storage);
  ~SideIo();
  SideIo(const SideIo&) = delete;
  SideIo& operator=(const SideIo&) = delete;

  // Opens the side file (NotFound naming it and side_io.read_file when missing) and does the
  // kBeforeTraining reads. Call once, before the first step. With kWhole the file stays closed
  // between passes (each opens it), so a missing file is found by the first pass.
  Status BeforeTraining();
  // Tells a kSpread schedule how many steps the run has (steps are 0-based global indices below).
  // The first call draws the steps; later calls are ignored.
  void SetRunSteps(uint64_t steps);
  // The reads due before global step `step`: `reads` of them with kPerStep, the spread reads drawn
  // for this step with kSpread (none before SetRunSteps).
  Status BeforeStep(uint64_t step);
  // Closes the side file and writes write_file in place, as the emulated program does (opened
  // with truncation, replacing an earlier run's file; no temporary name, no rename): write_bytes
  // bytes in requests of write_request_size; a name ending in .json
  // gets a valid JSON document of exactly that size.
  Status AfterTraining();

  // Read requests made (kWhole: every request of every pass, the empty ones included).
  uint64_t reads_done() const { return reads_done_; }
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  SideIo(const SideIoOptions& options, Storage* storage);
  Status ReadOnce();
  Status ReadAtOffset();
  // One kWhole pass, as a program reading the file to its end through Python's buffered reader
  // does (`with open(f) as f: f.read()`, pandas' CSV parser): open; from offset 0, chunks of
  // read_size, each filled by requests for what is still missing until one returns nothing
  // (BufferedReader.read(n)), until a chunk comes back short; then end_reads requests of
  // read_size; close.
  Status ReadWholeFile();
  Result<std::unique_ptr<File>> OpenReadFile();

  SideIoOptions options_;
  Storage* storage_;
  std::unique_ptr<File> file_;  // open from BeforeTraining to AfterTraining, except with kWhole
  bool started_ = false;        // BeforeTraining ran with a read file
  uint64_t file_size_ = 0;
  uint64_t cursor_ = 0;  // next offset of consecutive reads
  uint64_t rng_ = 0;
  std::vector<uint64_t> spread_steps_;  // sorted; consumed from spread_next_
  size_t spread_next_ = 0;
  bool spread_drawn_ = false;
  std::vector<uint8_t> buffer_;
  uint64_t reads_done_ = 0, bytes_read_ = 0, bytes_written_ = 0;
};

}  // namespace dlio
