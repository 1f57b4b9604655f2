// Writes an npz file into memory storage through the installed library and reads it back.
#include <cstdio>

#include "dlio/data_source.h"
#include "dlio/registries.h"
#include "dlio/storage.h"

int main() {
  dlio::Registries registries;
  if (auto s = dlio::RegisterBuiltins(&registries); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  auto storage = dlio::NewMemoryStorage();
  storage->Bind(dlio::SystemClock(), nullptr);
  auto factory = registries.formats.Get("npz");
  if (!factory.ok()) return 2;
  auto format = (*factory)();
  if (!format.ok()) return 3;
  dlio::FileSpec spec;
  spec.sample_sizes = {4096, 4096, 4096};
  spec.seed = 7;
  if (!(*format)->Write(storage.get(), "/d/a.npz", spec, {}).ok()) return 4;
  auto source = dlio::MakeFormatDataSource(storage.get(), format->get(), {"/d/a.npz"}, {});
  if (!source.ok()) return 5;
  dlio::SampleBuffer buf;
  if (!(*source)->Read({0, 2}, &buf).ok() || buf.size() != 4096) return 6;
  std::printf("consumer: read %zu bytes of sample 2 from %s\n", buf.size(),
              (*source)->file_path(0).c_str());
  return 0;
}
