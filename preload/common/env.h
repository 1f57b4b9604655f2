// The interposers' configuration comes from the environment (read by their constructors, before
// main): one reader for both, so "unset" and "empty" mean the same for every variable.
#pragma once

#include <cstdint>

namespace dlio::preload {

// The value of `name`, or nullptr when it is unset or empty.
const char* EnvValue(const char* name);

// Whether `name` is present at all (set, even to "").
bool EnvPresent(const char* name);

enum class EnvIntResult { kUnset, kOk, kBad };

// `name` as a decimal integer in [min, max]: kUnset (unset or empty: `*out` untouched), kOk, or
// kBad (not a number, trailing text, out of range: `*out` untouched; the caller warns).
EnvIntResult EnvInt(const char* name, int64_t min, int64_t max, int64_t* out);

// The first rank variable a launcher set (Open MPI, PMIx, MPICH/PMI, Slurm), or -1.
int64_t RankFromEnvironment();

}  // namespace dlio::preload
