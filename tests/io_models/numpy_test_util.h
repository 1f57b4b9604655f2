// What numpy_test.cc and numpy_strace_test.cc share: the files numpy writes (and dlio's own), the
// Python loops that load them, and dlio's requests for the same loads under a MemoryTracer.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "../format/format_test_util.h"
#include "dlio/format.h"
#include "dlio/storage.h"
#include "dlio_reads.h"
#include "format/npy_options.h"
#include "read_calls.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio::numpy_test {

using io_model_test::KindFilter;
using io_model_test::Request;
using io_model_test::RequestsOf;
using testing::ReadCalls;
using testing::TempDir;

// Rows compared besides opens, reads and lseeks (io_model_test::kOpensReadsSeeks): opens and
// reads (where the interposer sees numpy.fromfile's stdio calls, not the kernel's); the kernel's
// reads and lseeks (strace).
inline const KindFilter kOpensAndReads{{OpKind::kOpen, OpKind::kRead}};
inline const KindFilter kReadsAndSeeks{{OpKind::kRead, OpKind::kSeek}};

// Files numpy writes: one and several samples, stored and deflated members, small and large,
// extra members, and npy files (one with a header longer than Python's 4 KiB buffer).
inline constexpr char kWriteScript[] = R"(import numpy as np, sys
d = sys.argv[1]
r = np.random.default_rng(7)
np.savez(d + '/one_small.npz', x=r.integers(0, 255, (40, 40, 1), dtype=np.uint8), y=np.zeros(1))
np.savez(d + '/multi_f4.npz', x=r.random((32, 32, 8), dtype=np.float32), y=np.arange(8))
np.savez(d + '/big.npz', x=r.integers(0, 255, (1024, 1024, 3), dtype=np.uint8), y=np.arange(3))
np.savez(d + '/first_axis.npz', y=np.arange(5), x=r.integers(0, 255, (5, 300000), dtype=np.uint8))
np.savez_compressed(d + '/deflated_random.npz',
                    x=r.integers(0, 255, (1024, 1024, 2), dtype=np.uint8), y=np.arange(2))
np.savez_compressed(d + '/deflated_text.npz',
                    x=r.integers(0, 4, (700, 700, 3), dtype=np.uint8), y=np.arange(3))
np.savez_compressed(d + '/deflated_zeros.npz', x=np.zeros((100, 100, 2)), y=np.arange(2))
np.savez_compressed(d + '/deflated_small.npz', x=r.integers(0, 9, (30, 30, 1), dtype=np.int16))
np.savez(d + '/short_tail.npz', x=r.integers(0, 255, (1024, 1024), dtype=np.uint8),
         y=np.zeros(1, np.int64))
np.save(d + '/big.npy', r.integers(0, 255, (1024, 1024, 2), dtype=np.uint8))
np.save(d + '/small.npy', r.random((10, 10), dtype=np.float32))
np.save(d + '/odd.npy', r.random((3, 5001)))
np.save(d + '/wide_header.npy', np.zeros(700, dtype=[('field_%d' % i, '<f4') for i in range(300)]))
)";

// np.load as the Python DLIO's readers call it, one sample per file.
inline constexpr char kLoadScript[] = R"(import numpy as np, sys
for p in sys.argv[1:]:
    if p.endswith('.npz'):
        a = np.load(p)['x']
    else:
        a = np.load(p)
    s = a[..., 0] if a.ndim > 1 else a
)";

// What a PyTorch Dataset over the files does: np.load per sample, `argv[1]` samples per file.
inline constexpr char kSequenceScript[] = R"(import numpy as np, sys
k = int(sys.argv[1])
for p in sys.argv[2:]:
    for i in range(k):
        if p.endswith('.npz'):
            a = np.load(p)['x']
        else:
            a = np.load(p)
        s = a[..., i % a.shape[-1]] if a.ndim > 1 else a
)";

struct Files {
  std::string data;
  std::vector<std::string> names;  // relative to data
};

