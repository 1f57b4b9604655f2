// FitTrace on traces built by hand with a known structure (files, samples, threads, batch,
// compute gaps, shuffles, epochs, side reads, checkpoints): each inferred key has its exact value,
// and FitYaml's text parses as a dlio config with those values.
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "dlio/config.h"
#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using testing::AddEvent;

// A training loop to synthesize: `files` files of `samples` samples of `record` bytes, read by
// `threads` threads (tids 10, 11, ...; the training thread is tid 1) in batches of `batch`, each
// batch followed by `gap_us` of compute; `epochs` passes, each in shuffled or sorted order.
struct Loop {
  int files = 8;
  int samples = 1;
  int64_t record = 100'000;
  int64_t header = 0;  // bytes before each sample in its file (a record header)
  int threads = 1;
  int batch = 4;
  int64_t gap_us = 20'000;
  int epochs = 2;
  bool shuffle = false;
  bool compute_events = false;
  bool overlap = false;  // a compute event spans its batch's reads (a prefetching pipeline)
  std::string dir = "/data/train";
  std::string ext = "npz";
  // every `ckpt_every` steps, `ckpt_files` files of `ckpt_bytes` each, written in 2 requests
  int ckpt_every = 0;
  int ckpt_files = 1;
  int64_t ckpt_bytes = 1 << 20;
  int side_reads_per_step = 0;  // 100-byte reads of /data/meta.bin at random offsets
  // Before training: reads of /data/index.json, each (asked, got), each where the last ended
  // (from 0 again after one that got nothing and before one that gets something).
  std::vector<std::pair<int64_t, int64_t>> whole_side_reads;

  std::string File(int f) const { return dir + "/f_" + std::to_string(f) + "." + ext; }
};

ProfileTrace Build(const Loop& l) {
  ProfileTrace t;
  std::mt19937 rng(7);
  int64_t now = 1'000'000;
  int64_t step = 0;
  int64_t side_at = 0;
  for (size_t k = 0; k < l.whole_side_reads.size(); ++k) {
    const auto [asked, got] = l.whole_side_reads[k];
    if (k > 0 && l.whole_side_reads[k - 1].second == 0 && got > 0) side_at = 0;
    AddEvent(&t, 1, 1, "read", now, 5, "/data/index.json", side_at, asked, got);
    side_at += got;
    now += 10;
  }
  std::vector<std::vector<bool>> opened(static_cast<size_t>(l.threads),
                                        std::vector<bool>(static_cast<size_t>(l.files), false));
  for (int e = 0; e < l.epochs; ++e) {
    std::vector<std::pair<int, int>> order;
    for (int f = 0; f < l.files; ++f) {
      for (int s = 0; s < l.samples; ++s) order.push_back({f, s});
    }
    if (l.shuffle) std::shuffle(order.begin(), order.end(), rng);
    for (size_t b = 0; b + static_cast<size_t>(l.batch) <= order.size();
         b += static_cast<size_t>(l.batch)) {
      for (int k = 0; k < l.side_reads_per_step; ++k) {
        AddEvent(&t, 1, 1, "pread", now, 5, "/data/meta.bin",
                 static_cast<int64_t>(rng() % 100) * 100, 100, 100);
        now += 10;
      }
      int64_t end = now;
      const int64_t batch_start = now;
      for (int k = 0; k < l.batch; ++k) {
        const auto [f, s] = order[b + static_cast<size_t>(k)];
        const int th = k % l.threads;
        const int64_t at = now + (k / l.threads) * 50;
        if (!opened[static_cast<size_t>(th)][static_cast<size_t>(f)]) {
          AddEvent(&t, 1, 10 + th, "open64", at, 2, l.File(f));
          opened[static_cast<size_t>(th)][static_cast<size_t>(f)] = true;
        }
        const int64_t offset = l.header + s * (l.record + l.header);
        AddEvent(&t, 1, 10 + th, "pread", at + 5, 40, l.File(f), offset, l.record, l.record);
        end = std::max(end, at + 45);
      }
      now = end;
      if (l.compute_events && l.overlap) {
        AddEvent(&t, 1, 1, "ai.compute.step", batch_start, now - batch_start + l.gap_us);
      } else if (l.compute_events) {
        AddEvent(&t, 1, 1, "ai.compute.step", now, l.gap_us);
      }
      now += l.gap_us;
      ++step;
      if (l.ckpt_every > 0 && step % l.ckpt_every == 0) {
        for (int c = 0; c < l.ckpt_files; ++c) {
          const std::string path = "/ckpt/step" + std::to_string(step) + "_" + std::to_string(c);
          AddEvent(&t, 1, 1, "open64", now, 2, path);
          AddEvent(&t, 1, 1, "pwrite", now + 3, 10, path, 0, l.ckpt_bytes / 2, l.ckpt_bytes / 2);
          AddEvent(&t, 1, 1, "pwrite", now + 14, 10, path, l.ckpt_bytes / 2, l.ckpt_bytes / 2,
                   l.ckpt_bytes / 2);
          AddEvent(&t, 1, 1, "close", now + 25, 1, path);
          now += 30;
        }
      }
    }
  }
  return t;
}

