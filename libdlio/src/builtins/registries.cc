#include "dlio/registries.h"

#include "dlio/cache.h"

namespace dlio {

Status RegisterBuiltins(Registries* registries) {
  DLIO_RETURN_NOT_OK(RegisterBuiltinStorages(&registries->storages));
  DLIO_RETURN_NOT_OK(
      RegisterTieredStorage(&registries->storages, &registries->node_shared_storages));
  DLIO_RETURN_NOT_OK(RegisterBuiltinFormats(&registries->formats));
  DLIO_RETURN_NOT_OK(RegisterBuiltinSamplers(&registries->samplers));
  DLIO_RETURN_NOT_OK(RegisterBuiltinPipelines(&registries->pipelines));
  DLIO_RETURN_NOT_OK(RegisterBuiltinComputes(&registries->computes));
  DLIO_RETURN_NOT_OK(RegisterBuiltinCheckpointers(&registries->checkpointers));
  return Status::OK();
}

}  // namespace dlio
