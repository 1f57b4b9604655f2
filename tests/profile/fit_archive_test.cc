// FitTrace on archives, built by hand: a zip kept open by each DataLoader worker (zipfile's reads:
// the end record and central directory at open, then per member a fill at its local header and
// the rest), where the members are the samples and the directory is none; and a torch.save file
// per sample loaded with torch.load (its directory, data.pkl and storage reads per open).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <utility>
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

// `files` torch.save files of a 48 KiB tensor, sample_00000.pt on, each loaded with torch.load
// (open, fstat, torch.load's ten reads, close) by 2 DataLoader workers in turns, a pause after
// every 4 loads of a worker; 2 epochs.
ProfileTrace TorchLoadWorkers(int files) {
  ProfileTrace t;
  int64_t now = 1'000'000;
  const std::vector<std::pair<int64_t, int64_t>> reads = {
      {0, 4096},   {0, 4096},    {45882, 4096}, {49956, 22}, {49936, 42},
      {49880, 98}, {49682, 296}, {49552, 426},  {0, 4096},   {4096, 45440}};
  for (int e = 0; e < 2; ++e) {
    for (int k = 0; k < files; ++k) {
      const int32_t pid = 100 + e * 2 + k % 2;
      const int f = (k * 7 + e * 3) % files;
      char name[64];
      std::snprintf(name, sizeof name, "/d/pt/sample_%05d.pt", f);
      AddEvent(&t, pid, pid, "openat", now, 3, name, -1, -1, -1);
      now += 10;
      for (const auto& [offset, got] : reads) {
        AddEvent(&t, pid, pid, "read", now, 3, name, offset, 4096 > got ? 4096 : got, got);
        now += 10;
      }
      AddEvent(&t, pid, pid, "close", now, 3, name, -1, -1, -1);
      now += (k / 2) % 4 == 3 ? 5'000 : 20;
    }
    now += 1'000'000;
  }
  return t;
}

TEST_CASE(
    "fit: torch.load per sample: torch_load, data.pkl's size, names as long as the program's") {
  const ProfileTrace t = TorchLoadWorkers(16);
  FitOptions options;
  options.probe = [](const std::string&) -> Result<DataFileInfo> {
    DataFileInfo info;
    info.format = "pt";
    info.size = 49978;
    info.samples = 1;
    info.sample_sizes = {49152};
    info.writer_keys = {{"dataset.pt_pickle_bytes", "194"}};
    info.stores_file_name = true;
    return info;
  };
  options.format_declares = [](const std::string&, const std::string& model) {
    return model == "torch_load";
  };
  options.io_model_available = [](const std::string&, const std::string&) { return true; };
  const FitResult r = Fit(t, options);
  CHECK(Value(r, "dataset.format") == "pt");
  CHECK(Value(r, "dataset.num_files_train") == "16");
  CHECK(Value(r, "dataset.record_length_bytes") == "49152");
  CHECK(Value(r, "dataset.pt_pickle_bytes") == "194");
  // sample_00000: 12 characters; sam_00_of_16 is as long.
  CHECK(Value(r, "dataset.file_prefix") == "sam");
  CHECK(Value(r, "reader.io_model") == "pytorch");
  CHECK(r.Find("reader.io_model")->reason.find("torch.load") != std::string::npos);
  // Files that do not hold their names keep dlio's default prefix.
  options.probe = [](const std::string&) -> Result<DataFileInfo> {
    DataFileInfo info;
    info.format = "pt";
    info.size = 49978;
    info.samples = 1;
    info.sample_sizes = {49152};
    return info;
  };
  CHECK(Fit(t, options).Find("dataset.file_prefix")->inferred == false);
}

}  // namespace
}  // namespace dlio
