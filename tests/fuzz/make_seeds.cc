// Writes the seed corpus of every fuzz target (tests/fuzz/corpus/<target>/) with dlio's own
// writers, small: a few samples of a few hundred bytes each. Run by hand after a format changes:
//   cmake --build build --target dlio_fuzz_seeds
//   build/tests/dlio_fuzz_seeds tests/fuzz/corpus libdlio/workloads
// Inputs made by other tools (numpy, pandas) are committed beside these by hand (docs/testing.md).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

namespace fs = std::filesystem;

struct Seed {
  std::string target;  // fuzz target and format name
  std::string name;    // file name in the corpus
  std::vector<uint64_t> sample_sizes;
  uint8_t option_bits = 0;
  FormatOptions options;
};

std::vector<Seed> FormatSeeds() {
  std::vector<Seed> seeds;
  auto add = [&](std::string target, std::string name, std::vector<uint64_t> sizes,
                 uint8_t bits = 0) {
    Seed s;
    s.target = std::move(target);
    s.name = std::move(name);
    s.sample_sizes = std::move(sizes);
    s.option_bits = bits;
    s.options.formats.Get<CsvOptions>().header = (bits & kOptCsvHeader) != 0;
    s.options.formats.Get<Hdf5Options>().metadata_file = (bits & kOptMetadataFile) != 0;
    seeds.push_back(std::move(s));
    return &seeds.back();
  };
  const std::vector<uint64_t> three(3, 96);
  add("npy", "three_samples", three);
  add("npy", "one_sample_small_transfers", {40}, 2 << 1);
  add("npz", "stored", three);
  add("npz", "deflated", three)->options.compression = "gzip";
  add("csv", "rows", {24, 24, 24}, kOptDecode);
  add("csv", "rows_with_header", {24, 24}, kOptDecode | kOptCsvHeader);
  add("indexed_binary", "three_sizes", {64, 17, 130});
  add("tfrecord", "indexed", {80, 33, 120});
  add("tfrecord", "no_index_no_verify", {80, 33}, kOptNoIndex | kOptNoVerify)
      ->options.formats.Get<TfrecordOptions>()
      .write_index = false;
  add("jpeg", "decode", {256}, kOptDecode);
  add("png", "decode", {256}, kOptDecode);
  add("hdf5", "rows", three);
  add("hdf5", "concatenated", {64, 17, 130});
  Seed* chunked = add("hdf5", "chunked_deflate", three);
  chunked->options.formats.Get<Hdf5Options>().enable_chunking = true;
  chunked->options.formats.Get<Hdf5Options>().chunk_samples = 2;
  chunked->options.compression = "gzip";
  add("hdf5", "metadata_file", three, kOptMetadataFile);
  add("parquet", "data_column", three);
  // Typed columns read by pyarrow's fork reads (the default), by native's and by pre_buffer's.
  for (const auto& [name, bits] : {std::pair<const char*, uint8_t>{"typed_columns_snappy", 0},
                                   {"typed_columns_native", kOptNativeModel},
                                   {"typed_columns_pre_buffer", 2 << 1}}) {
    Seed* typed = add("parquet", name, {0, 0, 0, 0, 0}, bits);
    typed->options.compression = "snappy";
    ParquetOptions& parquet = typed->options.formats.Get<ParquetOptions>();
    parquet.row_group_size = 2;
    parquet.columns = {{"i", "int16", 1, true},
                       {"f", "float16", 3, true},
                       {"d", "float64", 1, true},
                       {"s", "string", 4, true}};
  }
  add("webdataset", "three_samples", {96, 0, 700});
  add("webdataset", "native_small_transfers", {40, 513}, kOptNativeModel | 2 << 1);
  add("sqlite", "three_rows", {96, 0, 700});
  add("sqlite", "overflow_pages", {9000, 300});
  // zipfile's reads (the default), native's, and deflated members.
  add("zip", "stored_members", {96, 0, 700});
  add("zip", "native_stored", {96, 0, 700}, kOptNativeModel);
  add("zip", "deflated_members", {300, 1, 2000})->options.compression = "gzip";
  add("zip", "native_deflated", {300, 1, 2000}, kOptNativeModel)->options.compression = "gzip";
  // torch.load's reads (the default, every offset learnt from the bytes) and native's.
  add("pt", "one_tensor", {700});
  add("pt", "native_one_tensor", {700}, kOptNativeModel);
  return seeds;
}

