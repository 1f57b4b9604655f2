// reader.io_model tf.data (tfrecord): dlio's requests held against TFRecordDataset's. TensorFlow
// is not installable here, so the reference is tfdata_reference.py, a reader written from TF's
// source (RecordReader over BufferedInputStream, cited in it and in docs/io_models.md), run under
// libdlio_preload.so; and hand-computed streams: a file of S bytes read through a buffer of B is
// the requests (0, B), (B, B), ... up to S, the last one short (plus (S, B) when S is a multiple
// of B: TF's next record read meets the end there), whatever the records' sizes.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dlio/data_source.h"
#include "dlio/loop.h"
#include "dlio/sampler.h"
#include "format/format_test_util.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::KindFilter;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::BoundPosixStorage;
using testing::BufferString;
using testing::ExpectedSample;
using testing::MakeFormatByName;
using testing::TempDir;

constexpr uint64_t kDefaultBuffer = 262144;  // TFRecordDataset's buffer_size default

struct Dataset {
  std::string dir;
  std::string compression = "none";
  std::vector<std::string> files;  // absolute paths
  std::vector<FileSpec> specs;
  uint64_t per_file = 0;
};

// Writes one tfrecord file (with its .idx, which the model must not open) per entry of `sizes`;
// every file holds the same number of records.
Dataset WriteDataset(const std::string& dir, const std::vector<std::vector<uint64_t>>& sizes,
                     const std::string& compression = "none") {
  std::filesystem::create_directories(dir);
  auto format = MakeFormatByName("tfrecord");
  REQUIRE(format != nullptr);
  auto storage = BoundPosixStorage();
  Dataset d;
  d.dir = dir;
  d.compression = compression;
  d.per_file = sizes.front().size();
  for (size_t f = 0; f < sizes.size(); ++f) {
    REQUIRE(sizes[f].size() == d.per_file);
    FileSpec spec;
    spec.sample_sizes = sizes[f];
    spec.seed = 1000 + f;
    const std::string path = dir + "/f" + std::to_string(f) + ".tfrecord";
    FormatOptions options;
    options.compression = compression;
    REQUIRE(format->Write(storage.get(), path, spec, options).ok());
    d.files.push_back(path);
    d.specs.push_back(spec);
  }
  return d;
}

// What dlio's run does: the sampler's plan (interleave = `cycle`, adapted to the model) read
// through a FormatDataSource with the run's trusted count, on posix storage under a tracer.
// Returns the requests kept by `filter`; *samples gets each planned sample's bytes by file.
std::vector<Request> DlioRequests(const Dataset& d, uint64_t transfer_size, uint64_t cycle,
                                  IoModel model, const KindFilter& filter,
                                  std::map<std::pair<uint32_t, uint64_t>, std::string>* samples) {
  auto format = MakeFormatByName("tfrecord");
  REQUIRE(format != nullptr);
  MemoryTracer tracer;
  auto storage = BoundPosixStorage(&tracer);
  FormatDataSourceOptions dso;
  dso.format.transfer_size = transfer_size;
  dso.format.io_model = model;
  dso.format.compression = d.compression;
  dso.format.samples_per_file = d.per_file;
  dso.samples_per_file = d.per_file;
  auto source = MakeFormatDataSource(storage.get(), format.get(), d.files, dso);
  REQUIRE(source.ok());
  SamplerOptions so;
  so.interleave = cycle;
  AdaptSamplerToIoModel(ResolveIoModel(model, format->capabilities()), &so);
  auto sampler = MakeSampler(so);
  REQUIRE(sampler.ok());
  std::vector<SampleRef> plan;
  PlanRequest req;
  req.samples_per_file = &(*source)->samples_per_file();
  REQUIRE((*sampler)->Plan(req, &plan).ok());
  SampleBuffer buf;
  for (const SampleRef& ref : plan) {
    Status st = (*source)->Read(ref, &buf);
    INFO(st.ToString());
    REQUIRE(st.ok());
    if (samples != nullptr) (*samples)[{ref.file, ref.index}] = BufferString(buf);
  }
  source->reset();  // closes the files
  return RequestsOf(tracer, d.dir, filter);
}