using fit_test::Fit;
using fit_test::Value;

TEST_CASE("fit: a sequential one-thread loop with pauses between batches") {
  Loop l;  // 8 files x 1 sample, batch 4, 20 ms pauses, 2 epochs, sorted order
  const FitResult r = Fit(Build(l));
  CHECK(Value(r, "dataset.format") == "npz");
  CHECK(r.Find("dataset.format")->confidence == FitConfidence::kMedium);  // suffix only
  CHECK(Value(r, "dataset.num_files_train") == "8");
  CHECK(Value(r, "dataset.num_samples_per_file") == "1");
  CHECK(Value(r, "dataset.record_length_bytes") == "100000");
  CHECK(Value(r, "dataset.record_length_bytes_stdev") == "0");
  CHECK(Value(r, "reader.read_threads") == "1");
  CHECK(Value(r, "reader.pipeline") == "sync");
  CHECK(Value(r, "reader.batch_size") == "4");
  // The pause between a batch's last read and the next one's first (an open comes first: 5 us).
  CHECK(std::stod(Value(r, "train.computation_time")) == Approx(0.02).epsilon(0.001));
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(Value(r, "reader.file_shuffle") == "off");
  CHECK(Value(r, "reader.transfer_size") == "0");
  CHECK(Value(r, "reader.io_model") == "native");
  CHECK(Value(r, "workflow.checkpoint") == "false");
  CHECK_FALSE(r.Find("side_io.read_file")->inferred);
  CHECK(r.data_files.size() == 8);
}

TEST_CASE("fit: three threads, compute events, shuffled samples, checkpoints every 3 steps") {
  Loop l;
  l.files = 6;
  l.samples = 5;
  l.header = 16;  // samples apart, so two samples read back to back stay two reads
  l.threads = 3;
  l.batch = 5;
  l.gap_us = 10'000;
  l.shuffle = true;
  l.compute_events = true;
  l.ckpt_every = 3;
  l.ckpt_files = 2;
  l.ckpt_bytes = 1 << 20;
  const FitResult r = Fit(Build(l));
  CHECK(Value(r, "dataset.num_files_train") == "6");
  CHECK(Value(r, "dataset.num_samples_per_file") == "5");
  // Without the files, a sample's size is the file's extent over its samples.
  CHECK(Value(r, "dataset.record_length_bytes") == "100016");
  CHECK(Value(r, "reader.read_threads") == "3");
  CHECK(Value(r, "reader.pipeline") == "sync");  // no read while the training thread computes
  CHECK(Value(r, "reader.batch_size") == "5");
  CHECK(Value(r, "train.computation_time") == "0.01");
  CHECK(r.Find("train.computation_time")->confidence == FitConfidence::kHigh);
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(Value(r, "reader.file_shuffle") == "seed");
  CHECK(Value(r, "reader.sample_shuffle") == "seed");
  CHECK(Value(r, "workflow.checkpoint") == "true");
  CHECK(Value(r, "checkpoint.model_size_bytes") == std::to_string(2 << 20));
  CHECK(Value(r, "checkpoint.model_files") == "2");
  CHECK(Value(r, "checkpoint.transfer_size") == std::to_string(512 << 10));
  CHECK(Value(r, "checkpoint.steps_between_checkpoints") == "3");
}

