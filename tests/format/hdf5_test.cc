// hdf5: layouts, filters, the requests of dlio's HDF5 file driver, the metadata file, errors.
// Built only with DLIO_WITH_HDF5=ON (tests/format/tests.cmake); the conformance suite covers the
// name staying registered without it.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <thread>
#include <tuple>

#include "dlio/registries.h"
#include "format/hdf5/hdf5_options.h"
#include "format/hdf5_test_util.h"
#include "format/io_util.h"
#include "storage/slow_options.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

TEST_CASE("hdf5 round-trips fixed and variable samples, contiguous and chunked", "[format][hdf5]") {
  TempDir tmp;
  auto memory = BoundMemoryStorage();
  auto posix = BoundPosixStorage();
  struct Layout {
    std::string name;
    bool chunking;
    uint64_t chunk_size, chunk_samples;
    std::string fixed_json, variable_json;  // expected layout of /records and /data
  };
  const std::vector<Layout> layouts = {
      {"contiguous", false, 0, 0, "\"layout\":\"contiguous\"", "\"layout\":\"contiguous\""},
      {"chunk_size", true, 7000, 0, "\"chunk\":[2,3000]", "\"chunk\":[7000]"},
      {"small chunk", true, 1024, 0, "\"chunk\":[1,1024]", "\"chunk\":[1024]"},
      {"chunk_samples", true, 0, 3, "\"chunk\":[3,3000]", "\"chunk\":[6981]"},
      {"guessed", true, 0, 0, "\"layout\":\"chunked\"", "\"layout\":\"chunked\""},
  };
  int k = 0;
  for (Storage* storage : {memory.get(), posix.get()}) {
    const std::string dir = storage == memory.get() ? std::string("/m") : tmp.path();
    for (const Layout& l : layouts) {
      INFO(storage->name() << " " << l.name);
      FormatOptions o;
      o.formats.Get<Hdf5Options>().enable_chunking = l.chunking;
      o.formats.Get<Hdf5Options>().chunk_size = l.chunk_size;
      o.formats.Get<Hdf5Options>().chunk_samples = l.chunk_samples;
      const std::string fixed =
          RoundTrip(storage, dir + "/f" + std::to_string(k) + ".h5", Fixed(20, 3000), o);
      INFO(fixed);
      CHECK(Has(fixed, "\"sample_layout\":\"rows\",\"sample_dataset\":\"/records\""));
      CHECK(Has(fixed, "\"shape\":[20,3000],\"dtype\":\"|u1\""));
      CHECK(Has(fixed, l.fixed_json));
      CHECK(Has(fixed, "{\"name\":\"/labels\",\"shape\":[20],\"dtype\":\"<i8\""));
      const std::string variable =
          RoundTrip(storage, dir + "/v" + std::to_string(k) + ".h5", Variable(30), o);
      INFO(variable);
      CHECK(Has(variable, "\"sample_layout\":\"concatenated\",\"sample_dataset\":\"/data\""));
      CHECK(Has(variable, l.variable_json));
      CHECK(Has(variable, "{\"name\":\"/offsets\",\"shape\":[30],\"dtype\":\"<u8\""));
      CHECK(Has(variable, "{\"name\":\"/sizes\",\"shape\":[30],\"dtype\":\"<u8\""));
      ++k;
    }
  }
}

TEST_CASE("hdf5 edge shapes: one sample, empty samples, no samples", "[format][hdf5]") {
  auto storage = BoundMemoryStorage();
  FormatOptions chunked;
  chunked.formats.Get<Hdf5Options>().enable_chunking = true;
  chunked.formats.Get<Hdf5Options>().chunk_size = 100;
  for (const FormatOptions& o : {FormatOptions{}, chunked}) {
    RoundTrip(storage.get(), "/a" + std::to_string(Hdf5Of(o.formats).chunk_size) + ".h5",
              Fixed(1, 10), o);
    RoundTrip(storage.get(), "/b" + std::to_string(Hdf5Of(o.formats).chunk_size) + ".h5",
              Fixed(3, 0), o);
    RoundTrip(storage.get(), "/c" + std::to_string(Hdf5Of(o.formats).chunk_size) + ".h5",
              Spec({0, 5, 0, 9}), o);
    RoundTrip(storage.get(), "/d" + std::to_string(Hdf5Of(o.formats).chunk_size) + ".h5", Spec({}),
              o);
  }
}