// The reference reader's requests (tfdata_reference.py under the preload library).
std::vector<Request> ReferenceRequests(const Dataset& d, uint64_t buffer_size, uint64_t cycle,
                                       const std::string& out_dir) {
  std::string args = "'" DLIO_SOURCE_DIR "/tests/io_models/tfdata_reference.py' ";
  args += std::to_string(buffer_size);
  args += ' ';
  args += std::to_string(cycle);
  args += ' ';
  args += d.compression;
  for (const std::string& f : d.files) args += " '" + f + "'";
  return RequestsOf(TracePythonProgram(args, d.dir, out_dir), d.dir);
}

// A file of `size` bytes streamed through a buffer of `b`.
std::vector<Request> Stream(const std::string& file, uint64_t size, uint64_t b) {
  std::vector<Request> out;
  for (uint64_t at = 0; at < size; at += b) {
    out.push_back({file, OpKind::kRead, static_cast<int64_t>(at), static_cast<int64_t>(b)});
  }
  if (size % b == 0) {
    out.push_back({file, OpKind::kRead, static_cast<int64_t>(size), static_cast<int64_t>(b)});
  }
  return out;
}

std::vector<Request> OfFile(const std::vector<Request>& rs, const std::string& file) {
  std::vector<Request> out;
  for (const Request& r : rs) {
    if (r.file == file) out.push_back(r);
  }
  return out;
}

// "<prefix><n>" (built by appending: GCC 12 warns falsely on "literal" + std::string).
std::string Numbered(const char* prefix, uint64_t n) {
  std::string s(prefix);
  s += std::to_string(n);
  return s;
}

std::string Name(const Dataset& d, size_t f) {
  return std::filesystem::path(d.files[f]).filename().string();
}

void CheckSamples(const Dataset& d,
                  const std::map<std::pair<uint32_t, uint64_t>, std::string>& samples) {
  REQUIRE(samples.size() == d.files.size() * d.per_file);
  for (const auto& [ref, bytes] : samples) {
    INFO("file " << ref.first << " sample " << ref.second);
    REQUIRE(bytes == ExpectedSample(d.specs[ref.first], ref.second));
  }
}

std::vector<uint64_t> Sizes(uint64_t n, uint64_t lo, uint64_t hi, uint64_t seed) {
  std::vector<uint64_t> out;
  uint64_t x = seed;
  for (uint64_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    out.push_back(lo + (x >> 33) % (hi - lo + 1));
  }
  return out;
}

TEST_CASE("tf.data: each file is one stream of buffer_size requests, no index opened",
          "[io_models][tfdata]") {
  TempDir tmp;
  struct Case {
    const char* what;
    uint64_t transfer_size;  // reader.transfer_size (0: TF's default buffer)
    uint64_t lo, hi;         // sample sizes
  };
  const std::vector<Case> cases = {
      {"small records, default 256 KiB buffer", 0, 100, 30000},
      {"small records, 4 KiB buffer", 4096, 1000, 9000},
      {"records larger than the buffer (64 KiB)", 65536, 70000, 300000},
      {"records much larger than an odd buffer", 1000, 5000, 20000},
      {"records of ~256 KiB, default buffer", 0, 250000, 270000},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    INFO(k.what);
    const Dataset d = WriteDataset(tmp / Numbered("d", c),
                                   {Sizes(9, k.lo, k.hi, c + 1), Sizes(9, k.lo, k.hi, c + 77)});
    const uint64_t b = k.transfer_size == 0 ? kDefaultBuffer : k.transfer_size;
    std::map<std::pair<uint32_t, uint64_t>, std::string> samples;
    const auto dlio = DlioRequests(d, k.transfer_size, 0, IoModel::kAuto,
                                   KindFilter{{OpKind::kRead, OpKind::kOpen}}, &samples);
    CheckSamples(d, samples);
    std::vector<Request> expected;
    for (size_t f = 0; f < d.files.size(); ++f) {
      expected.push_back({Name(d, f), OpKind::kOpen, -1, -1});
      const auto stream = Stream(Name(d, f), std::filesystem::file_size(d.files[f]), b);
      expected.insert(expected.end(), stream.begin(), stream.end());
    }
    // Opens carry no offset or size in dlio's log: compare them by file and kind.
    std::vector<Request> got = dlio;
    for (Request& r : got) {
      if (r.kind == OpKind::kOpen) r.offset = r.size = -1;
    }
    INFO(ToString(got));
    REQUIRE(got == expected);  // in particular no .idx is opened
  }
}

