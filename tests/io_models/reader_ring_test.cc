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
#include <utility>
#include <vector>

#include "../format/format_test_util.h"
#include "format/io_util.h"
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
    // native inflates a deflated member straight into the caller's buffer past
    // inflate_cache_bytes (0 here), below it into a cache of its own, each sample then copied out
    // of the cache (the default, also here).
    std::vector<std::pair<IoModel, bool>> runs;
    for (IoModel model : StreamingModels(*format)) runs.emplace_back(model, false);
    runs.emplace_back(IoModel::kNative, true);
    for (const auto& [model, cached] : runs) {
      INFO(c.format << " " << c.compression << ", model " << static_cast<int>(model)
                    << (cached ? ", inflate cache" : ""));
      FormatOptions options;
      options.io_model = model;
      options.verify = true;
      if (!cached) options.formats.Get<NpyOptions>().inflate_cache_bytes = 0;
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
        // copies a sample from memory of its own (the array numpy's Open loaded, a deflated
        // member native keeps inflated) copies it front to back in 64 KiB pieces
        // (CopyFrontToBack; one memcpy of megabytes runs backward on AMD hosts), and glibc's
        // memcpy stores each piece's first vectors after the rest (no byte is read back for it).
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

TEST_CASE("reader ring: a sample copied front to back leaves the ring holding its last bytes") {
  // A page-aligned source and the ring's page-aligned span share their offset within a page:
  // glibc then copies a block of megabytes backward (on AMD hosts, where it does not use
  // `rep movsb` past the L2 size), so one memcpy would leave the sample's first bytes in the
  // ring. CopyFrontToBack must not, whatever the source's offset within a page.
  using pipeline_internal::ReadScratch;
  const uint64_t n = (uint64_t{3} << 20) + 12345;
  for (const uint64_t skew : {uint64_t{0}, uint64_t{16}, uint64_t{4095}}) {
    INFO("source " << skew << " bytes past a page");
    AlignedBuffer source(4096);
    REQUIRE(source.Resize(static_cast<size_t>(n + skew)).ok());
    uint8_t* src = source.data() + skew;
    for (uint64_t b = 0; b < n; ++b) src[b] = static_cast<uint8_t>((b * 2654435761u) >> 13);
    ReadScratch scratch;
    REQUIRE(scratch.Init("copy-front-to-back-test", true, n).ok());
    SampleBuffer& ring = scratch.buffer();
    REQUIRE(ring.Resize(static_cast<size_t>(n)).ok());
    format_internal::CopyFrontToBack(ring.data(), src, static_cast<size_t>(n));
    uint64_t differing = 0;
    for (uint64_t b = n - ReadScratch::kRingBytes; b < n; ++b) {
      if (b % ReadScratch::kRingBytes < 256) continue;  // the first vectors of a piece
      differing += ring.data()[b] != src[b];
    }
    CHECK(differing == 0);
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
