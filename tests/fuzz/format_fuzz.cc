// The format targets: the input's parts become a file (and its companions) on memory storage,
// which the format then opens, counts, reads sample by sample and describes, as `dlio-run
// inspect` and a training run would.
#include <google/protobuf/stubs/logging.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#ifdef DLIO_FUZZ_HDF5
#include <hdf5.h>
#endif

#include "dlio/format.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "format/csv/csv_options.h"
#include "format/hdf5/hdf5_options.h"
#include "format/parquet/parquet_options.h"
#include "format/tfrecord/tfrecord_options.h"
#include "fuzz_targets.h"

namespace dlio::fuzz {
namespace {

// Reads at most this many samples per input (the first ones and the last ones), so a file that
// claims millions of tiny samples still runs in milliseconds.
constexpr uint64_t kHeadSamples = 48;
constexpr uint64_t kTailSamples = 16;
// Samples claiming more than this are not read: the harness would spend its time and memory
// budget on one allocation (the reader's bound on such claims is the reader's business, and
// the harness still reads every sample up to this size).
constexpr uint64_t kMaxSampleBytes = 64ull << 20;

// A violated contract of Format/FormatReader: print it and abort, so libFuzzer saves the input.
[[noreturn]] void Violated(const FuzzTarget& target, const std::string& what) {
  std::fprintf(stderr, "dlio fuzz %s: contract violated: %s\n", target.name.c_str(), what.c_str());
  std::abort();
}

const Format* GetFormat(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Format>> formats;
  std::lock_guard<std::mutex> lock(mu);
  auto it = formats.find(name);
  if (it != formats.end()) return it->second.get();
  if (formats.empty()) {
    // libprotobuf logs every invalid UTF-8 string field it parses (tfrecord's tf.train.Example)
    // to stderr, which would cost the fuzzer most of its time; the reader's Status says enough.
    google::protobuf::SetLogHandler(nullptr);
  }
  Registries registries;
  if (!RegisterBuiltinFormats(&registries.formats).ok()) std::abort();
  auto factory = registries.formats.Get(name);
  if (!factory.ok()) std::abort();
  auto made = (*factory)();
  // A format whose dependency was not built (hdf5 without HDF5) has nothing to fuzz.
  std::unique_ptr<Format> format = made.ok() ? std::move(*made) : nullptr;
  return formats.emplace(name, std::move(format)).first->second.get();
}

// DLIO_FUZZ_VERBOSE=1 prints what each input did (for writing seeds and regression inputs).
bool Verbose() {
  static const bool verbose = std::getenv("DLIO_FUZZ_VERBOSE") != nullptr;
  return verbose;
}

FormatOptions OptionsFrom(uint8_t bits) {
  static constexpr uint64_t kTransferSizes[] = {262144, 0, 4096, 7};
  static constexpr PyarrowRead kPyarrowReads[] = {PyarrowRead::kFork, PyarrowRead::kColumns,
                                                  PyarrowRead::kPreBuffer, PyarrowRead::kFork};
  FormatOptions o;
  o.decode = (bits & kOptDecode) != 0;
  o.transfer_size = kTransferSizes[(bits & kOptTransferBits) >> 1];
  o.verify = (bits & kOptNoVerify) == 0;
  o.formats.Get<TfrecordOptions>().use_index = (bits & kOptNoIndex) == 0;
  o.formats.Get<CsvOptions>().header = (bits & kOptCsvHeader) != 0;
  o.formats.Get<Hdf5Options>().metadata_file = (bits & kOptMetadataFile) != 0;
  o.formats.Get<ParquetOptions>().pyarrow_read = kPyarrowReads[(bits & kOptTransferBits) >> 1];
  o.io_model = (bits & kOptNativeModel) != 0 ? IoModel::kNative : IoModel::kAuto;
  return o;
}

bool WriteFile(Storage* storage, const std::string& path, std::string_view bytes) {
  auto file = storage->Open(path, OpenMode::kCreateNew);
  if (!file.ok()) return false;
  if (!bytes.empty() && !(*file)->WriteAt(0, bytes.data(), bytes.size()).ok()) return false;
  return (*file)->Close().ok();
}

void ReadOne(const FuzzTarget& target, const Format& format, const FormatOptions& options,
             FormatReader* reader, uint64_t i, SampleBuffer* sample, SampleBuffer* decoded) {
  const uint64_t size = reader->sample_size(i);
  if (size > kMaxSampleBytes) return;
  Status st = reader->ReadSample(i, sample);
  if (Verbose())
    std::fprintf(stderr, "  sample %llu: %s\n", (unsigned long long)i, st.ToString().c_str());
  if (!st.ok()) return;
  if (sample->size() != size) {
    Violated(target, "sample " + std::to_string(i) + ": sample_size() says " +
                         std::to_string(size) + " bytes, ReadSample returned " +
                         std::to_string(sample->size()));
  }
  if (options.decode && format.has_decoder()) {
    st = format.Decode(sample->data(), sample->size(), decoded);
    if (Verbose()) std::fprintf(stderr, "  decode: %s\n", st.ToString().c_str());
  }
}

}  // namespace

bool TargetAvailable(const FuzzTarget& target) {
  return target.format.empty() || GetFormat(target.format) != nullptr;
}

int FuzzFormat(const FuzzTarget& target, uint8_t option_bits,
               const std::vector<std::string_view>& parts) {
  const Format* format = GetFormat(target.format);
  if (format == nullptr) return 0;
  const FormatOptions options = OptionsFrom(option_bits);
  std::unique_ptr<Storage> storage = NewMemoryStorage();
  const std::string path = "/fuzz/input." + format->extension();
  if (!storage->CreateDirs("/fuzz").ok()) std::abort();
  for (size_t p = 0; p < parts.size() && p <= target.companion_suffixes.size(); ++p) {
    const std::string name = p == 0 ? path : path + target.companion_suffixes[p - 1];
    if (!WriteFile(storage.get(), name, parts[p])) std::abort();
  }

  auto opened = format->Open(storage.get(), path, options);
  if (!opened.ok()) {
    if (Verbose()) std::fprintf(stderr, "  open: %s\n", opened.status().ToString().c_str());
    return 0;
  }
  std::unique_ptr<FormatReader> reader = std::move(*opened);
  const uint64_t n = reader->num_samples();
  if (Verbose()) std::fprintf(stderr, "  open: OK, %llu samples\n", (unsigned long long)n);
  SampleBuffer sample, decoded;
  for (uint64_t i = 0; i < n && i < kHeadSamples; ++i) {
    ReadOne(target, *format, options, reader.get(), i, &sample, &decoded);
  }
  for (uint64_t i = std::max(kHeadSamples, n > kTailSamples ? n - kTailSamples : 0); i < n; ++i) {
    ReadOne(target, *format, options, reader.get(), i, &sample, &decoded);
  }
  if (reader->ReadSample(n, &sample).ok()) {
    Violated(target, "ReadSample(num_samples() = " + std::to_string(n) + ") succeeded");
  }
  const std::string described = reader->DescribeJson();
  if (!nlohmann::json::accept(described)) {
    Violated(target, "DescribeJson() is not JSON: " + described.substr(0, 200));
  }
  reader.reset();
#ifdef DLIO_FUZZ_HDF5
  // libhdf5 frees what a forgotten H5Xclose holds only at exit, where LeakSanitizer cannot tell
  // it from libhdf5's own leaks (suppressed); open identifiers say it at once.
  const ssize_t open_ids = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
  if (open_ids != 0) {
    Violated(target, std::to_string(open_ids) + " HDF5 objects still open after the reader closed");
  }
#endif
  return 0;
}

}  // namespace dlio::fuzz