TEST_CASE("tf.data: requests equal the reference reader's, row by row", "[io_models][tfdata]") {
  TempDir tmp;
  struct Case {
    uint64_t transfer_size, lo, hi, cycle;
  };
  const std::vector<Case> cases = {
      {0, 100, 40000, 0},         // default buffer, one file after another
      {4096, 1000, 12000, 0},     // records around the buffer size
      {65536, 60000, 200000, 2},  // num_parallel_reads 2: two streams interleaved
      {1000, 100, 5000, 3},       // three files interleaved, an odd buffer
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    INFO("case " << c);
    const Dataset d = WriteDataset(
        tmp / Numbered("d", c), {Sizes(7, k.lo, k.hi, 3 * c + 1), Sizes(7, k.lo, k.hi, 3 * c + 2),
                                 Sizes(7, k.lo, k.hi, 3 * c + 3)});
    const uint64_t b = k.transfer_size == 0 ? kDefaultBuffer : k.transfer_size;
    std::map<std::pair<uint32_t, uint64_t>, std::string> samples;
    const auto dlio = DlioRequests(d, k.transfer_size, k.cycle, IoModel::kTfData, {}, &samples);
    CheckSamples(d, samples);
    const auto real = ReferenceRequests(d, b, k.cycle, tmp / Numbered("prof", c));
    INFO("dlio:\n" << ToString(dlio) << "reference:\n" << ToString(real));
    REQUIRE(dlio.size() == real.size());
    if (k.cycle <= 1) REQUIRE(dlio == real);       // one stream at a time: the whole order
    for (size_t f = 0; f < d.files.size(); ++f) {  // interleaved: each file's stream
      REQUIRE(OfFile(dlio, Name(d, f)) == OfFile(real, Name(d, f)));
    }
    if (k.cycle > 1) {  // the streams alternate: file 1 is read before file 0 is done
      auto first = [&](const std::string& file) {
        return std::find_if(dlio.begin(), dlio.end(),
                            [&](const Request& r) { return r.file == file; });
      };
      auto last_of_0 = std::find_if(dlio.rbegin(), dlio.rend(),
                                    [&](const Request& r) { return r.file == Name(d, 0); });
      REQUIRE(first(Name(d, 1)) - dlio.begin() < dlio.rend() - last_of_0 - 1);
    }
  }
}

