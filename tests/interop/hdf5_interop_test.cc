// h5py reads the hdf5 files we write, we read what h5py writes, and h5dump accepts ours. Uses
// Debian's /usr/bin/python3 with h5py (SystemPython()) and h5dump (hdf5-tools); fails loudly
// when they are missing rather than skipping. Built only with DLIO_WITH_HDF5=ON.
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "format/format_test_util.h"
#include "format/formats.h"
#include "format/hdf5/hdf5_options.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

void RequireH5py() {
  const CommandResult r = RunCommand(SystemPython() + " -c 'import h5py, numpy'");
  INFO("interop tests need h5py in " << SystemPython()
                                     << " (apt-get install python3-h5py): " << r.output);
  REQUIRE(r.exit_code == 0);
}

CommandResult RunPython(const TempDir& tmp, const std::string& script, const std::string& args) {
  const std::string path = tmp / "script.py";
  WriteTextFile(path, script);
  return RunCommand(SystemPython() + " " + path + " " + args);
}

std::unique_ptr<Format> Hdf5() {
  auto f = MakeFormatByName("hdf5");
  REQUIRE(f != nullptr);
  return f;
}

bool Has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

unsigned long Crc(const std::string& s) {
  return crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size()));
}

TEST_CASE("h5py reads the hdf5 files we write", "[interop][hdf5]") {
  RequireH5py();
  TempDir tmp;
  auto storage = BoundPosixStorage();
  FileSpec fixed;
  fixed.seed = 5;
  fixed.sample_sizes.assign(6, 1234);
  FileSpec variable;
  variable.seed = 6;
  variable.sample_sizes = {100, 3000, 17, 70001, 8, 0, 999};

  FormatOptions contiguous, gzip, meta;
  gzip.compression = "gzip";
  gzip.compression_level = 6;
  gzip.formats.Get<Hdf5Options>().shuffle_filter = true;
  gzip.formats.Get<Hdf5Options>().enable_chunking = true;
  gzip.formats.Get<Hdf5Options>().chunk_size = 2048;
  meta.formats.Get<Hdf5Options>().metadata_file = true;
  struct Case {
    std::string name;
    const FileSpec* spec;
    const FormatOptions* options;
  };
  const std::vector<Case> cases = {{"fixed.h5", &fixed, &contiguous},
                                   {"fixed_gzip.h5", &fixed, &gzip},
                                   {"var.h5", &variable, &contiguous},
                                   {"var_gzip.h5", &variable, &gzip},
                                   {"meta.h5", &variable, &meta}};
  std::string args;
  for (const Case& c : cases) {
    REQUIRE(Hdf5()->Write(storage.get(), tmp / c.name, *c.spec, *c.options).ok());
    args += ' ';  // not " " + ...: GCC 12 -Wrestrict false positive
    args += tmp / c.name;
  }

  // Per file: layout, compression, and the CRC-32 of all samples in order plus the labels.
  const std::string script = R"(
import sys, zlib, os
import h5py
for path in sys.argv[1:]:
    f = h5py.File(path, 'r')
    name = os.path.basename(path)
    if 'records' in f:
        d = f['records']
        blob = b''.join(d[i].tobytes() for i in range(d.shape[0]))
    else:
        d = f['data']
        offs, sizes = f['offsets'][:], f['sizes'][:]
        blob = b''.join(d[o:o + s].tobytes() for o, s in zip(offs, sizes))
    labels = ','.join(str(v) for v in f['labels'][:].tolist())
    print(name, d.shape, d.dtype, d.chunks, d.compression, d.compression_opts, d.shuffle,
          zlib.crc32(blob), labels)
    if os.path.exists(path + '.meta.h5'):
        m = h5py.File(path + '.meta.h5', 'r')
        ok = (m['offsets'][:] == f['offsets'][:]).all() and (m['sizes'][:] == f['sizes'][:]).all()
        print(name, 'meta', m['offsets'].chunks, ok)
)";
  const CommandResult r = RunPython(tmp, script, args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);

  auto expect = [](const FileSpec& spec) {
    std::string all, labels;
    for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
      all += ExpectedSample(spec, i);
      if (i > 0) labels += ',';  // not (i ? "," : "") + ...: GCC 12 -Wrestrict false positive
      labels += std::to_string(format_internal::SampleLabel(spec.seed, i));
    }
    return std::to_string(Crc(all)) + " " + labels;
  };
  const std::string f = expect(fixed), v = expect(variable);
  CHECK(Has(r.output, "fixed.h5 (6, 1234) uint8 None None None False " + f));
  CHECK(Has(r.output, "fixed_gzip.h5 (6, 1234) uint8 (1, 1234) gzip 6 True " + f));
  CHECK(Has(r.output, "var.h5 (74125,) uint8 None None None False " + v));
  CHECK(Has(r.output, "var_gzip.h5 (74125,) uint8 (2048,) gzip 6 True " + v));
  CHECK(Has(r.output, "meta.h5 (74125,) uint8 None None None False " + v));
  CHECK(Has(r.output, "meta.h5 meta (7,) True"));
}

