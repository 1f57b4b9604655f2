// The sizes of a zip archive's fixed records (PKWARE's APPNOTE 4.3.7, 4.3.12, 4.3.16), as the
// zip writer inside torch.save (miniz) writes them and torch.load reads them back.
#pragma once

#include <cstdint>

namespace dlio::torch_save {

inline constexpr uint64_t kLocalHeader = 30;    // MZ_ZIP_LOCAL_DIR_HEADER_SIZE
inline constexpr uint64_t kCentralHeader = 46;  // MZ_ZIP_CENTRAL_DIR_HEADER_SIZE
inline constexpr uint64_t kEndRecord = 22;      // MZ_ZIP_END_OF_CENTRAL_DIR_HEADER_SIZE

}  // namespace dlio::torch_save
