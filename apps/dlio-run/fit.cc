#include "fit.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "dlio/clock.h"
#include "dlio/config.h"
#include "dlio/config_enums.h"
#include "dlio/format.h"
#include "dlio/loop.h"
#include "dlio/profile.h"
#include "dlio/profile_fit.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"
#include "exit_codes.h"
#include "trace_cli.h"

namespace dlio_run {
namespace {

constexpr uint64_t kMaxProbedSamples = uint64_t{1} << 16;  // sizes read per probed file
// Probed files loaded once per reader variant (ReadVariants): each costs a few whole loads.
constexpr int kMaxVariantFiles = 4;

int FitFail(const std::string& message, int code) {
  std::fprintf(stderr, "dlio-run: error: fit: %s\n", message.c_str());
  return code;
}

bool IsFitOutput(std::string_view head) { return head.rfind(dlio::kFitYamlTitle, 0) == 0; }

// `n` bytes at `offset` of a traced file that still exists (a checkpoint fit reads back).
dlio::Result<std::string> ReadRange(dlio::Storage* storage, const std::string& path,
                                    uint64_t offset, uint64_t n) {
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, dlio::OpenMode::kRead));
  std::string out(static_cast<size_t>(n), '\0');
  DLIO_RETURN_NOT_OK(file->ReadExactAt(offset, out.size(), out.data()));
  return out;
}

// A range of the file a reader's description gives ({offset, bytes}), inside the file, or
// nullopt.
std::optional<dlio::DataFileInfo::FileRange> DescribedRange(const nlohmann::json& j,
                                                            int64_t file_size) {
  auto number = [&j](const char* key) {
    const auto v = j.find(key);
    return v != j.end() && v->is_number_unsigned() && v->get<uint64_t>() <= INT64_MAX
               ? v->get<int64_t>()
               : int64_t{-1};
  };
  if (!j.is_object()) return std::nullopt;
  const dlio::DataFileInfo::FileRange r{number("offset"), number("bytes")};
  if (r.offset < 0 || r.bytes <= 0 ||
      (file_size >= 0 && (r.offset > file_size || r.bytes > file_size - r.offset))) {
    return std::nullopt;
  }
  return r;
}

// The tables of a row per sample a reader's description lists ("row_tables", each a range
// whose "row_bytes" divide it) and the samples' own range ("sample_extent"), each with sane
// numbers or left out.
void RowTables(const nlohmann::json& described, dlio::DataFileInfo* info) {
  const auto tables = described.find("row_tables");
  if (tables != described.end() && tables->is_array()) {
    for (const auto& t : *tables) {
      const auto r = DescribedRange(t, info->size);
      const auto row = t.is_object() ? t.find("row_bytes") : t.end();
      if (!r || row == t.end() || !row->is_number_unsigned() || row->get<uint64_t>() == 0 ||
          row->get<uint64_t>() > static_cast<uint64_t>(r->bytes) ||
          r->bytes % row->get<int64_t>() != 0) {
        continue;
      }
      info->row_tables.push_back({*r, row->get<int64_t>()});
    }
  }
  const auto extent = described.find("sample_extent");
  if (extent == described.end()) return;
  if (auto r = DescribedRange(*extent, info->size)) info->sample_extent = *r;
}

// The root's attributes a reader's description gives ("root_attributes": the
// dataset.hdf5_root_attributes items, and the reads reading them after an open makes), the
// reads with sane numbers.
void RootAttributes(const nlohmann::json& described, dlio::DataFileInfo* info) {
  const auto found = described.find("root_attributes");
  if (found == described.end() || !found->is_object()) return;
  const auto items = found->find("items");
  if (items == found->end() || !items->is_string()) return;
  info->root_attributes = items->get<std::string>();
  const auto reads = found->find("reads");
  if (reads == found->end() || !reads->is_array()) return;
  for (const auto& r : *reads) {
    if (auto range = DescribedRange(r, info->size)) info->attribute_reads.push_back(*range);
  }
}

