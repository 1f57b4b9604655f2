// The h5py I/O model (reader.io_model h5py) held against Debian's h5py request by request: the
// same files read by an h5py program under libdlio_preload.so and by dlio's hdf5 reader under a
// MemoryTracer give the same opens and reads, for contiguous, chunked, gzip-compressed and
// larger-than-the-chunk-cache datasets, files written by h5py and by dlio's writer, h5py.File per
// sample or kept open, a lookup dataset read before each sample (coordinates) or after it
// (labels), the metadata file and the root's attributes read after each sample (dict(f.attrs)),
// and every file opened once to count its samples first (reader.open_files_at_start).
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/data_source.h"
#include "dlio/storage.h"
#include "format/hdf5/hdf5_options.h"
#include "format/hdf5_test_util.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::KindFilter;
using io_model_test::PythonHas;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::TempDir;

// Writes files with h5py: python3 make.py DIR (the shapes the tests read).
constexpr const char* kMakeScript = R"(import sys
import h5py, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(1)
def save(name, records, chunks=None, compression=None, extra=None, attrs=None):
    with h5py.File(d + '/' + name, 'w') as f:
        f.create_dataset('records', data=records, chunks=chunks, compression=compression)
        f.create_dataset('labels', data=np.arange(records.shape[0], dtype=np.int64))
        for k, v in (extra or {}).items():
            f.create_dataset(k, data=v)
        for k, v in (attrs or {}).items():
            f.attrs[k] = v
u8 = lambda *shape: rng.integers(0, 255, shape, dtype=np.uint8)
save('contig.h5', u8(12, 3000))
save('contig_big.h5', u8(4, 100000))
save('chunked.h5', u8(6, 200000), chunks=(1, 200000))
save('big_chunks.h5', u8(4, 1500000), chunks=(1, 1500000))
save('gzip.h5', rng.integers(0, 4, (6, 100000), dtype=np.uint8), chunks=(2, 100000),
     compression='gzip')
# A chunked volume of crops (one chunk each) and a small coordinates table.
save('volume.h5', u8(8, 16, 16, 16), chunks=(1, 16, 16, 16),
     extra={'coords': rng.integers(0, 64, (50, 3), dtype=np.int64)})
# fastMRI's attributes, set after the datasets: strings (in the global heap) and floats.
save('attrs.h5', u8(10, 8192), attrs={'acquisition': 'CORPD_FBK', 'max': 0.5, 'norm': 0.25,
                                      'patient_id': 'p11'})
)";

// Reads samples as h5py does: python3 read.py DIR FILE REOPEN INDICES LOOKUP META ATTRS ORDER
//   REOPEN file: h5py.File per sample (DLIO's on_demand reader); dataset: f['records'] per
//   sample; none: the file and its datasets opened once. LOOKUP: a dataset whose row
//   (i mod its length) is read before sample i ('-' = none), or after it with ORDER 'after'
//   (opened at first use under 'none'). META 1: FILE.meta.h5's offsets and sizes are read next
//   (their datasets opened at first use under 'none'), then the sample. ATTRS 1: dict(f.attrs)
//   after each sample.
constexpr const char* kReadScript = R"(import sys
import h5py
d, name, reopen, lookup, meta = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[5], sys.argv[6]
attrs, after = sys.argv[7] == '1', sys.argv[8] == 'after'

idx = [int(x) for x in sys.argv[4].split(',')]
path = d + '/' + name
kept = {}
def kept_dataset(m, key):  # looked up per sample, or at first use and kept ('none')
    if reopen != 'none':
        return m[key]
    if key not in kept:
        kept[key] = m[key]
    return kept[key]
def row(f, i):  # f[lookup][i mod its rows]
    c = kept_dataset(f, lookup)
    return c[i % c.shape[0]]
def sample(f, m, r, i):
    if lookup != '-' and not after:
        row(f, i)
    if m is not None:
        off, size = kept_dataset(m, 'offsets')[i], kept_dataset(m, 'sizes')[i]
    x = r[i]
    if lookup != '-' and after:
        row(f, i)
    if attrs:
        dict(f.attrs)
    return x
def files():
    return h5py.File(path, 'r'), (h5py.File(path + '.meta.h5', 'r') if meta == '1' else None)
if reopen == 'file':
    for i in idx:
        f, m = files()
        r = f['records']
        sample(f, m, r, i)
        del r
        if m is not None: m.close()
        f.close()
