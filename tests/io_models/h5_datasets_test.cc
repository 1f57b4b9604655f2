// hdf5's dataset-per-sample layout (dataset.hdf5_sample_groups with no hdf5_sample_members) and a
// table read a row per sample beside it (reader.hdf5_lookup_dataset), held against Debian's h5py:
// a folder converted with `f.create_dataset(str(i), data=x)` and a `labels` dataset after them,
// read by `x = f[str(i)][()]; y = f['labels'][i]` under libdlio_preload.so and by dlio's reader
// (declared or found in the file) gives the same opens and reads; dlio's writer lays out the
// same, and h5py reads it back; a missing table is refused by name.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "dlio/clock.h"
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

constexpr uint64_t kFlatSamples = 48;
constexpr uint64_t kFlatBytes = 20 * 20 * 3;

// python3 make.py DIR: DIR/flat.h5, a dataset per sample and the labels after them.
constexpr const char* kFlatMakeScript = R"(import sys
import h5py, numpy as np
rng = np.random.default_rng(5)
with h5py.File(sys.argv[1] + '/flat.h5', 'w') as f:
    for i in range(48):
        f.create_dataset(str(i), data=rng.integers(0, 255, (20, 20, 3), dtype=np.uint8))
    f.create_dataset('labels', data=rng.integers(0, 10, 48, dtype=np.int64))
)";

// python3 read.py PATH KEEP INDICES TABLE: each sample as a Dataset.__getitem__ reads it, the file
// opened once (KEEP 1) or per sample; prints the image's shape, dtype and first bytes.
constexpr const char* kFlatReadScript = R"(import sys
import h5py
path, keep, table = sys.argv[1], sys.argv[2] == '1', sys.argv[4]
f = h5py.File(path, 'r') if keep else None
for i in [int(x) for x in sys.argv[3].split(',')]:
    h = f if keep else h5py.File(path, 'r')
    x = h[str(i)][()]
    y = h[table][i]
    print(i, x.shape, x.dtype, x.reshape(-1)[:4].tolist(), y.reshape(-1)[:1].tolist())
    if not keep:
        h.close()
if keep:
    f.close()
)";

const io_model_test::KindFilter kFlatOpensAndReads{{OpKind::kOpen, OpKind::kRead}};
const std::vector<uint64_t> kFlatOrder{9, 0, 47, 9, 23, 1, 30};

struct FlatFixture : io_model_test::MadeData {
  FlatFixture() : MadeData(kFlatMakeScript, kFlatReadScript) {}
  std::vector<io_model_test::Request> Python(const std::string& file, bool keep,
                                             const std::string& table) {
    static int run = 0;
    std::string order;
    for (uint64_t i : kFlatOrder) order += (order.empty() ? "" : ",") + std::to_string(i);
    const ProfileTrace trace = io_model_test::TracePythonProgram(
        "'" + std::string(tmp / "read.py") + "' '" + data + "/" + file + "' " +
            (keep ? "1 " : "0 ") + order + " " + table,
        data, tmp / ("prof" + std::to_string(run++)));
    return io_model_test::RequestsOf(trace, data, kFlatOpensAndReads);
  }
};

// dlio's reader of `file` under the h5py model: the layout and table declared, or found.
std::vector<io_model_test::Request> DlioFlatRequests(const std::string& data,
                                                     const std::string& file, bool keep,
                                                     bool declared, const std::string& table,
                                                     SampleBuffer* last = nullptr) {
  FormatOptions o;
  o.io_model = IoModel::kH5py;
  auto& h = o.formats.Get<Hdf5Options>();
  h.h5py_reopen = keep ? H5pyReopen::kNone : H5pyReopen::kFile;
  if (declared) {
    h.sample_groups = "{}";
    h.sample_members = "";
    h.lookup_dataset = table;
    o.samples_per_file = kFlatSamples;
    o.record_length_bytes = kFlatBytes;
  }
  return io_model_test::Hdf5ReaderRequests(data, file, o, kFlatSamples, kFlatBytes, kFlatOrder,
                                           kFlatOpensAndReads, last);
}

