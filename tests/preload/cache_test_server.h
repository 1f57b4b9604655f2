// A minimal cache server speaking cache_wire.h, for the client tests of libdlio_cache_preload.so:
// the first open of a file is answered "read the source" (tier -1) and copies the file into a
// memfd; later opens get that copy (tier 0). It records every request, and can die (close every
// connection and stop listening) on a chosen open, or answer nothing (hang) from a chosen point.
#pragma once

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache_wire.h"

namespace dlio::cache_test {

namespace wire = dlio::cache_wire;

struct TestServerOptions {
  uint64_t latency_ns = 0;   // HelloReply::source_latency_ns
  uint64_t bytes_per_s = 0;  // HelloReply::source_bytes_per_s
  bool cache = true;         // false: every open is answered tier -1
  int die_on_open = 0;       // > 0: the n-th open closes everything instead of a reply
  bool silent = false;       // accepts connections and reads requests, never answers
  int hang_on_open = 0;      // > 0: the n-th open is answered after hang_ms (0: never), and with
                             // the copy of another file (a reply no client may take for a later
                             // request's); the connection stays open meanwhile
  int hang_ms = 0;
};

struct OpenRecord {
  std::string path;
  int tier = -1;
};

struct ReportRecord {
  std::string path;
  int tier = -1;
  uint64_t bytes = 0;
};

class TestCacheServer {
 public:
  TestCacheServer(std::string socket_path, TestServerOptions options)
      : path_(std::move(socket_path)), options_(options) {
    listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    if (path_.size() >= sizeof addr.sun_path) throw std::runtime_error("socket path too long");
    std::strcpy(addr.sun_path, path_.c_str());
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(listen_fd_, 16) != 0) {
      throw std::runtime_error("cannot listen on " + path_);
    }
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }

