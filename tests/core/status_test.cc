#include "dlio/status.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace dlio {
namespace {

Status FailIf(bool fail) { return fail ? Status::NotFound("data/x.npz") : Status::OK(); }

Status Chain(bool fail, int* reached) {
  DLIO_RETURN_NOT_OK(FailIf(fail));
  *reached = 1;
  return Status::OK();
}

Result<int> Half(int v) {
  if (v % 2 != 0) return Status::InvalidArgument("odd value " + std::to_string(v));
  return v / 2;
}

Result<int> Quarter(int v) {
  DLIO_ASSIGN_OR_RETURN(int h, Half(v));
  DLIO_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

Result<std::unique_ptr<int>> MoveOnly(bool ok) {
  if (!ok) return Status::Internal("no");
  return std::make_unique<int>(7);
}

Result<int> UseMoveOnly(bool ok) {
  DLIO_ASSIGN_OR_RETURN(auto p, MoveOnly(ok));
  return *p;
}

TEST_CASE("Status: ok and error basics", "[core][status]") {
  Status ok;
  CHECK(ok.ok());
  CHECK(ok.code() == StatusCode::kOk);
  CHECK(ok.ToString() == "OK");
  Status err = Status::IOError("open data/x.npz: No such file or directory");
  CHECK_FALSE(err.ok());
  CHECK(err.code() == StatusCode::kIOError);
  CHECK(err.ToString() == "IOError: open data/x.npz: No such file or directory");
  CHECK(StatusCodeName(StatusCode::kOutOfRange) == "OutOfRange");
  CHECK(StatusCodeName(StatusCode::kInternal) == "Internal");
}

TEST_CASE("Status: WithContext prefixes errors only", "[core][status]") {
  CHECK(Status::OK().WithContext("reading").ok());
  Status s = Status::Corruption("bad magic at offset 0").WithContext("data/a.npy");
  CHECK(s.code() == StatusCode::kCorruption);
  CHECK(s.message() == "data/a.npy: bad magic at offset 0");
}

TEST_CASE("Status: FromErrno maps codes and names the operation", "[core][status]") {
  Status s = Status::FromErrno(ENOENT, "open /nope");
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK(s.message().rfind("open /nope: ", 0) == 0);
  CHECK(Status::FromErrno(ENOSPC, "write f").code() == StatusCode::kResourceExhausted);
  CHECK(Status::FromErrno(EEXIST, "create f").code() == StatusCode::kAlreadyExists);
  CHECK(Status::FromErrno(EIO, "read f").code() == StatusCode::kIOError);
}

TEST_CASE("DLIO_RETURN_NOT_OK returns early on error", "[core][status]") {
  int reached = 0;
  CHECK(Chain(false, &reached).ok());
  CHECK(reached == 1);
  reached = 0;
  Status s = Chain(true, &reached);
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK(s.message() == "data/x.npz");
  CHECK(reached == 0);
}

TEST_CASE("Result and DLIO_ASSIGN_OR_RETURN", "[core][status]") {
  Result<int> q = Quarter(12);
  REQUIRE(q.ok());
  CHECK(*q == 3);
  Result<int> bad = Quarter(6);  // 6/2 = 3 is odd
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "odd value 3");
  CHECK(bad.ValueOr(-1) == -1);
  CHECK(Quarter(8).ValueOr(-1) == 2);
  CHECK(UseMoveOnly(true).value() == 7);
  CHECK(UseMoveOnly(false).status().code() == StatusCode::kInternal);
}

TEST_CASE("StrCat joins strings, numbers, bools and chars", "[core][status]") {
  const std::string path = "data/x.npz";
  CHECK(StrCat(path, ": offset ", uint64_t{18446744073709551615u}, ", size ", -3, '!') ==
        "data/x.npz: offset 18446744073709551615, size -3!");
  CHECK(StrCat(0.1, " ", 1e-06, " ", 100.0, " ", true, " ", std::string_view("sv")) ==
        "0.1 1e-06 100 true sv");
  CHECK(StrCat() == "");
  const char* null_text = nullptr;
  CHECK(StrCat("a", null_text) == "a(null)");
}

TEST_CASE("Status factories take the message in pieces", "[core][status]") {
  const Status s = Status::Corruption("f.tfrecord", ": record ", 7, " at offset ", 4096, " CRC");
  CHECK(s.code() == StatusCode::kCorruption);
  CHECK(s.message() == "f.tfrecord: record 7 at offset 4096 CRC");
  CHECK(Status::InvalidArgument(std::string("one piece")).message() == "one piece");
  CHECK(Status::ResourceExhausted("n=", size_t{3}).code() == StatusCode::kResourceExhausted);
}

TEST_CASE("Result::value() of an error aborts printing the status", "[core][status]") {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    Result<int> r = Status::NotFound("data/missing.npz");
    const int v = r.value();  // must not return
    std::printf("%d", v);
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string err;
  char buf[256];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;) err.append(buf, n);
  close(pipe_fds[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
  CHECK(err.find("NotFound: data/missing.npz") != std::string::npos);
}

}  // namespace
}  // namespace dlio
