// hdf5's group-per-sample layout (dataset.hdf5_sample_groups) held against Debian's h5py: a file
// converted with h5py (a group per sample, `g['image'] = x; g['label'] = y`) read by an h5py loop
// under libdlio_preload.so and by dlio's reader (the layout found in the file, or declared by the
// config) gives the same opens and reads, the file kept open or opened per sample; dlio's writer
// lays the groups out as h5py does (h5py reads them back, with the same requests as its own file's)
// and its reader returns the bytes written; bad keys and missing groups are refused by name.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/config.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "format/content.h"
#include "format/hdf5/hdf5_options.h"
#include "format/hdf5_test_util.h"
#include "h5_layout_reads.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using format_internal::FillSampleBytes;
using format_internal::SampleLabel;
using io_model_test::AfterFirstOpen;
using io_model_test::KindFilter;
using io_model_test::PythonHas;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;

constexpr uint64_t kGroupSamples = 40;
constexpr uint64_t kGroupImageBytes = 24 * 24 * 3;

// python3 make.py DIR: DIR/conv.h5, as a conversion script writes it.
constexpr const char* kGroupsMakeScript = R"(import sys
import h5py, numpy as np
rng = np.random.default_rng(3)
with h5py.File(sys.argv[1] + '/conv.h5', 'w') as f:
    for i in range(40):
        g = f.create_group('sample_%d' % i)
        g['image'] = rng.integers(0, 255, (24, 24, 3), dtype=np.uint8)
        g['label'] = np.int64(i % 10)
with h5py.File(sys.argv[1] + '/padded.h5', 'w') as f:
    for i in range(40):
        g = f.create_group('%05d' % i)
        g['image'] = rng.integers(0, 255, (24, 24, 3), dtype=np.uint8)
        g['label'] = np.int64(i % 10)
# A detection dataset: a label, then a box of 4 float32, created after the image.
with h5py.File(sys.argv[1] + '/det.h5', 'w') as f:
    for i in range(40):
        g = f.create_group('sample_%d' % i)
        g['image'] = rng.integers(0, 255, (24, 24, 3), dtype=np.uint8)
        g['label'] = np.int64(i % 10)
        g['bbox'] = rng.random(4).astype(np.float32)
)";

// python3 read.py PATH KEEP INDICES NAME [MEMBERS]: each sample's members (image,label by default;
// MEMBERS comma-separated) as a Dataset.__getitem__ reads them, the file opened once (KEEP 1) or
// per sample; prints the first's shape and dtype and the second as a label; NAME is the groups'
// name ('sample_%d', '%05d').
constexpr const char* kGroupsReadScript = R"(import sys
import h5py
path, keep, name = sys.argv[1], sys.argv[2] == '1', sys.argv[4]
idx = [int(x) for x in sys.argv[3].split(',')]
members = sys.argv[5].split(',') if len(sys.argv) > 5 else ['image', 'label']
f = h5py.File(path, 'r') if keep else None
for i in idx:
    h = f if keep else h5py.File(path, 'r')
    g = h[name % i]
    got = [g[m][()] for m in members]
    x, y = got[0], int(got[1])
    print(i, x.shape, x.dtype, y, x.reshape(-1)[:4].tolist())
    del g
    if not keep:
        h.close()
if keep:
    f.close()
)";

const KindFilter kGroupOpensAndReads{{OpKind::kOpen, OpKind::kRead}};
const std::vector<uint64_t> kGroupOrder{7, 0, 33, 7, 12, 39, 1};

