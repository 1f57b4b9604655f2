#include "fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace dlio::testing {
namespace {

constexpr size_t kMaxHeaderBytes = 64 << 10;

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

bool SendAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t k = send(fd, data, n, MSG_NOSIGNAL);
    if (k <= 0) return false;
    data += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool SendAll(int fd, const std::string& s) { return SendAll(fd, s.data(), s.size()); }

// Reads into `buf` until it holds a blank line (the end of an HTTP head); the head's length
// (with the blank line), or 0 at EOF, error or an oversized head.
size_t ReadHead(int fd, std::string* buf) {
  char chunk[16384];
  while (true) {
    const size_t end = buf->find("\r\n\r\n");
    if (end != std::string::npos) return end + 4;
    if (buf->size() > kMaxHeaderBytes) return 0;
    const ssize_t k = recv(fd, chunk, sizeof chunk, 0);
    if (k <= 0) return 0;
    buf->append(chunk, static_cast<size_t>(k));
  }
}

// Reads until `buf` holds at least `n` bytes; false at EOF or error first.
bool ReadAtLeast(int fd, std::string* buf, size_t n) {
  char chunk[65536];
  while (buf->size() < n) {
    const ssize_t k = recv(fd, chunk, sizeof chunk, 0);
    if (k <= 0) return false;
    buf->append(chunk, static_cast<size_t>(k));
  }
  return true;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The head's Content-Length (0 when absent).
size_t ContentLength(const std::string& head) {
  const std::string lower = Lower(head);
  const size_t at = lower.find("\r\ncontent-length:");
  if (at == std::string::npos) return 0;
  return std::strtoull(head.c_str() + at + 17, nullptr, 10);
}

// An HTTP head without its lines of header `name` (any case) and, unless `value` is null, with
// "<name>: <value>" added at its end.
std::string WithHeader(const std::string& head, const std::string& name, const char* value) {
  const std::string prefix = Lower(name) + ":";
  std::string out;
  size_t at = 0;
  while (at < head.size()) {
    size_t eol = head.find("\r\n", at);
    if (eol == std::string::npos) eol = head.size();
    const std::string line = head.substr(at, eol - at);
    at = eol + 2;
    if (line.empty()) break;
    if (Lower(line).rfind(prefix, 0) == 0) continue;
    out += line + "\r\n";
  }
  if (value != nullptr) out += name + ": " + value + "\r\n";
  return out + "\r\n";
}

std::string WithConnection(const std::string& head, const char* value) {
  return WithHeader(head, "Connection", value);
}

// The value of header `name` (lower case) in `head`, "" when absent.
std::string HeaderValue(const std::string& head, const std::string& name) {
  const std::string lower = Lower(head);
  const size_t at = lower.find("\r\n" + name + ":");
  if (at == std::string::npos) return "";
  size_t from = at + 3 + name.size();
  while (from < head.size() && head[from] == ' ') ++from;
  return head.substr(from, head.find("\r\n", from) - from);
}

bool Falsifies(Fault fault) {
  return fault == Fault::kShiftRange || fault == Fault::kShortBody || fault == Fault::kRangeAs200 ||
         fault == Fault::kHugeHeader || fault == Fault::kManyHeaders;
}

// The server's whole answer as a hostile server would have sent it.
std::string Falsified(Fault fault, const std::string& response) {
  const size_t split = response.find("\r\n\r\n");
  if (split == std::string::npos) return response;
  std::string head = response.substr(0, split + 4), body = response.substr(split + 4);
  const std::string range = HeaderValue(head, "content-range");
  unsigned long long first = 0, last = 0, size = 0;
  if (fault == Fault::kShiftRange &&
      std::sscanf(range.c_str(), "bytes %llu-%llu/%llu", &first, &last, &size) == 3) {
    const std::string moved = "bytes " + std::to_string(first + 1) + "-" +
                              std::to_string(last + 1) + "/" + std::to_string(size);
    head = WithHeader(head, "Content-Range", moved.c_str());
  } else if (fault == Fault::kShortBody && !range.empty()) {
    body.resize(body.size() / 2);
    head = WithHeader(head, "Content-Length", std::to_string(body.size()).c_str());
  } else if (fault == Fault::kRangeAs200 && !range.empty()) {
    const std::string rest = WithHeader(head, "Content-Range", nullptr);
    head = "HTTP/1.1 200 OK" + rest.substr(rest.find("\r\n"));  // a new status line
  } else if (fault == Fault::kHugeHeader) {
    head = WithHeader(head, "X-Padding", std::string(size_t{2} << 20, 'p').c_str());
  } else if (fault == Fault::kManyHeaders) {
    for (int i = 0; i < 2000; ++i) {
      head = head.substr(0, head.size() - 2) + "X-Padding-" + std::to_string(i) + ": " +
             std::string(48, 'p') + "\r\n\r\n";
    }
  }
  return head + body;
}

std::string ErrorResponse(Fault fault, const std::string& target) {
  const bool slow = fault == Fault::kSlowDown503;
  const std::string body =
      std::string("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>") +
      (slow ? "SlowDown" : "TooManyRequests") +
      "</Code><Message>Please reduce your request rate.</Message>"
      "<Resource>" +
      target + "</Resource><RequestId>fault-proxy</RequestId></Error>";
  return std::string(slow ? "HTTP/1.1 503 Slow Down" : "HTTP/1.1 429 Too Many Requests") +
         "\r\nContent-Type: application/xml\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

void Close(int fd) {
  shutdown(fd, SHUT_RDWR);
  close(fd);
}

}  // namespace

FaultProxy::FaultProxy(int upstream_port, bool keep_alive)
    : upstream_port_(upstream_port), keep_alive_(keep_alive) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(listen_fd_ >= 0);
  sockaddr_in addr = Loopback(0);
  socklen_t len = sizeof addr;
  REQUIRE(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(listen(listen_fd_, 128) == 0);
  REQUIRE(getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

FaultProxy::~FaultProxy() {
  stop_ = true;
  acceptor_.join();
  close(listen_fd_);
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);  // unblocks their reads
    workers.swap(workers_);
  }
  for (auto& t : workers) t.join();
}

void FaultProxy::SetRule(FaultRule rule) {
  std::lock_guard<std::mutex> lock(mu_);
  rule_ = std::move(rule);
  requests_ = matched_ = injected_ = 0;
}

int FaultProxy::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

int FaultProxy::matched() const {
  std::lock_guard<std::mutex> lock(mu_);
  return matched_;
}

int FaultProxy::injected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return injected_;
}

void FaultProxy::AcceptLoop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const int client = accept(listen_fd_, nullptr, nullptr);
    if (client < 0) continue;
    std::lock_guard<std::mutex> lock(mu_);
    open_fds_.insert(client);
    workers_.emplace_back([this, client] { Serve(client); });
  }
}

