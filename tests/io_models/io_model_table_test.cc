// The I/O-model table (libdlio/src/io_models/io_model_table.h): one entry per reader.io_model
// value, and every built-in format's registered readers (Format::reader_models) equal to the
// models it declares (FormatCapabilities::io_models, plus native) and to the table's formats.
#include "io_models/io_model_table.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "dlio/config.h"
#include "dlio/loop.h"
#include "dlio/registries.h"
#include "io_models/model_readers.h"

namespace dlio {
namespace {

using io_models::IoModelEntry;
using io_models::IoModelEntryFor;
using io_models::IoModelTable;

// Every built-in format this build can make (hdf5 needs DLIO_WITH_HDF5), by name.
std::vector<std::pair<std::string, std::unique_ptr<Format>>> BuiltinFormats() {
  Registries r;
  REQUIRE(RegisterBuiltins(&r).ok());
  std::vector<std::pair<std::string, std::unique_ptr<Format>>> out;
  for (const auto& entry : r.formats.List()) {
    auto format = entry.factory();
    if (format.ok()) out.emplace_back(entry.name, std::move(*format));
  }
  REQUIRE(out.size() >= 8);
  return out;
}

std::set<IoModel> Set(const std::vector<IoModel>& models) {
  return std::set<IoModel>(models.begin(), models.end());
}

bool Lists(const IoModelEntry& e, const std::string& format) {
  return std::find(e.formats.begin(), e.formats.end(), format) != e.formats.end();
}

TEST_CASE("io model table: one entry per reader.io_model value, in the enum's order") {
  const auto& table = IoModelTable();
  REQUIRE(table.size() == EnumNames<IoModel>::kNames.size());
  for (size_t i = 0; i < table.size(); ++i) {
    INFO("entry " << i << " (" << EnumNames<IoModel>::kNames[i] << ")");
    CHECK(table[i].model == static_cast<IoModel>(i));
    CHECK(&IoModelEntryFor(static_cast<IoModel>(i)) == &table[i]);
  }
  // The two aliases read with the format's default request model; only pytorch picks a loader.
  CHECK(IoModelEntryFor(IoModel::kAuto).request == IoModel::kAuto);
  CHECK(IoModelEntryFor(IoModel::kPytorch).request == IoModel::kAuto);
  CHECK(IoModelEntryFor(IoModel::kPytorch).loader == Loader::kPytorchWorkers);
  for (const IoModelEntry& e : table) {
    if (e.model == IoModel::kAuto || e.model == IoModel::kPytorch) continue;
    CHECK(e.request == e.model);
    CHECK(e.loader == Loader::kThreads);
  }
  // Sampler adaptation: the stream models only (tf.data, tarfile).
  for (const IoModelEntry& e : table) {
    CHECK(e.stream_order_sampler == (e.model == IoModel::kTfData || e.model == IoModel::kTarfile));
  }
}

TEST_CASE("io model table: each format registers a reader for exactly the models it declares") {
  for (const auto& [name, format] : BuiltinFormats()) {
    INFO("format " << name);
    std::vector<IoModel> declared = format->capabilities().io_models;
    declared.push_back(IoModel::kNative);  // every format reads with native
    CHECK(Set(format->reader_models()) == Set(declared));
    CHECK(format->reader_models().size() == Set(format->reader_models()).size());
    for (IoModel m : format->capabilities().io_models) {
      INFO("model " << EnumName(m));
      const IoModelEntry& e = IoModelEntryFor(m);
      CHECK(e.request == m);  // a request model, not an alias
      if (m != IoModel::kNative) CHECK(Lists(e, name));
    }
  }
}

TEST_CASE("io model table: the formats an entry serves declare it") {
  const auto formats = BuiltinFormats();
  for (const IoModelEntry& e : IoModelTable()) {
    for (const std::string& served : e.formats) {
      INFO("model " << EnumName(e.model) << ", format " << served);
      const auto it = std::find_if(formats.begin(), formats.end(),
                                   [&](const auto& f) { return f.first == served; });
      if (it == formats.end()) {
        CHECK(served == "hdf5");  // only hdf5 may be missing from a build (DLIO_WITH_HDF5=OFF)
        continue;
      }
      const auto declared = it->second->capabilities().io_models;
      CHECK(std::find(declared.begin(), declared.end(), e.model) != declared.end());
    }
  }
}

// A reader that says which model opened it, through the error it returns.
io_models::OpenModelReader Named(const std::string& model) {
  return [model](Storage*, const std::string&,
                 const FormatOptions&) -> Result<std::unique_ptr<FormatReader>> {
    return Status::Unimplemented("opened by " + model);
  };
}

std::string OpenedBy(const io_models::ModelReaders& readers, const FormatCapabilities& caps,
                     IoModel requested) {
  FormatOptions o;
  o.io_model = requested;
  auto r = readers.Open(caps, nullptr, "f", o);
  REQUIRE_FALSE(r.ok());
  return r.status().message();
}

TEST_CASE("ModelReaders: Open dispatches to the resolved request model's reader") {
  io_models::ModelReaders readers;
  readers.Add(IoModel::kNative, Named("native"))
      .Add(IoModel::kNumpy, Named("numpy"))
      .Add(IoModel::kNumpy, Named("second numpy"));  // the first registration stays
  CHECK(readers.models() == std::vector<IoModel>{IoModel::kNative, IoModel::kNumpy});
  FormatCapabilities caps;
  caps.io_models = {IoModel::kNumpy};
  CHECK(OpenedBy(readers, caps, IoModel::kAuto) == "opened by numpy");
  CHECK(OpenedBy(readers, caps, IoModel::kPytorch) == "opened by numpy");
  CHECK(OpenedBy(readers, caps, IoModel::kNumpy) == "opened by numpy");
  CHECK(OpenedBy(readers, caps, IoModel::kNative) == "opened by native");
  // A model without a reader (validation refuses it in runs) reads natively.
  CHECK(OpenedBy(readers, caps, IoModel::kH5py) == "opened by native");
  CHECK(OpenedBy(readers, FormatCapabilities{}, IoModel::kAuto) == "opened by native");
  io_models::ModelReaders none;
  CHECK(OpenedBy(none, caps, IoModel::kNative).find("registered no reader") != std::string::npos);
}

TEST_CASE("MatchAllocatorToIoModel: the table's heap setting for the run's model and loader") {
  Registries r;
  REQUIRE(RegisterBuiltins(&r).ok());
  auto npz = (*r.formats.Get("npz"))();
  auto tfrecord = (*r.formats.Get("tfrecord"))();
  REQUIRE(npz.ok());
  REQUIRE(tfrecord.ok());
  WorkloadConfig c;
  REQUIRE(ApplyOverride(&c, "reader.data_loader=tensorflow").ok());
  // client_costs none: the reads land in dlio's buffers, the allocator is left alone.
  CHECK(AllocatorThresholdFor(c, **npz, false, PipelineCapabilitiesFor(c, r.pipelines)) == 0);
  c.reader.client_costs = ClientCosts::kFramework;
  CHECK(AllocatorThresholdFor(c, **npz, false, PipelineCapabilitiesFor(c, r.pipelines)) ==
        IoModelEntryFor(IoModel::kNumpy).python_import_threshold);
  CHECK(AllocatorThresholdFor(c, **tfrecord, false, PipelineCapabilitiesFor(c, r.pipelines)) ==
        0);  // tf.data's reads are not Python's
  // The pytorch loader's worker processes imported torch, whatever the request model.
  REQUIRE(ApplyOverride(&c, "reader.io_model=pytorch").ok());
  CHECK(LoaderFor(c, false, PipelineCapabilitiesFor(c, r.pipelines)) == Loader::kPytorchWorkers);
  CHECK(AllocatorThresholdFor(c, **npz, false, PipelineCapabilitiesFor(c, r.pipelines)) ==
        IoModelEntryFor(IoModel::kPytorch).python_import_threshold);
  CHECK(RequestModelFor(c, **npz) == IoModel::kNumpy);
  REQUIRE(ApplyOverride(&c, "reader.io_model=native").ok());
  CHECK(LoaderFor(c, false, PipelineCapabilitiesFor(c, r.pipelines)) == Loader::kThreads);
  CHECK(AllocatorThresholdFor(c, **npz, false, PipelineCapabilitiesFor(c, r.pipelines)) == 0);
}

TEST_CASE("io model table: client work is the models whose libraries allocate per read") {
  // numpy's fresh array per load, pandas' bytes object per chunk, PIL's, Python io's and
  // tarfile's extractfile bytes per read, zipfile's per member and its CRC, torch.load's storage
  // per load; the others' readers are the same under both client_costs values.
  const std::set<IoModel> with_work{IoModel::kNumpy,    IoModel::kPandas,       IoModel::kPil,
                                    IoModel::kPyio,     IoModel::kTarfileIndex, IoModel::kZipfile,
                                    IoModel::kTorchLoad};
  for (const IoModelEntry& e : IoModelTable()) {
    INFO(EnumName(e.model));
    CHECK(e.client_work == (with_work.count(e.model) > 0));
    CHECK(IoModelDoesClientWork(e.model) == e.client_work);
  }
}

}  // namespace
}  // namespace dlio
