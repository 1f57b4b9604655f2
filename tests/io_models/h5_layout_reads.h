// What dlio's hdf5 reader requests reading some samples of one file, for the tests that hold a
// layout against h5py's loop (h5_groups_test, h5_datasets_test).
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/storage.h"
#include "format/hdf5_test_util.h"
#include "request_log.h"

namespace dlio::io_model_test {

// The opens and reads (`filter`) of dlio's hdf5 reader of `data`/`file` with `o`, reading the
// samples of `order` into `*last` (or a buffer of its own); checks that the reader holds
// `samples` samples of nominal size `bytes`.
inline std::vector<Request> Hdf5ReaderRequests(const std::string& data, const std::string& file,
                                               const FormatOptions& o, uint64_t samples,
                                               uint64_t bytes, const std::vector<uint64_t>& order,
                                               const KindFilter& filter, SampleBuffer* last) {
  MemoryTracer tracer;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), &tracer);
  {
    auto reader = testing::Hdf5()->Open(storage.get(), data + "/" + file, o);
    INFO(reader.status().ToString());
    REQUIRE(reader.ok());
    CHECK((*reader)->num_samples() == samples);
    CHECK((*reader)->sample_size(3) == bytes);
    SampleBuffer buf;
    for (uint64_t i : order) {
      const Status st = (*reader)->ReadSample(i, last != nullptr ? last : &buf);
      INFO(st.ToString());
      REQUIRE(st.ok());
    }
  }
  return RequestsOf(tracer, data, filter);
}

}  // namespace dlio::io_model_test
