// GenerateDataset's generation lock: two generations of one folder never run at once.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "dlio/generator.h"
#include "dlio/storage.h"
#include "generator/generator_test_util.h"
#include "test_util.h"

namespace dlio {
namespace {

using generator_testing::Exists;
using generator_testing::MemoryStorage;
using generator_testing::RawFormat;
using generator_testing::SmallDataset;

TEST_CASE("a second generation of a folder in use fails naming the folder and the holder",
          "[generator]") {
  testing::TempDir dir;
  for (const bool posix : {true, false}) {
    CAPTURE(posix);
    auto storage = posix ? NewPosixStorage(StorageOptions{}) : MemoryStorage();
    const DatasetConfig d = SmallDataset(dir / (posix ? "posix" : "memory"));
    RawFormat first(false), second(false);
    Result<GenerateReport> second_result = Status::Internal("not run");
    // The second generation starts while the first is writing its third file.
    first.on_write = [&](int writes) {
      if (writes != 2) return;
      std::thread other(
          [&] { second_result = GenerateDataset(d, second, FormatOptions{}, storage.get(), {}); });
      other.join();
    };
    auto r = GenerateDataset(d, first, FormatOptions{}, storage.get(), GenerateOptions{});
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    CHECK(r->files_written == 7);
    REQUIRE_FALSE(second_result.ok());
    const std::string message = second_result.status().message();
    INFO(message);
    CHECK(second_result.status().code() == StatusCode::kAlreadyExists);
    CHECK(message.find("data folder " + d.data_folder + " is being generated") == 0);
    CHECK(message.find("pid " + std::to_string(::getpid())) != std::string::npos);
    CHECK(second.writes == 0);
    // Released at the end: the lock file is gone and a later run proceeds.
    CHECK_FALSE(Exists(storage.get(), d.data_folder + "/.dlio-generate.lock"));
    auto later = GenerateDataset(d, second, FormatOptions{}, storage.get(), GenerateOptions{});
    REQUIRE(later.ok());
    CHECK(later->files_skipped == 7);
  }
}

}  // namespace
}  // namespace dlio