int64_t ReadsOf(const std::vector<io_model_test::Request>& rs, int64_t size) {
  return std::count_if(rs.begin(), rs.end(), [&](const io_model_test::Request& r) {
    return r.kind == OpKind::kRead && r.size == size;
  });
}

TEST_CASE("hdf5 datasets per sample: a file h5py converted read request for request") {
  if (!io_model_test::PythonHas("h5py")) return;
  FlatFixture fx;
  for (const bool keep : {true, false}) {
    const auto python = fx.Python("flat.h5", keep, "labels");
    // Each sample: its name's B-tree node, its object header, its data and its label's row to
    // the table's end at least.
    REQUIRE(python.size() > 3 * kFlatOrder.size());
    REQUIRE(ReadsOf(python, kFlatBytes) == static_cast<int64_t>(kFlatOrder.size()));
    for (const bool declared : {true, false}) {
      const auto dlio = DlioFlatRequests(fx.data, "flat.h5", keep, declared, "/labels");
      INFO("keep " << keep << " declared " << declared << "\nh5py:\n"
                   << io_model_test::ToString(python) << "dlio:\n"
                   << io_model_test::ToString(dlio));
      if (declared) {
        CHECK(dlio == python);
        continue;
      }
      // Found: the open lists the root and reads the first sample's and the table's headers,
      // so some of the first samples' metadata comes from libhdf5's cache; every sample's data is
      // read (and, the file opened per sample, every request from its second open on).
      CHECK(ReadsOf(dlio, kFlatBytes) == ReadsOf(python, kFlatBytes));
      if (!keep)
        CHECK(io_model_test::AfterFirstOpen(dlio) == io_model_test::AfterFirstOpen(python));
    }
  }
}

TEST_CASE("hdf5 datasets per sample: found, described with the keys that write it") {
  if (!io_model_test::PythonHas("h5py")) return;
  FlatFixture fx;
  auto storage = NewPosixStorage({});
  auto reader = testing::Hdf5()->Open(storage.get(), fx.data + "/flat.h5", FormatOptions{});
  REQUIRE(reader.ok());
  CHECK((*reader)->num_samples() == kFlatSamples);  // the labels are no sample
  CHECK((*reader)->sample_size(0) == kFlatBytes);
  const std::string d = (*reader)->DescribeJson();
  INFO(d);
  CHECK_THAT(d, Catch::Contains("\"lookup\":\"/labels\""));
  CHECK_THAT(d, Catch::Contains("\"dataset.hdf5_sample_groups\":\"\\\"{}\\\"\""));
  CHECK_THAT(d, Catch::Contains("\"dataset.hdf5_sample_members\":\"\""));
  CHECK_THAT(d, Catch::Contains("\"dataset.hdf5_lookup_rows\":\"48\""));
  CHECK_THAT(d, Catch::Contains("\"dataset.hdf5_lookup_row_bytes\":\"8\""));
  CHECK_THAT(d, Catch::Contains("\"reader.hdf5_lookup_dataset\":\"/lookup\""));
  CHECK_THAT(d, Catch::Contains("\"dataset.record_dims\":\"[20,20,3]\""));
}

