// pandas reads the csv files we write, and we read (and decode) what pandas writes. Uses Debian's
// /usr/bin/python3 with pandas (SystemPython()); fails loudly when pandas is missing.
#include <catch2/catch.hpp>
#include <cstring>

#include "format/csv/csv_options.h"
#include "format/format_test_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

void RequirePandas() {
  const CommandResult r = RunCommand(SystemPython() + " -c 'import pandas, numpy'");
  INFO("interop tests need pandas in " << SystemPython()
                                       << " (apt-get install python3-pandas): " << r.output);
  REQUIRE(r.exit_code == 0);
}

CommandResult RunPython(const TempDir& tmp, const std::string& script, const std::string& args) {
  const std::string path = tmp / "script.py";
  WriteTextFile(path, script);
  return RunCommand(SystemPython() + " " + path + " " + args);
}

// Decodes every row of a csv file with our reader and concatenates the float32 values.
std::string DecodeAll(Storage* storage, const std::string& path, const FormatOptions& options,
                      uint64_t* rows) {
  auto csv = MakeFormatByName("csv");
  auto reader = csv->Open(storage, path, options);
  INFO(reader.status().ToString());
  REQUIRE(reader.ok());
  *rows = (*reader)->num_samples();
  std::string all;
  SampleBuffer row, values;
  for (uint64_t i = 0; i < *rows; ++i) {
    REQUIRE((*reader)->ReadSample(i, &row).ok());
    Status st = csv->Decode(row.data(), row.size(), &values);
    INFO(st.ToString());
    REQUIRE(st.ok());
    all += BufferString(values);
  }
  return all;
}

TEST_CASE("pandas read_csv loads the csv files we write, values equal as float32",
          "[interop][pandas]") {
  RequirePandas();
  TempDir tmp;
  auto storage = BoundPosixStorage();
  auto csv = MakeFormatByName("csv");
  FileSpec spec;
  spec.seed = 21;
  spec.sample_sizes.assign(6, 4 * 300);
  for (bool header : {false, true}) {
    FormatOptions options;
    options.formats.Get<CsvOptions>().header = header;
    const std::string name = header ? "header" : "plain";
    REQUIRE(csv->Write(storage.get(), tmp / (name + ".csv"), spec, options).ok());
    uint64_t rows = 0;
    WriteTextFile(tmp / (name + ".f32"),
                  DecodeAll(storage.get(), tmp / (name + ".csv"), {}, &rows));
    REQUIRE(rows == 6);
  }
  // Default read_csv (its fast float parser) and the round-trip one must both match.
  const std::string script = R"(
import sys
import numpy as np
import pandas as pd
d = sys.argv[1]
for name, header in (('plain', None), ('header', 0)):
    ours = np.fromfile(f'{d}/{name}.f32', dtype='<f4')
    for precision in (None, 'round_trip'):
        df = pd.read_csv(f'{d}/{name}.csv', header=header, float_precision=precision)
        a = df.to_numpy(dtype=np.float32)
        same = a.shape[0] * a.shape[1] == ours.size and np.array_equal(a.ravel(), ours)
        print(name, precision, a.shape, all(t == np.float64 for t in df.dtypes), same,
              df.columns[0], df.columns[-1])
)";
  const CommandResult r = RunPython(tmp, script, tmp.path());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.output.find("plain None (6, 300) True True 0 299") != std::string::npos);
  REQUIRE(r.output.find("plain round_trip (6, 300) True True 0 299") != std::string::npos);
  REQUIRE(r.output.find("header None (6, 300) True True c0 c299") != std::string::npos);
  REQUIRE(r.output.find("header round_trip (6, 300) True True c0 c299") != std::string::npos);
}