TEST_CASE("fit: reads while the training thread computes are a threaded pipeline") {
  Loop l;
  l.threads = 2;
  l.compute_events = true;
  l.overlap = true;
  const FitResult r = Fit(Build(l));
  CHECK(Value(r, "reader.pipeline") == "threaded");
  CHECK(Value(r, "reader.read_threads") == "2");
  l.overlap = false;
  CHECK(Value(Fit(Build(l)), "reader.pipeline") == "sync");
}

TEST_CASE("fit: the same sample order in two passes is no shuffle, whatever the offsets") {
  Loop l;
  l.files = 3;
  l.samples = 6;
  l.header = 16;
  l.batch = 3;
  l.shuffle = true;
  ProfileTrace shuffled = Build(l);
  CHECK(Value(Fit(shuffled), "reader.sample_shuffle") == "seed");
  // One shuffled order replayed in both passes (a fixed permutation: an hdf5 file whose chunks
  // are not stored in sample order).
  l.epochs = 1;
  const ProfileTrace one_pass = Build(l);
  ProfileTrace replay;
  for (int e = 0; e < 2; ++e) {
    for (size_t i = 0; i < one_pass.size(); ++i) {
      ProfileEvent ev = one_pass.Get(i);
      ev.start_us += e * 100'000'000;
      replay.Add(ev);
    }
  }
  const FitResult r = Fit(replay);
  CHECK(Value(r, "reader.sample_shuffle") == "off");
  CHECK(Value(r, "reader.file_shuffle") == "off");
  CHECK(Value(r, "train.epochs") == "2");
}

TEST_CASE("fit: a probe of the files gives exact sample sizes and the format by magic bytes") {
  Loop l;
  l.files = 4;
  l.samples = 3;
  l.header = 16;
  l.shuffle = true;
  l.batch = 3;
  int probes = 0;
  FitOptions options;
  options.probe = [&](const std::string& path) -> Result<DataFileInfo> {
    ++probes;
    DataFileInfo info;
    info.format = "tfrecord";  // the magic bytes disagree with the suffix
    info.size = 3 * (l.record + l.header);
    info.samples = 3;
    info.sample_sizes = {l.record - 10, l.record, l.record + 10};
    (void)path;
    return info;
  };
  const FitResult r = Fit(Build(l), options);
  CHECK(probes == 4);
  CHECK(Value(r, "dataset.format") == "tfrecord");
  CHECK(r.Find("dataset.format")->confidence == FitConfidence::kMedium);
  CHECK(Value(r, "dataset.num_samples_per_file") == "3");
  CHECK(Value(r, "dataset.record_length_bytes") == "100000");
  CHECK(Value(r, "dataset.record_length_bytes_stdev") == "8");  // sqrt(200/3)
  CHECK(r.Find("dataset.record_length_bytes")->confidence == FitConfidence::kHigh);
}

TEST_CASE("fit: files of a few exact sizes are a list the generator cycles, not a draw") {
  Loop l;
  l.files = 6;
  l.samples = 1;
  l.batch = 3;  // every file read in each pass
  FitOptions options;
  options.probe = [&](const std::string& path) -> Result<DataFileInfo> {
    DataFileInfo info;
    info.format = "npy";
    const int f = std::stoi(path.substr(path.rfind("f_") + 2));
    const bool label = f % 3 == 0;  // files 0 and 3 are small
    info.samples = 1;
    info.sample_sizes = {label ? 36864 : 442368};
    info.size = info.sample_sizes[0] + 128;
    return info;
  };
  const FitResult r = Fit(Build(l), options);
  REQUIRE(r.Find("dataset.record_length_bytes_sizes") != nullptr);
  // 2 of 36 KiB and 4 of 432 KiB: a cycle of 3 files.
  CHECK(Value(r, "dataset.record_length_bytes_sizes") == "[36864, 442368, 442368]");
  CHECK(Value(r, "dataset.record_length_bytes") == "307200");
  CHECK(Value(r, "dataset.record_length_bytes_stdev") == "0");
  const std::string yaml = FitYaml(r, {"t"});
  CHECK(yaml.find("record_length_bytes_sizes: [36864, 442368, 442368]") != std::string::npos);
  auto parsed = ParseConfig(yaml, "fit.yaml");
  REQUIRE(parsed.ok());
  CHECK(parsed->dataset.record_length_bytes_sizes == std::vector<uint64_t>{36864, 442368, 442368});
  CHECK(parsed->Validate().ok());
}

