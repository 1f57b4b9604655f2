// Fuzz targets over dlio's parsers of untrusted bytes: every format reader and the config parser.
// The same targets run under libFuzzer (libfuzzer_main.cc, clang only) and in the replay program
// (replay_main.cc, any compiler) that ctest runs over the committed regression inputs.
//
// An input is one byte of options followed by parts separated by kPartSeparator: a format
// target writes part 0 as the file and the next parts as its companions (index files); the
// config target parses part 0 as YAML and applies each line of part 1 as an override; the trace
// target imports part 0 as a trace file (trace_fuzz.cc); the cache_wire target sends part 0 to a
// cache server as one client's bytes (cache_wire_fuzz.cc; options bit 0: clairvoyant, else lru).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dlio::fuzz {

inline constexpr std::string_view kPartSeparator = "\n--dlio-part--\n";

// What the options byte (the first byte of an input) selects in format targets.
enum OptionBits : uint8_t {
  kOptDecode = 1 << 0,        // Format::Decode on every sample read (formats with a decoder)
  kOptTransferBits = 3 << 1,  // FormatOptions::transfer_size: 256 KiB, 0 (whole), 4096, 7; and
                              // parquet.pyarrow_read: fork, columns, pre_buffer, fork
  kOptNoVerify = 1 << 3,      // FormatOptions::verify = false
  kOptNoIndex = 1 << 4,       // FormatOptions::use_index = false
  kOptCsvHeader = 1 << 5,     // CsvOptions::header = true (in FormatOptions::formats)
  kOptMetadataFile = 1 << 6,  // FormatOptions::metadata_file = true
  kOptNativeModel = 1 << 7,   // FormatOptions::io_model = native (else auto, the format's default)
};

struct FuzzTarget {
  std::string name;    // "npy", "config", ...: the libFuzzer binary is dlio_fuzz_<name>
  std::string format;  // the registered format it opens; empty for the config and trace targets
  // File name suffixes of the parts after part 0 ("<file>.off.idx", ...).
  std::vector<std::string> companion_suffixes;
};

// Every target, in a fixed order.
const std::vector<FuzzTarget>& FuzzTargets();
// The target called `name`, or nullptr.
const FuzzTarget* FindFuzzTarget(std::string_view name);

// Whether `target` can run in this build (false for hdf5 built without HDF5).
bool TargetAvailable(const FuzzTarget& target);

// Runs one input through `target`. Returns 0 (libFuzzer's convention); a bug shows up as a
// crash, a sanitizer report, a hang or an abort from a failed property check.
int RunFuzzTarget(const FuzzTarget& target, const uint8_t* data, size_t size);

// Splits an input (after its options byte) into parts at kPartSeparator.
std::vector<std::string_view> SplitParts(std::string_view input);
// The inverse of SplitParts plus the options byte: builds an input (for the seed corpus).
std::string JoinInput(uint8_t options, const std::vector<std::string>& parts);

// The two halves behind RunFuzzTarget.
int FuzzFormat(const FuzzTarget& target, uint8_t options,
               const std::vector<std::string_view>& parts);
int FuzzConfig(const std::vector<std::string_view>& parts);
int FuzzTrace(const std::vector<std::string_view>& parts);
int FuzzCacheWire(uint8_t options, const std::vector<std::string_view>& parts);

// The data directory of the cache_wire target's server (its seeds name files in it).
inline constexpr char kCacheWireDataDir[] = "/tmp/dlio-fuzz-cache-wire";
// The seed inputs of the cache_wire target (file name, input), written by make_seeds.cc.
std::vector<std::pair<std::string, std::string>> CacheWireSeeds();

}  // namespace dlio::fuzz
