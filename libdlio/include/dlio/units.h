// Byte units of the figures dlio prints (MiB/s of the runs' throughput, MB of the sweeps' tables),
// for every module that formats one.
#pragma once

namespace dlio {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kMB = 1e6;

}  // namespace dlio
