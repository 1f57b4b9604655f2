// Samples along the last axis of x (the Python DLIO's layout) and how the sample axis is chosen,
// for npy files and npz members; what a last-axis sample costs in I/O.
#include <catch2/catch.hpp>

#include "format/format_test_util.h"
#include "format/npy_header.h"
#include "format/npy_options.h"
#include "format/npy_samples.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

using format_internal::ArraySamples;
using format_internal::ArrayShape;
using format_internal::BuildNpyHeader;
using format_internal::NpyHeader;
using format_internal::ParseNpyHeader;
using format_internal::ResolveArraySamples;
using format_internal::SampleAxis;

NpyHeader Header(const std::vector<uint64_t>& shape, const std::string& descr = "|u1") {
  const std::string h = BuildNpyHeader(descr, shape);
  auto parsed = ParseNpyHeader(reinterpret_cast<const uint8_t*>(h.data()), h.size(), "t", 0);
  REQUIRE(parsed.ok());
  return *parsed;
}

FileSpec LayoutSpec(uint64_t n, uint64_t size) {
  FileSpec spec;
  spec.seed = 31;
  spec.sample_sizes.assign(n, size);
  return spec;
}

// The requests these tests count are native's (reader.io_model numpy: tests/io_models).
FormatOptions LastAxis() {
  FormatOptions o;
  o.io_model = IoModel::kNative;
  o.formats.Get<NpyOptions>().sample_layout = SampleLayout::kLastAxis;
  return o;
}

TEST_CASE("the sample axis: labels, then expected_samples, then sample_layout", "[format][npy]") {
  FormatOptions first, last = LastAxis();
  first.io_model = IoModel::kNative;
  const NpyHeader dlio = Header({41, 41, 3});  // the Python DLIO's (dim, dim, num_samples)
  ArraySamples s = ResolveArraySamples(dlio, 3, first);
  CHECK(s.axis == SampleAxis::kLast);
  CHECK(s.basis == "labels");
  CHECK(s.num_samples == 3);
  CHECK(s.sample_size == 41 * 41);
  CHECK(s.strided());
  // Labels win over the expected count and the configured layout.
  FormatOptions hint = last;
  hint.samples_per_file = 41;
  CHECK(ResolveArraySamples(Header({41, 100}), 41, last).axis == SampleAxis::kFirst);
  CHECK(ResolveArraySamples(dlio, 3, hint).axis == SampleAxis::kLast);
  // Without labels (npy), the expected count decides when it names one axis...
  hint = first;
  hint.samples_per_file = 3;
  s = ResolveArraySamples(dlio, std::nullopt, hint);
  CHECK(s.axis == SampleAxis::kLast);
  CHECK(s.basis == "expected_samples");
  // ...and the layout otherwise: no count, a count naming neither axis, or both (a tie).
  CHECK(ResolveArraySamples(dlio, std::nullopt, first).axis == SampleAxis::kFirst);
  CHECK(ResolveArraySamples(dlio, std::nullopt, last).axis == SampleAxis::kLast);
  CHECK(ResolveArraySamples(dlio, 7, last).basis == "sample_layout");
  const NpyHeader tie = Header({4, 9, 4});
  CHECK(ResolveArraySamples(tie, 4, first).axis == SampleAxis::kFirst);
  s = ResolveArraySamples(tie, 4, last);
  CHECK(s.axis == SampleAxis::kLast);
  CHECK(s.basis == "sample_layout");
  CHECK(s.sample_size == 36);
  // One axis, 0-d and Fortran order do not depend on any of it.
  CHECK(ResolveArraySamples(Header({9}), 1, last).num_samples == 9);
  CHECK(ResolveArraySamples(Header({}), 1, last).axis == SampleAxis::kWhole);
  // A last axis of one sample is the whole array, read in place.
  s = ResolveArraySamples(Header({5, 6, 1}, "<f4"), 1, first);
  CHECK(s.axis == SampleAxis::kLast);
  CHECK(!s.strided());
  CHECK(s.sample_size == 120);
}

TEST_CASE("last-axis writers produce DLIO's (dim, dim, n) shapes", "[format][npy]") {
  CHECK(ArrayShape(SampleLayout::kLastAxis, 4, 1681 * 1681) ==
        std::vector<uint64_t>{1681, 1681, 4});
  CHECK(ArrayShape(SampleLayout::kLastAxis, 2, 12) == std::vector<uint64_t>{3, 4, 2});
  CHECK(ArrayShape(SampleLayout::kLastAxis, 2, 13) == std::vector<uint64_t>{1, 13, 2});
  CHECK(ArrayShape(SampleLayout::kLastAxis, 1, 0) == std::vector<uint64_t>{0, 0, 1});
  CHECK(ArrayShape(SampleLayout::kFirstAxis, 3, 10) == std::vector<uint64_t>{3, 10});
}