std::string JoinIndices(const std::vector<uint64_t>& v) {
  std::string s;
  for (uint64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

struct GroupsFixture : io_model_test::MadeData {
  GroupsFixture() : MadeData(kGroupsMakeScript, kGroupsReadScript) {}
  std::vector<Request> Python(const std::string& file, bool keep,
                              const std::string& name = "sample_%d",
                              const std::string& members = "image,label") {
    static int run = 0;
    const ProfileTrace trace = TracePythonProgram(
        "'" + std::string(tmp / "read.py") + "' '" + data + "/" + file + "' " +
            (keep ? "1 " : "0 ") + JoinIndices(kGroupOrder) + " '" + name + "' " + members,
        data, tmp / ("prof" + std::to_string(run++)));
    return RequestsOf(trace, data, kGroupOpensAndReads);
  }
};

// dlio's reader of `file` under the h5py model: the layout declared (`declared`) or found.
std::vector<Request> DlioGroupRequests(const std::string& data, const std::string& file, bool keep,
                                       bool declared, SampleBuffer* last = nullptr,
                                       const std::string& pattern = "sample_",
                                       const std::string& members = "image,label") {
  FormatOptions o;
  o.io_model = IoModel::kH5py;
  auto& h = o.formats.Get<Hdf5Options>();
  h.h5py_reopen = keep ? H5pyReopen::kNone : H5pyReopen::kFile;
  if (declared) {
    h.sample_groups = pattern;
    h.sample_members = members;
    o.samples_per_file = kGroupSamples;
    o.record_length_bytes = kGroupImageBytes;  // the nominal size: the file is not read at open
  }
  return io_model_test::Hdf5ReaderRequests(data, file, o, kGroupSamples, kGroupImageBytes,
                                           kGroupOrder, kGroupOpensAndReads, last);
}

int64_t ImageReads(const std::vector<Request>& rs) {
  return std::count_if(rs.begin(), rs.end(), [](const Request& r) {
    return r.kind == OpKind::kRead && r.size == static_cast<int64_t>(kGroupImageBytes);
  });
}

// h5py's loop and dlio's reader over `file`, whose groups h5py names `python_name` % i and the
// config `pattern`: the layout declared gives h5py's requests; found in the file, the same data
// reads (and, the file opened per sample, the same requests from its second open on).
// One converted file: how h5py names its groups and which members it reads, in order, and the
// config's pattern and members for them.
struct ConvertedFile {
  const char *file, *python_name, *python_members, *pattern, *members;
};

void CompareGroupReads(GroupsFixture& fx, const ConvertedFile& f, bool keep) {
  const std::string file = f.file;
  const std::vector<Request> python = fx.Python(file, keep, f.python_name, f.python_members);
  for (const bool declared : {true, false}) {
    const std::vector<Request> dlio =
        DlioGroupRequests(fx.data, file, keep, declared, nullptr, f.pattern, f.members);
    INFO(file << " keep " << keep << " declared " << declared << "\nh5py:\n"
              << ToString(python) << "dlio:\n"
              << ToString(dlio));
    // Each sample: the group's metadata, the image and the label at least.
    CHECK(python.size() > 3 * kGroupOrder.size());
    if (declared) {
      CHECK(dlio == python);
      continue;
    }
    // Found in the file: the open lists the root's links and reads the first group's first
    // member, so some of the first samples' metadata comes from libhdf5's cache; every image is
    // read (a new dataset object each time: its sieve buffer starts empty).
    CHECK(ImageReads(dlio) == ImageReads(python));
    CHECK(ImageReads(python) == static_cast<int64_t>(kGroupOrder.size()));
    if (!keep) CHECK(AfterFirstOpen(dlio) == AfterFirstOpen(python));
  }
}

TEST_CASE("hdf5 sample groups: a file h5py converted read request for request") {
  if (!PythonHas("h5py")) return;
  GroupsFixture fx;
  // sample_<i>; a conversion naming its groups by the index alone, zero-padded (00007); and one
  // whose samples hold a box of 4 float32 after the label (found: in the order they were made).
  const ConvertedFile files[] = {
      {"conv.h5", "sample_%d", "image,label", "sample_", "image,label"},
      {"padded.h5", "%05d", "image,label", "{:05d}", "image,label"},
      {"det.h5", "sample_%d", "image,label,bbox", "sample_", "image,label,bbox:4:float32"}};
  for (const ConvertedFile& f : files) {
    for (const bool keep : {true, false}) CompareGroupReads(fx, f, keep);
  }
}

TEST_CASE("hdf5 sample groups: found in a file, described with the keys that write it") {
  if (!PythonHas("h5py")) return;
  GroupsFixture fx;
  auto storage = NewPosixStorage({});
  auto reader = testing::Hdf5()->Open(storage.get(), fx.data + "/conv.h5", FormatOptions{});
  REQUIRE(reader.ok());
  CHECK((*reader)->num_samples() == kGroupSamples);
  CHECK((*reader)->sample_size(0) == kGroupImageBytes);
  const std::string d = (*reader)->DescribeJson();
  INFO(d);
  CHECK_THAT(d, Catch::Contains("\"layout\":\"sample_groups\""));
  CHECK_THAT(d, Catch::Contains("\"dataset.hdf5_sample_groups\":\"sample_\""));
  CHECK_THAT(d, Catch::Contains("\"dataset.hdf5_sample_members\":\"image,label\""));
  CHECK_THAT(d, Catch::Contains("\"dataset.record_dims\":\"[24,24,3]\""));
  CHECK_THAT(d, Catch::Contains("\"dataset.record_element_type\":\"uint8\""));
  // Zero-padded indices alone: the pattern, quoted as YAML needs a value starting with '{'.
  auto padded = testing::Hdf5()->Open(storage.get(), fx.data + "/padded.h5", FormatOptions{});
  REQUIRE(padded.ok());
  CHECK((*padded)->num_samples() == kGroupSamples);
  CHECK_THAT((*padded)->DescribeJson(),
             Catch::Contains("\"dataset.hdf5_sample_groups\":\"\\\"{:05d}\\\"\""));
  // A member of its own shape and dtype, in the order the members were made.
  auto det = testing::Hdf5()->Open(storage.get(), fx.data + "/det.h5", FormatOptions{});
  REQUIRE(det.ok());
  CHECK_THAT((*det)->DescribeJson(),
             Catch::Contains("\"dataset.hdf5_sample_members\":\"image,label,bbox:4:float32\""));
}

TEST_CASE("hdf5 sample groups: dlio's writer lays them out as h5py does") {
  if (!PythonHas("h5py")) return;
  GroupsFixture fx;
  auto storage = NewPosixStorage({});
  FormatOptions w;
  w.formats.Get<Hdf5Options>().sample_groups = "sample_";
  w.record_dims = {24, 24, 3};
  w.record_element_type = "uint8";
  const FileSpec spec = testing::Fixed(kGroupSamples, kGroupImageBytes, 11);
  REQUIRE(testing::Hdf5()->Write(storage.get(), fx.data + "/dlio.h5", spec, w).ok());
  // Never over an existing file.
  CHECK(testing::Hdf5()->Write(storage.get(), fx.data + "/dlio.h5", spec, w).code() ==
        StatusCode::kAlreadyExists);
  // Zero-padded names alone, as another conversion names them.
  FormatOptions padded = w;
  padded.formats.Get<Hdf5Options>().sample_groups = "{:05d}";
  REQUIRE(testing::Hdf5()->Write(storage.get(), fx.data + "/dlio_padded.h5", spec, padded).ok());
  // h5py reads the groups: the shape, dtype and label dlio wrote.
  std::vector<uint8_t> head(4);
  FillSampleBytes(11, 5, 0, head.data(), head.size());
  for (const auto& [file, name] :
       {std::pair<std::string, std::string>{"dlio.h5", "sample_%d"}, {"dlio_padded.h5", "%05d"}}) {
    const auto read = testing::RunCommand("'" + testing::SystemPython() + "' '" +
                                          std::string(fx.tmp / "read.py") + "' '" + fx.data + "/" +
                                          file + "' 1 5 '" + name + "'");
    INFO(read.output);
    REQUIRE(read.exit_code == 0);
    CHECK(read.output == "5 (24, 24, 3) uint8 " + std::to_string(SampleLabel(11, 5)) + " [" +
                             std::to_string(head[0]) + ", " + std::to_string(head[1]) + ", " +
                             std::to_string(head[2]) + ", " + std::to_string(head[3]) + "]\n");
  }
  // A box of 4 float32 after the label, as det.h5 holds it.
  FormatOptions det = w;
  det.formats.Get<Hdf5Options>().sample_members = "image,label,bbox:4:float32";
  REQUIRE(testing::Hdf5()->Write(storage.get(), fx.data + "/dlio_det.h5", spec, det).ok());
  // The same requests as h5py's loop over h5py's own conversion of the same shapes.
  for (const bool keep : {true, false}) {
    for (const bool box : {false, true}) {
      std::vector<Request> python = box ? fx.Python("det.h5", keep, "sample_%d", "image,label,bbox")
                                        : fx.Python("conv.h5", keep);
      std::vector<Request> dlio =
          box ? DlioGroupRequests(fx.data, "dlio_det.h5", keep, true, nullptr, "sample_",
                                  "image,label,bbox:4:float32")
              : DlioGroupRequests(fx.data, "dlio.h5", keep, true);
      for (Request& r : python) r.file = "x";
      for (Request& r : dlio) r.file = "x";
      INFO("keep " << keep << " box " << box << "\nh5py on its file:\n"
                   << ToString(python) << "dlio on its file:\n"
                   << ToString(dlio));
      CHECK(dlio == python);
    }
  }
  // dlio's reader returns the bytes written.
  SampleBuffer last;
  DlioGroupRequests(fx.data, "dlio.h5", true, false, &last);
  std::vector<uint8_t> want(kGroupImageBytes);
  FillSampleBytes(11, kGroupOrder.back(), 0, want.data(), want.size());
  REQUIRE(last.size() == kGroupImageBytes);
  CHECK(std::equal(want.begin(), want.end(), last.data()));
}

TEST_CASE("hdf5 sample groups: missing groups and members are named") {
  if (!PythonHas("h5py")) return;
  GroupsFixture fx;
  auto storage = NewPosixStorage({});
  FormatOptions o;
  o.formats.Get<Hdf5Options>().sample_groups = "sample_";
  o.samples_per_file = kGroupSamples + 2;  // two more than the file holds
  auto reader = testing::Hdf5()->Open(storage.get(), fx.data + "/conv.h5", o);
  REQUIRE(reader.ok());
  SampleBuffer buf;
  REQUIRE((*reader)->ReadSample(kGroupSamples - 1, &buf).ok());
  const Status missing = (*reader)->ReadSample(kGroupSamples, &buf);
  CHECK(missing.code() == StatusCode::kCorruption);
  CHECK_THAT(missing.message(), Catch::Contains("conv.h5: /sample_40: no such group"));
  o.formats.Get<Hdf5Options>().sample_members = "image,mask";
  auto no_mask = testing::Hdf5()->Open(storage.get(), fx.data + "/conv.h5", o);
  REQUIRE(no_mask.ok());
  const Status member = (*no_mask)->ReadSample(2, &buf);
  CHECK_THAT(member.message(), Catch::Contains("/sample_2 has no dataset mask"));
  // Declared, the file is not read at open: the first sample finds the groups missing.
  o.formats.Get<Hdf5Options>().sample_groups = "item_";
  auto wrong = testing::Hdf5()->Open(storage.get(), fx.data + "/conv.h5", o);
  REQUIRE(wrong.ok());
  CHECK_THAT((*wrong)->ReadSample(0, &buf).message(),
             Catch::Contains("conv.h5: /item_0: no such group (sample 0 of 42"));
}

// The config parsed and checked against the built-in formats, as dlio-run checks it.
Status ParseChecked(const std::string& yaml) {
  auto c = ParseConfig(yaml, "groups.yaml");
  if (!c.ok()) return c.status();
  Registries r;
  REQUIRE(RegisterBuiltins(&r).ok());
  return ValidateCapabilities(*c, r);
}

TEST_CASE("hdf5 sample groups: bad keys are refused by name") {
  const std::string base = "dataset:\n  format: hdf5\n  hdf5_sample_groups: sample_\n";
  CHECK(ParseChecked(base).ok());
  CHECK_THAT(ParseChecked("dataset:\n  format: npz\n  hdf5_sample_groups: sample_\n").message(),
             Catch::Contains("dataset.hdf5_sample_groups applies to dataset.format 'hdf5' only, "
                             "got 'npz'"));
  CHECK_THAT(ParseChecked("dataset:\n  format: hdf5\n  hdf5_sample_groups: a/b\n").message(),
             Catch::Contains("dataset.hdf5_sample_groups: \"a/b\""));
  CHECK(ParseChecked("dataset:\n  format: hdf5\n  hdf5_sample_groups: \"{:08d}\"\n").ok());
  CHECK(ParseChecked("dataset:\n  format: hdf5\n  hdf5_sample_groups: img{}_x\n").ok());
  for (const char* bad : {"sample_{", "x{:8d}", "x{:0d}", "x{:021d}", "x{}{}", "x{i}"}) {
    CHECK_THAT(ParseChecked(std::string("dataset:\n  format: hdf5\n  hdf5_sample_groups: \"") +
                            bad + "\"\n")
                   .message(),
               Catch::Contains(std::string("dataset.hdf5_sample_groups: \"") + bad + "\""));
  }
  CHECK(ParseChecked(base + "  hdf5_sample_members: \"img,label:scalar:int32,box:2x2:float16\"\n")
            .ok());
  for (const char* bad :
       {"img:4:uint8", "img,box:4:complex64", "img,box:4x:float32", "img,box:-1", "img,box:a"}) {
    CHECK_THAT(ParseChecked(base + "  hdf5_sample_members: \"" + bad + "\"\n").message(),
               Catch::Contains("dataset.hdf5_sample_members: \""));
  }
  CHECK_THAT(ParseChecked(base + "  hdf5_sample_members: image,image\n").message(),
             Catch::Contains("dataset.hdf5_sample_members: \"image\" is named twice"));
  CHECK_THAT(ParseChecked(base + "  hdf5_sample_members: image,,label\n").message(),
             Catch::Contains("dataset.hdf5_sample_members: \"\""));
  CHECK_THAT(ParseChecked(base + "  compression: gzip\n").message(),
             Catch::Contains("with dataset.compression gzip"));
  CHECK_THAT(ParseChecked(base + "  enable_chunking: true\n  chunk_samples: 1\n").message(),
             Catch::Contains("with dataset.enable_chunking"));
  CHECK_THAT(
      ParseChecked(base + "  record_dims: [4, 4]\n  record_element_type: uint16\n").message(),
      Catch::Contains("dataset.record_element_type uint16 with dataset.hdf5_sample_groups"));
}

}  // namespace
}  // namespace dlio
