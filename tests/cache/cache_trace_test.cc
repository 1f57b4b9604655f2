// The tiered storage traces its cache's events (category "cache") to the tracer it is bound to.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "cache_test_util.h"
#include "dlio/clock.h"
#include "dlio/tracer.h"

namespace dlio {
namespace {

using testing::CacheFixture;
using testing::MemoryTier;
using testing::ReadAll;

TEST_CASE("tiered storage: cache hits, misses, copies and evictions are trace events") {
  CacheFixture f;
  const std::string a = f.Put("A", 100), b = f.Put("B", 100);
  auto cache = f.Make({MemoryTier(150)}, CachePolicyKind::kLru);  // one file at a time
  MemoryTracer tracer;
  cache.storage->Bind(SystemClock(), &tracer);
  (void)ReadAll(cache.get(), a);  // miss: copied, read from the copy
  (void)ReadAll(cache.get(), a);  // hit
  (void)ReadAll(cache.get(), b);  // miss: evicts A, copied
  cache->WaitIdle();

  std::map<std::string, int> count;
  for (const TraceEvent& e : tracer.Events()) {
    if (std::string(e.cat) != "cache") continue;
    const std::string name = e.name;
    ++count[name];
    CAPTURE(name);
    CHECK(e.count == 100);                               // the file's bytes
    CHECK(e.offset == (name == "cache.miss" ? -1 : 0));  // the tier (-1: the source)
    CHECK(e.dur_us >= 0);
    if (name == "cache.hit" || name == "cache.evict") CHECK(tracer.FileName(e.file_id) == a);
  }
  CHECK(count["cache.miss"] == 2);
  CHECK(count["cache.copy"] == 2);
  CHECK(count["cache.hit"] == 1);
  CHECK(count["cache.evict"] == 1);
  CHECK(count.size() == 4);
}

}  // namespace
}  // namespace dlio
