// A fault-injecting HTTP proxy for the s3 tests: listens on 127.0.0.1 at a free port and forwards
// every request, byte for byte, to a real server on 127.0.0.1 (s3rver, s3_server.h), except the
// requests its rule picks, which it answers with S3's 503 SlowDown or a 429, cuts off after the
// response's headers or in the middle of its body, or drops unanswered. By default one request
// per client connection: the forwarded request asks the server for "Connection: close", so the
// client reconnects for the next one; with keep_alive, a client connection carries request after
// request (each forwarded on a connection of its own), so a client reuses it as it would a
// server's. Safe for concurrent use; its threads are joined by the destructor.
#pragma once

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace dlio::testing {

enum class Fault {
  kNone,
  kSlowDown503,       // HTTP 503 with S3's <Error><Code>SlowDown</Code> body
  kTooMany429,        // HTTP 429 with a <Code>TooManyRequests</Code> body
  kDropAfterHeaders,  // the server's status line and headers, then the connection is closed
  kDropMidBody,       // the headers and half the body (Content-Length), then closed
  kDropRequest,       // the request is read, then the connection closed without an answer
};

// Which requests get `fault`: of those matching `method` and `path_contains`, counted from 1 in
// arrival order, the first `first` and every `every`-th (0 = neither).
struct FaultRule {
  Fault fault = Fault::kNone;
  int first = 0;
  int every = 0;
  std::string method;         // "GET", "HEAD", ...; empty: any
  std::string path_contains;  // a substring of the request target; empty: any
};

class FaultProxy {
 public:
  // REQUIREs a listening socket.
  explicit FaultProxy(int upstream_port, bool keep_alive = false);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  // Replaces the rule and zeroes the counts.
  void SetRule(FaultRule rule);
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  int requests() const;  // requests received since SetRule (or construction)
  int matched() const;   // of them, those matching the rule's method and path (any fault)
  int injected() const;  // faults injected

 private:
  void AcceptLoop();
  void Serve(int client);
  // One request of `client` (`in` holds bytes read ahead): whether the connection goes on.
  bool ServeOne(int client, std::string* in);
  Fault Decide(const std::string& method, const std::string& target);

  int upstream_port_;
  bool keep_alive_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  mutable std::mutex mu_;
  FaultRule rule_;
  int requests_ = 0, matched_ = 0, injected_ = 0;
  std::set<int> open_fds_;  // client connections being served (shut down by the destructor)
  std::vector<std::thread> workers_;
};

}  // namespace dlio::testing
