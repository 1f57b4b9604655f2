// What a directory tier writes in its folder (docs/caching.md, "Trust model"): copies readable
// by no more users than their source, folders 0700, dlio's own folder and nothing outside it, a
// full file system counted and warned about once, a capacity above the file system refused.
// The full file system case mounts a small tmpfs, and exits 77 (skipped) where it cannot.
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "cache_test_util.h"

namespace dlio {
namespace {

using testing::CacheFixture;
using testing::ContentOf;
using testing::DirectoryTier;
using testing::ReadAll;
using testing::TempDir;

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// The complete copies in a tier folder's dlio folder.
std::vector<std::string> CopiesIn(const std::string& tier_dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(tier_dir + "/" + kCacheDirName)) {
    const std::string name = e.path().filename().string();
    if (name.find(kCacheCopySuffix) != std::string::npos) out.push_back(e.path().string());
  }
  return out;
}

TEST_CASE("directory tier: copies keep the source's permission bits at most, folders are 0700") {
  const mode_t old = ::umask(0);  // the modes must not depend on the umask
  CacheFixture f;
  TempDir parent;
  const std::string tier_dir = parent / "tier";
  const std::string key = f.Put("key", 3000), shared = f.Put("shared", 3000);
  REQUIRE(::chmod(key.c_str(), 0600) == 0);
  REQUIRE(::chmod(shared.c_str(), 0644) == 0);
  {
    auto cache = f.Make({DirectoryTier(tier_dir, 1 << 20)}, CachePolicyKind::kLru);
    CHECK(ReadAll(cache.get(), key) == ContentOf("key", 3000));
    CHECK(ReadAll(cache.get(), shared) == ContentOf("shared", 3000));
    CHECK(ModeOf(tier_dir) == 0700);
    CHECK(ModeOf(tier_dir + "/" + kCacheDirName) == 0700);
    const auto copies = CopiesIn(tier_dir);
    REQUIRE(copies.size() == 2);
    for (const std::string& copy : copies) {
      INFO(copy);
      const bool of_key = copy.find("-key") != std::string::npos;
      CHECK(ModeOf(copy) == (of_key ? 0600 : 0644));
    }
    // A source made private later: its copy is stale (its mode changed), made again 0600.
    REQUIRE(::chmod(shared.c_str(), 0600) == 0);
    CHECK(ReadAll(cache.get(), shared) == ContentOf("shared", 3000));
    for (const std::string& copy : CopiesIn(tier_dir)) CHECK(ModeOf(copy) == 0600);
  }
  ::umask(old);
}

TEST_CASE("directory tier: user files named like dlio's are kept, a foreign dlio folder refused") {
  CacheFixture f;
  TempDir tier_dir;
  const std::string path = f.Put("a", 5000);
  // Names the old layout removed (its markers and its lock file), now a user's own.
  const std::vector<std::string> users = {std::string("notes") + kCacheCopySuffix,
                                          std::string("x") + kCacheTmpInfix + "1",
                                          ".dlio-cache.lock", "user.dat"};
  for (const std::string& name : users) testing::WriteTextFile(tier_dir / name, "keep " + name);
  for (int round = 0; round < 2; ++round) {
    auto cache = f.Make({DirectoryTier(tier_dir.path(), 1 << 20)}, CachePolicyKind::kLru);
    CHECK(ReadAll(cache.get(), path) == ContentOf("a", 5000));
  }
  for (const std::string& name : users) {
    INFO(name);
    CHECK(testing::ReadTextFile(tier_dir / name) == "keep " + name);
  }
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(tier_dir.path())) {
    names.push_back(e.path().filename().string());
  }
  CHECK(names.size() == users.size());  // dlio's folder went with the cache

  // A folder with dlio's folder name that dlio did not make (no marker): refused, untouched.
  TempDir other;
  REQUIRE(::mkdir((other / kCacheDirName).c_str(), 0755) == 0);
  testing::WriteTextFile(other / kCacheDirName + "/x" + kCacheCopySuffix, "user's");
  CacheOptions o;
  o.tiers = {DirectoryTier(other.path(), 1 << 20)};
  auto refused = TieredCache::Make(o, f.source.get());
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::Contains(kCacheMarkerName));
  CHECK(testing::ReadTextFile(other / kCacheDirName + "/x" + kCacheCopySuffix) == "user's");
}

// A tmpfs of `bytes` mounted on a new folder (unmounted by the destructor); skips the test (77)
// where mounting is not allowed.
class SmallFileSystem {
 public:
  explicit SmallFileSystem(uint64_t bytes) {
    const std::string options = "size=" + std::to_string(bytes) + ",mode=0700";
    if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, options.c_str()) != 0) {
      WARN("cannot mount a tmpfs (" << std::strerror(errno) << "): skipped");
      std::exit(77);
    }
  }
  ~SmallFileSystem() { ::umount2(dir_.path().c_str(), MNT_DETACH); }
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
};

TEST_CASE("directory tier: a full file system is counted and warned about once, never retried") {
  SmallFileSystem fs(4 << 20);
  testing::WriteTextFile(fs.dir() / "filler", std::string(3800 << 10, 'f'));  // a user's file
  CacheFixture f;
  const std::vector<std::string> names = {"f0", "f1", "f2", "f3"};
  std::vector<std::string> paths;
  for (const std::string& name : names) paths.push_back(f.Put(name, 256 << 10));
  std::mutex mu;
  std::vector<std::string> warnings;
  CacheOptions o;
  o.tiers = {DirectoryTier(fs.dir() / "tier", 2 << 20)};
  o.policy = CachePolicyKind::kLru;
  o.on_warning = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    warnings.push_back(line);
  };
  auto tiered = NewTieredStorage(NewPosixStorage(StorageOptions()), std::move(o));
  REQUIRE(tiered.ok());
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) {
      CHECK(ReadAll(tiered->get(), paths[i]) == ContentOf(names[i], 256 << 10));
    }
  }
  const CacheStats stats = CacheOf(tiered->get())->Stats();
  const uint64_t copied = stats.tiers[0].files_copied;
  CHECK(copied < 4);                                  // not everything fit
  CHECK(stats.tiers[0].failed_copies == 4 - copied);  // each failed file tried once only
  std::lock_guard<std::mutex> lock(mu);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("storage.tiers[0]"));
  CHECK_THAT(warnings[0], Catch::Contains("failed_copies"));
  CHECK(testing::ReadTextFile(fs.dir() / "filler").size() == (3800u << 10));
}

TEST_CASE("directory tier: a capacity above its file system's size is refused naming the key") {
  SmallFileSystem fs(4 << 20);
  CacheFixture f;
  CacheOptions o;
  o.tiers = {DirectoryTier(fs.dir() / "tier", 64 << 20)};
  auto refused = TieredCache::Make(o, f.source.get());
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("storage.tiers[0].capacity_bytes"));
  CHECK_THAT(refused.status().message(), Catch::Contains(fs.dir().path()));
}

}  // namespace
}  // namespace dlio
