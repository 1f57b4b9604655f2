// How messages name what a path is when it is not the regular file dlio expected.
#pragma once

#include <sys/types.h>

namespace dlio {

// "a directory", "a FIFO", "a character device", "a block device", "a socket", "a regular file"
// for the file type bits of an st_mode.
const char* FileKindName(mode_t mode);

}  // namespace dlio