TEST_CASE("tf.data: GZIP and ZLIB files stream the same way, inflated on top of the buffer",
          "[io_models][tfdata]") {
  TempDir tmp;
  struct Case {
    const char* compression;
    uint64_t transfer_size, lo, hi, cycle;
  };
  const std::vector<Case> cases = {
      {"gzip", 0, 100, 40000, 0},
      {"gzip", 4096, 20000, 400000, 2},  // records larger than TF's 256 KiB inflate buffers
      {"zlib", 1000, 100, 9000, 0},
      {"deflate", 65536, 1000, 90000, 3},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    INFO(k.compression << " case " << c);
    const Dataset d =
        WriteDataset(tmp / Numbered("d", c),
                     {Sizes(6, k.lo, k.hi, 5 * c + 1), Sizes(6, k.lo, k.hi, 5 * c + 2),
                      Sizes(6, k.lo, k.hi, 5 * c + 3)},
                     k.compression);
    for (const std::string& f : d.files) REQUIRE_FALSE(std::filesystem::exists(f + ".idx"));
    const uint64_t b = k.transfer_size == 0 ? kDefaultBuffer : k.transfer_size;
    for (IoModel model : {IoModel::kAuto, IoModel::kNative}) {  // native streams them too
      std::map<std::pair<uint32_t, uint64_t>, std::string> samples;
      const auto dlio = DlioRequests(d, k.transfer_size, k.cycle, model, {}, &samples);
      CheckSamples(d, samples);
      for (size_t f = 0; f < d.files.size(); ++f) {
        INFO(ToString(OfFile(dlio, Name(d, f))));
        REQUIRE(OfFile(dlio, Name(d, f)) ==
                Stream(Name(d, f), std::filesystem::file_size(d.files[f]), b));
      }
      if (model == IoModel::kAuto) {
        const auto real = ReferenceRequests(d, b, k.cycle, tmp / Numbered("prof", c));
        REQUIRE(dlio.size() == real.size());
        if (k.cycle <= 1) REQUIRE(dlio == real);
        for (size_t f = 0; f < d.files.size(); ++f) {
          REQUIRE(OfFile(dlio, Name(d, f)) == OfFile(real, Name(d, f)));
        }
      }
    }
  }
}

TEST_CASE("tf.data: a compressed file restarts from its start, counts without a trusted count",
          "[io_models][tfdata]") {
  TempDir tmp;
  const Dataset d = WriteDataset(tmp / "d", {std::vector<uint64_t>(20, 5000)}, "gzip");
  auto format = MakeFormatByName("tfrecord");
  MemoryTracer tracer;
  auto storage = BoundPosixStorage(&tracer);
  FormatOptions options;
  options.transfer_size = 4096;
  options.compression = "gzip";
  auto r = format->Open(storage.get(), d.files[0], options);  // no count: one pass at open
  REQUIRE(r.ok());
  REQUIRE((*r)->num_samples() == 20);
  const size_t counting = RequestsOf(tracer, d.dir).size();
  REQUIRE(counting > 0);
  SampleBuffer buf;
  for (uint64_t i : {12, 1, 2, 19, 0}) {
    Status st = (*r)->ReadSample(i, &buf);
    INFO(st.ToString());
    REQUIRE(st.ok());
    REQUIRE(BufferString(buf) == ExpectedSample(d.specs[0], i));
    if (i == 12) {  // the stream starts over after counting
      REQUIRE(RequestsOf(tracer, d.dir)[counting].offset == 0);
    }
  }
  // 1 came after 12 (no longer kept): the file was read again from offset 0.
  size_t from_zero = 0;
  for (const Request& q : RequestsOf(tracer, d.dir)) from_zero += q.offset == 0 ? 1 : 0;
  REQUIRE(from_zero >= 4);  // counting, 12, 1, 0
  options.compression = "lzma";
  REQUIRE(format->Open(storage.get(), d.files[0], options).status().code() ==
          StatusCode::kInvalidArgument);
}

TEST_CASE("tf.data: a file that ends where a fill ends is probed at its end",
          "[io_models][tfdata]") {
  TempDir tmp;
  const Dataset d = WriteDataset(tmp / "d", {{3000, 5000, 7000}});
  const uint64_t size = std::filesystem::file_size(d.files[0]);
  for (uint64_t b : {size, size / 2 + (size % 2)}) {
    INFO("buffer " << b << " file " << size);
    const auto dlio = DlioRequests(d, b, 0, IoModel::kTfData, {}, nullptr);
    REQUIRE(dlio == Stream(Name(d, 0), size, b));
    REQUIRE(dlio == ReferenceRequests(d, b, 0, tmp / Numbered("p", b)));
  }
}