elif reopen == 'dataset':
    f, m = files()
    for i in idx:
        r = f['records']
        sample(f, m, r, i)
        del r
    if m is not None: m.close()
    f.close()
else:
    f, m = files()
    r = f['records']
    for i in idx:
        sample(f, m, r, i)
    del r
    kept.clear()
    if m is not None: m.close()
    f.close()
)";

const KindFilter kOpensAndReads{{OpKind::kOpen, OpKind::kRead}};

std::string Join(const std::vector<uint64_t>& v) {
  std::string s;
  for (uint64_t x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}

struct Case {
  std::string file;
  H5pyReopen reopen = H5pyReopen::kFile;
  std::vector<uint64_t> samples;
  std::string lookup;  // "" = none
  bool meta = false;
  bool attrs = false;  // dict(f.attrs) after each sample
  bool after = false;  // the lookup row after the sample (reader.hdf5_lookup_order: after)
};

Case Make(std::string file, H5pyReopen reopen, std::vector<uint64_t> samples,
          std::string lookup = "", bool meta = false, bool attrs = false) {
  return Case{std::move(file), reopen, std::move(samples), std::move(lookup), meta, attrs};
}

// The requests grouped by file, each file's in their order (the fidelity bar: the order of the
// requests on each file; across a data file and its metadata file h5py opens lazily).
std::vector<Request> PerFile(std::vector<Request> rs) {
  std::stable_sort(rs.begin(), rs.end(),
                   [](const Request& a, const Request& b) { return a.file < b.file; });
  return rs;
}

const char* ReopenName(H5pyReopen r) {
  return r == H5pyReopen::kFile ? "file" : r == H5pyReopen::kDataset ? "dataset" : "none";
}

std::vector<Request> PythonRequests(const TempDir& tmp, const std::string& data, const Case& c) {
  static int run = 0;
  const ProfileTrace trace = TracePythonProgram(
      "'" + std::string(tmp / "read.py") + "' '" + data + "' '" + c.file + "' " +
          ReopenName(c.reopen) + " " + Join(c.samples) + " '" +
          (c.lookup.empty() ? std::string("-") : c.lookup) + "' " + (c.meta ? "1" : "0") +
          (c.attrs ? " 1" : " 0") + (c.after ? " after" : " before"),
      data, tmp / ("prof" + std::to_string(run++)));
  return PerFile(RequestsOf(trace, data, kOpensAndReads));
}

std::vector<Request> DlioRequests(const std::string& data, const Case& c, IoModel model) {
  MemoryTracer tracer;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), &tracer);
  FormatOptions o;
  o.io_model = model;
  o.formats.Get<Hdf5Options>().h5py_reopen = c.reopen;
  o.formats.Get<Hdf5Options>().lookup_dataset = c.lookup;
  o.formats.Get<Hdf5Options>().metadata_file = c.meta;
  o.formats.Get<Hdf5Options>().h5py_read_attributes = c.attrs;
  if (c.after) o.formats.Get<Hdf5Options>().lookup_order = LookupOrder::kAfter;
  {
    auto reader = testing::Hdf5()->Open(storage.get(), data + "/" + c.file, o);
    INFO(reader.status().ToString());
    REQUIRE(reader.ok());
    SampleBuffer buf;
    for (uint64_t i : c.samples) {
      const Status st = (*reader)->ReadSample(i, &buf);
      INFO(st.ToString());
      REQUIRE(st.ok());
    }
  }
  return PerFile(RequestsOf(tracer, data, kOpensAndReads));
}

void Compare(const TempDir& tmp, const std::string& data, const Case& c) {
  const std::vector<Request> python = PythonRequests(tmp, data, c);
  const std::vector<Request> dlio = DlioRequests(data, c, IoModel::kAuto);
  INFO(c.file << " reopen " << ReopenName(c.reopen) << " lookup '" << c.lookup << "'"
              << (c.after ? " after" : "") << "\nh5py:\n"
              << ToString(python) << "dlio:\n"
              << ToString(dlio));
  CHECK(python.size() > c.samples.size());
  CHECK(dlio == python);
}

struct Fixture : io_model_test::MadeData {
  Fixture() : MadeData(kMakeScript, kReadScript) {}
};

