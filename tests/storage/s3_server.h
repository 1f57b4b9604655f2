// A real S3 server for the tests: s3rver (npm) on 127.0.0.1 at a free port, over a temporary
// directory, with one bucket. Started by the constructor, killed (SIGKILL, and with the test
// process: PR_SET_PDEATHSIG) by Stop() or the destructor. Tests call SkipWithoutS3rver() first:
// without node or s3rver the test exits with kSkipped (ctest's SKIP_RETURN_CODE), saying why.
#pragma once

#include <sys/types.h>

#include <string>

#include "test_util.h"

namespace dlio::testing {

inline constexpr int kSkipped = 77;
inline constexpr char kS3Bucket[] = "dlio-test";
inline constexpr char kS3rverKey[] = "S3RVER";  // s3rver's access key id and secret

// $DLIO_S3RVER, else <source>/.tools/node_modules/.bin/s3rver (setup.sh test installs it there),
// else s3rver on PATH; "" when none is found or node is missing.
std::string FindS3rver();
void SkipWithoutS3rver();

class S3Server {
 public:
  S3Server();  // REQUIREs that the server answers within 30 s
  ~S3Server();
  S3Server(const S3Server&) = delete;
  S3Server& operator=(const S3Server&) = delete;

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& directory() const { return dir_.path(); }
  void Stop();  // kills the server now (idempotent)

 private:
  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace dlio::testing