// What a reader's description says of its samples on disk (docs/formats.md, "inspect"): the
// share of their bytes they take after the format's filters ("stored_data_bytes": less than 1
// when compressed), whole samples per chunk, the chunks' codec and stored sizes, and the keys its
// writer needs to lay a file out so ("writer_keys").
void StoredLayout(const nlohmann::json& described, dlio::DataFileInfo* info) {
  const auto stored = described.find("stored_data_bytes");
  if (stored != described.end() && stored->is_number_unsigned() && info->data_bytes > 0 &&
      stored->get<uint64_t>() < static_cast<uint64_t>(info->data_bytes)) {
    info->stored_fraction =
        static_cast<double>(stored->get<uint64_t>()) / static_cast<double>(info->data_bytes);
  }
  const auto chunk = described.find("samples_per_chunk");
  if (chunk != described.end() && chunk->is_number_unsigned()) {
    info->samples_per_chunk = chunk->get<int64_t>();
  }
  if (described.value("compression", "") == "gzip") {
    info->compression = "gzip";
    info->compression_level = described.value("compression_level", -1);
  }
  const auto writer = described.find("writer_keys");
  if (writer != described.end() && writer->is_object()) {
    for (const auto& [key, value] : writer->items()) {
      if (value.is_string()) info->writer_keys.emplace_back(key, value.get<std::string>());
    }
  }
  info->stores_file_name = described.value("stores_file_name", false);
  RowTables(described, info);
  RootAttributes(described, info);
  const auto units = described.find("compressed_units");
  if (units != described.end() && units->is_object()) {
    info->compressed_units = units->value("count", int64_t{0});
    info->compressed_unit_bytes = units->value("bytes", int64_t{0});
    info->stored_unit_mean = units->value("stored_mean", 0.0);
    info->stored_unit_stdev = units->value("stored_stdev", 0.0);
  }
}

// The calls, in order, that opening `path` with `format` makes (one load, for the formats whose
// readers load a file at open: npz under the numpy model) with the reader key `key` set to
// `value`, through a posix storage of its own under a MemoryTracer: a read as its offset, an
// lseek as DataFileInfo::kLoadSeek.
dlio::Result<std::vector<int64_t>> LoadCalls(const dlio::Format& format, const std::string& path,
                                             const std::string& key, const std::string& value) {
  dlio::WorkloadConfig config;
  if (!value.empty()) DLIO_RETURN_NOT_OK(dlio::ApplyOverride(&config, key + "=" + value));
  dlio::MemoryTracer tracer;
  auto storage = dlio::NewPosixStorage({});
  storage->Bind(dlio::SystemClock(), &tracer);
  DLIO_RETURN_NOT_OK(format.Open(storage.get(), path, dlio::FormatOptionsFor(config)).status());
  std::vector<int64_t> calls;
  for (const dlio::TraceEvent& e : tracer.Events()) {
    if (e.file_id < 0) continue;
    const dlio::OpKind kind = dlio::OpKindOfCall(e.name);
    if (kind == dlio::OpKind::kSeek) calls.push_back(dlio::DataFileInfo::kLoadSeek);
    if (kind == dlio::OpKind::kRead) calls.push_back(e.offset);
  }
  return calls;
}

// Each value of the reader keys a reader's description offers ("reader_variants": npz's
// reader.npz_members), with the reads one load under it makes (a value that fails is left out).
void ReadVariants(const nlohmann::json& described, const dlio::Format& format,
                  const std::string& path, dlio::DataFileInfo* info) {
  const auto variants = described.find("reader_variants");
  if (variants == described.end() || !variants->is_object()) return;
  for (const auto& [key, values] : variants->items()) {
    if (!values.is_array()) continue;
    for (const auto& value : values) {
      if (!value.is_string()) continue;
      auto calls = LoadCalls(format, path, key, value.get<std::string>());
      if (calls.ok()) info->read_variants.push_back({key, value.get<std::string>(), *calls});
    }
  }
}

