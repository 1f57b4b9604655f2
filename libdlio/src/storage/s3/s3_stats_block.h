// The s3 storage's per-epoch statistics block (Storage::TakeEpochStats, docs/storage.md).
#pragma once

#include "dlio/s3_stats.h"
#include "dlio/storage.h"

namespace dlio::s3 {

// The "s3" block of an epoch's requests: per epoch an object of the counts by kind, bytes,
// retries, errors and GET latency percentiles; the summary's epochs hold the same fields.
StatsBlock S3StatsBlock(const S3Stats& s);

}  // namespace dlio::s3
