// What the generator tests share: a minimal Format written in the test and small datasets.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlio/generator.h"
#include "dlio/storage.h"

namespace dlio::generator_testing {

// A minimal format, local to the test (so the generator is shown to work with any Format): an
// 8-byte sample count, then the samples, byte j of sample s = (seed + s + j) & 0xff.
class RawFormat final : public Format {
 public:
  RawFormat(bool variable, std::string ext = "raw", bool files = true)
      : variable_(variable), ext_(std::move(ext)), files_(files) {}
  // Also write "<path>.idx" (as indexed_binary does) / fail after `fail_after_writes` files.
  bool companion = false;
  int fail_after_writes = -1;
  // Called at the start of every Write with the number of earlier writes.
  std::function<void(int)> on_write;
  std::string name() const override { return "rawtest"; }
  std::string extension() const override { return ext_; }
  bool variable_sample_sizes() const override { return variable_; }
  bool uses_files() const override { return files_; }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions&) const override {
    if (on_write) on_write(writes);
    if (companion) {
      DLIO_ASSIGN_OR_RETURN(auto idx, storage->Open(path + ".idx", OpenMode::kCreateNew));
      DLIO_RETURN_NOT_OK(idx->WriteAt(0, "index", 5));
      DLIO_RETURN_NOT_OK(idx->Close());
    }
    DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kCreateNew));
    if (writes++ == fail_after_writes) {
      DLIO_RETURN_NOT_OK(file->WriteAt(0, "partial", 7));
      return Status::ResourceExhausted("write " + path + ": injected full disk");
    }
    const uint64_t count = spec.sample_sizes.size();
    DLIO_RETURN_NOT_OK(file->WriteAt(0, &count, 8));
    uint64_t offset = 8;
    for (uint64_t s = 0; s < count; ++s) {
      std::vector<uint8_t> bytes(spec.sample_sizes[s]);
      for (size_t j = 0; j < bytes.size(); ++j) bytes[j] = static_cast<uint8_t>(spec.seed + s + j);
      DLIO_RETURN_NOT_OK(file->WriteAt(offset, bytes.data(), bytes.size()));
      offset += bytes.size();
    }
    return file->Close();
  }
  Result<std::unique_ptr<FormatReader>> Open(Storage*, const std::string& path,
                                             const FormatOptions&) const override {
    return Status::Unimplemented("rawtest cannot read " + path);
  }

  mutable int writes = 0;

 private:
  bool variable_;
  std::string ext_;
  bool files_;
};

inline std::unique_ptr<Storage> MemoryStorage() {
  auto storage = NewMemoryStorage();
  storage->Bind(SystemClock(), nullptr);
  return storage;
}

inline DatasetConfig SmallDataset(const std::string& folder) {
  DatasetConfig d;
  d.data_folder = folder;
  d.format = "rawtest";
  d.num_files_train = 5;
  d.num_files_eval = 2;
  d.num_samples_per_file = 3;
  d.record_length_bytes = 1024;
  return d;
}

// Every file under `dir`, as paths relative to it (recursive, via Storage::List).
inline void Walk(Storage* storage, const std::string& dir, const std::string& rel,
                 std::vector<std::string>* out) {
  auto names = storage->List(dir);
  REQUIRE(names.ok());
  for (const auto& name : *names) {
    const std::string path = dir + "/" + name;
    auto is_dir = storage->IsDirectory(path);
    REQUIRE(is_dir.ok());
    if (*is_dir) {
      Walk(storage, path, rel + name + "/", out);
    } else {
      out->push_back(rel + name);
    }
  }
}

inline std::vector<std::string> AllFiles(Storage* storage, const std::string& dir) {
  std::vector<std::string> out;
  Walk(storage, dir, "", &out);
  return out;
}

inline bool Exists(Storage* storage, const std::string& path) {
  auto e = storage->Exists(path);
  REQUIRE(e.ok());
  return *e;
}

}  // namespace dlio::generator_testing