TEST_CASE("hdf5 gzip levels and the shuffle filter", "[format][hdf5]") {
  auto storage = BoundMemoryStorage();
  int k = 0;
  for (int level : {0, 1, 4, 9}) {
    for (bool shuffle : {false, true}) {
      INFO("level " << level << " shuffle " << shuffle);
      FormatOptions o;
      o.compression = level == 4 ? "zlib" : "gzip";
      o.compression_level = level;
      o.formats.Get<Hdf5Options>().shuffle_filter = shuffle;
      o.formats.Get<Hdf5Options>().enable_chunking = true;
      o.formats.Get<Hdf5Options>().chunk_size = 4096;
      const std::string gzip = "{\"name\":\"gzip\",\"level\":" + std::to_string(level);
      for (const FileSpec& spec : {Fixed(9, 1500), Variable(12)}) {
        const std::string json =
            RoundTrip(storage.get(), "/g" + std::to_string(k++) + ".h5", spec, o);
        INFO(json);
        CHECK(Has(json, gzip));
        CHECK(Has(json, "{\"name\":\"shuffle\"") == shuffle);
        // The pipeline order: shuffle first, then deflate.
        const size_t filters = json.find("\"filters\"");
        if (shuffle) CHECK(json.find("\"shuffle\"", filters) < json.find("\"gzip\"", filters));
      }
    }
  }
}

TEST_CASE("hdf5 compression without enable_chunking chunks implicitly", "[format][hdf5]") {
  auto storage = BoundMemoryStorage();
  FormatOptions o;
  o.compression = "deflate";
  const std::string json = RoundTrip(storage.get(), "/a.h5", Fixed(50, 2000), o);
  INFO(json);
  CHECK(Has(json, "\"layout\":\"chunked\""));
  CHECK(Has(json, "\"name\":\"gzip\",\"level\":4"));
  FormatOptions s;
  s.formats.Get<Hdf5Options>().shuffle_filter = true;
  const std::string shuffled = RoundTrip(storage.get(), "/b.h5", Variable(10), s);
  CHECK(Has(shuffled, "\"layout\":\"chunked\""));
  CHECK(Has(shuffled, "{\"name\":\"shuffle\""));
}

TEST_CASE("hdf5 szip is used when the library can encode it", "[format][hdf5]") {
  auto storage = BoundMemoryStorage();
  FormatOptions o;
  o.compression = "szip";
  o.formats.Get<Hdf5Options>().enable_chunking = true;
  o.formats.Get<Hdf5Options>().chunk_size = 4096;
  Status st = Hdf5()->Write(storage.get(), "/probe.h5", Fixed(4, 1024), o);
  if (!st.ok()) {
    // Builds without an szip encoder must say so, naming the key.
    REQUIRE(st.code() == StatusCode::kInvalidArgument);
    REQUIRE(Has(st.message(), "dataset.compression: szip"));
    return;
  }
  const std::string json = RoundTrip(storage.get(), "/a.h5", Fixed(8, 1024), o);
  CHECK(Has(json, "{\"name\":\"szip\""));
}