// Writes `spec` in the last-axis layout and checks every sample, in a scrambled order, and that
// each one cost reading the whole array: `data_reads` requests of at most transfer_size.
void CheckLastAxisFile(const std::string& format, const FormatOptions& write_options,
                       const FormatOptions& read_options, const FileSpec& spec) {
  auto storage = BoundMemoryStorage();
  auto fmt = MakeFormatByName(format);
  const std::string path = "/f." + format;
  REQUIRE(fmt->Write(storage.get(), path, spec, write_options).ok());
  auto r = fmt->Open(storage.get(), path, read_options);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  const uint64_t n = spec.sample_sizes.size(), record = spec.sample_sizes[0];
  REQUIRE((*r)->num_samples() == n);
  REQUIRE((*r)->sample_size(0) == record);
  const std::string json = (*r)->DescribeJson();
  CHECK(json.find("\"sample_layout\":\"last_axis\"") != std::string::npos);
  SampleBuffer buf;
  for (uint64_t k = 0; k < n; ++k) {
    const uint64_t i = (k * 7 + 3) % n;
    const IoStats before = storage->stats();
    REQUIRE((*r)->ReadSample(i, &buf).ok());
    REQUIRE(BufferString(buf) == ExpectedSample(spec, i));
    const IoStats after = storage->stats();
    if (write_options.compression == "none") {
      // np.load reads the whole array: n x record bytes per sample, in transfer_size requests.
      CHECK(after.read_bytes - before.read_bytes == n * record);
      CHECK(after.read_ops - before.read_ops ==
            (n * record + read_options.transfer_size - 1) / read_options.transfer_size);
    } else if (k > 0) {  // the first sample's input may have come with the header at Open
      CHECK(after.read_bytes - before.read_bytes > 0);  // the member inflated again
    }
  }
}

TEST_CASE("npy and npz read samples along the last axis as np.load(f)[..., i]", "[format][npy]") {
  FormatOptions write = LastAxis();
  FormatOptions read;  // default layout: what decides is in the file (npz) or the count (npy)
  read.io_model = IoModel::kNative;
  read.transfer_size = 1000;
  read.formats.Get<NpyOptions>().inflate_cache_bytes = 0;
  SECTION("npz, stored: y's length tells") {
    CheckLastAxisFile("npz", write, read, LayoutSpec(5, 40 * 41));
  }
  SECTION("npz, deflated") {
    write.compression = "deflate";
    read.compression = "deflate";
    CheckLastAxisFile("npz", write, read, LayoutSpec(4, 7 * 7));
  }
  SECTION("npy: the expected count tells") {
    read.samples_per_file = 6;
    CheckLastAxisFile("npy", write, read, LayoutSpec(6, 1000));
  }
  SECTION("npy: the configured layout tells") {
    read.formats.Get<NpyOptions>().sample_layout = SampleLayout::kLastAxis;
    CheckLastAxisFile("npy", write, read, LayoutSpec(3, 64));
  }
}

TEST_CASE("with transfer_size 0, last-axis arrays are read in np.load's requests",
          "[format][npy]") {
  // np.load reads an npz member through zipfile in numpy's 256 KiB pieces (read_array's
  // BUFFER_SIZE), and an .npy's data with one np.fromfile.
  const FileSpec spec = LayoutSpec(3, 200000);  // 600,000 bytes of data
  for (const std::string format : {"npz", "npy"}) {
    INFO(format);
    MemoryTracer tracer;
    auto storage = BoundMemoryStorage(&tracer);
    auto fmt = MakeFormatByName(format);
    REQUIRE(fmt->Write(storage.get(), "/t", spec, LastAxis()).ok());
    FormatOptions options = LastAxis();
    options.transfer_size = 0;
    auto r = fmt->Open(storage.get(), "/t", options);
    REQUIRE(r.ok());
    const size_t before = tracer.Events().size();
    SampleBuffer buf;
    REQUIRE((*r)->ReadSample(1, &buf).ok());
    REQUIRE(BufferString(buf) == ExpectedSample(spec, 1));
    std::vector<uint64_t> sizes;
    const auto events = tracer.Events();
    for (size_t k = before; k < events.size(); ++k) {
      if (std::string(events[k].name) == "pread") sizes.push_back(events[k].count);
    }
    if (format == "npz") {
      CHECK(sizes == std::vector<uint64_t>{262144, 262144, 75712});
    } else {
      CHECK(sizes == std::vector<uint64_t>{600000});
    }
  }
}

