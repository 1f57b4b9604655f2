// One suite, run over every format RegisterBuiltinFormats registers, on memory and POSIX storage.
#include <catch2/catch.hpp>
#include <cmath>

#include "dlio/data_source.h"
#include "format/format_test_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

// The registered formats that were compiled in (a format whose dependency was left out, e.g.
// hdf5 with DLIO_WITH_HDF5=OFF, stays registered but its factory is Unimplemented).
std::vector<std::string> FormatNames() {
  Registries r;
  REQUIRE(RegisterBuiltinFormats(&r.formats).ok());
  std::vector<std::string> names;
  for (const auto& e : r.formats.List()) {
    auto made = e.factory();
    if (!made.ok() && made.status().code() == StatusCode::kUnimplemented) continue;
    names.push_back(e.name);
  }
  return names;
}

// Formats whose stored bytes are an encoding (exact_sample_sizes() == false: csv text, jpeg/png
// images) store each sample within this factor of the requested size, plus 1 KiB of headers:
// csv rows are ~2.7x (float32 text), images ~1.0-1.3x (random pixels compress poorly).
constexpr uint64_t kEncodedSizeFactor = 4;
constexpr uint64_t kEncodedSizeSlack = 1024;
TEST_CASE("optional formats stay registered and say how to enable them", "[format][conformance]") {
  Registries r;
  REQUIRE(RegisterBuiltinFormats(&r.formats).ok());
  auto factory = r.formats.Get("hdf5");
  REQUIRE(factory.ok());
  auto made = (*factory)();
  if (!made.ok()) {
    REQUIRE(made.status().code() == StatusCode::kUnimplemented);
    REQUIRE(made.status().message() ==
            "dlio was built without HDF5; reconfigure with -DDLIO_WITH_HDF5=ON");
  } else {
    REQUIRE((*made)->name() == "hdf5");
  }
}

void RunConformance(const std::string& name, Storage* storage, const std::string& dir,
                    const std::string& compression) {
  INFO("format " << name << " on " << storage->name() << " compression " << compression);
  auto format = MakeFormatByName(name);
  REQUIRE(format != nullptr);
  REQUIRE(format->name() == name);
  const bool exact = format->exact_sample_sizes();

  FileSpec spec;
  spec.seed = 42;
  spec.sample_sizes = format->variable_sample_sizes()
                          ? std::vector<uint64_t>{100, 3000, 17, 70001, 8}
                          : std::vector<uint64_t>(5, 4099);
  FormatOptions options;
  options.compression = compression;
  options.transfer_size = 1000;        // several requests per sample
  options.record_length_bytes = 4099;  // synthetic's samples
  // raw files hold what the config says (webdataset trusts it; synthetic's virtual files too)
  options.samples_per_file = 5;

  const std::string path =
      dir + "/file0" + (format->extension().empty() ? "" : "." + format->extension());
  Status written = format->Write(storage, path, spec, options);
  if (written.code() == StatusCode::kInvalidArgument) {
    // One-sample-per-file formats (an image, a torch.save file) refuse several samples, naming
    // the config key.
    INFO(written.ToString());
    REQUIRE(written.message().find("dataset.num_samples_per_file") != std::string::npos);
    REQUIRE(!storage->Exists(path).value());
    spec.sample_sizes.resize(1);
    written = format->Write(storage, path, spec, options);
  }
  INFO(written.ToString());
  REQUIRE(written.ok());
  const uint64_t n = spec.sample_sizes.size();

  auto reader = format->Open(storage, path, options);
  INFO(reader.status().ToString());
  REQUIRE(reader.ok());
  FormatReader& r = **reader;
  REQUIRE(r.num_samples() == n);
  SampleBuffer buf;
  std::vector<std::string> first_read(n);
  // Out of order on purpose: streaming readers must go back correctly; every sample is read at
  // least twice and must come back the same.
  for (uint64_t k : {3, 0, 4, 1, 2, 2, 0, 3, 1, 4}) {
    const uint64_t i = k % n;
    Status st = r.ReadSample(i, &buf);
    INFO(st.ToString());
    REQUIRE(st.ok());
    REQUIRE(buf.size() == r.sample_size(i));
    if (exact) {
      REQUIRE(r.sample_size(i) == spec.sample_sizes[i]);
    } else {
      REQUIRE(r.sample_size(i) <= spec.sample_sizes[i] * kEncodedSizeFactor + kEncodedSizeSlack);
      REQUIRE(r.sample_size(i) * kEncodedSizeFactor >= spec.sample_sizes[i]);
    }
    if (format->uses_files()) {
      if (exact) REQUIRE(BufferString(buf) == ExpectedSample(spec, i));
      if (first_read[i].empty()) first_read[i] = BufferString(buf);
      REQUIRE(BufferString(buf) == first_read[i]);
    } else {
      REQUIRE(buf.data()[0] == i);  // the synthetic stamp
    }
  }
  Status past = r.ReadSample(n, &buf);
  REQUIRE(past.code() == StatusCode::kOutOfRange);
  REQUIRE(past.message().find("sample " + std::to_string(n)) != std::string::npos);

  if (format->has_decoder()) {
    // The decoded sample is what the writer was asked for: at most the requested bytes, less
    // only by rounding (csv: whole float32 values; images: a square of floor(sqrt(size))^2).
    SampleBuffer decoded, again;
    for (uint64_t i = 0; i < n; ++i) {
      REQUIRE(r.ReadSample(i, &buf).ok());
      Status st = format->Decode(buf.data(), buf.size(), &decoded);
      INFO(st.ToString());
      REQUIRE(st.ok());
      const uint64_t want = spec.sample_sizes[i];
      REQUIRE(decoded.size() <= want);
      REQUIRE(decoded.size() + 2 * static_cast<uint64_t>(std::sqrt(want)) + 4 >= want);
      REQUIRE(format->Decode(buf.data(), buf.size(), &again).ok());
      REQUIRE(BufferString(again) == BufferString(decoded));
    }
    const std::string garbage = "\xff\x01not a sample";
    Status bad =
        format->Decode(reinterpret_cast<const uint8_t*>(garbage.data()), garbage.size(), &decoded);
    REQUIRE(bad.code() == StatusCode::kCorruption);
  } else {
    REQUIRE(format->Decode(buf.data(), buf.size(), &buf).code() == StatusCode::kUnimplemented);
  }

  const std::string json = r.DescribeJson();
  REQUIRE(json.find("\"format\":\"" + name + "\"") != std::string::npos);
  REQUIRE(json.find("\"num_samples\":" + std::to_string(n)) != std::string::npos);

  // Through a DataSource with the count discovered from the file.
  FormatDataSourceOptions dso;
  dso.format = options;
  auto source = MakeFormatDataSource(storage, format.get(), {path}, dso);
  REQUIRE(source.ok());
  REQUIRE((*source)->samples_per_file() == std::vector<uint64_t>{n});
  REQUIRE((*source)->Read({0, n - 1}, &buf).ok());
  REQUIRE(buf.size() == r.sample_size(n - 1));
  if (exact) REQUIRE(buf.size() == spec.sample_sizes[n - 1]);

  if (format->uses_files()) {
    Status again = format->Write(storage, path, spec, options);
    REQUIRE(again.code() == StatusCode::kAlreadyExists);
    auto detected = DetectBuiltinFormat(storage, path);
    REQUIRE(detected.ok());
    REQUIRE(*detected == name);
  }
}