// dataset.compression_ratio: each chunk a zlib stream of the length its drawn ratio gives.
// h5py (libhdf5's deflate filter) reads every sample back, and tells each chunk's stored size.
TEST_CASE("h5py reads the chunks we store at a chosen compression ratio", "[interop][hdf5]") {
  RequireH5py();
  TempDir tmp;
  auto storage = BoundPosixStorage();
  FileSpec spec;
  spec.seed = 11;
  spec.sample_sizes.assign(300, 65536);
  FormatOptions o;
  o.compression = "gzip";
  Hdf5Options& h = o.formats.Get<Hdf5Options>();
  h.enable_chunking = true;
  h.chunk_samples = 1;
  o.compression_ratio = 4.0;
  o.compression_ratio_stdev = 0.2;
  const std::string path = tmp / "ratio.h5";
  REQUIRE(Hdf5()->Write(storage.get(), path, spec, o).ok());

  // Per chunk: its stored bytes, and where the sample's random bytes end (zeros after).
  const std::string script = R"(
import sys
import numpy as np
import h5py
with h5py.File(sys.argv[1], 'r') as f:
    d = f['records']
    print('layout', d.chunks, d.compression)
    for i in range(d.shape[0]):
        row = d[i]
        nz = np.flatnonzero(row)
        end = int(nz[-1]) + 1 if nz.size else 0
        print('chunk', d.id.get_chunk_info(i).size, end, int(row[end:].any()))
)";
  const CommandResult r = RunPython(tmp, script, path);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(Has(r.output, "layout (1, 65536) gzip"));
  std::vector<double> ratios;
  std::istringstream lines(r.output);
  for (std::string word; lines >> word;) {
    if (word != "chunk") continue;
    uint64_t stored = 0, end = 0, zeros_after = 1;
    lines >> stored >> end >> zeros_after;
    CHECK(zeros_after == 0);
    // The random bytes take the stream's length but for its headers and the zeros' matches.
    CHECK(end + 600 > stored);
    CHECK(end < stored);
    ratios.push_back(65536.0 / static_cast<double>(stored));
  }
  REQUIRE(ratios.size() == 300);
  double mean = 0, var = 0;
  for (double x : ratios) mean += x / 300;
  for (double x : ratios) var += (x - mean) * (x - mean) / 299;
  CHECK(mean == Approx(4.0).epsilon(0.02));
  CHECK(std::sqrt(var) == Approx(0.2).epsilon(0.2));

  // dlio's own reader inflates them too: the samples are the bytes h5py saw (random, then zeros).
  auto reader = Hdf5()->Open(storage.get(), path, o);
  REQUIRE(reader.ok());
  SampleBuffer buf;
  REQUIRE((*reader)->ReadSample(299, &buf).ok());
  CHECK(BufferString(buf).size() == 65536);
  CHECK(BufferString(buf).back() == '\0');
  const auto described = nlohmann::json::parse((*reader)->DescribeJson());
  CHECK(described["compression"] == "gzip");
  CHECK(described["compressed_units"]["count"] == 300);
  CHECK(described["compressed_units"]["bytes"] == 65536);
  CHECK(65536.0 / described["compressed_units"]["stored_mean"].get<double>() ==
        Approx(mean).epsilon(0.02));
}

