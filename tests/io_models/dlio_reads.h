// What dlio's own reader of a built-in format requests and returns, for the tests that hold an
// I/O model against the real library (pandas_test, pil_test, mmap_test): the format by name, and
// every sample of some files read under one model through posix storage under a MemoryTracer.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio::io_model_test {

// The open, fstat, read, lseek and close calls: what the model tests compare row by row.
inline const KindFilter kOpenStatReadSeekClose{
    {OpKind::kOpen, OpKind::kStat, OpKind::kRead, OpKind::kSeek, OpKind::kClose}};
// The open, read and lseek calls: np.load's rows (a loop closes an archive only when its name is
// rebound, and FileIO's fstat at open is the open's own in dlio).
inline const KindFilter kOpensReadsSeeks{{OpKind::kOpen, OpKind::kRead, OpKind::kSeek}};

// A shuffled order of the n samples of a file (a stride coprime with n, from an offset), and the
// comma-separated list a Python reader takes on its command line.
inline std::vector<uint64_t> ShuffledOrder(uint64_t n) {
  uint64_t stride = 5;
  while (n > 1 && std::gcd(stride, n) != 1) ++stride;
  std::vector<uint64_t> order;
  for (uint64_t i = 0; i < n; ++i) order.push_back((3 + i * stride) % n);
  return order;
}
inline std::string CommaJoined(const std::vector<uint64_t>& v) {
  std::string s;
  for (const uint64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// A fresh instance of the built-in format `name`.
inline std::unique_ptr<Format> BuiltinFormat(const std::string& name) {
  Registries r;
  REQUIRE(RegisterBuiltinFormats(&r.formats).ok());
  auto factory = r.formats.Get(name);
  REQUIRE(factory.ok());
  auto format = (*factory)();
  REQUIRE(format.ok());
  return std::move(*format);
}

// The requests and samples of dlio's reader.
struct DlioRun {
  std::vector<Request> requests;
  std::vector<std::string> samples;
};

// Every sample of each of `files` (relative to `data`), read in order with `options`.
inline DlioRun ReadWithDlio(const Format& format, const std::vector<std::string>& files,
                            const std::string& data, const FormatOptions& options,
                            const KindFilter& filter = kOpenStatReadSeekClose) {
  MemoryTracer tracer;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), &tracer);
  DlioRun run;
  for (const std::string& f : files) {
    auto reader = format.Open(storage.get(), data + "/" + f, options);
    INFO(f << ": " << reader.status().ToString());
    REQUIRE(reader.ok());
    SampleBuffer buf;
    for (uint64_t i = 0; i < (*reader)->num_samples(); ++i) {
      REQUIRE((*reader)->ReadSample(i, &buf).ok());
      run.samples.emplace_back(reinterpret_cast<const char*>(buf.data()), buf.size());
    }
  }
  run.requests = RequestsOf(tracer, data, filter);
  return run;
}

// The samples of one file `data`/`file` in `order` with `options`, each checked against the
// bytes the Python reader wrote to `expected`/<i>; `samples` holds the file's sample count.
inline DlioRun ReadOrderWithDlio(const Format& format, const std::string& data,
                                 const std::string& file, const std::vector<uint64_t>& order,
                                 const std::string& expected, const FormatOptions& options,
                                 uint64_t* samples) {
  MemoryTracer tracer;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), &tracer);
  DlioRun run;
  {
    auto reader = format.Open(storage.get(), data + "/" + file, options);
    INFO(file << ": " << reader.status().ToString());
    REQUIRE(reader.ok());
    *samples = (*reader)->num_samples();
    SampleBuffer buf;
    for (const uint64_t i : order) {
      const Status read = (*reader)->ReadSample(i, &buf);
      INFO(file << " sample " << i << ": " << read.ToString());
      REQUIRE(read.ok());
      run.samples.emplace_back(reinterpret_cast<const char*>(buf.data()), buf.size());
      CHECK(run.samples.back() == testing::ReadTextFile(expected + "/" + std::to_string(i)));
    }
  }
  run.requests = RequestsOf(tracer, data, kOpenStatReadSeekClose);
  return run;
}

// The same under `model` with the other options at their defaults.
inline DlioRun ReadWithDlio(const Format& format, const std::vector<std::string>& files,
                            const std::string& data, IoModel model,
                            const KindFilter& filter = kOpenStatReadSeekClose) {
  FormatOptions options;
  options.io_model = model;
  return ReadWithDlio(format, files, data, options, filter);
}

}  // namespace dlio::io_model_test
