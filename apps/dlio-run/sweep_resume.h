// `dlio-run sweep --resume`: the points an earlier sweep in the same output folder completed,
// taken over instead of run again when their whole config is the same.
#pragma once

#include <map>
#include <string>

#include "dlio/config.h"
#include "dlio/status.h"
#include "dlio/sweep.h"

namespace dlio_run {

// The points of an earlier sweep.json that ran without error, by point name, with their
// figures and config digests. A missing file is no point. Anything else that is not a sweep.json
// as this dlio-run writes it (not a regular file, not JSON, a field missing or of another type, a
// figure below 0, a name twice) is InvalidArgument naming the file and the field
// ("points[2].au_percent"), or the byte where the JSON breaks.
dlio::Result<std::map<std::string, dlio::SweepMeasurement>> ReadEarlierSweep(
    const std::string& sweep_json);

// A digest of the point's whole config (its JSON export), stable across runs of this build.
std::string ConfigDigest(const dlio::WorkloadConfig& config);

}  // namespace dlio_run
