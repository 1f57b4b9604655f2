// A fault-injecting HTTP proxy for the s3 tests: listens on 127.0.0.1 at a free port and forwards
// every request, byte for byte, to a real server on 127.0.0.1 (s3rver, s3_server.h), except the
// requests its rule picks, which it answers with S3's 503 SlowDown or a 429, cuts off after the
// response's headers or in the middle of its body, drops unanswered, holds unanswered, answers
// with a body of the test's own, or whose answer it falsifies as a hostile server would (another
// Content-Range, a short body, a huge header, the whole object for a range). By default one request
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
  kStall,             // the request is read, then nothing is sent until the client gives up
  kCannedBody,        // answered with FaultRule::status and FaultRule::body, never forwarded
  kListEndless,       // a ListObjectsV2 page with no key, truncated, a new token each time
  kIgnoreRange,       // forwarded without its Range header (the server answers 200, all bytes)
  kShiftRange,        // a 206's Content-Range moved one byte on (the body as it was)
  kShortBody,         // a 206's body cut to half (Content-Length too; Content-Range kept)
  kRangeAs200,        // a 206 sent as "200 OK" without Content-Range: the range's bytes only
  kHugeHeader,        // the answer carries one more header line of 2 MiB
  kManyHeaders,       // the answer carries 2000 more header lines of 64 bytes
};

// Which requests get `fault`: of those matching `method` and `path_contains`, counted from 1 in
// arrival order, the first `first` and every `every`-th (0 = neither).
struct FaultRule {
  Fault fault = Fault::kNone;
  int first = 0;
  int every = 0;
  std::string method;         // "GET", "HEAD", ...; empty: any
  std::string path_contains;  // a substring of the request target; empty: any
  int status = 200;           // kCannedBody's
  std::string body;           // kCannedBody's (Content-Type: application/xml)
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
  // The answer to a fault that does not reach the server (kCannedBody, kListEndless).
  std::string Canned(Fault fault);
  void Stall(int client);

  int upstream_port_;
  bool keep_alive_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  mutable std::mutex mu_;
  FaultRule rule_;
  int requests_ = 0, matched_ = 0, injected_ = 0;
  int pages_ = 0;           // kListEndless's pages so far
  std::set<int> open_fds_;  // client connections being served (shut down by the destructor)
  std::vector<std::thread> workers_;
};

}  // namespace dlio::testing