TEST_CASE("hdf5 rejects compressions libhdf5 cannot write, naming the key", "[format][hdf5]") {
  auto storage = BoundMemoryStorage();
  for (const std::string c : {"lzf", "bz2", "xz"}) {
    INFO(c);
    FormatOptions o;
    o.compression = c;
    Status st = Hdf5()->Write(storage.get(), "/a.h5", Fixed(2, 10), o);
    REQUIRE(st.code() == StatusCode::kInvalidArgument);
    REQUIRE(Has(st.message(), "dataset.compression"));
    REQUIRE(Has(st.message(), c));
    REQUIRE_FALSE(*storage->Exists("/a.h5"));
  }
  FormatOptions bad;
  bad.compression = "gzip";
  bad.compression_level = 12;
  Status st = Hdf5()->Write(storage.get(), "/a.h5", Fixed(2, 10), bad);
  REQUIRE(st.code() == StatusCode::kInvalidArgument);
  REQUIRE(Has(st.message(), "dataset.compression_level"));
}

// Reads samples `order` through a fresh reader and returns the data-file reads they caused.
std::vector<TraceEvent> SampleReads(const FileSpec& spec, const FormatOptions& o,
                                    const std::vector<uint64_t>& order) {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  REQUIRE(Hdf5()->Write(storage.get(), "/r.h5", spec, o).ok());
  auto reader = Hdf5()->Open(storage.get(), "/r.h5", o);
  REQUIRE(reader.ok());
  const size_t before = tracer.Events().size();
  SampleBuffer buf;
  for (uint64_t i : order) {
    REQUIRE((*reader)->ReadSample(i, &buf).ok());
    REQUIRE(BufferString(buf) == ExpectedSample(spec, i));
  }
  return ReadsOf(tracer, before, "/r.h5");
}

// dlio's own requests (the file and its datasets kept open with fitted chunk caches); the h5py
// model's are held against h5py in tests/io_models/h5py_test.cc.
FormatOptions NativeOptions() {
  FormatOptions o;
  o.io_model = IoModel::kNative;
  return o;
}

std::string Counts(const std::vector<TraceEvent>& reads) {
  std::string s;
  for (const auto& r : reads) s += std::to_string(r.offset) + ":" + std::to_string(r.count) + " ";
  return s;
}