TEST_CASE("fit: side reads before every step") {
  Loop l;
  l.side_reads_per_step = 2;
  const FitResult r = Fit(Build(l));
  CHECK(Value(r, "side_io.read_file") == "meta.bin");
  CHECK(Value(r, "side_io.read_size") == "100");
  CHECK(Value(r, "side_io.schedule") == "per_step");
  CHECK(Value(r, "side_io.reads") == "2");
  CHECK(Value(r, "side_io.access") == "random");
  CHECK(Value(r, "dataset.num_files_train") == "8");  // the side file is not data
}

TEST_CASE("fit: a side file read whole, as Python's f.read() and pandas' parser read it") {
  Loop l;
  // json.load(open(f)): read(size + 1) gets the file, read(1) gets nothing; twice.
  l.whole_side_reads = {{5001, 5000}, {1, 0}, {5001, 5000}, {1, 0}};
  FitResult r = Fit(Build(l));
  CHECK(Value(r, "side_io.read_file") == "index.json");
  CHECK(Value(r, "side_io.read_file_size") == "5000");
  CHECK(Value(r, "side_io.access") == "whole");
  CHECK(Value(r, "side_io.read_size") == "5001");
  CHECK(Value(r, "side_io.end_reads") == "0");
  CHECK(Value(r, "side_io.schedule") == "before_training");
  CHECK(Value(r, "side_io.reads") == "2");  // passes
  auto parsed = ParseConfig(FitYaml(r, {"t"}), "fit.yaml");
  REQUIRE(parsed.ok());
  CHECK(parsed->side_io.access == SideIoAccess::kWhole);
  CHECK(parsed->Validate().ok());

  // pandas.read_csv: 262144 in chunks filled by asking for the rest, then once more at the end.
  l.whole_side_reads = {{262144, 262144}, {262144, 100000}, {162144, 0}, {262144, 0}};
  r = Fit(Build(l));
  CHECK(Value(r, "side_io.access") == "whole");
  CHECK(Value(r, "side_io.read_file_size") == "362144");
  CHECK(Value(r, "side_io.read_size") == "262144");
  CHECK(Value(r, "side_io.end_reads") == "1");
  CHECK(Value(r, "side_io.reads") == "1");

  // Reads that skip ahead, or never find the end, are not whole passes.
  l.whole_side_reads = {{100, 100}, {100, 100}, {100, 100}};
  r = Fit(Build(l));
  CHECK(Value(r, "side_io.access") == "sequential");
  CHECK(r.Find("side_io.end_reads") == nullptr);
  CHECK(Value(r, "side_io.read_size") == "100");
}

TEST_CASE("fit: checkpoints at every epoch end are an epoch cadence") {
  Loop l;  // 8 files, batch 4: 2 steps per epoch
  l.epochs = 3;
  l.compute_events = true;
  l.ckpt_every = 2;
  const FitResult r = Fit(Build(l));
  CHECK(Value(r, "checkpoint.epochs_between_checkpoints") == "1");
  CHECK(Value(r, "checkpoint.checkpoint_after_epoch") == "1");
  CHECK(r.Find("checkpoint.steps_between_checkpoints") == nullptr);
  CHECK(Value(r, "train.epochs") == "3");
}

// np.load of an npz per sample: open, 4 KiB reads of the end record and central directory, a
// local header, the member in 256 KiB chunks, close.
ProfileTrace NpLoadLoop(int files, int64_t size, int epochs) {
  ProfileTrace t;
  int64_t now = 0;
  for (int e = 0; e < epochs; ++e) {
    for (int f = 0; f < files; ++f) {
      const std::string path = "/d/x" + std::to_string(f) + ".npz";
      AddEvent(&t, 5, 5, "openat", now, 2, path);
      AddEvent(&t, 5, 5, "pread64", now + 3, 2, path, size - 4096, 4096, 4096);
      AddEvent(&t, 5, 5, "read", now + 6, 2, path, 0, 4096, 4096);
      int64_t off = 64;
      now += 10;
      while (off < size) {
        const int64_t n = std::min<int64_t>(262144, size - off);
        AddEvent(&t, 5, 5, "read", now, 5, path, off, n, n);
        off += n;
        now += 6;
      }
      AddEvent(&t, 5, 5, "close", now, 1, path);
      now += 5'000;  // 5 ms of "training" per sample
    }
  }
  return t;
}