  ~TestCacheServer() {
    Die();
    acceptor_.join();
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(mu_);
      threads.swap(threads_);
    }
    for (auto& t : threads) t.join();
    for (auto& [p, fd] : copies_) ::close(fd);
    ::unlink(path_.c_str());
  }

  std::vector<OpenRecord> Opens() {
    std::lock_guard<std::mutex> lock(mu_);
    return opens_;
  }
  // Read reports have no reply: one sent just before a client exits may still be on its way.
  // Waits (up to 10 s) until `at_least` have arrived, then returns them all.
  std::vector<ReportRecord> Reports(size_t at_least) {
    std::unique_lock<std::mutex> lock(mu_);
    reported_.wait_for(lock, std::chrono::seconds(10), [&] { return reports_.size() >= at_least; });
    return reports_;
  }
  std::vector<std::string> Invalidated() {
    std::lock_guard<std::mutex> lock(mu_);
    return invalidated_;
  }
  std::string Future() {
    std::lock_guard<std::mutex> lock(mu_);
    return future_;
  }
  int Clients() {
    std::lock_guard<std::mutex> lock(mu_);
    return clients_;
  }

 private:
  void AcceptLoop() {
    for (;;) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      std::lock_guard<std::mutex> lock(mu_);
      if (dead_) {
        ::close(fd);
        return;
      }
      conns_.push_back(fd);
      threads_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  // Closes every connection and the listener (the server "crashes").
  void Die() {
    std::lock_guard<std::mutex> lock(mu_);
    if (dead_) return;
    dead_ = true;
    died_.notify_all();
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
    ::unlink(path_.c_str());
    for (int fd : conns_) ::shutdown(fd, SHUT_RDWR);
  }

  void Serve(int fd) {
    for (;;) {
      wire::WireHeader h;
      if (wire::RecvHeader(fd, &h) != 0) break;
      std::string payload(h.payload_bytes, '\0');
      if (wire::RecvAll(fd, payload.data(), payload.size()) != 0) break;
      if (options_.silent) continue;
      if (!Handle(fd, static_cast<wire::Op>(h.op), payload)) break;
    }
    ::close(fd);
  }

  bool Handle(int fd, wire::Op op, const std::string& payload) {
    switch (op) {
      case wire::Op::kHello: {
        wire::HelloReply hello;
        hello.tiers = 1;
        hello.source_latency_ns = options_.latency_ns;
        hello.source_bytes_per_s = options_.bytes_per_s;
        {
          std::lock_guard<std::mutex> lock(mu_);
          hello.client_index = static_cast<uint32_t>(clients_++);
        }
        return wire::SendMessage(fd, wire::Op::kHelloReply, &hello, sizeof hello) == 0;
      }
      case wire::Op::kOpen:
        return Open(fd, payload);
      case wire::Op::kFuture:
        Record([&] { future_ = payload; });
        return Ack(fd);
      case wire::Op::kInvalidate:
        Record([&] { invalidated_.push_back(payload); });
        return Ack(fd);
      case wire::Op::kReadReport: {
        wire::ReadReport r;
        if (payload.size() < sizeof r) return false;
        std::memcpy(&r, payload.data(), sizeof r);
        Record([&] { reports_.push_back({payload.substr(sizeof r), r.tier, r.bytes}); });
        reported_.notify_all();
        return true;
      }
      default:
        return false;
    }
  }

  template <typename F>
  void Record(F f) {
    std::lock_guard<std::mutex> lock(mu_);
    f();
  }

  bool Ack(int fd) {
    wire::Ack ack;
    return wire::SendMessage(fd, wire::Op::kAck, &ack, sizeof ack) == 0;
  }

  bool Open(int fd, const std::string& path) {
    wire::OpenReply reply;
    int copy = -1;
    bool die = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      opens_.push_back({path, -1});
      if (options_.die_on_open > 0 && static_cast<int>(opens_.size()) == options_.die_on_open) {
        opens_.back().tier = -2;  // never answered
        die = true;
      } else if (auto it = copies_.find(path); it != copies_.end()) {
        copy = it->second;
        reply.tier = 0;
        opens_.back().tier = 0;
      }
    }
    if (die) {
      Die();
      return false;
    }
    if (Hang(path, &copy, &reply)) {
      return wire::SendMessage(fd, wire::Op::kOpenReply, &reply, sizeof reply, nullptr, 0, copy) ==
             0;
    }
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    reply.size = bytes.str().size();
    if (copy < 0 && options_.cache && in) {
      const int m = memfd_create("test-copy", MFD_CLOEXEC);
      const std::string data = bytes.str();
      if (m >= 0 && write(m, data.data(), data.size()) == static_cast<ssize_t>(data.size())) {
        std::lock_guard<std::mutex> lock(mu_);
        copies_[path] = m;
      }
    }
    return wire::SendMessage(fd, wire::Op::kOpenReply, &reply, sizeof reply, nullptr, 0, copy) == 0;
  }

  // The hang_on_open-th open: waits hang_ms (or until the server dies), then answers with a copy
  // of another file when there is one. False when it is not that open.
  bool Hang(const std::string& path, int* copy, wire::OpenReply* reply) {
    std::unique_lock<std::mutex> lock(mu_);
    if (options_.hang_on_open <= 0 || static_cast<int>(opens_.size()) != options_.hang_on_open) {
      return false;
    }
    opens_.back().tier = -2;  // answered too late
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(options_.hang_ms > 0 ? options_.hang_ms : 3600000);
    died_.wait_until(lock, until, [&] { return dead_; });
    for (const auto& [other, fd] : copies_) {
      if (other != path) {
        *copy = fd;
        reply->tier = 0;
      }
    }
    return true;
  }

  std::string path_;
  TestServerOptions options_;
  int listen_fd_ = -1;
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable reported_;
  std::condition_variable died_;
  bool dead_ = false;
  int clients_ = 0;
  std::vector<int> conns_;
  std::vector<std::thread> threads_;
  std::map<std::string, int> copies_;
  std::vector<OpenRecord> opens_;
  std::vector<ReportRecord> reports_;
  std::vector<std::string> invalidated_;
  std::string future_;
};

}  // namespace dlio::cache_test