TEST_CASE("h5dump accepts the hdf5 files we write", "[interop][hdf5]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  FileSpec spec;
  spec.sample_sizes.assign(4, 4096);
  FormatOptions o;
  o.compression = "gzip";
  o.compression_level = 3;
  o.formats.Get<Hdf5Options>().chunk_samples = 2;
  REQUIRE(Hdf5()->Write(storage.get(), tmp / "a.h5", spec, o).ok());
  const CommandResult r = RunCommand("h5dump -H -p " + tmp / "a.h5");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(Has(r.output, "DATASET \"records\""));
  CHECK(Has(r.output, "DATASPACE  SIMPLE { ( 4, 4096 ) / ( 4, 4096 ) }"));
  CHECK(Has(r.output, "CHUNKED ( 2, 4096 )"));
  CHECK(Has(r.output, "LEVEL 3"));
  CHECK(Has(r.output, "DATASET \"labels\""));
}

TEST_CASE("we read what h5py writes", "[interop][hdf5]") {
  RequireH5py();
  TempDir tmp;
  // Each file gets <name>.raw: the sample dataset's bytes in on-disk (C) order.
  const std::string script = R"(
import sys
import numpy as np
import h5py
d = sys.argv[1]
rng = np.random.default_rng(3)
def save(name, key, a, **kw):
    with h5py.File(f'{d}/{name}.h5', 'w') as f:
        f.create_dataset(key, data=a, **kw)
        f.create_dataset('meta_1d', data=np.arange(3))
    open(f'{d}/{name}.raw', 'wb').write(a.tobytes())
save('u8', 'records', rng.integers(0, 255, size=(7, 100), dtype=np.uint8))
save('f32', 'x', rng.random((6, 4, 5), dtype=np.float32), chunks=(2, 4, 5),
     compression='gzip', compression_opts=4, shuffle=True)
save('be', 'data', rng.integers(-999, 999, size=(5, 3)).astype('>i2'), chunks=(2, 3),
     fletcher32=True)
img = rng.random((5, 8, 8), dtype=np.float32)
with h5py.File(f'{d}/grp.h5', 'w') as f:
    f.create_dataset('labels', data=np.arange(5))
    g = f.create_group('g')
    g.create_dataset('images', data=img, chunks=(1, 8, 8), compression='gzip',
                     compression_opts=9, shuffle=True)
open(f'{d}/grp.raw', 'wb').write(img.tobytes())
with h5py.File(f'{d}/only1d.h5', 'w') as f:
    f.create_dataset('foo', data=np.arange(10))
with h5py.File(f'{d}/lzf.h5', 'w') as f:
    f.create_dataset('x', data=np.zeros((4, 4), dtype=np.uint8), compression='lzf')
# Compressible images, one gzip chunk each: on disk in a fraction of their bytes.
save('gz', 'images', (rng.random((16, 32, 32), dtype=np.float32) * 16).round(),
     chunks=(1, 32, 32), compression='gzip')
)";
  const CommandResult r = RunPython(tmp, script, tmp.path());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);

  struct Case {
    std::string name, dataset, dtype, filters;
    uint64_t samples, sample_size;
    int samples_per_chunk;  // described for chunks of whole samples; 0: not chunked so
  };
  auto storage = BoundPosixStorage();
  for (const Case& c :
       {Case{"u8", "/records", "|u1", "\"filters\":[]", 7, 100, 0},
        Case{"f32", "/x", "<f4", "{\"name\":\"shuffle\"", 6, 80, 2},
        Case{"be", "/data", ">i2", "{\"name\":\"fletcher32\"", 5, 6, 2},
        Case{"grp", "/g/images", "<f4", "{\"name\":\"gzip\",\"level\":9", 5, 256, 1},
        Case{"gz", "/images", "<f4", "{\"name\":\"gzip\",\"level\":4", 16, 4096, 1}}) {
    INFO(c.name);
    const std::string path = tmp / (c.name + ".h5");
    auto detected = DetectBuiltinFormat(storage.get(), path);
    REQUIRE(detected.ok());
    REQUIRE(*detected == "hdf5");
    auto reader = Hdf5()->Open(storage.get(), path, {});
    INFO(reader.status().ToString());
    REQUIRE(reader.ok());
    const std::string json = (*reader)->DescribeJson();
    INFO(json);
    CHECK(Has(json, "\"sample_dataset\":\"" + c.dataset + "\""));
    CHECK(Has(json, "\"dtype\":\"" + c.dtype + "\""));
    CHECK(Has(json, c.filters));
    // What fit sizes an emulation by: the samples' bytes on disk, and whole samples per chunk.
    const auto described = nlohmann::json::parse(json);
    REQUIRE(described.contains("stored_data_bytes"));
    const uint64_t stored = described["stored_data_bytes"].get<uint64_t>();
    if (c.name == "gz") {
      CHECK(stored < c.samples * c.sample_size / 2);  // gzip keeps the images in under half
    } else if (c.filters == "\"filters\":[]") {
      CHECK(stored == c.samples * c.sample_size);
    }
    CHECK(described.value("samples_per_chunk", 0) == c.samples_per_chunk);
    REQUIRE((*reader)->num_samples() == c.samples);
    const std::string raw = ReadTextFile(tmp / (c.name + ".raw"));
    REQUIRE(raw.size() == c.samples * c.sample_size);
    SampleBuffer buf;
    for (uint64_t i = c.samples; i-- > 0;) {
      REQUIRE((*reader)->sample_size(i) == c.sample_size);
      REQUIRE((*reader)->ReadSample(i, &buf).ok());
      REQUIRE(BufferString(buf) == raw.substr(i * c.sample_size, c.sample_size));
    }
  }

  auto none = Hdf5()->Open(storage.get(), tmp / "only1d.h5", {});
  REQUIRE(none.status().code() == StatusCode::kNotFound);
  CHECK(Has(none.status().message(), tmp / "only1d.h5"));
  CHECK(Has(none.status().message(), "/foo (rank 1)"));

  auto lzf = Hdf5()->Open(storage.get(), tmp / "lzf.h5", {});
  REQUIRE(lzf.status().code() == StatusCode::kUnimplemented);
  CHECK(Has(lzf.status().message(), "lzf"));
}