TEST_CASE("h5py model: files written by h5py, every shape, request for request") {
  if (!PythonHas("h5py")) return;
  Fixture fx;
  const std::vector<uint64_t> shuffled{0, 5, 2, 3, 2};
  for (H5pyReopen reopen : {H5pyReopen::kFile, H5pyReopen::kDataset, H5pyReopen::kNone}) {
    // Rows under the 64 KiB sieve buffer, and above it.
    Compare(fx.tmp, fx.data, Make("contig.h5", reopen, {0, 5, 2, 11, 2, 6}));
    Compare(fx.tmp, fx.data, Make("contig_big.h5", reopen, {3, 0, 1, 3}));
    // Chunks under the 1 MiB chunk cache, above it, and gzip chunks of two samples.
    Compare(fx.tmp, fx.data, Make("chunked.h5", reopen, shuffled));
    Compare(fx.tmp, fx.data, Make("big_chunks.h5", reopen, {3, 1, 3}));
    Compare(fx.tmp, fx.data, Make("gzip.h5", reopen, {0, 1, 4, 5, 0}));
  }
}

TEST_CASE("h5py model: crops of a chunked volume with a coordinates lookup") {
  if (!PythonHas("h5py")) return;
  Fixture fx;
  for (H5pyReopen reopen : {H5pyReopen::kFile, H5pyReopen::kDataset, H5pyReopen::kNone}) {
    Compare(fx.tmp, fx.data, Make("volume.h5", reopen, {7, 2, 2, 5, 0, 3}, "/coords"));
  }
  // Kept open, the 1.2 KB table is read once (the sieve buffer holds it): one read per crop
  // and one for the table, after the open's metadata.
  const auto dlio = DlioRequests(
      fx.data, Make("volume.h5", H5pyReopen::kNone, {7, 2, 2, 5, 0, 3}, "/coords"), IoModel::kH5py);
  int crops = 0, tables = 0;
  for (const Request& r : dlio) {
    crops += r.size == 4096;
    tables += r.size == 50 * 3 * 8;
  }
  CHECK(crops == 5);  // crop 2 is read once: the chunk cache holds it
  CHECK(tables == 1);
}

TEST_CASE("h5py model: files written by dlio's writer, with labels and a metadata file") {
  if (!PythonHas("h5py")) return;
  Fixture fx;
  auto storage = NewPosixStorage({});
  FormatOptions w;
  w.formats.Get<Hdf5Options>().metadata_file = true;
  REQUIRE(testing::Hdf5()
              ->Write(storage.get(), fx.data + "/dlio.h5", testing::Fixed(10, 5000), w)
              .ok());
  FormatOptions chunked;
  chunked.formats.Get<Hdf5Options>().enable_chunking = true;
  chunked.formats.Get<Hdf5Options>().chunk_samples = 2;
  chunked.compression = "gzip";
  REQUIRE(testing::Hdf5()
              ->Write(storage.get(), fx.data + "/dlio_gz.h5", testing::Fixed(8, 70000), chunked)
              .ok());
  // A 40 x 12-byte /lookup table (dataset.hdf5_lookup_rows, _row_bytes) over 32 KiB chunks.
  FormatOptions crops;
  crops.formats.Get<Hdf5Options>().enable_chunking = true;
  crops.formats.Get<Hdf5Options>().chunk_samples = 1;
  crops.formats.Get<Hdf5Options>().lookup_rows = 40;
  crops.formats.Get<Hdf5Options>().lookup_row_bytes = 12;
  REQUIRE(testing::Hdf5()
              ->Write(storage.get(), fx.data + "/dlio_lookup.h5", testing::Fixed(16, 32768), crops)
              .ok());
  for (H5pyReopen reopen : {H5pyReopen::kFile, H5pyReopen::kDataset, H5pyReopen::kNone}) {
    Compare(fx.tmp, fx.data, Make("dlio_lookup.h5", reopen, {9, 0, 4, 4, 1, 15}, "/lookup"));
    Compare(fx.tmp, fx.data, Make("dlio.h5", reopen, {9, 0, 4, 4, 1}));
    Compare(fx.tmp, fx.data, Make("dlio.h5", reopen, {9, 0, 4, 4, 1}, "/labels"));
    Compare(fx.tmp, fx.data, Make("dlio.h5", reopen, {3, 0, 2}, "", true));
    Compare(fx.tmp, fx.data, Make("dlio_gz.h5", reopen, {7, 6, 0, 3}, "/labels"));
  }
}

