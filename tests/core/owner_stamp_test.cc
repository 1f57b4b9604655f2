// Owner stamps: temporary names that tell a dead dlio process's leftovers from a live one's.
#include "core/owner_stamp.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "dead_owner.h"

namespace dlio {
using testing::DeadPid;

TEST_CASE("owner tokens round-trip and are unique") {
  const OwnerStamp me = ThisProcessStamp();
  CHECK(me.pid == static_cast<uint64_t>(::getpid()));
  CHECK_FALSE(me.host.empty());
  const std::string a = UniqueOwnerToken(), b = UniqueOwnerToken();
  CHECK(a != b);
  auto parsed = ParseOwnerToken(a);
  REQUIRE(parsed);
  CHECK(parsed->host == me.host);
  CHECK(parsed->pid == me.pid);
  CHECK(parsed->pid_ns == me.pid_ns);
  CHECK(parsed->start == me.start);
  // Hosts with '-', '.' and '_' in the rest of the name parse from the right.
  OwnerStamp other{"node-7.cluster", 4026531836, 1234, 99};
  auto back = ParseOwnerToken(OwnerToken(other, 0xabc));
  REQUIRE(back);
  CHECK(back->host == "node-7.cluster");
  CHECK(back->pid == 1234);
  CHECK(back->start == 99);
  for (const char* bad :
       {"", "x", "host_1_2_3_abc", "host_1_2_3_0123456789abcdeg", "ho st_1_2_3_0123456789abcdef",
        "host_1_0_3_0123456789abcdef", "_1_2_3_0123456789abcdef", "host_1_x_3_0123456789abcdef"}) {
    CAPTURE(bad);
    CHECK_FALSE(ParseOwnerToken(bad));
  }
}

TEST_CASE("an owner is dead only when provably gone from this host and pid namespace") {
  const OwnerStamp me = ThisProcessStamp();
  CHECK_FALSE(OwnerIsDead(me));  // this process

  OwnerStamp gone = me;
  gone.pid = DeadPid();
  gone.start = 0;
  CHECK(OwnerIsDead(gone));

  if (me.start != 0) {  // this pid, another start time: the pid was reused, the owner is gone
    OwnerStamp reused = me;
    reused.start = me.start + 1;
    CHECK(OwnerIsDead(reused));
  }
  // Whatever cannot be checked from here counts as alive.
  OwnerStamp other_host = gone;
  other_host.host = me.host + "-elsewhere";
  CHECK_FALSE(OwnerIsDead(other_host));
  OwnerStamp other_ns = gone;
  other_ns.pid_ns = me.pid_ns + 1;
  CHECK_FALSE(OwnerIsDead(other_ns));
  OwnerStamp unknown_ns = gone;
  unknown_ns.pid_ns = 0;
  CHECK_FALSE(OwnerIsDead(unknown_ns));
  OwnerStamp init = me;  // pid 1 lives (in any namespace); its start time is unknown here
  init.pid = 1;
  init.start = 0;
  CHECK_FALSE(OwnerIsDead(init));
}

TEST_CASE("IsDeadOwnersLeftover recognises only '<stem><infix><dead token>'") {
  OwnerStamp gone = ThisProcessStamp();
  gone.pid = DeadPid();
  const std::string dead = OwnerToken(gone, 1);
  const std::string live = UniqueOwnerToken();
  CHECK(IsDeadOwnersLeftover("model.bin.tmp-" + dead, ".tmp-"));
  CHECK_FALSE(IsDeadOwnersLeftover("model.bin.tmp-" + live, ".tmp-"));
  CHECK_FALSE(IsDeadOwnersLeftover(".tmp-" + dead, ".tmp-"));  // no stem
  CHECK_FALSE(IsDeadOwnersLeftover("model.bin.tmp", ".tmp-"));
  CHECK_FALSE(IsDeadOwnersLeftover("model.bin.tmp-" + dead + "x", ".tmp-"));
  CHECK_FALSE(IsDeadOwnersLeftover("model.bin" + dead, ".tmp-"));
}

}  // namespace dlio