TEST_CASE("hdf5 chunk size sets the request size of sample reads", "[format][hdf5][requests]") {
  SECTION("2 KiB chunks of 512-byte samples: 2 KiB requests") {
    FormatOptions o;
    o.io_model = IoModel::kNative;  // native's fitted chunk caches (h5py: io_models)
    o.formats.Get<Hdf5Options>().enable_chunking = true;
    o.formats.Get<Hdf5Options>().chunk_size = 2048;
    const auto reads = SampleReads(Fixed(64, 512), o, {5, 6, 40, 63, 0});
    INFO(Counts(reads));
    const auto data = std::count_if(reads.begin(), reads.end(),
                                    [](const TraceEvent& e) { return e.count == 2048; });
    CHECK(data == 4);  // chunks of samples 4-7, 40-43, 60-63, 0-3; sample 6 is cached
    for (const auto& r : reads) CHECK(r.count <= 4096);
  }
  SECTION("2 KiB chunks of 40 KiB samples: each sample is 20 requests of 2 KiB") {
    FormatOptions o;
    o.io_model = IoModel::kNative;  // native's fitted chunk caches (h5py: io_models)
    o.formats.Get<Hdf5Options>().enable_chunking = true;
    o.formats.Get<Hdf5Options>().chunk_size = 2048;
    const auto reads = SampleReads(Fixed(8, 40960), o, {3});
    INFO(Counts(reads));
    const auto data = std::count_if(reads.begin(), reads.end(),
                                    [](const TraceEvent& e) { return e.count == 2048; });
    CHECK(data == 20);
    for (const auto& r : reads) CHECK(r.count <= 4096);
  }
  SECTION("1 MiB chunks of 256 KiB samples: 1 MiB requests") {
    FormatOptions o;
    o.io_model = IoModel::kNative;  // native's fitted chunk caches (h5py: io_models)
    o.formats.Get<Hdf5Options>().enable_chunking = true;
    o.formats.Get<Hdf5Options>().chunk_size = 1 << 20;
    const auto reads = SampleReads(Fixed(16, 256 << 10), o, {1, 2, 9});
    INFO(Counts(reads));
    const auto data = std::count_if(reads.begin(), reads.end(),
                                    [](const TraceEvent& e) { return e.count == (1 << 20); });
    CHECK(data == 2);  // chunk 0 (samples 0-3) once, chunk 2 (samples 8-11)
    for (const auto& r : reads) CHECK((r.count == (1 << 20) || r.count <= 8192));
  }
  SECTION("4 MiB chunks are read whole too") {
    FormatOptions o;
    o.io_model = IoModel::kNative;  // native's fitted chunk caches (h5py: io_models)
    o.formats.Get<Hdf5Options>().enable_chunking = true;
    o.formats.Get<Hdf5Options>().chunk_samples = 4;
    const auto reads = SampleReads(Fixed(8, 1 << 20), o, {6});
    INFO(Counts(reads));
    CHECK(std::count_if(reads.begin(), reads.end(),
                        [](const TraceEvent& e) { return e.count == (4 << 20); }) == 1);
  }
  SECTION("contiguous 2 KiB samples go through HDF5's 64 KiB sieve buffer") {
    const auto reads = SampleReads(Fixed(256, 2048), NativeOptions(), {0, 1, 2, 100});
    INFO(Counts(reads));
    CHECK(std::count_if(reads.begin(), reads.end(),
                        [](const TraceEvent& e) { return e.count == 65536; }) == 2);
  }
  SECTION("contiguous 256 KiB samples are one request each") {
    const auto reads = SampleReads(Fixed(8, 256 << 10), NativeOptions(), {3, 1});
    INFO(Counts(reads));
    REQUIRE(reads.size() == 2);
    for (const auto& r : reads) CHECK(r.count == (256 << 10));
  }
}

