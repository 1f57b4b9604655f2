// A threaded/sync reader whose consumer reads no byte reads every sample of a streaming format
// into one ring of ReadScratch::kRingBytes (256 KiB) mapped again and again over the sample's
// span (pipeline/read_scratch.h). That is safe only while every streaming reader keeps its
// promise (FormatCapabilities::streams_samples): it writes a sample front to back and reads none
// of it back once 256 KiB more were written. Here each streaming format's readers, native and
// every framework model under reader.client_costs none, read samples of several rings into that
// ring (npz stored and deflated, native inflating straight into it, and npy): every read
// succeeds with checksums verified, the ring ends holding the sample's last 256 KiB as a plain
// buffer gets them, and a damaged deflated member's error still reaches the caller.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "../format/format_test_util.h"
#include "format/npy_options.h"
#include "io_models/io_model_table.h"
#include "pipeline/read_scratch.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

struct RingCase {
  std::string format;
  std::string compression;
};

// The models a streaming reader of `format` serves without reading its samples back.
std::vector<IoModel> StreamingModels(const Format& format) {
  std::vector<IoModel> models{IoModel::kNative};
  for (IoModel m : format.capabilities().io_models) {
    if (!io_models::IoModelEntryFor(m).reads_sample_back) models.push_back(m);
  }
  return models;
}

TEST_CASE("reader ring: streaming readers read samples of several rings intact through it") {
  using pipeline_internal::ReadScratch;
  REQUIRE(ReadScratch::kRingBytes == (uint64_t{256} << 10));
  TempDir dir;
  auto storage = BoundPosixStorage();
  FileSpec spec;
  // Several rings each, neither a whole number of them nor of pages.
  spec.sample_sizes.assign(2, (uint64_t{3} << 20) + 12345);
  spec.seed = 11;
  for (const RingCase& c :
       {RingCase{"npz", "none"}, RingCase{"npz", "gzip"}, RingCase{"npy", "none"}}) {
    auto format = MakeFormatByName(c.format);
    REQUIRE(format->capabilities().streams_samples);
    const std::string path = dir / (c.format + "_" + c.compression + "." + c.format);
    FormatOptions write;
    write.compression = c.compression;
    REQUIRE(format->Write(storage.get(), path, spec, write).ok());
    for (IoModel model : StreamingModels(*format)) {
      INFO(c.format << " " << c.compression << ", model " << static_cast<int>(model));
      FormatOptions options;
      options.io_model = model;
      options.verify = true;
      // native inflates a deflated member straight into the caller's buffer past this size
      // (below it, into a cache of its own): 0 takes that path here.
      options.formats.Get<NpyOptions>().inflate_cache_bytes = 0;
      auto plain_reader = format->Open(storage.get(), path, options);
      auto ring_reader = format->Open(storage.get(), path, options);
      REQUIRE(plain_reader.ok());
      REQUIRE(ring_reader.ok());
      ReadScratch scratch;
      REQUIRE(scratch.Init("reader-ring-test", true, spec.sample_sizes[0]).ok());
      CHECK(scratch.physical_bytes() == ReadScratch::kRingBytes);
      for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
        SampleBuffer plain;
        REQUIRE((*plain_reader)->ReadSample(i, &plain).ok());
        const Status st = (*ring_reader)->ReadSample(i, &scratch.buffer());
        INFO("sample " << i << ": " << st.ToString());
        REQUIRE(st.ok());
        REQUIRE(scratch.AfterRead().ok());
        const SampleBuffer& ring = scratch.buffer();
        REQUIRE(ring.size() == plain.size());
        REQUIRE(plain.size() == spec.sample_sizes[i]);
        // The last kRingBytes bytes were the last written to their pages: they are intact, but
        // for the ring's first bytes, where a sample's first bytes land again: a reader that
        // copies a sample from memory of its own (numpy's pieces, a deflated member inflated
        // whole by native) copies it with memcpy, and glibc's memcpy stores a large copy's first
        // vectors after the rest (no byte is read back for it).
        uint64_t differing = 0;
        for (uint64_t b = plain.size() - ReadScratch::kRingBytes; b < plain.size(); ++b) {
          if (b % ReadScratch::kRingBytes < 256) continue;
          differing += ring.data()[b] != plain.data()[b];
        }
        CHECK(differing == 0);
        CHECK(scratch.physical_bytes() == ReadScratch::kRingBytes);
      }
    }
  }
}

TEST_CASE("reader ring: a damaged deflated member fails its CRC through the ring") {
  // The checksums verified above are checked: a member whose stored CRC is wrong fails when read
  // into the same ring.
  using pipeline_internal::ReadScratch;
  TempDir dir;
  auto storage = BoundPosixStorage();
  FileSpec spec;
  spec.sample_sizes = {(uint64_t{2} << 20) + 99};
  spec.seed = 5;
  auto format = MakeFormatByName("npz");
  const std::string path = dir / "damaged.npz";
  FormatOptions write;
  write.compression = "gzip";
  REQUIRE(format->Write(storage.get(), path, spec, write).ok());
  // Flip one byte of the central directory's CRC-32 of the first member (offset 16 of its
  // record, signature PK\1\2).
  std::string bytes = ReadTextFile(path);
  const size_t central = bytes.find(std::string("PK\x01\x02", 4));
  REQUIRE(central != std::string::npos);
  bytes[central + 16] = static_cast<char>(bytes[central + 16] ^ 0x5a);
  WriteTextFile(path, bytes);
  for (IoModel model : StreamingModels(*format)) {
    INFO("model " << static_cast<int>(model));
    FormatOptions options;
    options.io_model = model;
    options.verify = true;
    options.formats.Get<NpyOptions>().inflate_cache_bytes = 0;
    auto reader = format->Open(storage.get(), path, options);
    ReadScratch scratch;
    REQUIRE(scratch.Init("reader-ring-test", true, spec.sample_sizes[0]).ok());
    const Status st = reader.ok() ? (*reader)->ReadSample(0, &scratch.buffer()) : reader.status();
    INFO(st.ToString());
    CHECK(st.code() == StatusCode::kCorruption);
  }
}

}  // namespace
}  // namespace dlio::testing