TEST_CASE("fit: np.load per file is one sample per file and the numpy model") {
  const ProfileTrace t = NpLoadLoop(5, 1'000'000, 2);
  FitOptions options;
  std::string asked;
  options.io_model_available = [&](const std::string& format, const std::string& model) {
    asked = format + "/" + model;
    return true;
  };
  FitResult r = Fit(t, options);
  CHECK(asked == "npz/numpy");
  CHECK(Value(r, "reader.io_model") == "numpy");
  CHECK(Value(r, "dataset.num_samples_per_file") == "1");
  CHECK(Value(r, "dataset.record_length_bytes") == "1000000");
  CHECK(Value(r, "dataset.num_files_train") == "5");
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(Value(r, "reader.batch_size") == "1");
  CHECK(std::stod(Value(r, "train.computation_time")) == Approx(0.005).epsilon(0.001));
  CHECK_FALSE(r.Find("reader.transfer_size")->inferred);  // the model's chunks, not a knob

  // A build whose npz reader lacks numpy: the model is written commented out, saying so.
  options.io_model_available = [](const std::string&, const std::string&) { return false; };
  r = Fit(t, options);
  const FitEntry* model = r.Find("reader.io_model");
  REQUIRE(model != nullptr);
  CHECK_FALSE(model->inferred);
  CHECK(model->reason.find("numpy") != std::string::npos);
  CHECK(FitYaml(r, {"t"}).find("  # io_model: auto") != std::string::npos);
}

TEST_CASE("fit: a 256 KiB TFRecord stream without an index is tf.data") {
  ProfileTrace t;
  int64_t now = 0;
  for (int f = 0; f < 3; ++f) {
    const std::string path = "/d/train/r" + std::to_string(f) + ".tfrecord";
    AddEvent(&t, 1, 2, "open", now, 1, path);
    for (int k = 0; k < 8; ++k)
      AddEvent(&t, 1, 2, "read", now + 2 + k, 1, path, k * 262144, 262144);
    AddEvent(&t, 1, 2, "read", now + 20, 1, path, 8 * 262144, 1000);
    now += 100;
  }
  const FitResult r = Fit(t);
  CHECK(Value(r, "dataset.format") == "tfrecord");
  CHECK(Value(r, "reader.io_model") == "tf.data");
}

TEST_CASE(
    "fit: memory-mapped data of an unknown suffix: raw read by the mmap model, sizes not "
    "inferred") {
  ProfileTrace t;
  for (int f = 0; f < 2; ++f) {
    const std::string path = "/d/corpus" + std::to_string(f) + ".bin";
    AddEvent(&t, 1, 1, "open", f * 100, 1, path);
    AddEvent(&t, 1, 1, "mmap", f * 100 + 2, 1, path, 0, 1 << 20);
  }
  FitResult r = Fit(t);
  CHECK(r.data_files.size() == 2);
  CHECK(Value(r, "reader.io_model") == "mmap");
  // No suffix lookup, no probe: plain bytes, which raw maps as np.memmap does.
  CHECK(Value(r, "dataset.format") == "raw");
  CHECK(r.Find("dataset.format")->reason.find(".bin") != std::string::npos);
  CHECK(r.Find("dataset.format")->reason.find("not probed") != std::string::npos);
  CHECK_FALSE(r.Find("dataset.record_length_bytes")->inferred);
  CHECK_FALSE(r.Find("reader.batch_size")->inferred);
  CHECK(FitYaml(r, {"t"}).find("  format: raw") != std::string::npos);
}