TEST_CASE("hdf5 metadata file: written, consulted per sample, required", "[format][hdf5][meta]") {
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  auto format = Hdf5();
  FormatOptions o;
  o.io_model = IoModel::kNative;  // native's fitted chunk caches (h5py: io_models)
  o.formats.Get<Hdf5Options>().metadata_file = true;
  o.formats.Get<Hdf5Options>().enable_chunking = true;
  o.formats.Get<Hdf5Options>().chunk_size = 65536;
  REQUIRE(format->CompanionFiles("/d/a.h5", o) == std::vector<std::string>{"/d/a.h5.meta.h5"});
  REQUIRE(format->CompanionFiles("/d/a.h5", FormatOptions{}).empty());

  for (const FileSpec& spec : {Fixed(100, 32768), Variable(100)}) {
    const bool fixed = spec.sample_sizes[0] == spec.sample_sizes[1];
    INFO((fixed ? "fixed" : "variable"));
    const std::string path = fixed ? "/d/a.h5" : "/d/b.h5", meta = path + ".meta.h5";
    REQUIRE(format->Write(storage.get(), path, spec, o).ok());
    REQUIRE(*storage->Exists(meta));
    auto reader = format->Open(storage.get(), path, o);
    INFO(reader.status().ToString());
    REQUIRE(reader.ok());
    CHECK(Has((*reader)->DescribeJson(), "\"metadata_file\":\"" + meta + "\""));
    const size_t before = tracer.Events().size();
    SampleBuffer buf;
    // Samples 16 apart: each lookup is in a different 16-entry chunk of /offsets and /sizes.
    for (uint64_t i : {0, 16, 32, 48, 64, 80, 96}) {
      REQUIRE((*reader)->ReadSample(i, &buf).ok());
      REQUIRE(BufferString(buf) == ExpectedSample(spec, i));
    }
    const auto meta_reads = ReadsOf(tracer, before, meta);
    INFO(Counts(meta_reads));
    // One 128-byte chunk of /offsets and one of /sizes per sample (plus, the first time, the
    // chunk index node of each, ~2 KiB): DFFN's ~100-byte metadata requests.
    CHECK(std::count_if(meta_reads.begin(), meta_reads.end(),
                        [](const TraceEvent& e) { return e.count == 128; }) == 14);
    CHECK(meta_reads.size() <= 16);
    for (const auto& r : meta_reads) CHECK(r.count <= 4096);

    // Without the option the reader never touches the metadata file.
    auto plain = format->Open(storage.get(), path, FormatOptions{});
    REQUIRE(plain.ok());
    const size_t before_plain = tracer.Events().size();
    REQUIRE((*plain)->ReadSample(50, &buf).ok());
    CHECK(ReadsOf(tracer, before_plain, meta).empty());
  }

  SECTION("a missing metadata file is NotFound naming it and the key") {
    REQUIRE(storage->Remove("/d/a.h5.meta.h5").ok());
    auto reader = format->Open(storage.get(), "/d/a.h5", o);
    REQUIRE(reader.status().code() == StatusCode::kNotFound);
    CHECK(Has(reader.status().message(), "/d/a.h5.meta.h5"));
    CHECK(Has(reader.status().message(), "dataset.metadata_file"));
  }
  SECTION("a metadata file that disagrees with the data is Corruption at the sample") {
    REQUIRE(storage->Remove("/d/a.h5.meta.h5").ok());
    REQUIRE(storage->Rename("/d/b.h5.meta.h5", "/d/a.h5.meta.h5").ok());
    auto reader = format->Open(storage.get(), "/d/a.h5", o);
    REQUIRE(reader.ok());
    SampleBuffer buf;
    Status st = (*reader)->ReadSample(1, &buf);
    REQUIRE(st.code() == StatusCode::kCorruption);
    CHECK(Has(st.message(), "/d/a.h5.meta.h5: entry 1"));
  }
  SECTION("an existing metadata file is never overwritten and blocks the write") {
    REQUIRE(storage->Remove("/d/a.h5").ok());
    Status st = format->Write(storage.get(), "/d/a.h5", Fixed(100, 32768), o);
    REQUIRE(st.code() == StatusCode::kAlreadyExists);
    CHECK(Has(st.message(), "/d/a.h5.meta.h5"));
    CHECK_FALSE(*storage->Exists("/d/a.h5"));
  }
}

TEST_CASE("hdf5 writes a large shared file in bounded slabs", "[format][hdf5][large]") {
  TempDir tmp;
  MemoryTracer tracer;
  auto storage = BoundPosixStorage(&tracer);
  auto format = Hdf5();
  // 3000 samples of 20 KiB = 60 MiB, and 3000 variable samples; written in slabs of <= 4 MiB.
  const FileSpec fixed = Fixed(3000, 20480, 11);
  std::vector<uint64_t> sizes;
  for (uint64_t i = 0; i < 3000; ++i) sizes.push_back(10000 + (i * 7919) % 30000);
  const FileSpec variable = Spec(sizes, 12);
  FormatOptions chunked;
  chunked.formats.Get<Hdf5Options>().enable_chunking = true;
  chunked.formats.Get<Hdf5Options>().chunk_size = 65536;
  for (const auto& [name, spec, o] :
       {std::tuple{"f.h5", fixed, FormatOptions{}}, std::tuple{"v.h5", variable, chunked}}) {
    INFO(name);
    REQUIRE(format->Write(storage.get(), tmp / name, spec, o).ok());
    int64_t largest = 0, written = 0;
    for (const auto& e : tracer.Events()) {
      if (std::string(e.name) == "pwrite" && tracer.FileName(e.file_id) == tmp / name) {
        largest = std::max(largest, e.count);
        written += e.count;
      }
    }
    uint64_t total = 0;
    for (uint64_t s : spec.sample_sizes) total += s;
    CHECK(largest <= (4 << 20));
    CHECK(written >= static_cast<int64_t>(total));
    auto reader = format->Open(storage.get(), tmp / name, o);
    REQUIRE(reader.ok());
    REQUIRE((*reader)->num_samples() == 3000);
    SampleBuffer buf;
    for (uint64_t i : {0, 1, 1499, 2998, 2999}) {
      REQUIRE((*reader)->ReadSample(i, &buf).ok());
      REQUIRE(BufferString(buf) == ExpectedSample(spec, i));
    }
  }
}

