// Max-normalization, cosine similarity and the two-sample Kolmogorov-Smirnov distance
// (profile_compare.h), and the comparison of two runs built from them.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "dlio/profile_compare.h"

namespace dlio {

void NormalizeByMax(const std::vector<double>& a, const std::vector<double>& b,
                    std::vector<double>* norm_a, std::vector<double>* norm_b) {
  norm_a->assign(a.size(), 1.0);
  norm_b->assign(b.size(), 1.0);
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double m = std::max(a[i], b[i]);
    if (m <= 0) continue;  // 0 in both runs: they agree, both 1
    (*norm_a)[i] = a[i] / m;
    (*norm_b)[i] = b[i] / m;
  }
}

double CosineSimilarity(const std::vector<double>& a, const std::vector<double>& b) {
  double dot = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    dot += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  if (aa == 0 && bb == 0) return 1;
  if (aa == 0 || bb == 0) return 0;
  return std::clamp(dot / (std::sqrt(aa) * std::sqrt(bb)), -1.0, 1.0);
}

KsResult KsDistance(const std::vector<int64_t>& sorted_a, const std::vector<int64_t>& sorted_b) {
  KsResult r;
  r.n_a = static_cast<int64_t>(sorted_a.size());
  r.n_b = static_cast<int64_t>(sorted_b.size());
  if (r.n_a == 0 || r.n_b == 0) {
    r.d = r.n_a == r.n_b ? 0 : 1;
    return r;
  }
  const double na = static_cast<double>(r.n_a), nb = static_cast<double>(r.n_b);
  size_t i = 0, j = 0;
  // The CDFs only change at sample values; after consuming every copy of the next value x in
  // both samples (ties), F_a(x) = i / n_a and F_b(x) = j / n_b.
  while (i < sorted_a.size() && j < sorted_b.size()) {
    const int64_t x = std::min(sorted_a[i], sorted_b[j]);
    while (i < sorted_a.size() && sorted_a[i] == x) ++i;
    while (j < sorted_b.size() && sorted_b[j] == x) ++j;
    r.d = std::max(r.d, std::fabs(static_cast<double>(i) / na - static_cast<double>(j) / nb));
  }
  // Once one sample is used up its CDF is 1; the other's only rises towards 1 from here, so the
  // largest remaining gap is at the current point, already counted.
  r.d_crit_05 = 1.358 * std::sqrt((na + nb) / (na * nb));
  return r;
}

std::vector<CompareFeature> TraceComparison::ByContribution() const {
  std::vector<CompareFeature> order;
  for (const auto& f : features) order.push_back(f.feature);
  std::stable_sort(order.begin(), order.end(), [this](CompareFeature x, CompareFeature y) {
    return features[static_cast<int>(x)].contribution > features[static_cast<int>(y)].contribution;
  });
  return order;
}

TraceComparison CompareRuns(const RunFeatures& a, const RunFeatures& b) {
  TraceComparison c;
  // Without writes in either run the vector is the paper's ten read features, so the figures of
  // read-only comparisons are what they were before writes were scored.
  c.writes_scored = a.writes > 0 || b.writes > 0;
  const size_t scored = c.writes_scored ? kCompareFeatureCount : kReadFeatureCount;
  const std::vector<double> va(a.values.begin(), a.values.end());
  const std::vector<double> vb(b.values.begin(), b.values.end());
  std::vector<double> all_a, all_b;
  NormalizeByMax(va, vb, &all_a, &all_b);
  const std::vector<double> na(all_a.begin(), all_a.begin() + scored);
  const std::vector<double> nb(all_b.begin(), all_b.begin() + scored);
  c.similarity = CosineSimilarity(na, nb);
  for (int i = 0; i < kCompareFeatureCount; ++i) {
    FeatureComparison f;
    f.feature = static_cast<CompareFeature>(i);
    f.a = va[i];
    f.b = vb[i];
    f.norm_a = all_a[i];
    f.norm_b = all_b[i];
    f.ratio = f.a > 0 ? f.b / f.a : (f.b > 0 ? 0 : 1);
    f.rel_diff = std::fabs(f.norm_a - f.norm_b);
    if (static_cast<size_t>(i) < scored) {
      std::vector<double> matched = nb;
      matched[i] = na[i];
      f.contribution = CosineSimilarity(na, matched) - c.similarity;
    }
    c.features.push_back(f);
  }
  c.request_size_ks = KsDistance(a.request_sizes, b.request_sizes);
  c.gap_ks = KsDistance(a.gaps_us, b.gaps_us);
  c.write_size_ks = KsDistance(a.write_sizes, b.write_sizes);
  c.reads_a = a.reads;
  c.reads_b = b.reads;
  c.writes_a = a.writes;
  c.writes_b = b.writes;
  c.levels_a = a.levels;
  c.levels_b = b.levels;
  return c;
}

TraceComparison CompareTraces(const ProfileTrace& a, const ProfileTrace& b) {
  if (!HasKernelLevel(a) || !HasKernelLevel(b)) {
    return CompareRuns(ExtractRunFeatures(a), ExtractRunFeatures(b));
  }
  TraceComparison c = CompareRuns(ExtractRunFeatures(WithKernelRequests(a)),
                                  ExtractRunFeatures(WithKernelRequests(b)));
  c.level = "kernel";
  return c;
}

}  // namespace dlio