TEST_CASE("with transfer_size 0, a deflated last-axis member is re-read in 256 KiB requests",
          "[format][npz]") {
  const FileSpec spec = LayoutSpec(3, 200000);
  MemoryTracer tracer;
  auto storage = BoundMemoryStorage(&tracer);
  auto npz = MakeFormatByName("npz");
  FormatOptions options = LastAxis();
  options.compression = "deflate";
  REQUIRE(npz->Write(storage.get(), "/d.npz", spec, options).ok());
  options.transfer_size = 0;
  auto r = npz->Open(storage.get(), "/d.npz", options);
  REQUIRE(r.ok());
  SampleBuffer buf;
  REQUIRE((*r)->ReadSample(2, &buf).ok());  // its input came with the header, at Open
  const size_t before = tracer.Events().size();
  REQUIRE((*r)->ReadSample(0, &buf).ok());  // a second pass over the member
  REQUIRE(BufferString(buf) == ExpectedSample(spec, 0));
  std::vector<uint64_t> sizes;
  const auto events = tracer.Events();
  for (size_t k = before; k < events.size(); ++k) {
    if (std::string(events[k].name) == "pread") sizes.push_back(events[k].count);
  }
  REQUIRE(sizes.size() == 3);  // ~600 KB of incompressible deflate data
  CHECK(sizes[0] == 262144);
  CHECK(sizes[1] == 262144);
  CHECK(sizes[2] < 262144);
}

TEST_CASE("a DLIO-layout npy read without a hint is read along the first axis, and says so",
          "[format][npy]") {
  auto storage = BoundMemoryStorage();
  auto npy = MakeFormatByName("npy");
  REQUIRE(npy->Write(storage.get(), "/d.npy", LayoutSpec(2, 25), LastAxis()).ok());
  auto r = npy->Open(storage.get(), "/d.npy", {});
  REQUIRE(r.ok());
  CHECK((*r)->num_samples() == 5);  // (5, 5, 2): five rows of 10 bytes
  const std::string json = (*r)->DescribeJson();
  CHECK(json.find("\"sample_layout\":\"first_axis\",\"layout_basis\":\"sample_layout\"") !=
        std::string::npos);
  CHECK(json.find("\"shape\":[5,5,2]") != std::string::npos);
}

TEST_CASE("keep_arrays reads a last-axis array once per open reader", "[format][npz]") {
  for (const std::string compression : {"none", "deflate"}) {
    INFO(compression);
    auto storage = BoundMemoryStorage();
    auto npz = MakeFormatByName("npz");
    FormatOptions options = LastAxis();
    options.compression = compression;
    const FileSpec spec = LayoutSpec(4, 300);
    REQUIRE(npz->Write(storage.get(), "/k.npz", spec, options).ok());
    options.read_type = ReadType::kMemory;
    options.formats.Get<NpyOptions>().inflate_cache_bytes = 0;
    auto r = npz->Open(storage.get(), "/k.npz", options);
    REQUIRE(r.ok());
    SampleBuffer buf;
    REQUIRE((*r)->ReadSample(2, &buf).ok());
    REQUIRE(BufferString(buf) == ExpectedSample(spec, 2));
    const uint64_t ops = storage->stats().read_ops;
    for (uint64_t i : {0, 3, 1, 2}) {
      REQUIRE((*r)->ReadSample(i, &buf).ok());
      REQUIRE(BufferString(buf) == ExpectedSample(spec, i));
    }
    CHECK(storage->stats().read_ops == ops);
  }
}

TEST_CASE("first-axis files are read row by row, as before", "[format][npz]") {
  auto storage = BoundMemoryStorage();
  auto npz = MakeFormatByName("npz");
  const FileSpec spec = LayoutSpec(6, 500);
  REQUIRE(npz->Write(storage.get(), "/r.npz", spec, {}).ok());
  FormatOptions native;
  native.io_model = IoModel::kNative;  // under numpy (the default) a sample is a whole np.load
  auto r = npz->Open(storage.get(), "/r.npz", native);
  REQUIRE(r.ok());
  CHECK((*r)->DescribeJson().find("\"sample_layout\":\"first_axis\",\"layout_basis\":\"labels\"") !=
        std::string::npos);
  SampleBuffer buf;
  const IoStats before = storage->stats();
  REQUIRE((*r)->ReadSample(4, &buf).ok());
  REQUIRE(BufferString(buf) == ExpectedSample(spec, 4));
  CHECK(storage->stats().read_bytes - before.read_bytes == 500);
}

}  // namespace
}  // namespace dlio::testing
