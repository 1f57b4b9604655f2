#include "dlio/registries.h"

#include "dlio/cache.h"

namespace dlio {

Status RegisterBuiltins(Registries* registries) {
  DLIO_RETURN_NOT_OK(RegisterBuiltinStorages(registries));
  DLIO_RETURN_NOT_OK(RegisterTieredStorage(registries));
  DLIO_RETURN_NOT_OK(RegisterBuiltinFormats(registries));
  DLIO_RETURN_NOT_OK(RegisterBuiltinSamplers(registries));
  DLIO_RETURN_NOT_OK(RegisterBuiltinPipelines(registries));
  DLIO_RETURN_NOT_OK(RegisterBuiltinComputes(registries));
  DLIO_RETURN_NOT_OK(RegisterBuiltinCheckpointers(registries));
  return Status::OK();
}

}  // namespace dlio
