#include "s3_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

namespace dlio::testing {
namespace {

bool Executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

bool Answers(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

}  // namespace

std::string FindS3rver() {
  if (RunCommand("command -v node >/dev/null 2>&1").exit_code != 0) return "";
  if (const char* env = std::getenv("DLIO_S3RVER"); env != nullptr && Executable(env)) return env;
  const std::string local = std::string(DLIO_SOURCE_DIR) + "/.tools/node_modules/.bin/s3rver";
  if (Executable(local)) return local;
  CommandResult r = RunCommand("command -v s3rver 2>/dev/null");
  while (!r.output.empty() && (r.output.back() == '\n' || r.output.back() == ' '))
    r.output.pop_back();
  return r.exit_code == 0 && !r.output.empty() ? r.output : "";
}

std::string PatternBytes(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (auto& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

void SkipWithoutS3rver() {
  if (!FindS3rver().empty()) return;
  std::fprintf(stderr,
               "skipped: no s3rver (needs node and `npm install --prefix %s/.tools s3rver@3`, "
               "which `./setup.sh test` does, or $DLIO_S3RVER)\n",
               DLIO_SOURCE_DIR);
  std::exit(kSkipped);
}

void S3Server::MakeCertificates() {
  if (RunCommand("command -v openssl >/dev/null 2>&1").exit_code != 0) {
    std::fprintf(stderr, "skipped: no openssl command (`./setup.sh test` installs Debian's)\n");
    std::exit(kSkipped);
  }
  const std::string d = tls_dir_.path();
  {
    std::ofstream ext(d + "/server.ext");
    ext << "basicConstraints=CA:FALSE\n"
           "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:s3.localhost,DNS:*.s3.localhost\n";
  }
  const std::string quiet = " >>" + d + "/openssl.log 2>&1";
  const CommandResult r = RunCommand(
      "cd " + d +
      " && openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN=dlio test CA' " +
      "-keyout ca.key -out ca.pem" + quiet +
      " && openssl req -newkey rsa:2048 -nodes -subj '/CN=localhost' -keyout server.key " +
      "-out server.csr" + quiet +
      " && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 " +
      "-extfile server.ext -out server.pem" + quiet);
  INFO(ReadTextFile(d + "/openssl.log"));
  REQUIRE(r.exit_code == 0);
}

S3Server::S3Server(S3ServerOptions options) : options_(std::move(options)) {
  const std::string s3rver = FindS3rver();
  REQUIRE(!s3rver.empty());
  if (options_.tls) MakeCertificates();
  std::vector<std::string> args = {s3rver,      "-d",       dir_.path(),          "-a",
                                   "127.0.0.1", "--silent", "--configure-bucket", kS3Bucket};
  if (options_.tls) {
    for (const char* a : {"--key", "server.key", "--cert", "server.pem"}) {
      args.push_back(a[0] == '-' ? a : tls_dir_.path() + "/" + a);
    }
  }
  if (!options_.service_endpoint.empty()) {
    args.push_back("--service-endpoint");
    args.push_back(options_.service_endpoint);
  }
  for (int attempt = 0; attempt < 3 && pid_ < 0; ++attempt) {
    port_ = FreePort();
    REQUIRE(port_ > 0);
    const std::string port = std::to_string(port_);
    const pid_t parent = getpid();
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // no server outlives a crashed test
      if (getppid() != parent) _exit(127);
      // s3rver 3 encrypts ListObjectsV2 continuation tokens with DES, which Node 17+ (OpenSSL 3)
      // only offers from the legacy provider: without it every truncated listing is a 500.
      setenv("NODE_OPTIONS", "--openssl-legacy-provider", 1);
      const int devnull = open("/dev/null", O_WRONLY);  // "S3rver listening on ..."
      if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(const_cast<char*>("-p"));
      argv.push_back(const_cast<char*>(port.c_str()));
      argv.push_back(nullptr);
      execv(s3rver.c_str(), argv.data());
      _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!Answers(port_) && std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {  // died (port taken?): try another
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  REQUIRE(pid_ > 0);
  REQUIRE(Answers(port_));
}

S3Server::~S3Server() { Stop(); }

void S3Server::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace dlio::testing