// numpy's files, plus dlio's own (last-axis stored and deflated npz, last-axis npy).
inline Files MakeFiles(const TempDir& tmp) {
  Files f;
  f.data = tmp / "data";
  std::filesystem::create_directories(f.data);
  const std::string script = tmp / "write.py";
  testing::WriteTextFile(script, kWriteScript);
  const auto run =
      testing::RunCommand("'" + testing::SystemPython() + "' '" + script + "' '" + f.data + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  auto storage = testing::BoundPosixStorage();
  FormatOptions options;
  options.formats.Get<NpyOptions>().sample_layout = SampleLayout::kLastAxis;
  FileSpec spec;
  spec.sample_sizes.assign(4, 600000);
  spec.seed = 3;
  REQUIRE(testing::MakeFormatByName("npz")
              ->Write(storage.get(), f.data + "/dlio_stored.npz", spec, options)
              .ok());
  REQUIRE(testing::MakeFormatByName("npy")
              ->Write(storage.get(), f.data + "/dlio.npy", spec, options)
              .ok());
  options.compression = "gzip";
  REQUIRE(testing::MakeFormatByName("npz")
              ->Write(storage.get(), f.data + "/dlio_deflated.npz", spec, options)
              .ok());
  for (const auto& e : std::filesystem::directory_iterator(f.data)) {
    f.names.push_back(e.path().filename().string());
  }
  std::sort(f.names.begin(), f.names.end());
  return f;
}

// dlio's requests for opening `name` with `model` and reading its samples 0 .. `samples` - 1 (in
// a fresh reader; modulo the file's sample count); `read_calls` gets the read(2) calls they cost
// (-1 where not counted).
// With `framework`, reader.client_costs framework; `bytes` (when given) gets the samples read.
inline std::vector<Request> DlioFileRequests(const std::string& data, const std::string& name,
                                             IoModel model, const KindFilter& filter,
                                             uint64_t samples = 1, bool keep = false,
                                             int64_t* read_calls = nullptr, bool framework = false,
                                             std::vector<uint8_t>* bytes = nullptr) {
  MemoryTracer tracer;
  auto storage = testing::BoundPosixStorage(&tracer);
  const std::string format = name.substr(name.rfind('.') + 1);
  FormatOptions options;
  options.io_model = model;
  options.read_type = keep ? ReadType::kMemory : ReadType::kOnDemand;
  options.framework_client_costs = framework;
  ReadCalls calls;
  const int64_t before = calls.Now();
  {
    auto reader =
        testing::MakeFormatByName(format)->Open(storage.get(), data + "/" + name, options);
    INFO(name << ": " << reader.status().ToString());
    REQUIRE(reader.ok());
    SampleBuffer out;
    for (uint64_t i = 0; i < samples; ++i) {
      const Status st = (*reader)->ReadSample(i % (*reader)->num_samples(), &out);
      INFO(st.ToString());
      REQUIRE(st.ok());
      if (bytes != nullptr) bytes->insert(bytes->end(), out.data(), out.data() + out.size());
    }
  }
  if (read_calls != nullptr) *read_calls = calls.Since(before);
  std::vector<Request> rows = RequestsOf(tracer, data, filter);
  for (Request& r : rows) r.tid = 0;
  return rows;
}

// The same for one sample (one np.load in Python).
inline std::vector<Request> DlioSampleRequests(const std::string& data, const std::string& name,
                                               IoModel model, const KindFilter& filter,
                                               int64_t* read_calls = nullptr) {
  return DlioFileRequests(data, name, model, filter, 1, false, read_calls);
}

inline size_t ReadRows(const std::vector<Request>& rows) {
  return static_cast<size_t>(std::count_if(
      rows.begin(), rows.end(), [](const Request& r) { return r.kind == OpKind::kRead; }));
}

inline bool IsNpz(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".npz") == 0;
}

inline std::vector<Request> OfFile(const std::vector<Request>& rows, const std::string& name) {
  std::vector<Request> out;
  for (const Request& r : rows) {
    if (r.file == name) out.push_back(r);
  }
  return out;
}

inline std::string LoadArgs(const TempDir& tmp, const Files& f) {
  const std::string script = tmp / "load.py";
  testing::WriteTextFile(script, kLoadScript);
  std::string args = "'" + script + "'";
  for (const std::string& n : f.names) args += " '" + f.data + "/" + n + "'";
  return args;
}

}  // namespace dlio::numpy_test