TEST_CASE("h5py model: a table's row read after each sample (reader.hdf5_lookup_order: after)") {
  if (!PythonHas("h5py")) return;
  Fixture fx;
  auto storage = NewPosixStorage({});
  FormatOptions w;
  w.formats.Get<Hdf5Options>().lookup_rows = 10;
  w.formats.Get<Hdf5Options>().root_attributes = "@max:scalar:fp64";
  REQUIRE(testing::Hdf5()
              ->Write(storage.get(), fx.data + "/dlio_after.h5", testing::Fixed(10, 40000), w)
              .ok());
  for (H5pyReopen reopen : {H5pyReopen::kFile, H5pyReopen::kDataset, H5pyReopen::kNone}) {
    // x = f['records'][i], then y = f['labels'][i] (and f['lookup'][i], then dict(f.attrs)).
    Case labels = Make("dlio_after.h5", reopen, {9, 0, 4, 4, 1}, "/labels");
    labels.after = true;
    Compare(fx.tmp, fx.data, labels);
    Case table = Make("dlio_after.h5", reopen, {3, 7, 7, 0}, "/lookup", false, true);
    table.after = true;
    Compare(fx.tmp, fx.data, table);
    Case gz = Make("gzip.h5", reopen, {0, 1, 4, 5, 0}, "/labels");
    gz.after = true;
    Compare(fx.tmp, fx.data, gz);
  }
  // The order is the only difference: the same requests, the row's moved past the sample's.
  Case read = Make("dlio_after.h5", H5pyReopen::kFile, {2}, "/lookup");
  const auto before = DlioRequests(fx.data, read, IoModel::kH5py);
  read.after = true;
  const auto after = DlioRequests(fx.data, read, IoModel::kH5py);
  INFO("before:\n" << ToString(before) << "after:\n" << ToString(after));
  REQUIRE(before.size() == after.size());
  CHECK(std::is_permutation(before.begin(), before.end(), after.begin()));
  CHECK(before != after);
  // A table read after the sample is checked at its first read: a missing one opens, and the
  // read names the file and the key.
  auto storage2 = NewPosixStorage({});
  FormatOptions o;
  o.io_model = IoModel::kH5py;
  o.formats.Get<Hdf5Options>().lookup_dataset = "/coords";
  o.formats.Get<Hdf5Options>().lookup_order = LookupOrder::kAfter;
  auto reader = testing::Hdf5()->Open(storage2.get(), fx.data + "/dlio_after.h5", o);
  REQUIRE(reader.ok());
  SampleBuffer buf;
  const Status missing = (*reader)->ReadSample(1, &buf);
  CHECK(missing.code() == StatusCode::kNotFound);
  CHECK_THAT(missing.message(),
             Catch::Contains("dlio_after.h5") && Catch::Contains("reader.hdf5_lookup_dataset"));
}

// fastMRI's four root attributes (two strings, two floats) as dataset.hdf5_root_attributes gives
// them.
constexpr const char* kFastmriAttributes =
    "@acquisition:scalar:str9, @max:scalar:fp64, @norm:scalar:fp64, @patient_id:scalar:str3";

// DATA/dlio_attrs.h5: 10 samples of 8 KiB by dlio's writer, with /lookup and those attributes.
void WriteDlioAttributesFile(const std::string& data) {
  auto storage = NewPosixStorage({});
  FormatOptions w;
  w.formats.Get<Hdf5Options>().root_attributes = kFastmriAttributes;
  w.formats.Get<Hdf5Options>().lookup_rows = 10;
  REQUIRE(testing::Hdf5()
              ->Write(storage.get(), data + "/dlio_attrs.h5", testing::Fixed(10, 8192), w)
              .ok());
}