TEST_CASE("every built-in format round-trips on memory storage", "[format][conformance]") {
  auto storage = BoundMemoryStorage();
  REQUIRE(storage->CreateDirs("/data").ok());
  const auto names = FormatNames();
  REQUIRE(names.size() >= 7);
  for (const auto& name : names) {
    RunConformance(name, storage.get(), "/data/" + name, "none");
  }
}

TEST_CASE("every built-in format round-trips on posix storage", "[format][conformance]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  for (const auto& name : FormatNames()) {
    REQUIRE(storage->CreateDirs(tmp / name).ok());
    RunConformance(name, storage.get(), tmp / name, "none");
  }
}

TEST_CASE("npz round-trips with deflate compression", "[format][conformance]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  RunConformance("npz", storage.get(), tmp.path(), "gzip");
}

TEST_CASE("a 1 MiB sample with 256 KiB transfer size is 4 reads at exact offsets",
          "[format][transfer]") {
  const uint64_t kSample = 1 << 20, kTransfer = 256 << 10;
  for (const std::string name : {"npy", "npz", "indexed_binary"}) {
    INFO(name);
    MemoryTracer tracer;
    auto storage = BoundMemoryStorage(&tracer);
    auto format = MakeFormatByName(name);
    FileSpec spec;
    spec.sample_sizes = {kSample, kSample, kSample};
    FormatOptions options;
    options.io_model = IoModel::kNative;  // transfer_size is native's request size
    options.transfer_size = kTransfer;
    const std::string path = "/f." + format->extension();
    REQUIRE(format->Write(storage.get(), path, spec, options).ok());
    auto reader = format->Open(storage.get(), path, options);
    REQUIRE(reader.ok());
    const size_t before = tracer.Events().size();
    const IoStats stats_before = storage->stats();
    SampleBuffer buf;
    REQUIRE((*reader)->ReadSample(1, &buf).ok());
    REQUIRE(BufferString(buf) == ExpectedSample(spec, 1));
    const IoStats stats_after = storage->stats();
    REQUIRE(stats_after.read_ops - stats_before.read_ops == 4);
    REQUIRE(stats_after.read_bytes - stats_before.read_bytes == kSample);
    auto events = tracer.Events();
    std::vector<TraceEvent> reads;
    for (size_t i = before; i < events.size(); ++i) {
      if (std::string(events[i].name) == "pread") reads.push_back(events[i]);
    }
    REQUIRE(reads.size() == 4);
    std::sort(reads.begin(), reads.end(),
              [](const TraceEvent& a, const TraceEvent& b) { return a.offset < b.offset; });
    const int64_t first = reads[0].offset;
    // The sample starts after the header (npy: 128 bytes; npz: local header, name, np.savez's
    // zip64 extra and npy header).
    if (name == "npy") REQUIRE(first == 128 + static_cast<int64_t>(kSample));
    if (name == "npz") REQUIRE(first == 30 + 5 + 20 + 128 + static_cast<int64_t>(kSample));
    if (name == "indexed_binary") REQUIRE(first == static_cast<int64_t>(kSample));
    for (int k = 0; k < 4; ++k) {
      REQUIRE(reads[k].offset == first + k * static_cast<int64_t>(kTransfer));
      REQUIRE(reads[k].count == static_cast<int64_t>(kTransfer));
      REQUIRE(reads[k].ret == static_cast<int64_t>(kTransfer));
    }
  }
}