TEST_CASE("hdf5 datasets per sample: dlio's writer, read back by h5py and as h5py's own file") {
  if (!io_model_test::PythonHas("h5py")) return;
  FlatFixture fx;
  auto storage = NewPosixStorage({});
  FormatOptions w;
  auto& h = w.formats.Get<Hdf5Options>();
  h.sample_groups = "{}";
  h.sample_members = "";
  h.lookup_rows = kFlatSamples;
  w.record_dims = {20, 20, 3};
  w.record_element_type = "uint8";
  const FileSpec spec = testing::Fixed(kFlatSamples, kFlatBytes, 13);
  REQUIRE(testing::Hdf5()->Write(storage.get(), fx.data + "/dlio.h5", spec, w).ok());
  // h5py reads sample 5 and its row of /lookup: the bytes and the label dlio wrote.
  std::vector<uint8_t> head(4);
  format_internal::FillSampleBytes(13, 5, 0, head.data(), head.size());
  const auto read =
      testing::RunCommand("'" + testing::SystemPython() + "' '" + std::string(fx.tmp / "read.py") +
                          "' '" + fx.data + "/dlio.h5' 1 5 lookup");
  INFO(read.output);
  REQUIRE(read.exit_code == 0);
  const auto label = static_cast<uint8_t>(format_internal::SampleLabel(13, 5));
  CHECK(read.output == "5 (20, 20, 3) uint8 [" + std::to_string(head[0]) + ", " +
                           std::to_string(head[1]) + ", " + std::to_string(head[2]) + ", " +
                           std::to_string(head[3]) + "] [" + std::to_string(label) + "]\n");
  // The same requests as h5py's loop over h5py's own file, but for the table's rows: dlio's
  // /lookup holds rows of 8 uint8 where h5py's labels are int64, the same bytes.
  for (const bool keep : {true, false}) {
    auto python = fx.Python("flat.h5", keep, "labels");
    auto dlio = DlioFlatRequests(fx.data, "dlio.h5", keep, true, "/lookup");
    for (auto& r : python) r.file = "x";
    for (auto& r : dlio) r.file = "x";
    INFO("keep " << keep << "\nh5py on its file:\n"
                 << io_model_test::ToString(python) << "dlio on its file:\n"
                 << io_model_test::ToString(dlio));
    CHECK(dlio.size() == python.size());
    CHECK(ReadsOf(dlio, kFlatBytes) == ReadsOf(python, kFlatBytes));
  }
  // dlio's reader returns the bytes written, the layout found in its own file.
  SampleBuffer last;
  DlioFlatRequests(fx.data, "dlio.h5", true, false, "", &last);
  std::vector<uint8_t> want(kFlatBytes);
  format_internal::FillSampleBytes(13, kFlatOrder.back(), 0, want.data(), want.size());
  REQUIRE(last.size() == kFlatBytes);
  CHECK(std::equal(want.begin(), want.end(), last.data()));
}

TEST_CASE("hdf5 datasets per sample: a missing table or sample is named") {
  if (!io_model_test::PythonHas("h5py")) return;
  FlatFixture fx;
  auto storage = NewPosixStorage({});
  FormatOptions o;
  auto& h = o.formats.Get<Hdf5Options>();
  h.sample_groups = "{}";
  h.sample_members = "";
  h.lookup_dataset = "/targets";
  o.samples_per_file = kFlatSamples + 1;
  // Declared, the file is not read at open: the first sample's label finds the table missing.
  auto no_table = testing::Hdf5()->Open(storage.get(), fx.data + "/flat.h5", o);
  REQUIRE(no_table.ok());
  SampleBuffer buf;
  const Status no_rows = (*no_table)->ReadSample(0, &buf);
  CHECK(no_rows.code() == StatusCode::kNotFound);
  CHECK_THAT(no_rows.message(), Catch::Contains("flat.h5: reader.hdf5_lookup_dataset /targets"));
  h.lookup_dataset.clear();
  auto reader = testing::Hdf5()->Open(storage.get(), fx.data + "/flat.h5", o);
  REQUIRE(reader.ok());
  REQUIRE((*reader)->ReadSample(kFlatSamples - 1, &buf).ok());
  const Status missing = (*reader)->ReadSample(kFlatSamples, &buf);
  CHECK(missing.code() == StatusCode::kCorruption);
  CHECK_THAT(missing.message(), Catch::Contains("flat.h5: sample 48 of 49: has no dataset 48"));
}

}  // namespace
}  // namespace dlio