// The data file as dlio's readers see it: format (suffix and magic bytes), size, sample sizes;
// while `variant_files` is above 0, its reader variants too (one file less).
dlio::Result<dlio::DataFileInfo> Probe(const dlio::Registries& registries, dlio::Storage* storage,
                                       const std::string& path, int* variant_files) {
  dlio::DataFileInfo info;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return dlio::Status::NotFound(path, ": ", ec.message());
  info.size = static_cast<int64_t>(size);
  DLIO_ASSIGN_OR_RETURN(info.format, dlio::DetectFormat(registries.formats, storage, path));
  DLIO_ASSIGN_OR_RETURN(auto factory, registries.formats.Get(info.format));
  DLIO_ASSIGN_OR_RETURN(auto format, factory());
  info.stored_bytes_per_record_byte = format->stored_bytes_per_record_byte(1);
  info.writes_compression_ratio = format->capabilities().compression_ratio;
  // The file does not hold its samples' layout (raw): the trace's reads tell fit where they are.
  if (format->capabilities().samples_from_config) return info;
  auto reader = format->Open(storage, path, dlio::FormatOptions{});
  if (!reader.ok()) return info;  // format known, samples not readable: sizes from the trace
  info.samples = static_cast<int64_t>((*reader)->num_samples());
  // An image reader describes its header: width, height, channels (docs/formats.md, inspect).
  // Told only for a format whose writer stores RGB and gray images alike per record byte (png,
  // lossless): fit then generates RGB images sized like the program's. A jpeg's size follows
  // encoder settings the trace does not show (quality, chroma subsampling); there the gray
  // image, sized by the file's bytes, came closer (docs/fidelity.md, "ImageFolder").
  const auto described = nlohmann::json::parse((*reader)->DescribeJson(), nullptr, false);
  if (described.is_object() && described.contains("channels") &&
      described["channels"].is_number_integer() &&
      format->stored_bytes_per_record_byte(3) == format->stored_bytes_per_record_byte(1)) {
    info.image_channels = described["channels"].get<int32_t>();
  }
  const uint64_t n = std::min((*reader)->num_samples(), kMaxProbedSamples);
  info.data_bytes = 0;
  for (uint64_t i = 0; i < (*reader)->num_samples(); ++i) {
    const uint64_t bytes = (*reader)->sample_size(i);
    if (i < n) info.sample_sizes.push_back(static_cast<int64_t>(bytes));
    info.data_bytes += static_cast<int64_t>(bytes);
  }
  if (described.is_object()) {
    StoredLayout(described, &info);
    if (*variant_files > 0) {
      ReadVariants(described, *format, path, &info);
      if (!info.read_variants.empty()) --*variant_files;
    }
  }
  return info;
}

// Whether a run of `format` may read with `model`, as the config validator decides it (the
// pytorch model wraps every format's own; a model a format does not declare is refused).
bool ModelAvailable(const dlio::Registries& registries, const std::string& format,
                    const std::string& model) {
  const auto wanted = dlio::EnumFromName<dlio::IoModel>(model);
  if (!wanted || !registries.formats.Get(format).ok()) return false;
  dlio::WorkloadConfig config;
  config.dataset.format = format;
  config.reader.io_model = *wanted;
  return dlio::ValidateCapabilities(config, registries).ok();
}

// The request model `auto` reads `format` with ("" when the format is unknown).
std::string ModelUnderAuto(const dlio::Registries& registries, const std::string& format) {
  auto made = registries.formats.Get(format);
  if (!made.ok()) return "";
  auto f = (*made)();
  if (!f.ok()) return "";
  return std::string(
      dlio::EnumName(dlio::ResolveIoModel(dlio::IoModel::kAuto, (*f)->capabilities())));
}

}  // namespace

void DeclareFitOptions(CLI::App* cmd, FitCommandOptions* options) {
  cmd->add_option(
         "traces", options->traces,
         "trace files or directories (merged into one trace; format detected by content; the "
         "ranks of an MPI run are fitted per rank: docs/profiling.md)")
      ->required();
  cmd->add_option("-o,--output", options->output,
                  "write the workload here (default: stdout; replaces only an earlier fit output)");
  cmd->add_option("--name", options->name, "the workload's name (default fit)");
  cmd->add_option("--data-folder", options->data_folder,
                  "dataset.data_folder the emulation generates into (default ./fit-data)");
  cmd->add_option("--checkpoint-folder", options->checkpoint_folder,
                  "checkpoint.checkpoint_folder (default ./fit-checkpoints)");
  cmd->add_option("--burst-gap-us", options->burst_gap_us,
                  "without compute events: a pause between reads longer than this ends a batch "
                  "(default: chosen from the gaps)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--ignore-paths", options->ignore_paths,
                  "files left out as the runtime's and launchers' I/O: comma-separated patterns "
                  "('/DIR/' everything beneath, '/DIR/*' a glob of whole paths, 'NAME/' any "
                  "folder so named, 'NAME' a file name glob); 'default' stands for the built-in "
                  "list (system folders, files directly in /tmp, /var/tmp and $TMPDIR, "
                  "ompi.*/, openmpi-sessions-*/, prte.*/, pymp-*/, Python code and packages: "
                  "docs/profiling.md); '' leaves nothing out (default: default)");
  cmd->add_flag("--keep-scratch-files", options->keep_scratch_files,
                "fit files created and deleted within the run too (by default left out: "
                "Python's tempfile probe, lock files)");
  cmd->add_flag(
      "--no-probe", options->no_probe,
      "do not open the traced data and checkpoint files (formats from suffixes, sizes from "
      "offsets, torch.save state dicts from the writes)");
}

