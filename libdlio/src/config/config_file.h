// Reading a config file: bounded in size, and only from a regular file, so `--config /dev/zero`
// or a FIFO is an error at once instead of a read without end or a wait for a writer.
#pragma once

#include <cstdint>
#include <string>

#include "dlio/status.h"

namespace dlio::config_internal {

// The whole text of the config file `path`. NotFound when it does not exist; InvalidArgument when
// it is not a regular file (FIFO, device, directory, socket; checked without blocking) or holds
// more than kMaxConfigFileBytes; IOError naming the file for other failures.
Result<std::string> ReadConfigFile(const std::string& path);

}  // namespace dlio::config_internal