TEST_CASE("h5py model: dict(f.attrs) after each sample, in h5py's files and in dlio's") {
  if (!PythonHas("h5py")) return;
  Fixture fx;
  WriteDlioAttributesFile(fx.data);
  const std::vector<uint64_t> samples{4, 0, 9, 4};
  for (H5pyReopen reopen : {H5pyReopen::kFile, H5pyReopen::kDataset, H5pyReopen::kNone}) {
    Compare(fx.tmp, fx.data, Make("attrs.h5", reopen, samples, "", false, true));
    Compare(fx.tmp, fx.data, Make("dlio_attrs.h5", reopen, samples, "/lookup", false, true));
  }
  // The strings' global heap: one more read per h5py.File, none while the file stays open.
  for (const char* file : {"attrs.h5", "dlio_attrs.h5"}) {
    Case read = Make(file, H5pyReopen::kFile, samples);
    const auto without = DlioRequests(fx.data, read, IoModel::kH5py);
    read.attrs = true;
    const auto with = DlioRequests(fx.data, read, IoModel::kH5py);
    INFO(file << "\nwithout:\n" << ToString(without) << "with:\n" << ToString(with));
    CHECK(with.size() == without.size() + samples.size());
    read.reopen = H5pyReopen::kNone;
    const auto kept = DlioRequests(fx.data, read, IoModel::kH5py);
    read.attrs = false;
    CHECK(kept.size() == DlioRequests(fx.data, read, IoModel::kH5py).size() + 1);
  }
}

// A Dataset's __init__ learning about each file: python3 scan.py DIR ATTRS FILE... opens each
// with h5py.File, reads f['records'].shape and, with ATTRS 1, dict(f.attrs), and closes it.
constexpr const char* kScanScript = R"(import sys
import h5py
d, attrs = sys.argv[1], sys.argv[2] == '1'
for name in sys.argv[3:]:
    with h5py.File(d + '/' + name, 'r') as f:
        n = f['records'].shape[0]
        if attrs:
            dict(f.attrs)
)";

TEST_CASE("h5py model: every file opened to learn about it first (reader.open_files_at_start)") {
  if (!PythonHas("h5py")) return;
  Fixture fx;
  WriteDlioAttributesFile(fx.data);
  testing::WriteTextFile(fx.tmp / "scan.py", kScanScript);
  const std::vector<std::string> files{"contig.h5", "chunked.h5", "gzip.h5", "attrs.h5",
                                       "dlio_attrs.h5"};
  for (bool attrs : {false, true}) {
    std::string names;
    std::vector<std::string> paths;
    for (const std::string& f : files) {
      names += " '" + f + "'";
      paths.push_back(fx.data + "/" + f);
    }
    const ProfileTrace trace =
        TracePythonProgram("'" + std::string(fx.tmp / "scan.py") + "' '" + fx.data + "' " +
                               (attrs ? "1" : "0") + names,
                           fx.data, fx.tmp / (attrs ? "scan_attrs" : "scan"));
    const std::vector<Request> python = RequestsOf(trace, fx.data, kOpensAndReads);

    MemoryTracer tracer;
    auto traced = NewPosixStorage({});
    traced->Bind(SystemClock(), &tracer);
    FormatDataSourceOptions o;
    o.format.io_model = IoModel::kH5py;
    o.format.formats.Get<Hdf5Options>().h5py_read_attributes = attrs;
    o.open_files_at_start = true;
    const auto format = testing::Hdf5();
    auto source = MakeFormatDataSource(traced.get(), format.get(), paths, o);
    INFO(source.status().ToString());
    REQUIRE(source.ok());
    CHECK((*source)->samples_per_file() == std::vector<uint64_t>{12, 6, 6, 10, 10});
    const std::vector<Request> dlio = RequestsOf(tracer, fx.data, kOpensAndReads);
    INFO((attrs ? "with" : "without") << " dict(f.attrs)\nh5py:\n"
                                      << ToString(python) << "dlio:\n"
                                      << ToString(dlio));
    CHECK(python.size() >= 3 * files.size());
    CHECK(dlio == python);  // the files in turn, each's requests in h5py's order
  }
}

TEST_CASE("h5py model: native keeps its own requests (the dataset stays open)") {
  if (!PythonHas("h5py")) return;
  Fixture fx;
  const Case c = Make("contig.h5", H5pyReopen::kFile, {0, 5, 2, 11});
  const auto native = DlioRequests(fx.data, c, IoModel::kNative);
  const auto h5py = DlioRequests(fx.data, c, IoModel::kH5py);
  auto opens = [](const std::vector<Request>& rs) {
    int n = 0;
    for (const Request& r : rs) n += r.kind == OpKind::kOpen;
    return n;
  };
  CHECK(opens(native) == 1);
  CHECK(opens(h5py) == 4);
  // Native: the first read's 36000-byte sieve holds every row.
  int data_reads = 0;
  for (const Request& r : native) data_reads += r.size >= 3000;
  CHECK(data_reads == 1);
}

}  // namespace
}  // namespace dlio
