// What the pil model's tests (pil_test: jpeg, pil_png_test: png) share: images written by dlio's
// writers, Pillow's requests under the preload tracer, and the check that a damaged file is
// refused naming it.
#pragma once

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "dlio_reads.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio::io_model_test {

// Exits with ctest's skip code 77 (the SKIP_RETURN_CODE of these executables) when the system
// python cannot import PIL and numpy.
inline void SkipWithoutPillow() {
  if (PythonHas("PIL") && PythonHas("numpy")) return;
  std::fprintf(stderr, "SKIPPED: %s cannot import PIL and numpy (python3-pil, python3-numpy)\n",
               testing::SystemPython().c_str());
  std::exit(77);
}

// An image of `side` x `side` random gray pixels written by the built-in `format`'s writer
// (record = side^2, seed = side).
inline void WriteDlioImage(const std::string& format, const std::string& path, uint64_t side) {
  auto f = BuiltinFormat(format);
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  FileSpec spec;
  spec.sample_sizes = {side * side};
  spec.seed = side;
  REQUIRE(f->Write(storage.get(), path, spec, FormatOptions{}).ok());
}

// Runs `python_code` (which gets the data folder as sys.argv[1]) with the system python.
inline void RunPython(const testing::TempDir& tmp, const std::string& data,
                      const std::string& python_code) {
  const std::string script = tmp / "make.py";
  testing::WriteTextFile(script, python_code);
  REQUIRE(testing::RunCommand("'" + testing::SystemPython() + "' '" + script + "' '" + data + "'")
              .exit_code == 0);
}

// Pillow's open / stat / read / close requests for `files` (in `data`) under the preload
// tracer, each opened with `Image.open` and loaded with `np.asarray(<load>)`, where `load` is an
// expression of the image `im`; `tag` names the script and its trace folder.
inline std::vector<Request> PillowRequests(const testing::TempDir& tmp, const std::string& data,
                                           const std::vector<std::string>& files,
                                           const std::string& load, const std::string& tag) {
  const std::string script = tmp / (tag + ".py");
  testing::WriteTextFile(script,
                         "import sys, numpy as np\n"
                         "from PIL import Image\n"
                         "for p in sys.argv[2:]:\n"
                         "    im = Image.open(sys.argv[1] + '/' + p)\n"
                         "    np.asarray(" +
                             load + ")\n");
  std::string args = "'" + script + "' '" + data + "'";
  for (const std::string& f : files) args += " '" + f + "'";
  return RequestsOf(TracePythonProgram(args, data, tmp / ("prof_" + tag)), data,
                    kOpenStatReadSeekClose);
}

// Each (file name in `data`, text) of `cases` opens under io_model pil, and its ReadSample(0)
// fails with Corruption naming the file and holding the text; ReadSample(1) is out of range.
inline void CheckPilRefuses(const std::string& format, const std::string& data,
                            const std::vector<std::pair<std::string, std::string>>& cases) {
  auto f = BuiltinFormat(format);
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  FormatOptions options;
  options.io_model = IoModel::kPil;
  for (const auto& [name, what] : cases) {
    auto reader = f->Open(storage.get(), data + "/" + name, options);
    REQUIRE(reader.ok());
    SampleBuffer buf;
    const Status st = (*reader)->ReadSample(0, &buf);
    INFO(st.ToString());
    CHECK(st.code() == StatusCode::kCorruption);
    CHECK(st.ToString().find(data + "/" + name) != std::string::npos);
    CHECK(st.ToString().find(what) != std::string::npos);
    CHECK((*reader)->ReadSample(1, &buf).code() == StatusCode::kOutOfRange);
  }
}

}  // namespace dlio::io_model_test