std::string ReadAll(Storage* storage, const std::string& path) {
  auto file = storage->Open(path, OpenMode::kRead);
  if (!file.ok()) return {};
  auto size = (*file)->Size();
  std::string bytes(size.ok() ? *size : 0, '\0');
  if (!bytes.empty() && !(*file)->ReadExactAt(0, bytes.size(), bytes.data()).ok()) return {};
  return bytes;
}

bool WriteLocal(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::printf("%s (%zu bytes)\n", path.c_str(), bytes.size());
  return static_cast<bool>(out);
}

bool WriteFormatSeed(const Registries& registries, const Seed& seed, const fs::path& out_dir) {
  const FuzzTarget* target = FindFuzzTarget(seed.target);
  auto factory = registries.formats.Get(seed.target);
  if (target == nullptr || !factory.ok()) return false;
  auto format = (*factory)();
  if (!format.ok()) {
    std::printf("skipped %s/%s: %s\n", seed.target.c_str(), seed.name.c_str(),
                format.status().ToString().c_str());
    return true;
  }
  std::unique_ptr<Storage> storage = NewMemoryStorage();
  const std::string path = "/seed/input." + (*format)->extension();
  FileSpec spec;
  spec.seed = 7;
  spec.sample_sizes = seed.sample_sizes;
  Status st = storage->CreateDirs("/seed");
  if (st.ok()) st = (*format)->Write(storage.get(), path, spec, seed.options);
  if (!st.ok()) {
    std::fprintf(stderr, "%s/%s: %s\n", seed.target.c_str(), seed.name.c_str(),
                 st.ToString().c_str());
    return false;
  }
  std::vector<std::string> parts = {ReadAll(storage.get(), path)};
  for (const std::string& suffix : target->companion_suffixes) {
    auto exists = storage->Exists(path + suffix);
    if (!exists.ok() || !*exists) break;
    parts.push_back(ReadAll(storage.get(), path + suffix));
  }
  return WriteLocal(out_dir / seed.target / seed.name, JoinInput(seed.option_bits, parts));
}

// Config seeds: preset files as they ship, each with a few overrides.
bool WriteConfigSeeds(const fs::path& workloads, const fs::path& out_dir) {
  struct ConfigSeed {
    const char* preset;
    const char* overrides;
  };
  const ConfigSeed seeds[] = {
      {"unet3d_h100", "++workload.train.epochs=2\nreader.read_threads=2"},
      {"resnet50_h100", "dataset.num_files_train=16\nreader.batch_size=4"},
      {"llama3_8b", "checkpoint.size_divisor=1000"},
      {"cosmic_tagger", "scale=0.01\ntrain.computation_time={mean: 0.1, stdev: 0.01}"},
      {"dlrm", ""},
  };
  for (const ConfigSeed& s : seeds) {
    std::ifstream in(workloads / (std::string(s.preset) + ".yaml"), std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read preset %s under %s\n", s.preset, workloads.c_str());
      return false;
    }
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> parts = {text};
    if (*s.overrides) parts.emplace_back(s.overrides);
    if (!WriteLocal(out_dir / "config" / s.preset, JoinInput(0, parts))) return false;
  }
  return WriteLocal(out_dir / "config" / "json_wrapped",
                    JoinInput(0, {"{\"workload\": {\"dataset\": {\"format\": \"png\", "
                                  "\"num_files_train\": 4}, \"reader\": {\"batch_size\": 2}}}",
                                  "storage.storage_type=memory"}));
}

}  // namespace
}  // namespace dlio::fuzz

int main(int argc, char** argv) {
  using namespace dlio::fuzz;  // NOLINT(build/namespaces)
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR WORKLOADS_DIR\n", argv[0]);
    return 2;
  }
  dlio::Registries registries;
  if (!dlio::RegisterBuiltinFormats(&registries.formats).ok()) return 1;
  bool ok = true;
  for (const Seed& seed : FormatSeeds()) ok = WriteFormatSeed(registries, seed, argv[1]) && ok;
  ok = WriteConfigSeeds(argv[2], argv[1]) && ok;
  for (const auto& [name, input] : CacheWireSeeds()) {
    ok = WriteLocal(fs::path(argv[1]) / "cache_wire" / name, input) && ok;
  }
  return ok ? 0 : 1;
}
