// A real S3 server for the tests: s3rver (npm) on 127.0.0.1 at a free port, over a temporary
// directory, with one bucket. Started by the constructor, killed (SIGKILL, and with the test
// process: PR_SET_PDEATHSIG) by Stop() or the destructor. Tests call SkipWithoutS3rver() first:
// without node or s3rver the test exits with kSkipped (ctest's SKIP_RETURN_CODE), saying why.
#pragma once

#include <sys/types.h>

#include <cstdint>
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

// `n` pseudo-random bytes, the same for the same seed (object contents).
std::string PatternBytes(size_t n, uint32_t seed);

struct S3ServerOptions {
  // https with a certificate for 127.0.0.1, localhost and *.s3.localhost signed by a CA made for
  // the test (the openssl CLI), both in a temporary directory; the test is skipped (kSkipped)
  // without the openssl command.
  bool tls = false;
  // s3rver's --service-endpoint: with "localhost", <bucket>.s3.localhost names a bucket
  // (virtual-host addressing against the endpoint http://s3.localhost:<port>).
  std::string service_endpoint;
};

class S3Server {
 public:
  // REQUIREs that the server answers within 30 s (and, with tls, that openssl made the files).
  explicit S3Server(S3ServerOptions options = {});
  ~S3Server();
  S3Server(const S3Server&) = delete;
  S3Server& operator=(const S3Server&) = delete;

  std::string endpoint() const {
    return (options_.tls ? "https" : "http") + std::string("://127.0.0.1:") + std::to_string(port_);
  }
  // The CA that signed the server's certificate (PEM), with tls.
  std::string ca_file() const { return tls_dir_.path() + "/ca.pem"; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& directory() const { return dir_.path(); }
  void Stop();  // kills the server now (idempotent)

 private:
  void MakeCertificates();

  S3ServerOptions options_;
  TempDir dir_;
  TempDir tls_dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace dlio::testing
