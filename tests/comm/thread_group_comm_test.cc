// ThreadGroupComms: K accelerator threads per process, over the serial Comm (one process) and over
// a Comm of threads standing in for two processes (tests/runner/thread_comm.h); the MPI case is in
// mpi_comm_test.cc. Every value below is computed by hand from the ranks.
#include "dlio/thread_group_comm.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dlio/comm.h"
#include "dlio/str_cat.h"
#include "runner/thread_comm.h"

namespace dlio {
namespace {

// Runs body(comm) on every Comm of `groups` (one group per process), each on its own thread.
void RunAll(const std::vector<ThreadGroupComms*>& groups, const std::function<void(Comm*)>& body) {
  std::vector<std::thread> threads;
  for (ThreadGroupComms* g : groups) {
    for (int k = 0; k < g->threads(); ++k) threads.emplace_back(body, g->comm(k));
  }
  for (auto& t : threads) t.join();
}

// What each rank saw, written by its own thread (one slot per rank).
struct Seen {
  explicit Seen(int n) : status(n), numbers(n), strings(n) {}
  std::vector<Status> status;
  std::vector<std::vector<double>> numbers;
  std::vector<std::vector<std::string>> strings;
};

// The collectives every world below checks, on a world of `n` ranks.
void CheckCollectives(const std::vector<ThreadGroupComms*>& groups, int n) {
  Seen sum(n), max(n), min(n), gather(n), bcast(n), ranks(n);
  RunAll(groups, [&](Comm* c) {
    const int r = c->rank();
    ranks.numbers[r] = {static_cast<double>(c->size())};
    ranks.status[r] = c->Barrier();
    std::vector<double> v{1.0, static_cast<double>(r)};
    sum.status[r] = c->AllReduceSum(&v);
    sum.numbers[r] = v;
    v = {static_cast<double>(r), static_cast<double>(-r), 7.0};
    max.status[r] = c->AllReduceMax(&v);
    max.numbers[r] = v;
    v = {static_cast<double>(r), static_cast<double>(-r)};
    min.status[r] = c->AllReduceMin(&v);
    min.numbers[r] = v;
    gather.status[r] = c->Gather(StrCat("r", r), n - 1, &gather.strings[r]);
    std::string value = r == 1 ? "from one" : "ignored";
    bcast.status[r] = c->Broadcast(&value, 1);
    bcast.strings[r] = {value};
  });
  std::vector<std::string> all;
  for (int r = 0; r < n; ++r) all.push_back(StrCat("r", r));
  for (int r = 0; r < n; ++r) {
    CAPTURE(r);
    CHECK(ranks.status[r].ok());
    CHECK(ranks.numbers[r] == std::vector<double>{static_cast<double>(n)});
    REQUIRE(sum.status[r].ok());
    CHECK(sum.numbers[r] == std::vector<double>{1.0 * n, n * (n - 1) / 2.0});
    REQUIRE(max.status[r].ok());
    CHECK(max.numbers[r] == std::vector<double>{n - 1.0, 0.0, 7.0});
    REQUIRE(min.status[r].ok());
    CHECK(min.numbers[r] == std::vector<double>{0.0, 1.0 - n});
    REQUIRE(gather.status[r].ok());
    CHECK(gather.strings[r] == (r == n - 1 ? all : std::vector<std::string>{}));
    REQUIRE(bcast.status[r].ok());
    CHECK(bcast.strings[r] == std::vector<std::string>{"from one"});
  }
}

TEST_CASE("thread group comm: K threads of one process are ranks 0..K-1") {
  auto serial = MakeSerialComm();
  ThreadGroupComms group(serial.get(), 4);
  REQUIRE(group.threads() == 4);
  for (int k = 0; k < 4; ++k) {
    CHECK(group.comm(k)->rank() == k);
    CHECK(group.comm(k)->size() == 4);
    CHECK(group.comm(k)->name() == "serial+threads");
    CHECK(group.comm(k)->mpi_comm_handle() == nullptr);
  }
  CheckCollectives({&group}, 4);
}

TEST_CASE("thread group comm: two processes of 3 threads are ranks 0..5, process by process") {
  testing::ThreadCommHub hub(2);
  auto p0 = hub.Rank(0), p1 = hub.Rank(1);
  ThreadGroupComms g0(p0.get(), 3), g1(p1.get(), 3);
  for (int k = 0; k < 3; ++k) {
    CHECK(g0.comm(k)->rank() == k);
    CHECK(g1.comm(k)->rank() == 3 + k);
    CHECK(g1.comm(k)->size() == 6);
  }
  CheckCollectives({&g0, &g1}, 6);
}

TEST_CASE("thread group comm: one thread's bad argument fails the collective on every thread") {
  auto serial = MakeSerialComm();
  ThreadGroupComms group(serial.get(), 3);
  std::vector<Status> got(3);
  SECTION("reductions of different lengths") {
    RunAll({&group}, [&](Comm* c) {
      std::vector<double> v(c->rank() == 2 ? 1 : 2, 1.0);
      got[c->rank()] = c->AllReduceSum(&v);
    });
  }
  SECTION("different roots") {
    RunAll({&group}, [&](Comm* c) {
      std::vector<std::string> out;
      got[c->rank()] = c->Gather("x", c->rank() == 1 ? 1 : 0, &out);
    });
  }
  SECTION("a root outside the world") {
    RunAll({&group}, [&](Comm* c) {
      std::string v;
      got[c->rank()] = c->Broadcast(&v, 3);
    });
  }
  for (const Status& s : got) {
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message().find("thread group comm") != std::string::npos);
  }
  // The group is still usable afterwards.
  RunAll({&group}, [&](Comm* c) { got[c->rank()] = c->Barrier(); });
  for (const Status& s : got) CHECK(s.ok());
}

TEST_CASE("thread group comm: Abort wakes the threads waiting in a barrier and fails later calls") {
  auto serial = MakeSerialComm();
  ThreadGroupComms group(serial.get(), 4);
  std::vector<Status> got(4);
  const auto start = std::chrono::steady_clock::now();
  RunAll({&group}, [&](Comm* c) {
    if (c->rank() == 2) {
      // Rank 2 fails outside any collective, after the others are asleep in the barrier.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      c->Abort(Status::IOError("read of file_7 failed"));
      got[2] = c->abort_status();
      return;
    }
    got[c->rank()] = c->Barrier();
  });
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  CHECK(got[2].code() == StatusCode::kIOError);
  for (int r : {0, 1, 3}) {
    CAPTURE(r);
    CHECK(got[r].code() == StatusCode::kCancelled);
    CHECK(got[r].message().find("rank 2 failed") != std::string::npos);
    CHECK(got[r].message().find("read of file_7 failed") != std::string::npos);
  }
  CHECK(group.stop_status().code() == StatusCode::kIOError);
  CHECK(group.comm(0)->abort_status().code() == StatusCode::kIOError);
  std::vector<double> v{1};
  CHECK(group.comm(1)->AllReduceSum(&v).code() == StatusCode::kCancelled);
  CHECK(serial->abort_status().ok());  // one process: the group stops, the process Comm is not
}

TEST_CASE("thread group comm: Abort with several processes also aborts the process Comm") {
  testing::ThreadCommHub hub(2);
  auto p0 = hub.Rank(0);
  ThreadGroupComms group(p0.get(), 2);
  group.comm(1)->Abort(Status::Internal("boom"));
  CHECK(p0->abort_status().code() == StatusCode::kInternal);
  CHECK(group.stop_status().message() == "boom");
  group.Stop(Status::IOError("later"), 0);  // the first status wins
  CHECK(group.stop_status().message() == "boom");
}

}  // namespace
}  // namespace dlio