TEST_CASE("inspect tells where h5py stored the samples and a table of a row per sample",
          "[interop][hdf5]") {
  RequireH5py();
  TempDir tmp;
  // fastMRI's volume: k-space slices, a reconstruction per slice, string attributes; beside them
  // a chunked dataset and one of another length (neither a table of a row per sample; named to
  // come after kspace, which dlio takes for the samples as the first by name). Prints
  // h5py's own offsets of the two contiguous datasets.
  const std::string script = R"(
import sys
import numpy as np
import h5py
with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('kspace', data=np.ones((6, 8, 8), np.complex64))
    f.create_dataset('reconstruction_esc', data=np.ones((6, 4, 4), np.float32))
    f.create_dataset('x_chunked', data=np.ones((6, 4), np.float32), chunks=(1, 4))
    f.create_dataset('x_other', data=np.ones((5, 4), np.float32))
    f.attrs['acquisition'] = 'CORPD_FBK'
    f.attrs['max'] = 0.5
    f.attrs['patient_id'] = 'p7'
    print(f['kspace'].id.get_offset(), f['reconstruction_esc'].id.get_offset())
)";
  const std::string path = tmp / "file1000.h5";
  const CommandResult r = RunPython(tmp, script, path);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  uint64_t kspace = 0, recon = 0;
  REQUIRE(std::sscanf(r.output.c_str(), "%lu %lu", &kspace, &recon) == 2);
  auto storage = BoundPosixStorage();
  auto reader = Hdf5()->Open(storage.get(), path, {});
  REQUIRE(reader.ok());
  const auto described = nlohmann::json::parse((*reader)->DescribeJson());
  INFO(described.dump());
  CHECK(described["sample_dataset"] == "/kspace");
  // The samples' bytes: 6 slices of 8 x 8 complex64.
  REQUIRE(described.contains("sample_extent"));
  CHECK(described["sample_extent"]["offset"].get<uint64_t>() == kspace);
  CHECK(described["sample_extent"]["bytes"].get<uint64_t>() == 6 * 512);
  // The one table of a row per sample: contiguous, 6 rows of 4 x 4 float32.
  REQUIRE(described.contains("row_tables"));
  REQUIRE(described["row_tables"].size() == 1);
  const auto& table = described["row_tables"][0];
  CHECK(table["name"] == "/reconstruction_esc");
  CHECK(table["offset"].get<uint64_t>() == recon);
  CHECK(table["bytes"].get<uint64_t>() == 6 * 64);
  CHECK(table["row_bytes"].get<uint64_t>() == 64);
  // The root's attributes as dataset.hdf5_root_attributes gives them, and the read dict(f.attrs)
  // makes after an open: the strings' global heap collection (signature "GCOL").
  REQUIRE(described.contains("root_attributes"));
  const auto& attributes = described["root_attributes"];
  CHECK(attributes["items"] == "@acquisition:scalar:str9,@max:scalar:fp64,@patient_id:scalar:str2");
  REQUIRE(attributes["reads"].size() == 1);
  const uint64_t heap = attributes["reads"][0]["offset"].get<uint64_t>();
  CHECK(ReadTextFile(path).substr(heap, 4) == "GCOL");
  CHECK(attributes["reads"][0]["bytes"].get<uint64_t>() >= 4096);
}

