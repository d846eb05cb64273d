// Statistics for the timing protocol; pure C++ so that CPU tests cover it.
#include "cudal1/Eval/Stats.h"

#include <algorithm>
#include <random>

namespace cudal1 {

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  size_t n = values.size();
  std::nth_element(values.begin(), values.begin() + n / 2, values.end());
  double upper = values[n / 2];
  if (n % 2 == 1)
    return upper;
  double lower = *std::max_element(values.begin(), values.begin() + n / 2);
  return 0.5 * (lower + upper);
}

std::vector<double> bucketAverages(const std::vector<double> &samples, int numBuckets) {
  std::vector<double> out;
  size_t n = samples.size();
  if (n == 0 || numBuckets <= 0)
    return out;
  size_t buckets = std::min<size_t>(numBuckets, n);
  for (size_t b = 0; b < buckets; ++b) {
    size_t begin = b * n / buckets, end = (b + 1) * n / buckets;
    double sum = 0;
    for (size_t i = begin; i < end; ++i)
      sum += samples[i];
    out.push_back(sum / double(end - begin));
  }
  return out;
}

double medianOfBucketAverages(const std::vector<double> &samples, int numBuckets) {
  return median(bucketAverages(samples, numBuckets));
}

SpeedupEstimate bootstrapSpeedup(const std::vector<double> &baseline,
                                 const std::vector<double> &candidate, int numBuckets,
                                 int resamples, uint64_t seed, double confidence) {
  SpeedupEstimate est;
  size_t n = std::min(baseline.size(), candidate.size());
  est.rounds = int(n);
  if (n == 0)
    return est;
  std::vector<double> b(baseline.begin(), baseline.begin() + n);
  std::vector<double> c(candidate.begin(), candidate.begin() + n);
  double cb = medianOfBucketAverages(c, numBuckets);
  est.speedup = cb > 0 ? medianOfBucketAverages(b, numBuckets) / cb : 0;

  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, n - 1);
  std::vector<double> ratios;
  ratios.reserve(resamples);
  std::vector<double> rb(n), rc(n);
  for (int r = 0; r < resamples; ++r) {
    for (size_t i = 0; i < n; ++i) {
      size_t j = pick(rng);
      rb[i] = b[j];
      rc[i] = c[j];
    }
    double t = medianOfBucketAverages(rc, numBuckets);
    if (t > 0)
      ratios.push_back(medianOfBucketAverages(rb, numBuckets) / t);
  }
  if (ratios.empty()) {
    est.lo = est.hi = est.speedup;
    return est;
  }
  std::sort(ratios.begin(), ratios.end());
  double alpha = (1.0 - confidence) / 2.0;
  auto at = [&](double q) {
    size_t idx = size_t(q * double(ratios.size() - 1) + 0.5);
    return ratios[std::min(idx, ratios.size() - 1)];
  };
  est.lo = at(alpha);
  est.hi = at(1.0 - alpha);
  return est;
}

RaceVerdict raceVerdict(const std::vector<std::optional<SpeedupEstimate>> &estimates,
                        bool dropBeaten) {
  RaceVerdict v;
  v.cannotWin.assign(estimates.size(), false);
  double bestLo = 0;
  for (const std::optional<SpeedupEstimate> &e : estimates)
    if (e)
      bestLo = std::max(bestLo, e->lo);
  size_t left = 0;
  const SpeedupEstimate *last = nullptr;
  bool lastJudged = false, allSettled = true;
  for (size_t i = 0; i < estimates.size(); ++i) {
    const std::optional<SpeedupEstimate> &e = estimates[i];
    if (e && (e->hi < kMinFasterSpeedup || (dropBeaten && e->hi < bestLo))) {
      v.cannotWin[i] = true;
      continue;
    }
    ++left;
    lastJudged = e.has_value();
    last = e ? &*e : nullptr;
    allSettled &= e && e->speedup > 0 && e->hi - e->lo <= kSettledWidth * e->speedup;
  }
  v.decided = left == 0 || (left == 1 && lastJudged && last->lo > 1) || allSettled;
  return v;
}

} // namespace cudal1
