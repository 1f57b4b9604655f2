#include <catch2/catch.hpp>

#include "dlio/profile.h"

namespace dlio {
namespace {

TEST_CASE("OpKindOfCall classifies calls by name") {
  CHECK(OpKindOfCall("pread64") == OpKind::kRead);
  CHECK(OpKindOfCall("fread") == OpKind::kRead);
  CHECK(OpKindOfCall("pwrite") == OpKind::kWrite);
  CHECK(OpKindOfCall("openat") == OpKind::kOpen);
  CHECK(OpKindOfCall("fclose") == OpKind::kClose);
  CHECK(OpKindOfCall("lseek64") == OpKind::kSeek);
  CHECK(OpKindOfCall("newfstatat") == OpKind::kStat);
  CHECK(OpKindOfCall("fdatasync") == OpKind::kSync);
  CHECK(OpKindOfCall("munmap") == OpKind::kMmap);
  CHECK(OpKindOfCall("unlink") == OpKind::kMetadata);
  CHECK(OpKindOfCall("ai.compute.step") == OpKind::kOther);
  CHECK(OpKindName(OpKind::kSeek) == "seek");
}

TEST_CASE("OpKindOfCall knows every seek and the calls libdlio_preload.so records") {
  // numpy.fromfile's fseeko64 was unknown, which `dlio-run fit` took for a per-sample event.
  for (const char* seek :
       {"lseek", "lseek64", "llseek", "_llseek", "fseek", "fseeko", "fseeko64"}) {
    INFO(seek);
    CHECK(OpKindOfCall(seek) == OpKind::kSeek);
  }
  CHECK(OpKindOfCall("openat64") == OpKind::kOpen);
  CHECK(OpKindOfCall("preadv64") == OpKind::kRead);
  CHECK(OpKindOfCall("preadv64v2") == OpKind::kRead);
  CHECK(OpKindOfCall("pwritev64") == OpKind::kWrite);
  CHECK(OpKindOfCall("pwritev64v2") == OpKind::kWrite);
}

TEST_CASE("ProfileTrace stores events as columns and interns strings") {
  ProfileTrace t;
  ProfileEvent e;
  e.pid = 7;
  e.tid = 8;
  e.name = "pread";
  e.category = "POSIX";
  e.path = "/d/a.npz";
  e.start_us = 100;
  e.dur_us = 5;
  e.offset = 4096;
  e.size = 10;
  e.ret = 9;
  e.kind = OpKind::kRead;
  t.Add(e);
  e.name = "ai.compute.step";
  e.path = "";
  t.Add(e);
  REQUIRE(t.size() == 2);
  CHECK(t.path[1] == ProfileTrace::kNoString);
  CHECK(t.Intern("pread") == t.name[0]);
  const ProfileEvent back = t.Get(0);
  CHECK(back.pid == 7);
  CHECK(back.tid == 8);
  CHECK(back.name == "pread");
  CHECK(back.path == "/d/a.npz");
  CHECK(back.offset == 4096);
  CHECK(back.size == 10);
  CHECK(back.ret == 9);
  CHECK(t.Get(1).path.empty());
}

}  // namespace
}  // namespace dlio
