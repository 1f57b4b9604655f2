// FitTrace on an archive kept open by each DataLoader worker, built by hand: zipfile's reads of
// a zip (the end record and central directory at open, then per member a fill at its local
// header and the rest), where the members are the samples and the directory is none.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Value;
using testing::AddEvent;

// A zip of `members` members of 20,000-27,000 bytes (local header 30 + 12 bytes each) read as
// zipfile does in DataLoader workers forked per epoch: each opens the archive, reads the end
// record and the central directory, then per member a 4 KiB fill at its local header, the rest
// of whole buffers straight and a fill for the tail; `batch` members, then a 5 ms pause.
ProfileTrace ZipWorkers(int members, int workers, int batch, int epochs, int64_t* archive_bytes,
                        std::vector<int64_t>* sizes) {
  std::vector<int64_t> header;
  int64_t at = 0;
  for (int m = 0; m < members; ++m) {
    sizes->push_back(20000 + (m * 7919) % 7000);
    header.push_back(at);
    at += 42 + sizes->back();
  }
  const int64_t cd = at, end = cd + 58 * members;
  *archive_bytes = end + 22;
  struct Event {
    int64_t when;
    int32_t pid;
    const char* call;
    int64_t offset, asked, got;
  };
  std::vector<Event> events;  // the workers' calls, interleaved in time below
  int64_t now = 1'000'000;
  for (int e = 0; e < epochs; ++e) {
    for (int w = 0; w < workers; ++w) {
      const int32_t pid = 100 + e * workers + w;
      int64_t when = now + w * 7;
      auto read = [&](int64_t offset, int64_t asked, int64_t got) {
        events.push_back({when, pid, "read", offset, asked, got});
        when += 10;
      };
      events.push_back({when, pid, "openat", -1, -1, -1});
      when += 5;
      read(end, 23, 22);
      read(*archive_bytes, 1, 0);
      read(cd, end - cd, end - cd);
      int done = 0;
      for (int k = 0; k < members / workers; ++k) {
        // Worker w reads members w, w + workers, ..., in a shuffled order of its own per epoch.
        const int m = w + workers * ((k * 13 + e * 5) % (members / workers));
        const int64_t member_end = header[m] + 42 + (*sizes)[m];
        read(header[m], 4096, 4096);
        const int64_t straight = (member_end - header[m] - 4096) / 4096 * 4096;
        if (straight > 0) read(header[m] + 4096, straight, straight);
        read(header[m] + 4096 + straight, 4096, 4096);
        if (++done % batch == 0) when += 5'000;
      }
    }
    now += 1'000'000;
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.when < b.when; });
  ProfileTrace t;
  for (const Event& v : events) {
    AddEvent(&t, v.pid, v.pid, v.call, v.when, 3, "/d/images.zip", v.offset, v.asked, v.got);
  }
  return t;
}

TEST_CASE("fit: a zip kept open per worker: members are the samples, its directory none") {
  int64_t archive = 0;
  std::vector<int64_t> sizes;
  const ProfileTrace t = ZipWorkers(64, 2, 4, 2, &archive, &sizes);
  FitOptions options;
  options.probe = [&](const std::string&) -> Result<DataFileInfo> {
    DataFileInfo info;
    info.format = "zip";
    info.size = archive;
    info.samples = static_cast<int64_t>(sizes.size());
    info.sample_sizes = sizes;
    return info;
  };
  options.io_model_available = [](const std::string&, const std::string&) { return true; };
  const FitResult r = Fit(t, options);
  CHECK(Value(r, "dataset.format") == "zip");
  CHECK(Value(r, "dataset.num_samples_per_file") == "64");
  CHECK(r.Find("workflow.train")->reason.rfind("128 sample reads", 0) == 0);  // 2 epochs x 64
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(Value(r, "reader.batch_size") == "4");
  CHECK(Value(r, "reader.read_threads") == "2");
  CHECK(Value(r, "reader.io_model") == "pytorch");
  CHECK(r.Find("reader.io_model")->reason.find("zipfile.ZipFile") != std::string::npos);
}

}  // namespace
}  // namespace dlio
