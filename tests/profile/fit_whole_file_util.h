// Hand-built whole-file loads for the FitTrace tests: a file read front to back in 256 KiB
// requests as pandas.read_csv and tf.data read it, and a probe that finds every data file alike.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "dlio/profile.h"
#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"

namespace dlio::fit_test {

inline constexpr int64_t kChunk = 262144;  // pandas' and tf.data's request size

// One whole-file load as read_csv issues it: 256 KiB reads from 0, the last one short, then two
// reads at the end of the file that return 0. Returns the time after it.
inline int64_t LoadWhole(ProfileTrace* t, int32_t tid, const std::string& path, int64_t size,
                         int64_t now) {
  testing::AddEvent(t, 1, tid, "open64", now, 2, path);
  now += 5;
  for (int64_t at = 0; at < size; at += kChunk) {
    const int64_t got = std::min(kChunk, size - at);
    testing::AddEvent(t, 1, tid, "read", now, 40, path, at, kChunk, got);
    now += 100;
  }
  const int64_t asked = kChunk - size % kChunk;
  testing::AddEvent(t, 1, tid, "read", now, 1, path, size, asked, 0);
  testing::AddEvent(t, 1, tid, "read", now + 900, 1, path, size, kChunk, 0);  // after the parse
  testing::AddEvent(t, 1, tid, "close", now + 910, 1, path);
  return now + 920;
}

// A probe that finds every file `size` bytes of `samples` samples of `sample_size` bytes.
inline FitOptions ProbeEvery(std::string format, int64_t size, int64_t samples, int64_t sample_size,
                             double stored_per_record_byte = 1.0) {
  FitOptions options;
  options.probe = [=](const std::string&) -> Result<DataFileInfo> {
    DataFileInfo info;
    info.format = format;
    info.size = size;
    info.samples = samples;
    info.sample_sizes.assign(static_cast<size_t>(samples), sample_size);
    info.stored_bytes_per_record_byte = stored_per_record_byte;
    return info;
  };
  return options;
}

}  // namespace dlio::fit_test