TEST_CASE("we read and decode the numeric csv files pandas writes", "[interop][pandas]") {
  RequirePandas();
  TempDir tmp;
  // Each frame goes to <name>.csv plus <name>.f32: its values as little-endian float32.
  const std::string script = R"(
import sys
import numpy as np
import pandas as pd
d = sys.argv[1]
rng = np.random.default_rng(8)
wide = rng.standard_normal((9, 40)) * 10.0 ** rng.integers(-30, 30, size=(9, 40))
frames = {
  'f64_header': (pd.DataFrame(wide, columns=[f'feature_{i}' for i in range(40)]), True),
  'f64_plain': (pd.DataFrame(wide), False),
  'f32_header': (pd.DataFrame(rng.random((5, 12), dtype=np.float32),
                              columns=[f'c{i}' for i in range(12)]), True),
  'int_numbered_header': (pd.DataFrame(rng.integers(-1000, 1000, size=(4, 6))), True),
}
for name, (df, header) in frames.items():
    df.to_csv(f'{d}/{name}.csv', index=False, header=header)
    df.to_numpy().astype('<f4').tofile(f'{d}/{name}.f32')
)";
  const CommandResult r = RunPython(tmp, script, tmp.path());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);

  struct Case {
    std::string name;
    uint64_t rows;
    bool header_option;
  };
  auto storage = BoundPosixStorage();
  // pandas' default names (0, 1, ...) are a header without csv_header (they read as a data row).
  for (const Case& c :
       {Case{"f64_header", 9, false}, Case{"f64_plain", 9, false}, Case{"f32_header", 5, false},
        Case{"int_numbered_header", 4, false}, Case{"int_numbered_header", 4, true}}) {
    INFO(c.name);
    const std::string path = tmp / (c.name + ".csv");
    REQUIRE(DetectBuiltinFormat(storage.get(), path).value() == "csv");
    for (uint64_t transfer : {uint64_t{0}, uint64_t{17}}) {
      FormatOptions options;
      options.transfer_size = transfer;
      options.formats.Get<CsvOptions>().header = c.header_option;
      uint64_t rows = 0;
      const std::string ours = DecodeAll(storage.get(), path, options, &rows);
      REQUIRE(rows == c.rows);
      const std::string theirs = ReadTextFile(tmp / (c.name + ".f32"));
      REQUIRE(ours.size() == theirs.size());
      REQUIRE(ours == theirs);
    }
  }
}

// DLIO's csv generator writes df.to_csv(path): pandas' defaults, the header "," + "0,1,...,k-1"
// and the index as the first column; its reader takes pd.read_csv(path).to_numpy(), whose first
// column is that index ("Unnamed: 0"). Without the index, the header is "0,1,...,k-1".
TEST_CASE("pandas' default headers are headers, and rows hold what DLIO's read_csv gives",
          "[interop][pandas]") {
  RequirePandas();
  TempDir tmp;
  const std::string script = R"(
import sys
import numpy as np
import pandas as pd
d = sys.argv[1]
np.random.seed(10)
record = np.random.randint(255, size=40, dtype=np.uint8)
dlio = pd.DataFrame(data=[record] * 3)
dlio.to_csv(f'{d}/dlio.csv')
floats = pd.DataFrame(np.random.default_rng(2).random((4, 7), dtype=np.float32))
floats.to_csv(f'{d}/no_index.csv', index=False)
for name in ('dlio', 'no_index'):
    a = pd.read_csv(f'{d}/{name}.csv').to_numpy()
    a.astype('<f4').tofile(f'{d}/{name}.f32')
    print(name, a.shape)
print(open(f'{d}/dlio.csv').readline().strip()[:8], open(f'{d}/no_index.csv').readline().strip())
)";
  const CommandResult r = RunPython(tmp, script, tmp.path());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.output.find("dlio (3, 41)") != std::string::npos);
  REQUIRE(r.output.find("no_index (4, 7)") != std::string::npos);
  REQUIRE(r.output.find(",0,1,2,3 0,1,2,3,4,5,6") != std::string::npos);  // what pandas wrote
  auto storage = BoundPosixStorage();
  for (const std::string name : {"dlio", "no_index"}) {
    INFO(name);
    uint64_t rows = 0;
    const std::string ours = DecodeAll(storage.get(), tmp / (name + ".csv"), {}, &rows);
    CHECK(rows == (name == "dlio" ? 3 : 4));
    CHECK(ours == ReadTextFile(tmp / (name + ".f32")));
    auto reader = MakeFormatByName("csv")->Open(storage.get(), tmp / (name + ".csv"), {});
    REQUIRE(reader.ok());
    CHECK((*reader)->DescribeJson().find(std::string("\"index_column\":") +
                                         (name == "dlio" ? "true" : "false")) != std::string::npos);
  }
}

}  // namespace
}  // namespace dlio::testing