TEST_CASE("tf.data: out-of-order reads are correct, an earlier record restarts the stream",
          "[io_models][tfdata]") {
  TempDir tmp;
  const Dataset d = WriteDataset(tmp / "d", {std::vector<uint64_t>(20, 5000)});
  const uint64_t b = 4096;
  auto format = MakeFormatByName("tfrecord");
  MemoryTracer tracer;
  auto storage = BoundPosixStorage(&tracer);
  FormatOptions options;
  options.transfer_size = b;
  options.samples_per_file = 20;
  auto r = format->Open(storage.get(), d.files[0], options);
  REQUIRE(r.ok());
  // Record offsets from the writer's index (the reader never opens it).
  std::vector<int64_t> offsets;
  {
    std::istringstream idx(testing::ReadTextFile(d.files[0] + ".idx"));
    int64_t off = 0, size = 0;
    while (idx >> off >> size) offsets.push_back(off);
  }
  REQUIRE(offsets.size() == 20);
  SampleBuffer buf;
  auto read = [&](uint64_t i) {
    Status st = (*r)->ReadSample(i, &buf);
    INFO(st.ToString());
    REQUIRE(st.ok());
    REQUIRE(BufferString(buf) == ExpectedSample(d.specs[0], i));
  };
  auto reads = [&] { return RequestsOf(tracer, d.dir); };
  read(12);  // the stream reads on through records 0-11
  const size_t through_12 = reads().size();
  for (size_t j = 0; j < through_12; ++j) REQUIRE(reads()[j].offset == static_cast<int64_t>(j * b));
  read(9);  // passed just now: kept, no request
  read(5);
  REQUIRE(reads().size() == through_12);
  read(1);  // passed long ago: the stream restarts at its offset
  const auto after = reads();
  REQUIRE(after.size() > through_12);
  REQUIRE(after[through_12].offset == offsets[1]);
  REQUIRE(after[through_12].size == static_cast<int64_t>(b));
  read(2);  // and goes on from there
  const auto last = reads();
  for (size_t j = through_12 + 1; j < last.size(); ++j) {
    REQUIRE(last[j].offset == last[j - 1].offset + static_cast<int64_t>(b));
  }
  read(15);  // far ahead: the stream moves to the first record not located yet (13), reads on
  const auto ahead = reads();
  REQUIRE(ahead.size() > last.size());
  REQUIRE(ahead[last.size()].offset == offsets[13]);
  read(3);  // behind the stream now, and not kept: a restart at its offset
  REQUIRE(reads().size() > ahead.size());
  REQUIRE(reads()[ahead.size()].offset == offsets[3]);
  // The same samples as the native reader.
  options.io_model = IoModel::kNative;
  auto native = format->Open(storage.get(), d.files[0], options);
  REQUIRE(native.ok());
  SampleBuffer nbuf;
  for (uint64_t i : {19, 0, 7, 3, 18}) {
    REQUIRE((*native)->ReadSample(i, &nbuf).ok());
    REQUIRE((*r)->ReadSample(i, &buf).ok());
    REQUIRE(BufferString(buf) == BufferString(nbuf));
  }
}

TEST_CASE("tf.data: a shuffled order costs about a fill per record, not the bytes between",
          "[io_models][tfdata]") {
  TempDir tmp;
  const uint64_t n = 60, b = 4096;
  const Dataset d = WriteDataset(tmp / "d", {std::vector<uint64_t>(n, 5000)});
  const uint64_t size = std::filesystem::file_size(d.files[0]);
  auto format = MakeFormatByName("tfrecord");
  MemoryTracer tracer;
  auto storage = BoundPosixStorage(&tracer);
  FormatOptions options;
  options.transfer_size = b;
  options.samples_per_file = n;
  auto r = format->Open(storage.get(), d.files[0], options);
  REQUIRE(r.ok());
  std::vector<uint64_t> order(n);
  for (uint64_t i = 0; i < n; ++i)
    order[i] = (i * 37 + 11) % n;  // a permutation (37 and 60 coprime)
  SampleBuffer buf;
  for (uint64_t i : order) {
    REQUIRE((*r)->ReadSample(i, &buf).ok());
    REQUIRE(BufferString(buf) == ExpectedSample(d.specs[0], i));
  }
  uint64_t bytes = 0;
  for (const Request& q : RequestsOf(tracer, d.dir)) bytes += static_cast<uint64_t>(q.size);
  // Each record (5 KiB + framing) takes 2-3 fills of 4 KiB, plus the pass that locates them.
  INFO(bytes << " bytes requested for a file of " << size);
  REQUIRE(bytes <= size + n * 3 * b);
}