TEST_CASE("h5py reads the root attributes we write as it wrote them", "[interop][hdf5]") {
  RequireH5py();
  TempDir tmp;
  auto storage = BoundPosixStorage();
  FormatOptions o;
  o.formats.Get<Hdf5Options>().root_attributes =
      "@acquisition:scalar:str9, @max:scalar:fp64, @ids:3:int32, @tag:scalar:S4";
  FileSpec spec;
  spec.seed = 3;
  spec.sample_sizes.assign(4, 256);
  const std::string path = tmp / "attrs.h5";
  REQUIRE(Hdf5()->Write(storage.get(), path, spec, o).ok());
  const std::string script = R"(
import sys
import h5py
with h5py.File(sys.argv[1], 'r') as f:
    print(f['records'].shape)
    for k, v in f.attrs.items():
        print(k, type(v).__name__, getattr(v, 'dtype', ''), getattr(v, 'shape', ''),
              len(v) if isinstance(v, (str, bytes)) else '')
)";
  const CommandResult r = RunPython(tmp, script, path);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(Has(r.output, "(4, 256)"));
  CHECK(Has(r.output, "acquisition str   9"));
  CHECK(Has(r.output, "max float64 float64 () "));
  CHECK(Has(r.output, "ids ndarray int32 (3,) "));
  CHECK(Has(r.output, "tag bytes_ |S4 () 4"));
  // inspect gives them back as written, in the order they are stored (h5py lists them by name).
  auto reader = Hdf5()->Open(storage.get(), path, {});
  REQUIRE(reader.ok());
  const auto described = nlohmann::json::parse((*reader)->DescribeJson());
  CHECK(described["root_attributes"]["items"] ==
        "@acquisition:scalar:str9,@max:scalar:fp64,@ids:3:int32,@tag:scalar:S4");
}