TEST_CASE("hdf5 readers are safe from many threads", "[format][hdf5][threads]") {
  auto storage = BoundMemoryStorage();
  auto format = Hdf5();
  FormatOptions o;
  o.formats.Get<Hdf5Options>().enable_chunking = true;
  o.formats.Get<Hdf5Options>().chunk_size = 8192;
  o.compression = "gzip";
  const FileSpec a = Variable(200, 1), b = Fixed(200, 3000, 2);
  REQUIRE(format->Write(storage.get(), "/a.h5", a, o).ok());
  REQUIRE(format->Write(storage.get(), "/b.h5", b, o).ok());
  auto ra = format->Open(storage.get(), "/a.h5", o);
  auto ra2 = format->Open(storage.get(), "/a.h5", o);  // the same file twice
  auto rb = format->Open(storage.get(), "/b.h5", o);
  REQUIRE((ra.ok() && ra2.ok() && rb.ok()));
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      SampleBuffer buf;
      FormatReader* reader = t % 3 == 0 ? ra->get() : t % 3 == 1 ? ra2->get() : rb->get();
      const FileSpec& spec = t % 3 == 2 ? b : a;
      for (uint64_t k = 0; k < 200; ++k) {
        const uint64_t i = (k * 37 + t) % 200;
        if (!reader->ReadSample(i, &buf).ok() || BufferString(buf) != ExpectedSample(spec, i)) {
          ++bad;
        }
      }
    });
  }
  // A writer meanwhile, and a reader that goes away while the other reader of /a.h5 stays.
  REQUIRE(format->Write(storage.get(), "/c.h5", Fixed(50, 1000), o).ok());
  for (auto& th : threads) th.join();
  ra2->reset();
  SampleBuffer buf;
  REQUIRE((*ra)->ReadSample(7, &buf).ok());
  REQUIRE(BufferString(buf) == ExpectedSample(a, 7));
  CHECK(bad == 0);
}

TEST_CASE("hdf5 reads with O_DIRECT and over slow storage", "[format][hdf5][direct]") {
  SECTION("posix O_DIRECT") {
    TempDir tmp;
    auto storage = BoundPosixStorage();
    FormatOptions o;
    o.direct = true;
    for (const FileSpec& spec : {Fixed(5, 10000), Variable(9)}) {
      const std::string path = tmp / (spec.sample_sizes[0] == 10000 ? "f.h5" : "v.h5");
      RoundTrip(storage.get(), path, spec, o);
    }
  }
  SECTION("slow storage over memory") {
    Registries registries;
    REQUIRE(RegisterBuiltinStorages(&registries.storages).ok());
    StorageOptions so;
    so.name = "slow";
    so.backends.Get<SlowOptions>().inner = "memory";
    so.backends.Get<SlowOptions>().latency_us = 1;
    MemoryTracer tracer;
    auto storage = MakeStorage(so, registries.storages, SystemClock(), &tracer);
    REQUIRE(storage.ok());
    FormatOptions o;
    o.formats.Get<Hdf5Options>().enable_chunking = true;
    o.formats.Get<Hdf5Options>().chunk_size = 4096;
    RoundTrip(storage->get(), "/s.h5", Variable(20), o);
    CHECK((*storage)->stats().read_ops > 20);
  }
}

}  // namespace
}  // namespace dlio::testing
