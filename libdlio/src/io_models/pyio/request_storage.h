// A storage of files that have a size and no bytes, for simulating a request model: the requests
// a Python stack would make for a file of a given size (PyioReadRequests) depend on where its
// reads go, never on what they return, so the simulation allocates and copies nothing.
#pragma once

#include <cstdint>
#include <memory>

#include "dlio/storage.h"

namespace dlio::pyio {

// Every path opens read-only as a file of `file_size` bytes; a read returns the count a file of
// that size would and leaves the caller's buffer as it was. Everything else is Unimplemented.
std::unique_ptr<Storage> NewSizedFileStorage(uint64_t file_size);

}  // namespace dlio::pyio
