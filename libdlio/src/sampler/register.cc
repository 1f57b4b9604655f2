#include <string>

#include "dlio/sampler.h"

namespace dlio {
namespace {

// A registry entry builds its own kind whatever options.name says.
SamplerFactory Named(std::string name) {
  return [name](const SamplerOptions& options) -> Result<std::unique_ptr<Sampler>> {
    SamplerOptions named = options;
    named.name = name;
    return MakeSampler(named);
  };
}

}  // namespace

Status RegisterBuiltinSamplers(SamplerRegistry* samplers) {
  constexpr const char* kCommon = "reader.sharding, train.seed, train.seed_change_epoch";
  DLIO_RETURN_NOT_OK(samplers->Register(
      {"auto", "shuffle when reader.file_shuffle or reader.sample_shuffle is on, else sequential",
       std::string("reader.file_shuffle, reader.sample_shuffle, ") + kCommon, Named("auto")}));
  DLIO_RETURN_NOT_OK(samplers->Register(
      {"sequential", "files in order, samples in order within each file, sharded over ranks",
       "reader.sharding", Named("sequential")}));
  DLIO_RETURN_NOT_OK(samplers->Register(
      {"shuffle", "seeded shuffle of the file order and/or of each rank's samples",
       std::string("reader.file_shuffle, reader.sample_shuffle, ") + kCommon, Named("shuffle")}));
  DLIO_RETURN_NOT_OK(samplers->Register(
      {"shuffle_buffer", "tf.data-like: each rank's stream drawn through a window of samples",
       std::string("reader.shuffle_size, reader.file_shuffle, ") + kCommon,
       Named("shuffle_buffer")}));
  return Status::OK();
}

}  // namespace dlio