Fault FaultProxy::Decide(const std::string& method, const std::string& target) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_;
  if (!rule_.method.empty() && rule_.method != method) return Fault::kNone;
  if (!rule_.path_contains.empty() && target.find(rule_.path_contains) == std::string::npos) {
    return Fault::kNone;
  }
  ++matched_;
  const bool hit = matched_ <= rule_.first || (rule_.every > 0 && matched_ % rule_.every == 0);
  if (rule_.fault == Fault::kNone || !hit) return Fault::kNone;
  ++injected_;
  return rule_.fault;
}

void FaultProxy::Serve(int client) {
  std::string in;
  while (ServeOne(client, &in)) {
  }
  std::lock_guard<std::mutex> lock(mu_);
  open_fds_.erase(client);
  Close(client);
}

bool FaultProxy::ServeOne(int client, std::string* in) {
  const size_t head_len = ReadHead(client, in);
  if (head_len == 0) return false;
  const size_t request_len = head_len + ContentLength(in->substr(0, head_len));
  if (!ReadAtLeast(client, in, request_len)) return false;
  const std::string head = in->substr(0, head_len);
  const std::string body = in->substr(head_len, request_len - head_len);
  in->erase(0, request_len);
  const size_t sp1 = head.find(' ');
  const size_t sp2 = head.find(' ', sp1 + 1);
  const std::string method = head.substr(0, sp1);
  const std::string target = head.substr(sp1 + 1, sp2 - sp1 - 1);
  const Fault fault = Decide(method, target);
  if (fault == Fault::kDropRequest) return false;
  if (fault == Fault::kStall) {
    Stall(client);
    return false;
  }
  if (fault == Fault::kSlowDown503 || fault == Fault::kTooMany429) {
    SendAll(client, ErrorResponse(fault, target));
    return false;
  }
  if (fault == Fault::kCannedBody || fault == Fault::kListEndless) {
    SendAll(client, Canned(fault));
    return false;
  }
  std::string forwarded = WithConnection(head, "close");
  if (fault == Fault::kIgnoreRange) forwarded = WithHeader(forwarded, "Range", nullptr);
  const int upstream = socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in addr = Loopback(upstream_port_);
  bool keep = false;
  std::string out;
  if (upstream >= 0 &&
      connect(upstream, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 &&
      SendAll(upstream, forwarded) && SendAll(upstream, body)) {
    const size_t out_head = ReadHead(upstream, &out);
    const std::string response = out.substr(0, out_head);
    const int status = response.size() > 12 ? std::atoi(response.c_str() + 9) : 0;
    const bool sized = method == "HEAD" || status == 204 || status == 304 ||
                       Lower(response).find("\r\ncontent-length:") != std::string::npos;
    const size_t length = method == "HEAD" ? 0 : ContentLength(response);
    if (out_head == 0) {
      // nothing to relay
    } else if (Falsifies(fault)) {
      ReadAtLeast(upstream, &out, SIZE_MAX);  // all of it: the server closes after its answer
      SendAll(client, Falsified(fault, out));
    } else if (fault == Fault::kDropAfterHeaders) {
      SendAll(client, response);
    } else if (fault == Fault::kDropMidBody) {
      ReadAtLeast(upstream, &out, out_head + length / 2);
      SendAll(client, out.data(), out_head + length / 2);
    } else if (keep_alive_ && sized) {  // exactly this response, then the next request
      keep = ReadAtLeast(upstream, &out, out_head + length) &&
             SendAll(client, WithConnection(response, "keep-alive")) &&
             SendAll(client, out.data() + out_head, length);
    } else {  // everything until the server closes
      bool ok = SendAll(client, out);
      char chunk[65536];
      for (ssize_t k; ok && (k = recv(upstream, chunk, sizeof chunk, 0)) > 0;) {
        ok = SendAll(client, chunk, static_cast<size_t>(k));
      }
    }
  }
  if (upstream >= 0) Close(upstream);
  return keep;
}

std::string FaultProxy::Canned(Fault fault) {
  std::string body;
  int status = 200;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (fault == Fault::kListEndless) {
      body =
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult><Name>b</Name>"
          "<KeyCount>0</KeyCount><IsTruncated>true</IsTruncated><NextContinuationToken>token-" +
          std::to_string(++pages_) + "</NextContinuationToken></ListBucketResult>";
    } else {
      body = rule_.body;
      status = rule_.status;
    }
  }
  return "HTTP/1.1 " + std::to_string(status) +
         " Canned\r\nContent-Type: application/xml\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

// Holds the connection, reading and dropping what comes, until the client closes it (or the
// proxy stops).
void FaultProxy::Stall(int client) {
  char chunk[4096];
  while (!stop_) {
    pollfd p{client, POLLIN, 0};
    if (poll(&p, 1, 50) > 0 && recv(client, chunk, sizeof chunk, 0) <= 0) return;
  }
}

}  // namespace dlio::testing