TEST_CASE("transfer_size 0 reads a sample in one request", "[format][transfer]") {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("npy");
  FileSpec spec;
  spec.sample_sizes = {300000, 300000};
  FormatOptions options;
  options.io_model = IoModel::kNative;  // native's request sizes
  options.transfer_size = 0;
  REQUIRE(format->Write(storage.get(), "/a.npy", spec, options).ok());
  auto reader = format->Open(storage.get(), "/a.npy", options);
  REQUIRE(reader.ok());
  const uint64_t ops = storage->stats().read_ops;
  SampleBuffer buf;
  REQUIRE((*reader)->ReadSample(1, &buf).ok());
  REQUIRE(storage->stats().read_ops - ops == 1);
}

TEST_CASE("every built-in format's hints name it by its extensions", "[format][detect]") {
  Registries r;
  REQUIRE(RegisterBuiltinFormats(&r.formats).ok());
  for (const auto& entry : r.formats.List()) {
    INFO(entry.name);
    for (const std::string& suffix : entry.capabilities.suffixes) {
      CHECK(FormatOfSuffix(r.formats, suffix) == entry.name);
    }
    auto format = entry.factory();
    if (!format.ok() || !(*format)->uses_files()) continue;  // hdf5 not compiled in; synthetic
    for (const std::string& ext : (*format)->read_extensions()) {
      CHECK(FormatOfSuffix(r.formats, ext) == entry.name);
    }
  }
  CHECK(FormatOfSuffix(r.formats, "jpg") == "jpeg");
  CHECK(FormatOfSuffix(r.formats, "h5") == "hdf5");
  CHECK(FormatOfSuffix(r.formats, "tar") == "webdataset");
  CHECK(FormatOfSuffix(r.formats, "bin") == "raw");
  CHECK(FormatOfSuffix(r.formats, "xyz").empty());
  CHECK(FormatOfSuffix(r.formats, "").empty());
}

TEST_CASE("DetectFormat checks magic bytes against the extension", "[format][detect]") {
  auto storage = BoundMemoryStorage();
  auto npy = MakeFormatByName("npy");
  FileSpec spec;
  spec.sample_sizes = {10};
  REQUIRE(npy->Write(storage.get(), "/a.npy", spec, {}).ok());
  REQUIRE(storage->Rename("/a.npy", "/a.npz").ok());
  auto r = DetectBuiltinFormat(storage.get(), "/a.npz");
  REQUIRE(r.status().code() == StatusCode::kCorruption);
  REQUIRE(r.status().message().find("/a.npz") != std::string::npos);
  REQUIRE(storage->Rename("/a.npz", "/a.bin").ok());
  auto sniffed = DetectBuiltinFormat(storage.get(), "/a.bin");
  REQUIRE(sniffed.ok());
  REQUIRE(*sniffed == "npy");
}

}  // namespace
}  // namespace dlio::testing

namespace dlio::testing {
namespace {

TEST_CASE("readers work with direct I/O on posix storage", "[format][direct]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  for (const std::string name : {"npy", "npz", "indexed_binary", "tfrecord"}) {
    INFO(name);
    auto format = MakeFormatByName(name);
    FileSpec spec;
    spec.seed = 3;
    spec.sample_sizes.assign(3, 10000);  // unaligned sample offsets
    FormatOptions options;
    options.direct = true;
    options.transfer_size = 3000;
    const std::string path = tmp / ("d." + format->extension());
    REQUIRE(format->Write(storage.get(), path, spec, options).ok());
    auto reader = format->Open(storage.get(), path, options);
    INFO(reader.status().ToString());
    REQUIRE(reader.ok());
    SampleBuffer buf;
    for (uint64_t i : {2, 0, 1}) {
      REQUIRE((*reader)->ReadSample(i, &buf).ok());
      REQUIRE(BufferString(buf) == ExpectedSample(spec, i));
    }
  }
}

}  // namespace
}  // namespace dlio::testing
