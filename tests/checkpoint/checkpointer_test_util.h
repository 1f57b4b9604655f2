// Building a built-in checkpointer over a storage in a test: a memory storage bound to the system
// clock, and the registry's checkpointer of options.name (REQUIRE'd to build with Make).
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <utility>

#include "dlio/checkpointer.h"
#include "dlio/clock.h"
#include "dlio/registries.h"
#include "dlio/storage.h"

namespace dlio::checkpoint_test {

inline std::unique_ptr<Storage> MemoryStorage() {
  auto storage = NewMemoryStorage();
  storage->Bind(SystemClock(), nullptr);
  return storage;
}

inline Result<std::unique_ptr<Checkpointer>> Build(const CheckpointOptions& options,
                                                   Storage* storage) {
  Registries registries;
  REQUIRE(RegisterBuiltinCheckpointers(&registries.checkpointers).ok());
  CheckpointEnv env;
  env.storage = storage;
  env.clock = SystemClock();
  return (*registries.checkpointers.Get(options.name))(options, env);
}

inline std::unique_ptr<Checkpointer> Make(const CheckpointOptions& options, Storage* storage) {
  auto made = Build(options, storage);
  INFO(made.status().ToString());
  REQUIRE(made.ok());
  return std::move(made).value();
}

}  // namespace dlio::checkpoint_test