TEST_CASE("tf.data: concurrent readers of one file get every sample right", "[io_models][tfdata]") {
  TempDir tmp;
  const Dataset d = WriteDataset(tmp / "d", {Sizes(64, 100, 90000, 5)});
  auto format = MakeFormatByName("tfrecord");
  auto storage = BoundPosixStorage();
  FormatOptions options;
  options.transfer_size = 16384;
  options.samples_per_file = 64;
  auto r = format->Open(storage.get(), d.files[0], options);
  REQUIRE(r.ok());
  std::atomic<uint64_t> next{0};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      SampleBuffer buf;
      for (uint64_t i; (i = next.fetch_add(1)) < 64;) {
        if (!(*r)->ReadSample(i, &buf).ok() || BufferString(buf) != ExpectedSample(d.specs[0], i)) {
          bad.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(bad.load() == 0);
}

TEST_CASE("tf.data: a file holding another count fails the read that finds it",
          "[io_models][tfdata]") {
  TempDir tmp;
  const Dataset d = WriteDataset(tmp / "d", {std::vector<uint64_t>(5, 3000)});
  auto format = MakeFormatByName("tfrecord");
  auto storage = BoundPosixStorage();
  SampleBuffer buf;
  for (uint64_t expected : {4, 6}) {
    INFO("expected " << expected);
    FormatOptions options;
    options.samples_per_file = expected;
    auto r = format->Open(storage.get(), d.files[0], options);
    REQUIRE(r.ok());
    Status st;
    for (uint64_t i = 0; i < expected && st.ok(); ++i) st = (*r)->ReadSample(i, &buf);
    REQUIRE(st.code() == StatusCode::kInvalidArgument);
    INFO(st.message());
    REQUIRE(st.message().find(d.files[0]) != std::string::npos);
    REQUIRE(st.message().find(expected == 4 ? "holds more than 4 records" : "holds 5 records") !=
            std::string::npos);
  }
}

TEST_CASE("tf.data: a sample shuffle is tf.data's shuffle buffer, after the reads",
          "[io_models][tfdata]") {
  const std::vector<uint64_t> per_file{10, 10, 10};
  PlanRequest req;
  req.samples_per_file = &per_file;
  auto plan = [&](IoModel model, const std::string& name) {
    SamplerOptions so;
    so.name = name;
    so.sample_shuffle = ShuffleMode::kSeed;
    so.shuffle_size = 8;
    AdaptSamplerToIoModel(model, &so);
    auto s = MakeSampler(so);
    REQUIRE(s.ok());
    std::vector<SampleRef> out;
    REQUIRE((*s)->Plan(req, &out).ok());
    return out;
  };
  std::vector<SampleRef> in_order;
  for (uint32_t f = 0; f < 3; ++f) {
    for (uint64_t i = 0; i < 10; ++i) in_order.push_back({f, i});
  }
  CHECK(plan(IoModel::kTfData, "auto") == in_order);
  CHECK(plan(IoModel::kTfData, "shuffle_buffer") == in_order);
  CHECK(plan(IoModel::kNative, "auto") != in_order);            // a full shuffle
  CHECK(plan(IoModel::kNative, "shuffle_buffer") != in_order);  // the window, before the reads
  CHECK(plan(IoModel::kTfData, "shuffle") != in_order);         // asked for: kept
}

}  // namespace
}  // namespace dlio