TEST_CASE("fit: a program's runtime (libraries, Python sources) is neither data nor side file") {
  Loop l;
  ProfileTrace t = Build(l);
  // An strace log sees the interpreter load more bytes than the data holds.
  for (int k = 0; k < 20; ++k) {
    const std::string lib = "/usr/lib/python3/dist-packages/m" + std::to_string(k) + ".so";
    AddEvent(&t, 1, 1, "read", k, 1, lib, 0, 10'000'000, 10'000'000);
    AddEvent(&t, 1, 1, "read", k, 1, "/home/u/train.py", 0, 4096, 4096);
    AddEvent(&t, 1, 1, "read", k, 1, "/home/u/lib/x.cpython-311-x86_64-linux-gnu.so.1", 0,
             10'000'000);
  }
  AddEvent(&t, 1, 1, "read", 30, 1, "/proc/self/maps", 0, 4096, 4096);
  const FitResult r = Fit(t);
  CHECK(Value(r, "dataset.format") == "npz");
  CHECK(Value(r, "dataset.num_files_train") == "8");
  CHECK_FALSE(r.Find("side_io.read_file")->inferred);
}

TEST_CASE("fit: reads in several processes are DataLoader workers: the pytorch model") {
  ProfileTrace t = NpLoadLoop(4, 300'000, 2);
  ProfileTrace workers;
  for (size_t i = 0; i < t.size(); ++i) {
    ProfileEvent e = t.Get(i);
    // Files 0 and 2 in worker 7, 1 and 3 in worker 8.
    e.pid = e.tid = e.path[4] == '0' || e.path[4] == '2' ? 7 : 8;  // "/d/x<f>.npz"
    workers.Add(e);
  }
  FitOptions options;
  std::vector<std::string> asked;
  options.io_model_available = [&](const std::string&, const std::string& model) {
    asked.push_back(model);
    return model == "pytorch";
  };
  FitResult r = Fit(workers, options);
  CHECK(Value(r, "reader.data_loader") == "pytorch");
  CHECK(Value(r, "reader.read_threads") == "2");
  CHECK(Value(r, "reader.io_model") == "pytorch");
  CHECK(r.Find("reader.io_model")->reason.find("np.load") != std::string::npos);
  CHECK(r.Find("reader.reopen_files_each_epoch") == nullptr);  // persistent workers
  // Workers re-created every epoch: new processes per pass, two at a time.
  ProfileTrace reforked;
  for (int epoch = 0; epoch < 2; ++epoch) {
    const ProfileTrace one = NpLoadLoop(4, 300'000, 1);
    for (size_t i = 0; i < one.size(); ++i) {
      ProfileEvent e = one.Get(i);
      e.pid = e.tid = (e.path[4] == '0' || e.path[4] == '2' ? 7 : 8) + 10 * epoch;
      e.start_us += epoch * 1'000'000;
      reforked.Add(e);
    }
  }
  const FitResult again = Fit(reforked, options);
  CHECK(Value(again, "reader.read_threads") == "2");
  CHECK(Value(again, "reader.reopen_files_each_epoch") == "true");
  CHECK(Value(again, "train.epochs") == "2");
  // Without the pytorch model, the workers' own pattern is named.
  options.io_model_available = [](const std::string&, const std::string& model) {
    return model == "numpy";
  };
  r = Fit(workers, options);
  CHECK(Value(r, "reader.io_model") == "numpy");
}

TEST_CASE("fit: files under valid/ are the evaluation split") {
  Loop l;
  ProfileTrace t = Build(l);
  AddEvent(&t, 1, 10, "pread", 99'000'000, 10, "/data/valid/f_0.npz", 0, 100'000, 100'000);
  AddEvent(&t, 1, 10, "pread", 99'000'100, 10, "/data/valid/f_1.npz", 0, 100'000, 100'000);
  const FitResult r = Fit(t);
  CHECK(Value(r, "dataset.num_files_train") == "8");
  CHECK(Value(r, "dataset.num_files_eval") == "2");
  CHECK(Value(r, "workflow.evaluation") == "true");
}

TEST_CASE("fit: a trace without reads is an error, dlio's bookkeeping files are not data") {
  ProfileTrace t;
  AddEvent(&t, 1, 1, "pwrite", 0, 1, "/out/summary.json", 0, 10, 10);
  AddEvent(&t, 1, 1, "pread", 5, 1, "/data/.dlio-dataset.json", 0, 10, 10);
  auto r = FitTrace(t);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK(r.status().ToString().find("reads no data file and writes no checkpoint") !=
        std::string::npos);
}

TEST_CASE("fit: a trace that only writes checkpoints is a checkpoint-only workload") {
  ProfileTrace t;
  int64_t now = 0;
  for (int k = 0; k < 5; ++k) {
    const std::string path = "/ckpt/model_" + std::to_string(k) + ".pt";
    AddEvent(&t, 3, 3, "openat", now, 5, path);
    for (int w = 0; w < 4; ++w) {
      AddEvent(&t, 3, 3, "write", now + 10 + w * 20, 10, path, w * 524288, 524288, 524288);
    }
    AddEvent(&t, 3, 3, "fsync", now + 100, 50, path);
    AddEvent(&t, 3, 3, "close", now + 160, 1, path);
    now += 50'000;  // 50 ms of "training" between saves
  }
  const FitResult r = Fit(t);
  CHECK(Value(r, "workflow.train") == "false");
  CHECK(Value(r, "workflow.generate_data") == "false");
  CHECK(Value(r, "workflow.checkpoint") == "true");
  CHECK(Value(r, "checkpoint.num_checkpoints_write") == "5");
  CHECK(Value(r, "checkpoint.model_size_bytes") == std::to_string(2 << 20));
  CHECK(Value(r, "checkpoint.model_files") == "1");
  CHECK(Value(r, "checkpoint.transfer_size") == "524288");
  CHECK(Value(r, "checkpoint.fsync") == "true");
  // From the end of one save's last write to the next save's first: 50 ms less the save.
  CHECK(std::stod(Value(r, "checkpoint.time_between_checkpoints")) ==
        Approx(0.05 - 0.00009).epsilon(0.01));
  auto config = ParseConfig(FitYaml(r, {"t"}), "fit.yaml");
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(config->Validate().ok());
  CHECK_FALSE(config->workflow.train);
  CHECK(config->checkpoint.num_checkpoints_write == 5);
}

TEST_CASE("fit: the YAML parses as a dlio config with the fitted values, comments aligned") {
  Loop l;
  l.files = 6;
  l.samples = 5;
  l.header = 16;
  l.threads = 2;
  l.batch = 5;
  l.shuffle = true;
  l.compute_events = true;
  l.ckpt_every = 2;
  l.side_reads_per_step = 1;
  const FitResult r = Fit(Build(l));
  const std::string yaml = FitYaml(r, {"trace.pfw"});
  INFO(yaml);
  CHECK(yaml.rfind(std::string(kFitYamlTitle), 0) == 0);
  CHECK(yaml.find("# from: trace.pfw") != std::string::npos);
  CHECK(yaml.find("num_files_train: 6") != std::string::npos);
  CHECK(yaml.find("# high: ") != std::string::npos);
  CHECK(yaml.find("  # read_file") == std::string::npos);  // inferred: not commented
  std::vector<std::string> warnings;
  auto config = ParseConfig(yaml, "fit.yaml", WorkloadConfig(), &warnings);
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(config->Validate().ok());
  CHECK(config->dataset.num_files_train == 6);
  CHECK(config->dataset.num_samples_per_file == 5);
  CHECK(config->reader.batch_size == 5);
  CHECK(config->reader.read_threads == 2);
  CHECK(config->train.epochs == 2);
  CHECK(config->workflow.checkpoint);
  CHECK(config->checkpoint.steps_between_checkpoints == 2);
  CHECK(config->side_io.reads == 1);
  CHECK(config->dataset.data_folder == "./fit-data");
  // Within a section, every comment starts in the same column.
  const size_t reader = yaml.find("\nreader:\n");
  REQUIRE(reader != std::string::npos);
  const std::string block = yaml.substr(reader + 9, yaml.find("\n\n", reader + 9) - reader - 9);
  size_t column = std::string::npos, start = 0;
  while (start < block.size()) {
    const size_t end = block.find('\n', start);
    const std::string line = block.substr(start, end - start);
    const size_t hash = line.find("  # ", 2);  // past a commented-out key's own "  # "
    REQUIRE(hash != std::string::npos);
    if (column == std::string::npos) column = hash;
    CHECK(hash == column);
    start = end == std::string::npos ? block.size() : end + 1;
  }
}

}  // namespace
}  // namespace dlio