int RunFit(const FitCommandOptions& options) {
  auto ignore = dlio::ParseFitIgnorePaths(options.ignore_paths);
  if (!ignore.ok()) return FitFail(ignore.status().ToString(), kExitBadInput);
  auto trace = ImportTraces(options.traces);
  if (!trace.ok()) return FitFail(trace.status().ToString(), kExitBadInput);
  dlio::Registries registries;
  if (auto s = dlio::RegisterBuiltins(&registries); !s.ok()) {
    return FitFail(s.ToString(), kExitWriteError);
  }
  auto storage = dlio::NewPosixStorage(dlio::StorageOptions{});
  storage->Bind(dlio::SystemClock(), nullptr);
  dlio::FitOptions fit;
  fit.name = options.name;
  fit.data_folder = options.data_folder;
  fit.checkpoint_folder = options.checkpoint_folder;
  fit.burst_gap_us = options.burst_gap_us;
  fit.ignore_paths = std::move(ignore).value();
  fit.ignore_scratch_files = !options.keep_scratch_files;
  if (!options.no_probe) {
    fit.probe = [&, variant_files = kMaxVariantFiles](const std::string& path) mutable {
      return Probe(registries, storage.get(), path, &variant_files);
    };
    fit.read_file = [&](const std::string& path, uint64_t offset, uint64_t n) {
      return ReadRange(storage.get(), path, offset, n);
    };
  }
  fit.format_of_suffix = [&](const std::string& suffix) {
    return dlio::FormatOfSuffix(registries.formats, suffix);
  };
  fit.io_model_available = [&](const std::string& format, const std::string& model) {
    return ModelAvailable(registries, format, model);
  };
  fit.format_declares = fit.io_model_available;  // a build's formats implement what they declare
  fit.format_traits = [&](const std::string& format) {
    dlio::FitFormatTraits traits;
    auto made = registries.formats.Get(format);
    if (!made.ok()) return traits;
    auto f = (*made)();
    if (!f.ok()) return traits;
    const dlio::FormatCapabilities c = (*f)->capabilities();
    traits.mmap_head = c.mmap_head;
    traits.pyio_records = c.pyio_records;
    return traits;
  };
  fit.model_client_work = [](const std::string& model) {
    const auto m = dlio::EnumFromName<dlio::IoModel>(model);
    return m.has_value() && dlio::IoModelDoesClientWork(*m);
  };
  fit.io_model_under_auto = [&](const std::string& format) {
    return ModelUnderAuto(registries, format);
  };
  // The traced program's buffer: st_blksize of a local file system (what the data folder here
  // reports is not what the traced host's did).
  fit.pyio_requests = [](uint64_t file_size, const dlio::PyioCalls& c) {
    auto r =
        dlio::PyioReadRequests(file_size, 4096, c.head_bytes, c.read_size, c.call, c.tail_bytes,
                               c.tail_read_size, c.crop_bytes, c.crop_at, c.end_reads);
    return r.ok() ? std::move(r).value() : std::vector<dlio::ReadRequest>{};
  };
  auto result = dlio::FitTrace(*trace, fit);
  if (!result.ok()) {
    std::string sources;
    for (const auto& t : options.traces) sources += (sources.empty() ? "" : ", ") + t;
    return FitFail(sources + ": " + result.status().ToString(), kExitBadInput);
  }
  const std::string text = dlio::FitYaml(*result, options.traces);
  if (options.output.empty()) {
    std::fputs(text.c_str(), stdout);
    return std::fflush(stdout) == 0 ? kExitOk : kExitWriteError;
  }
  if (auto s = WriteCommandOutput(options.output, text, IsFitOutput); !s.ok()) {
    return FitFail(s.ToString(), kExitWriteError);
  }
  return kExitOk;
}

}  // namespace dlio_run