TEST_CASE("our files lay out a table and the attributes' heap as fastMRI's files do",
          "[interop][hdf5]") {
  TempDir tmp;
  auto storage = BoundPosixStorage();
  FormatOptions o;
  o.formats.Get<Hdf5Options>().lookup_rows = 6;
  o.formats.Get<Hdf5Options>().lookup_row_bytes = 64;
  o.formats.Get<Hdf5Options>().root_attributes = "@acquisition:scalar:str9, @max:scalar:fp64";
  FileSpec spec;
  spec.seed = 5;
  spec.sample_sizes.assign(6, 512);
  const std::string path = tmp / "slices.h5";
  REQUIRE(Hdf5()->Write(storage.get(), path, spec, o).ok());
  auto reader = Hdf5()->Open(storage.get(), path, {});
  REQUIRE(reader.ok());
  const auto described = nlohmann::json::parse((*reader)->DescribeJson());
  INFO(described.dump());
  uint64_t lookup_end = 0, labels_at = 0;
  for (const auto& table : described["row_tables"]) {
    const uint64_t at = table["offset"].get<uint64_t>();
    if (table["name"] == "/lookup") lookup_end = at + table["bytes"].get<uint64_t>();
    if (table["name"] == "/labels") labels_at = at;
  }
  REQUIRE(lookup_end > 0);
  // The samples, the table, then the strings' heap right after the table's data (where
  // dict(f.attrs) reads on from a row read that ended at the table's end), then dlio's /labels.
  REQUIRE(described["root_attributes"]["reads"].size() == 1);
  const uint64_t heap = described["root_attributes"]["reads"][0]["offset"].get<uint64_t>();
  CHECK(ReadTextFile(path).substr(heap, 4) == "GCOL");
  CHECK(heap == lookup_end);
  CHECK(described["sample_extent"]["offset"].get<uint64_t>() < heap);
  if (labels_at > 0) CHECK(labels_at > heap);
}

// DLIO's shaped layout (dataset.record_dims, record_element_type, hdf5.num_dset_per_record):
// /records_0..N-1, each [n, dims[0] / N, ...] of the element type, both ways with h5py.
FormatOptions Shaped(const std::string& type, uint64_t num_dsets, std::vector<uint64_t> dims) {
  FormatOptions o;
  o.record_dims = std::move(dims);
  o.record_element_type = type;
  o.formats.Get<Hdf5Options>().num_dsets = num_dsets;
  return o;
}

TEST_CASE("h5py reads DLIO's shaped hdf5 datasets we write", "[interop][hdf5]") {
  RequireH5py();
  TempDir tmp;
  auto storage = BoundPosixStorage();
  struct Case {
    std::string name;
    FormatOptions o;
    uint64_t sample_bytes;
    std::string expect;  // keys, then per dataset shape dtype
  };
  FormatOptions gz = Shaped("int8", 2, {4, 3});
  gz.compression = "gzip";
  gz.formats.Get<Hdf5Options>().enable_chunking = true;
  gz.formats.Get<Hdf5Options>().chunk_samples = 2;
  std::vector<Case> cases = {
      {"f16", Shaped("float16", 3, {6, 4, 5}), 240,
       "['labels', 'records_0', 'records_1', 'records_2'] (3, 2, 4, 5) float16"},
      {"f32", Shaped("float32", 3, {3, 4}), 48,
       "['labels', 'records_0', 'records_1', 'records_2'] (3, 4) float32"},
      {"c64", Shaped("complex64", 1, {2, 2}), 32, "['labels', 'records_0'] (3, 2, 2) complex64"},
      {"b1", Shaped("bool", 1, {1, 7}), 7, "['labels', 'records_0'] (3, 7) bool"},
      {"gz", gz, 12, "['labels', 'records_0', 'records_1'] (3, 2, 3) int8 (2, 2, 3) gzip"}};
  std::string args;
  for (const Case& c : cases) {
    FileSpec spec;
    spec.seed = 9;
    spec.sample_sizes.assign(3, c.sample_bytes);
    std::string file = c.name;
    file += ".hdf5";
    const std::string path = tmp / file;
    REQUIRE(Hdf5()->Write(storage.get(), path, spec, c.o).ok());
    args += ' ';
    args += path;
    for (IoModel model : {IoModel::kNative, IoModel::kH5py}) {  // DLIO's reader: all datasets
      FormatOptions o = c.o;
      o.io_model = model;
      auto reader = Hdf5()->Open(storage.get(), path, o);
      INFO(c.name << " " << reader.status().ToString());
      REQUIRE(reader.ok());
      REQUIRE((*reader)->num_samples() == 3);
      SampleBuffer buf;
      for (uint64_t i = 0; i < 3; ++i) {
        REQUIRE((*reader)->sample_size(i) == c.sample_bytes);
        REQUIRE((*reader)->ReadSample(i, &buf).ok());
        CHECK(BufferString(buf) == ExpectedSample(spec, i));
      }
    }
  }
  // Per file: its keys, /records_0's shape and dtype (chunks and filter when chunked), and the
  // CRC-32 of each sample's rows of every records_<k> in turn.
  const std::string script = R"(
import sys, zlib, os
import h5py
for path in sys.argv[1:]:
    f = h5py.File(path, 'r')
    keys = sorted(f.keys())
    ds = [f[k] for k in keys if k.startswith('records_')]
    same = all(d.shape == ds[0].shape and d.dtype == ds[0].dtype for d in ds)
    blob = b''.join(d[i].tobytes() for i in range(ds[0].shape[0]) for d in ds)
    d = ds[0]
    extra = f' {d.chunks} {d.compression}' if d.chunks else ''
    print(os.path.basename(path), keys, d.shape, d.dtype.name + extra, same, zlib.crc32(blob))
)";
  const CommandResult r = RunPython(tmp, script, args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (const Case& c : cases) {
    FileSpec spec;
    spec.seed = 9;
    spec.sample_sizes.assign(3, c.sample_bytes);
    std::string all;
    for (uint64_t i = 0; i < 3; ++i) all += ExpectedSample(spec, i);
    std::string line = c.name;  // not a + chain: GCC 12 -Wrestrict false positive
    line += ".hdf5 ";
    line += c.expect;
    line += " True ";
    line += std::to_string(Crc(all));
    CHECK(Has(r.output, line));
  }
}

