#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "dlio/profile_compare.h"
#include "dlio/profile_fit.h"

namespace dlio {
namespace {

// Reads on the trace: each call starts `gap_us` after the previous one of its thread and lasts
// `dur_us`.
class Builder {
 public:
  Builder& Call(std::string_view name, int64_t offset, int64_t bytes, std::string_view path = "/f",
                int32_t tid = 1, int64_t dur_us = 2, int64_t gap_us = 10) {
    ProfileEvent e;
    e.pid = 1;
    e.tid = tid;
    e.name = name;
    e.category = "POSIX";
    e.path = path;
    e.start_us = (now_[tid] += gap_us);
    e.dur_us = dur_us;
    e.offset = offset;
    e.size = bytes;
    e.ret = bytes;
    e.kind = OpKindOfCall(name);
    trace_.Add(e);
    return *this;
  }
  ProfileTrace& trace() { return trace_; }

 private:
  ProfileTrace trace_;
  std::map<int32_t, int64_t> now_;
};

// Reads of `size` bytes, back to back from offset 0, in two files, opened first.
ProfileTrace SequentialReads(int64_t size) {
  Builder b;
  for (const char* path : {"/d/a", "/d/b"}) {
    b.Call("open64", -1, -1, path, 1, 4);
    for (int64_t i = 0; i < 3; ++i) b.Call("pread64", i * size, size, path);
  }
  return std::move(b.trace());
}

// SequentialReads(read_size), then a checkpoint: `files` files under /ck, each opened and given
// `writes` writes of `write_size` bytes back to back (2 us each, as the reads).
ProfileTrace ReadsAndCheckpoint(int64_t read_size, int files, int writes, int64_t write_size) {
  Builder b;
  for (const char* path : {"/d/a", "/d/b"}) {
    b.Call("open64", -1, -1, path, 1, 4);
    for (int64_t i = 0; i < 3; ++i) b.Call("pread64", i * read_size, read_size, path);
  }
  for (int f = 0; f < files; ++f) {
    const std::string path = "/ck/model-" + std::to_string(f) + ".pt";
    b.Call("open64", -1, -1, path, 1, 4);
    for (int64_t i = 0; i < writes; ++i) b.Call("write", i * write_size, write_size, path);
  }
  return std::move(b.trace());
}

double Feature(const RunFeatures& f, CompareFeature which) { return f.value(which); }

TEST_CASE("compare: cosine similarity of hand-computed vectors") {
  CHECK(CosineSimilarity({1, 2, 3}, {4, 5, 6}) == Approx(32.0 / std::sqrt(14.0 * 77.0)));
  CHECK(CosineSimilarity({1, 0}, {0, 1}) == Approx(0.0));
  CHECK(CosineSimilarity({2, 2}, {5, 5}) == Approx(1.0));
  CHECK(CosineSimilarity({0, 0}, {0, 0}) == 1.0);
  CHECK(CosineSimilarity({0, 0}, {1, 0}) == 0.0);
}

TEST_CASE(
    "compare: normalization by the larger value of each feature and a feature 0 in both runs") {
  std::vector<double> na, nb;
  NormalizeByMax({2, 0, 0, 5}, {4, 0, 3, 5}, &na, &nb);
  CHECK(na == std::vector<double>{0.5, 1, 0, 1});
  CHECK(nb == std::vector<double>{1, 1, 1, 1});
}

TEST_CASE("compare: Kolmogorov-Smirnov distance of known samples") {
  // F_a - F_b at 2, 3, 4: 0.5, 0.75 - 1/6, 1 - 2/6.
  KsResult ks = KsDistance({1, 2, 3, 4}, {3, 4, 5, 6, 7, 8});
  CHECK(ks.d == Approx(2.0 / 3.0));
  CHECK(ks.n_a == 4);
  CHECK(ks.n_b == 6);
  CHECK(ks.d_crit_05 == Approx(1.358 * std::sqrt(10.0 / 24.0)));
  // Ties: both CDFs step at 1 and at 2 together; stepping one sample before the other's equal
  // values would see a false 0.5 at 1.
  CHECK(KsDistance({1, 1, 2, 2}, {1, 2, 2, 2}).d == Approx(0.25));
  CHECK(KsDistance({5, 5, 5}, {5}).d == 0.0);
  CHECK(KsDistance({1, 2}, {3, 4, 5}).d == 1.0);
  CHECK(KsDistance({3, 4, 5}, {1, 2}).d == 1.0);
  CHECK(KsDistance({}, {}).d == 0.0);
  CHECK(KsDistance({1}, {}).d == 1.0);
  CHECK(KsDistance({}, {1}).d_crit_05 == 0.0);
}

TEST_CASE("compare: Kolmogorov-Smirnov distance equals a brute-force sup over every point") {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 50; ++round) {
    std::uniform_int_distribution<int64_t> value(0, 20), count(1, 40);
    std::vector<int64_t> a(count(rng)), b(count(rng));
    for (auto& x : a) x = value(rng);
    for (auto& x : b) x = value(rng);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    double brute = 0;
    for (int64_t x = -1; x <= 21; ++x) {
      const auto fa = static_cast<double>(std::upper_bound(a.begin(), a.end(), x) - a.begin());
      const auto fb = static_cast<double>(std::upper_bound(b.begin(), b.end(), x) - b.begin());
      brute = std::max(brute, std::fabs(fa / a.size() - fb / b.size()));
    }
    CHECK(KsDistance(a, b).d == Approx(brute));
  }
}

TEST_CASE("compare: the features of a hand-built trace") {
  Builder b;
  b.Call("open64", -1, -1, "/d/a", 1, 5);
  b.Call("pread64", 0, 10, "/d/a", 1, 1, 10);   // thread 1 at 20
  b.Call("pread64", 10, 40, "/d/a", 1, 3, 30);  // thread 1 at 50: consecutive
  b.Call("pread64", 0, 20, "/d/a", 2, 4, 7);    // thread 2 at 7: neither (offset 0)
  b.Call("pread64", 100, 30, "/d/a", 2, 2, 5);  // thread 2 at 12: sequential
  b.Call("stat", -1, -1, "/d/c", 1, 6);         // I/O time, but no data: not a file here
  b.Call("write", 0, 8, "/d/w", 1, 1);          // a file with data
  b.Call("ai.compute.step", -1, -1, "", 1, 1000);
  const RunFeatures f = ExtractRunFeatures(b.trace());
  CHECK(f.reads == 4);
  CHECK(f.request_sizes == std::vector<int64_t>{10, 20, 30, 40});
  CHECK(f.gaps_us == std::vector<int64_t>{5, 30});  // per thread: 50 - 20, 12 - 7
  CHECK(Feature(f, CompareFeature::kIoTime) == Approx((5 + 1 + 3 + 4 + 2 + 6 + 1) / 1e6));
  CHECK(Feature(f, CompareFeature::kBytesRead) == 100);
  CHECK(Feature(f, CompareFeature::kRequestSizeMin) == 10);
  CHECK(Feature(f, CompareFeature::kRequestSizeMax) == 40);
  CHECK(Feature(f, CompareFeature::kRequestSizeMean) == 25);
  CHECK(Feature(f, CompareFeature::kRequestSizeMedian) == 20);  // nearest rank: 2nd of 4
  CHECK(Feature(f, CompareFeature::kBandwidthPerOp) == Approx(100 / 10e-6));
  // Darshan, per file and process in time order: at 7 0+20 (neither), at 12 100+30
  // (sequential), at 20 0+10 (neither), at 50 10+40 (sequential and consecutive).
  CHECK(Feature(f, CompareFeature::kPctSequential) == Approx(50));
  CHECK(Feature(f, CompareFeature::kPctConsecutive) == Approx(25));
  CHECK(Feature(f, CompareFeature::kFiles) == 2);
  CHECK(f.writes == 1);
  CHECK(f.write_sizes == std::vector<int64_t>{8});
  CHECK(Feature(f, CompareFeature::kWrites) == 1);
  CHECK(Feature(f, CompareFeature::kBytesWritten) == 8);
  CHECK(Feature(f, CompareFeature::kWriteSizeMean) == 8);
  CHECK(Feature(f, CompareFeature::kWriteSizeMedian) == 8);
  CHECK(Feature(f, CompareFeature::kFilesWritten) == 1);
  CHECK(f.levels == std::vector<std::string>{"POSIX"});
}

TEST_CASE("compare: identical traces have similarity 1 and KS distances 0") {
  const ProfileTrace t = SequentialReads(4096);
  const TraceComparison c = CompareTraces(t, t);
  CHECK(c.similarity == Approx(1.0));
  CHECK(c.request_size_ks.d == 0.0);
  CHECK(c.gap_ks.d == 0.0);
  REQUIRE(c.features.size() == static_cast<size_t>(kCompareFeatureCount));
  for (const auto& f : c.features) {
    CHECK(f.rel_diff == 0.0);
    CHECK(f.contribution == Approx(0.0).margin(1e-12));
    CHECK(f.ratio == 1.0);
  }
}

TEST_CASE("compare: every request twice as large gives the hand-computed similarity") {
  // B doubles bytes, the four sizes and per-op bandwidth (same durations): A normalized is
  // (1, .5, .5, .5, .5, .5, .5, 1, 1, 1) and B all ones, so S = (4 + 6 * .5) / sqrt(5.5 * 10).
  const ProfileTrace a = SequentialReads(1000), b = SequentialReads(2000);
  const TraceComparison c = CompareTraces(a, b);
  CHECK(c.similarity == Approx(7.0 / std::sqrt(55.0)));
  CHECK(c.request_size_ks.d == 1.0);
  CHECK(c.gap_ks.d == 0.0);
  const auto& median = c.features[static_cast<int>(CompareFeature::kRequestSizeMedian)];
  CHECK(median.a == 1000);
  CHECK(median.b == 2000);
  CHECK(median.ratio == 2.0);
  CHECK(median.rel_diff == 0.5);
  CHECK(median.contribution > 0);
  const auto& seq = c.features[static_cast<int>(CompareFeature::kPctSequential)];
  CHECK(seq.a == Approx(200.0 / 3));
  CHECK(seq.contribution == 0.0);
  CHECK(c.features[static_cast<int>(CompareFeature::kFiles)].a == 2);
  // The six doubled features cost the same; they come first, the four equal ones after.
  const auto order = c.ByContribution();
  CHECK(order[0] == CompareFeature::kBytesRead);
  CHECK(order[6] == CompareFeature::kIoTime);
}

TEST_CASE("compare: runs without reads agree on the read features and differ from one with reads") {
  Builder none;
  none.Call("open64", -1, -1, "/d/a", 1, 4).Call("ai.compute.step", -1, -1, "", 1, 100);
  const TraceComparison both = CompareTraces(none.trace(), none.trace());
  CHECK(both.similarity == Approx(1.0));
  CHECK(both.request_size_ks.d == 0.0);
  CHECK(both.features[static_cast<int>(CompareFeature::kBytesRead)].norm_a == 1.0);

  // Every feature of the reads' run is > 0, so it normalizes to all ones; the run without reads
  // has only io_time_s (4 us against 2 x 4 + 6 x 2 us): (1, ..., 1) against (0.2, 0, ..., 0).
  const ProfileTrace reads = SequentialReads(100);
  const TraceComparison one = CompareTraces(reads, none.trace());
  CHECK(one.request_size_ks.d == 1.0);
  CHECK(one.gap_ks.d == 1.0);
  // Neither run writes: the ten read features only, as before writes were scored.
  CHECK_FALSE(one.writes_scored);
  std::vector<double> a(kReadFeatureCount, 1.0), b(kReadFeatureCount, 0.0);
  b[static_cast<int>(CompareFeature::kIoTime)] = 4.0 / 20.0;
  CHECK(one.similarity == Approx(CosineSimilarity(a, b)));
}

TEST_CASE("compare: without writes in either run the similarity is the paper's, exactly") {
  const RunFeatures a = ExtractRunFeatures(SequentialReads(1000));
  const RunFeatures b = ExtractRunFeatures(SequentialReads(3000));
  const TraceComparison c = CompareRuns(a, b);
  CHECK_FALSE(c.writes_scored);
  std::vector<double> na, nb;
  NormalizeByMax(std::vector<double>(a.values.begin(), a.values.begin() + kReadFeatureCount),
                 std::vector<double>(b.values.begin(), b.values.begin() + kReadFeatureCount), &na,
                 &nb);
  CHECK(c.similarity == CosineSimilarity(na, nb));  // bit for bit
  // The write rows are listed, equal and free.
  for (int i = kReadFeatureCount; i < kCompareFeatureCount; ++i) {
    CHECK(c.features[i].a == 0);
    CHECK(c.features[i].contribution == 0);
  }
  CHECK(c.write_size_ks.d == 0);
}

TEST_CASE("compare: identical checkpoint writes cost nothing") {
  const ProfileTrace t = ReadsAndCheckpoint(1000, 2, 4, 4096);
  const TraceComparison c = CompareTraces(t, t);
  CHECK(c.writes_scored);
  CHECK(c.similarity == Approx(1.0));
  CHECK(c.writes_a == 8);
  CHECK(c.features[static_cast<int>(CompareFeature::kFilesWritten)].a == 2);
  for (const auto& f : c.features) CHECK(f.contribution == Approx(0.0).margin(1e-12));
  CHECK(c.write_size_ks.d == 0);
}

TEST_CASE("compare: a halved checkpoint gives the hand-computed similarity") {
  // Same reads, same number of writes, each half as large. Normalized, A is all ones (15) and B
  // is 1 on the ten read features, writes and files_written, 0.5 on bytes_written,
  // write_size_mean and write_size_median: S = (12 + 3 * 0.5) / sqrt(15 * (12 + 3 * 0.25)).
  const double halved = 13.5 / std::sqrt(15 * 12.75);  // 0.97619...
  const ProfileTrace full = ReadsAndCheckpoint(1000, 2, 4, 4096);
  const TraceComparison c = CompareTraces(full, ReadsAndCheckpoint(1000, 2, 4, 2048));
  CHECK(c.similarity == Approx(halved));
  CHECK(c.similarity < CompareTraces(full, full).similarity - 0.02);
  CHECK(c.features[static_cast<int>(CompareFeature::kBytesWritten)].ratio == 0.5);
  CHECK(c.write_size_ks.d == 1.0);
  // Half the writes of the same size: writes and bytes_written 0.5, the sizes 1, and io_time_s
  // 36 us against 44 us (each file is an open of 4 us and its writes of 2 us, after 20 us of
  // reads and opens).
  double io = 36.0 / 44.0;
  CHECK(CompareTraces(full, ReadsAndCheckpoint(1000, 2, 2, 4096)).similarity ==
        Approx((9 + io + 2 * 0.5 + 3) / std::sqrt(15 * (9 + io * io + 2 * 0.25 + 3))));
  // One of the two files (a phantom file in A): writes, bytes_written and files_written 0.5,
  // io_time_s 32 us against 44 us, files 3 against 4.
  io = 32.0 / 44.0;
  const double dot = 8 + io + 0.75 + 3 * 0.5 + 2;
  const double norm_b = 8 + io * io + 0.75 * 0.75 + 3 * 0.25 + 2;
  CHECK(CompareTraces(full, ReadsAndCheckpoint(1000, 1, 4, 4096)).similarity ==
        Approx(dot / std::sqrt(15 * norm_b)));
}

TEST_CASE("compare: a run with a checkpoint and one without differ on every write feature") {
  // A: 20 us of reads and opens, then an open and 4 writes (12 us); B: the reads only. A is all
  // ones; B has io_time_s 20/32, files 2/3, the five write features 0, the other eight 1.
  const TraceComparison c =
      CompareTraces(ReadsAndCheckpoint(1000, 1, 4, 4096), ReadsAndCheckpoint(1000, 0, 0, 0));
  CHECK(c.writes_scored);
  CHECK(c.writes_b == 0);
  const double io = 20.0 / 32.0, files = 2.0 / 3.0;
  const double expected =
      (8 + io + files) / std::sqrt(15 * (8 + io * io + files * files));  // 0.807...
  CHECK(c.similarity == Approx(expected));
  CHECK(c.similarity < 0.81);
  CHECK(c.write_size_ks.d == 1.0);
  const auto order = c.ByContribution();
  CHECK(static_cast<int>(order[0]) >= kReadFeatureCount);  // a write feature costs the most
}

TEST_CASE("compare: the runtime's and launchers' I/O is left out of a trace as fit leaves it out") {
  Builder b;
  b.Call("openat", -1, -1, "/usr/lib/python3.11/os.py", 1, 4);
  b.Call("read", 0, 4096, "/usr/lib/python3.11/os.py");
  b.Call("read", 4096, 4096, "/usr/lib/python3.11/os.py");
  b.Call("openat", -1, -1, "/tmp/tmpk2x9_a", 2, 4);  // tempfile's probe, directly in /tmp
  b.Call("write", 0, 4, "/tmp/tmpk2x9_a", 2);
  b.Call("unlink", -1, -1, "/tmp/tmpk2x9_a", 2);
  b.Call("openat", -1, -1, "/d/out/.lock", 3, 4);  // a scratch file: made, written, removed
  b.Call("write", 0, 8, "/d/out/.lock", 3);
  b.Call("unlink", -1, -1, "/d/out/.lock", 3);
  for (const char* path : {"/d/a", "/d/b"}) {
    b.Call("open64", -1, -1, path, 1, 4);
    for (int64_t i = 0; i < 3; ++i) b.Call("pread64", i * 1000, 1000, path);
  }
  RuntimeIoLeftOut left;
  const ProfileTrace kept = WithoutRuntimeIo(b.trace(), DefaultFitIgnorePaths(), true, &left);
  CHECK(left.files == 2);  // os.py and the probe, by path
  CHECK(left.scratch_files == 1);
  CHECK(left.events == 9);
  CHECK(kept.size() == 8);
  CHECK(CompareTraces(kept, SequentialReads(1000)).similarity == Approx(1.0));

  RuntimeIoLeftOut none;
  const ProfileTrace all = WithoutRuntimeIo(b.trace(), {}, false, &none);
  CHECK(none.events == 0);
  CHECK(all.size() == b.trace().size());
  const TraceComparison c = CompareTraces(all, SequentialReads(1000));
  CHECK(c.reads_a == 8);
  CHECK(c.writes_a == 2);
  CHECK(c.similarity < 0.9);
}

TEST_CASE("compare: text and JSON renderings name what differs") {
  TraceComparison c = CompareTraces(SequentialReads(1000), SequentialReads(2000));
  c.label_a = "run \"a\"";
  c.label_b = std::string("run b");
  const std::string text = ComparisonText(c);
  CHECK(text.find("similarity: 0.9439") != std::string::npos);
  CHECK(text.find("request_size_median") != std::string::npos);
  CHECK(text.find("<- differs") != std::string::npos);
  const auto json = nlohmann::json::parse(ComparisonJson(c));
  CHECK(json.at("a").at("label") == "run \"a\"");
  CHECK(json.at("a").at("reads") == 6);
  CHECK(json.at("a").at("writes") == 0);
  CHECK(json.at("a").at("levels") == nlohmann::json::array({"POSIX"}));
  CHECK(json.at("writes_scored") == false);
  CHECK(text.find("read features only: neither run writes") != std::string::npos);
  CHECK(text.find("bytes_written") == std::string::npos);  // unscored rows stay out of the text
  CHECK(json.at("similarity").get<double>() == Approx(7.0 / std::sqrt(55.0)));
  CHECK(json.at("features").size() == static_cast<size_t>(kCompareFeatureCount));
  const auto& mean = json.at("features").at("request_size_mean");
  CHECK(mean.at("unit") == "bytes");
  CHECK(mean.at("a") == 1000);
  CHECK(mean.at("b") == 2000);
  CHECK(mean.at("norm_a") == 0.5);
  CHECK(mean.at("norm_b") == 1);
  CHECK(json.at("most_different").size() == 6);
  CHECK(json.at("ks").at("request_size").at("d") == 1);
  CHECK(json.at("ks").at("inter_request_gap_us").at("n_a") == 5);
  CHECK(json.at("ks").at("write_size").at("n_a") == 0);

  TraceComparison w =
      CompareTraces(ReadsAndCheckpoint(1000, 2, 4, 4096), ReadsAndCheckpoint(1000, 2, 4, 2048));
  const std::string wtext = ComparisonText(w);
  CHECK(wtext.find("(6 reads, 8 writes at POSIX)") != std::string::npos);
  CHECK(wtext.find("write request sizes") != std::string::npos);
  const auto wjson = nlohmann::json::parse(ComparisonJson(w));
  CHECK(wjson.at("writes_scored") == true);
  CHECK(wjson.at("features").at("bytes_written").at("ratio") == 0.5);
  CHECK(wjson.at("ks").at("write_size").at("d") == 1);
}

}  // namespace
}  // namespace dlio
