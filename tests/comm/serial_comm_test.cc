#include <catch2/catch.hpp>

#include "dlio/comm.h"

namespace dlio {
namespace {

TEST_CASE("serial comm is rank 0 of 1 and collectives are identities", "[comm]") {
  auto comm = MakeSerialComm();
  CHECK(comm->rank() == 0);
  CHECK(comm->size() == 1);
  CHECK(comm->name() == "serial");
  CHECK(comm->Barrier().ok());

  std::vector<double> v = {1.5, -2, 3};
  REQUIRE(comm->AllReduceSum(&v).ok());
  CHECK(v == std::vector<double>{1.5, -2, 3});
  REQUIRE(comm->AllReduceMax(&v).ok());
  CHECK(v == std::vector<double>{1.5, -2, 3});
  REQUIRE(comm->AllReduceMin(&v).ok());
  CHECK(v == std::vector<double>{1.5, -2, 3});

  std::vector<std::string> out = {"stale", "values"};
  REQUIRE(comm->Gather("mine", 0, &out).ok());
  CHECK(out == std::vector<std::string>{"mine"});

  std::string value = "root value";
  REQUIRE(comm->Broadcast(&value, 0).ok());
  CHECK(value == "root value");
}

TEST_CASE("serial comm rejects roots other than 0 and null outputs", "[comm]") {
  auto comm = MakeSerialComm();
  std::vector<std::string> out;
  Status s = comm->Gather("x", 1, &out);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("root 1") != std::string::npos);
  std::string value;
  CHECK(comm->Broadcast(&value, 2).code() == StatusCode::kInvalidArgument);
  CHECK(comm->Broadcast(nullptr, 0).code() == StatusCode::kInvalidArgument);
  CHECK(comm->AllReduceSum(nullptr).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("serial comm Abort records the first status and returns", "[comm]") {
  auto comm = MakeSerialComm();
  CHECK(comm->abort_status().ok());
  comm->Abort(Status::IOError("write ckpt/x: disk on fire"));
  comm->Abort(Status::Internal("second"));
  // Still running: Abort on the serial comm never ends the process.
  CHECK(comm->abort_status().code() == StatusCode::kIOError);
  CHECK(comm->abort_status().message() == "write ckpt/x: disk on fire");
  CHECK(comm->Barrier().ok());
}

}  // namespace
}  // namespace dlio