TEST_CASE("we read DLIO's shaped hdf5 datasets h5py writes", "[interop][hdf5]") {
  RequireH5py();
  TempDir tmp;
  // As DLIO's generator: records_0..2 of (4, 2, 5) float16 and labels; dlio.raw holds sample
  // i as row i of each records_<k> in turn (DLIO's reader reads all of them per sample).
  const std::string script = R"(
import sys
import numpy as np
import h5py
d = sys.argv[1]
rng = np.random.default_rng(4)
parts = [rng.random((4, 2, 5)).astype(np.float16) for _ in range(3)]
with h5py.File(f'{d}/dlio.hdf5', 'w', libver='latest') as f:
    for k, a in enumerate(parts):
        f.create_dataset(f'records_{k}', (4, 2, 5), dtype='float16', data=a)
    f.create_dataset('labels', data=[0] * 4)
open(f'{d}/dlio.raw', 'wb').write(b''.join(a[i].tobytes() for i in range(4) for a in parts))
)";
  const CommandResult r = RunPython(tmp, script, tmp.path());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto storage = BoundPosixStorage();
  const std::string raw = ReadTextFile(tmp / "dlio.raw");
  REQUIRE(raw.size() == 4 * 3 * 20);
  for (IoModel model : {IoModel::kNative, IoModel::kH5py}) {
    FormatOptions o = Shaped("float16", 3, {6, 5});
    o.io_model = model;
    auto reader = Hdf5()->Open(storage.get(), tmp / "dlio.hdf5", o);
    INFO(reader.status().ToString());
    REQUIRE(reader.ok());
    REQUIRE((*reader)->num_samples() == 4);
    SampleBuffer buf;
    for (uint64_t i = 4; i-- > 0;) {
      REQUIRE((*reader)->sample_size(i) == 60);
      REQUIRE((*reader)->ReadSample(i, &buf).ok());
      CHECK(BufferString(buf) == raw.substr(i * 60, 60));
    }
  }
  // One dataset short: NotFound naming the missing dataset and the key.
  auto missing = Hdf5()->Open(storage.get(), tmp / "dlio.hdf5", Shaped("float16", 4, {8, 5}));
  REQUIRE(missing.status().code() == StatusCode::kNotFound);
  CHECK(Has(missing.status().message(), "/records_3"));
  CHECK(Has(missing.status().message(), "dataset.hdf5.num_dset_per_record"));
  // One dataset (DLIO's default): /records_0 is the sample dataset.
  auto one = Hdf5()->Open(storage.get(), tmp / "dlio.hdf5", {});
  REQUIRE(one.ok());
  CHECK(Has((*one)->DescribeJson(), "\"sample_dataset\":\"/records_0\""));
}

}  // namespace
}  // namespace dlio::testing
