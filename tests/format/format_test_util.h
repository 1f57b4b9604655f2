// Helpers of the format tests: bound storages and the bytes our writers put in a sample.
#pragma once

#include <catch2/catch.hpp>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/format.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"
#include "format/content.h"

namespace dlio::testing {

inline std::unique_ptr<Storage> BoundMemoryStorage(Tracer* tracer = nullptr) {
  auto s = NewMemoryStorage();
  s->Bind(SystemClock(), tracer);
  return s;
}

inline std::unique_ptr<Storage> BoundPosixStorage(Tracer* tracer = nullptr) {
  auto s = NewPosixStorage(StorageOptions{});
  s->Bind(SystemClock(), tracer);
  return s;
}

inline std::unique_ptr<Format> MakeFormatByName(const std::string& name) {
  Registries r;
  if (!RegisterBuiltinFormats(&r.formats).ok()) return nullptr;
  auto factory = r.formats.Get(name);
  if (!factory.ok()) return nullptr;
  auto format = (*factory)();
  return format.ok() ? std::move(*format) : nullptr;
}

// DetectFormat with the hints of the built-in formats.
inline Result<std::string> DetectBuiltinFormat(Storage* storage, const std::string& path) {
  Registries r;
  DLIO_RETURN_NOT_OK(RegisterBuiltinFormats(&r.formats));
  return DetectFormat(r.formats, storage, path);
}

// What our writers store as sample i of a file written from `spec`.
inline std::string ExpectedSample(const FileSpec& spec, uint64_t i) {
  std::string s(spec.sample_sizes[i], '\0');
  format_internal::FillSampleBytes(spec.seed, i, 0, reinterpret_cast<uint8_t*>(s.data()), s.size());
  return s;
}

inline std::string BufferString(const SampleBuffer& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// Reads samples `order` of `r` and checks each holds what our writers put in it for `spec`.
inline void ExpectSamples(FormatReader* r, const FileSpec& spec,
                          std::initializer_list<uint64_t> order) {
  SampleBuffer buf;
  for (uint64_t i : order) {
    Status st = r->ReadSample(i, &buf);
    INFO("sample " << i << ": " << st.ToString());
    REQUIRE(st.ok());
    REQUIRE(BufferString(buf) == ExpectedSample(spec, i));
  }
}

// Plain-stdio edits of a file, independent of dlio's Storage.
inline void PatchBytes(const std::string& path, long offset, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "r+b");
  if (f == nullptr) return;
  if (offset < 0)
    std::fseek(f, offset, SEEK_END);
  else
    std::fseek(f, offset, SEEK_SET);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

inline std::string ReadBytes(const std::string& path, long offset, size_t n) {
  FILE* f = std::fopen(path.c_str(), "rb");
  std::string out(n, '\0');
  if (f == nullptr) return "";
  if (offset < 0)
    std::fseek(f, offset, SEEK_END);
  else
    std::fseek(f, offset, SEEK_SET);
  out.resize(std::fread(out.data(), 1, n, f));
  std::fclose(f);
  return out;
}

}  // namespace dlio::testing
