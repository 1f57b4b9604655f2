// `dlio-run fit`: a runnable dlio workload (DLIO YAML) derived from an I/O profile. FitTrace reads
// a ProfileTrace (any importer's, several traces merged) and infers the workload's keys: the data
// files and their format, layout, sizes and samples, the reader's threads, batch, transfer size,
// shuffles and I/O model, the compute time between batches, the epochs, side reads and checkpoint
// writes. Every key it sets carries a confidence and a one-line reason; a key it cannot infer is
// listed too, not set, with the reason (FitYaml writes it as a commented default).
//
// Thread safety: the functions are pure (they read the trace and call the caller's probe).
#ifndef DLIO_PROFILE_FIT_H_
#define DLIO_PROFILE_FIT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dlio/config_enums.h"
#include "dlio/profile.h"
#include "dlio/profile_compare.h"
#include "dlio/status.h"

namespace dlio {

// How sure an inferred value is: high = read directly from the trace or the files (counts, sizes,
// application events); medium = derived by a rule that holds for the usual loaders; low = a
// heuristic that this trace only weakly supports.
enum class FitConfidence { kHigh, kMedium, kLow };
std::string_view FitConfidenceName(FitConfidence c);

// One config key of the fitted workload.
struct FitEntry {
  std::string key;    // full key, "dataset.num_files_train"
  std::string value;  // YAML text of the value ("8", "npz", "{mean: 0.1, stdev: 0.01}")
  // false: not inferred; `value` is dlio's default and the key is written commented out.
  bool inferred = true;
  FitConfidence confidence = FitConfidence::kHigh;
  std::string reason;  // one line: what in the trace gave the value (or why none did)
};

// What a probe of a data file that still exists tells (DataFileProbe).
struct DataFileInfo {
  std::string format;    // registry name from suffix and magic bytes ("" unknown)
  int64_t size = -1;     // bytes, -1 unknown
  int64_t samples = -1;  // samples the file stores, -1 unknown (unreadable)
  // Stored sizes of its first samples (all of them, or a prefix when there are many).
  std::vector<int64_t> sample_sizes;
  // The bytes of all its samples (the file less its format's headers and index), -1 unknown.
  int64_t data_bytes = -1;
  // The format's writer stores about this many bytes per byte of record length (csv: ~2.65).
  double stored_bytes_per_record_byte = 1.0;
  // An image's channels as its header declares them (png, jpeg: 1 gray, 3 RGB, ...), 0 when
  // unknown or not an image.
  int32_t image_channels = 0;
  // Bytes on disk per byte of sample data: below 1 when the format's filters compress the
  // samples (hdf5 gzip; sample_sizes and data_bytes stay the samples' own bytes); 1 otherwise.
  double stored_fraction = 1.0;
  // Samples each chunk of a chunked format holds (hdf5 chunks of whole samples), 0 when not
  // chunked so or unknown.
  int64_t samples_per_chunk = 0;
  // The samples' codec as dataset.compression names it ("gzip"; "" none) and level (-1 unknown),
  // and the units it compresses (hdf5 chunks, an npz member): their count (0 unknown), the bytes
  // of one, and the mean and standard deviation of the bytes each takes on disk.
  std::string compression;
  int32_t compression_level = -1;
  int64_t compressed_units = 0, compressed_unit_bytes = 0;
  double stored_unit_mean = 0, stored_unit_stdev = 0;
  // The format's writer makes chunks of a chosen compression ratio
  // (FormatCapabilities::compression_ratio: dataset.compression_ratio).
  bool writes_compression_ratio = false;
  // Config keys (and YAML values) that make the format's writer lay files out as this one is
  // (a reader description's "writer_keys", docs/formats.md "inspect": webdataset's
  // dataset.webdataset_members); fit sets those every probed file agrees on.
  std::vector<std::pair<std::string, std::string>> writer_keys;
  // A range of the file's bytes; bytes 0: none.
  struct FileRange {
    int64_t offset = 0, bytes = 0;
    bool Holds(int64_t at, int64_t n) const { return at >= offset && at + n <= offset + bytes; }
    bool Overlaps(int64_t at, int64_t n) const {
      return bytes > 0 && at < offset + bytes && at + n > offset;
    }
  };
  // Tables of one row per sample stored beside the samples (a reader description's
  // "row_tables": hdf5 datasets whose first axis is the samples', contiguous): where their bytes
  // lie, so that fit tells a read of a row (libhdf5's sieve buffer reads from the row to the
  // table's end) from a sample's, and how long a row is.
  struct RowTable {
    FileRange range;
    int64_t row_bytes = 0;
  };
  std::vector<RowTable> row_tables;
  // Where the samples' bytes lie when they are one contiguous range (a reader description's
  // "sample_extent": an hdf5 rows-layout dataset); bytes 0: not told. A larger read elsewhere
  // is the file's metadata.
  FileRange sample_extent;
  // The attributes of the file's root as dataset.hdf5_root_attributes gives them, and the reads
  // reading them all after an open makes (a reader description's "root_attributes": the global
  // heap of an hdf5 file's string attributes, read by dict(f.attrs)); "" and none: not told.
  std::string root_attributes;
  std::vector<FileRange> attribute_reads;
  // The file holds its own name (a reader description's "stores_file_name": pt, whose torch.save
  // zip names its records after the file's stem): the emulation's names should be as long.
  bool stores_file_name = false;
  // Values of a reader key that change the requests one load of the file makes (a reader
  // description's "reader_variants": npz's reader.npz_members), each with the calls such a load
  // makes, in order, as the probe's own load made them (a read as its offset, an lseek as
  // kLoadSeek: a member's reads may all come from Python's buffer, its tells never do); fit sets
  // the value whose calls the program's loads of the file match.
  static constexpr int64_t kLoadSeek = -2;
  struct ReadVariant {
    std::string key, value;
    std::vector<int64_t> calls;
  };
  std::vector<ReadVariant> read_variants;
};

// Looks at a data file named by the trace. Called once per distinct data file (at most
// FitOptions::max_probed_files); an error (the file is gone, unreadable) is not fatal: the fit
// falls back on what the trace shows and says so in the reasons.
using DataFileProbe = std::function<Result<DataFileInfo>(const std::string& path)>;

// Whether this build's reader of `format` implements the reader.io_model `model` ("numpy", ...);
// a fitted model it does not implement is written commented out, so the output still runs.
using IoModelCheck = std::function<bool(const std::string& format, const std::string& model)>;

// Reads exactly `n` bytes at `offset` of a file the trace wrote that may still exist (a
// checkpoint), or returns an error (gone, shorter, unreadable).
using FileRangeRead =
    std::function<Result<std::string>(const std::string& path, uint64_t offset, uint64_t n)>;

// What `dlio-run fit` leaves out by default as the I/O of the program's runtime and launcher
// rather than its workload (docs/profiling.md, "Runtime and launcher I/O"): system folders,
// files directly in a temp folder (/tmp, /var/tmp, $TMPDIR), MPI and multiprocessing session
// folders, the program's code. Patterns, each one of:
//   "/DIR/"  absolute, ending in '/': everything beneath DIR (a glob, '*' within a component);
//   "/DIR/*" absolute: the paths it matches as a whole (fnmatch, '*' within a component);
//   "NAME/"  no leading '/': any folder of that name (a glob) and everything beneath it;
//   "NAME"   no '/': a file of that name (a glob: "*.pyc").
std::vector<std::string> DefaultFitIgnorePaths();
// Whether `pattern` is one of the above: InvalidArgument naming it when it is empty, holds a '/'
// inside a name pattern, or would leave out every file ("/", "*").
Status CheckFitIgnorePattern(std::string_view pattern);
// `--ignore-paths`: comma-separated patterns, the word `default` standing for
// DefaultFitIgnorePaths() ("default,/scratch/locks/"); "" leaves nothing out. InvalidArgument
// naming the first bad entry.
Result<std::vector<std::string>> ParseFitIgnorePaths(std::string_view text);
// `trace` without its events on the files fit leaves out as the runtime's and launchers' I/O:
// those `ignore_paths` match, and with `scratch_files` those created and deleted within the run
// (FitOptions::ignore_scratch_files). Events without a file stay. What `dlio-run compare` scores
// by default, so that a program traced whole is compared by its workload's I/O. The patterns
// must pass CheckFitIgnorePattern.
ProfileTrace WithoutRuntimeIo(const ProfileTrace& trace,
                              const std::vector<std::string>& ignore_paths, bool scratch_files,
                              RuntimeIoLeftOut* left_out);

// reader.io_model pyio's calls (reader.pyio_*): a head read, then calls of read_size bytes (0: one
// for the rest, short of tail_bytes, which a last read takes, or calls of tail_read_size bytes)
// with read, readinto or read1; or, with crop_bytes, a seek to crop_at and one call of crop_bytes;
// then end_reads calls that find the end.
struct PyioCalls {
  uint64_t head_bytes = 0, read_size = 0;
  PyioCall call = PyioCall::kRead;
  uint64_t tail_bytes = 0, tail_read_size = 0;
  uint64_t crop_bytes = 0, crop_at = 0;  // crop_at: where the simulated crop begins
  uint64_t end_reads = 0;
};
// One read request (offset, size) of a file.
using ReadRequest = std::pair<uint64_t, uint64_t>;
// The read requests io_model pyio makes for a file of `file_size` bytes with `calls`.
using PyioRequestsOf =
    std::function<std::vector<ReadRequest>(uint64_t file_size, const PyioCalls& calls)>;

// What a format's readers can do, as far as fit's rules ask (FormatCapabilities, dlio/format.h).
struct FitFormatTraits {
  // Its mmap reader reads reader.mmap_head_bytes (FormatCapabilities::mmap_head): fit then writes
  // the key for mappings that follow a read of the file's start.
  bool mmap_head = false;
  // Its pyio reader reads files of several samples as records, each with f.seek and one call
  // (FormatCapabilities::pyio_records): fit then tries that for seeks and reads at record offsets.
  bool pyio_records = false;
};

struct FitOptions {
  // Data-file probe; empty: the trace alone (formats from suffixes, sizes from offsets).
  DataFileProbe probe;
  // The format whose hints name files with this suffix (lower case, no dot: "npz"), or "" (the
  // app's FormatOfSuffix on its format registry, dlio/format.h); empty: no suffix names a format,
  // only a probe's magic bytes do.
  std::function<std::string(const std::string& suffix)> format_of_suffix;
  // Reads traced checkpoint files (torch.save's state dict); empty: the writes alone.
  FileRangeRead read_file;
  // Which I/O models are available; empty: all of them.
  IoModelCheck io_model_available;
  // Whether `format` declares `model` among its request models (the format registry's
  // FormatCapabilities::io_models): fit holds a trace against a model's request signature only
  // for such a format, and then writes it commented out when io_model_available says this build
  // lacks it; empty: every format declares every model.
  IoModelCheck format_declares;
  // The request model `auto` (and `pytorch`, the DataLoader's worker processes) reads `format`
  // with ("numpy", "native", ...); empty: the model fit saw is taken to be it.
  std::function<std::string(const std::string& format)> io_model_under_auto;
  // Whether request model `model` ("pandas", ...) does the framework's client work under
  // reader.client_costs framework (IoModelDoesClientWork, dlio/format.h): fit then weighs the
  // client work between the reads of one file stream; empty: no model does.
  std::function<bool(const std::string& model)> model_client_work;
  // What `format`'s readers can do that fit's rules ask (from its FormatCapabilities); empty:
  // none of it.
  std::function<FitFormatTraits(const std::string& format)> format_traits;
  // io_model pyio's requests, to hold a trace's reads against; empty: pyio is never chosen.
  PyioRequestsOf pyio_requests;
  size_t max_probed_files = 64;  // files probed for sizes and sample counts (the rest: the trace)
  // The run's name and where the emulation generates its dataset and writes its outputs.
  std::string name = "fit";
  std::string data_folder = "./fit-data";
  std::string checkpoint_folder = "./fit-checkpoints";
  // A gap between two reads of the data longer than this (microseconds) ends a burst when the
  // trace has no compute events; 0 chooses it from the gaps (see docs/profiling.md).
  int64_t burst_gap_us = 0;
  // Files left out as the runtime's and the launcher's (patterns above); FitTrace refuses a
  // malformed one.
  std::vector<std::string> ignore_paths = DefaultFitIgnorePaths();
  // Leave out scratch files: files created and deleted within the run by a thread that created
  // no other file meanwhile (Python's tempfile probe, lock files), when the trace holds the
  // unlink (strace, DFTracer).
  bool ignore_scratch_files = true;
};

struct FitResult {
  std::vector<FitEntry> entries;        // in YAML order: by section, then as FitYaml writes them
  std::vector<std::string> notes;       // trace-wide remarks written at the top (sources, caveats)
  std::vector<std::string> data_files;  // the files read as the dataset, sorted
  // MPI ranks of the traced run (ProfileTrace::ranks); FitYaml names the launch command when > 1.
  int32_t ranks = 1;
  // The request model the fitted reader.io_model reads with ("tarfile" under pytorch when the
  // workers read shards as tarfile does); "" when reader.io_model was not inferred.
  std::string request_model;
  // The entry of `key`, or nullptr.
  const FitEntry* Find(std::string_view key) const;
};

// Infers a workload from `trace`. InvalidArgument when the trace reads no file (nothing to fit);
// every other gap is a non-inferred entry.
Result<FitResult> FitTrace(const ProfileTrace& trace, const FitOptions& options = {});

// The first line of FitYaml's output (how an earlier fit output is recognised before replacing).
inline constexpr std::string_view kFitYamlTitle = "# dlio workload fitted by `dlio-run fit`";

// The workload as DLIO YAML: kFitYamlTitle, the notes, then one block per section with each key's
// confidence and reason as an aligned comment; keys not inferred are commented out. A fit of
// several ranks says how to launch it ("mpirun -n N dlio-run --config ...") below the title.
// `sources` (the traces fitted) are named in the header.
std::string FitYaml(const FitResult& result, const std::vector<std::string>& sources);

}  // namespace dlio

#endif  // DLIO_PROFILE_FIT_H_
