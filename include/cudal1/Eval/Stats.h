// Robust timing statistics: the median of bucket averages and a paired
// bootstrap confidence interval of a speedup (DESIGN.md, "Faster").
#ifndef CUDAL1_EVAL_STATS_H
#define CUDAL1_EVAL_STATS_H

#include <cstdint>
#include <optional>
#include <vector>

namespace cudal1 {

/// Median of the values (the mean of the two middle ones for an even count);
/// 0 for an empty vector.
double median(std::vector<double> values);

/// Splits the samples, in order, into numBuckets contiguous buckets of
/// (almost) equal size and returns each bucket's mean. Fewer buckets when
/// there are fewer samples than buckets.
std::vector<double> bucketAverages(const std::vector<double> &samples, int numBuckets);

/// The time estimate of one variant: median of its bucket averages. Slow
/// drifts (clocks, temperature) move whole buckets; a rare outlier moves one
/// bucket's mean and the median ignores it.
double medianOfBucketAverages(const std::vector<double> &samples, int numBuckets);

struct SpeedupEstimate {
  double speedup = 0; ///< baseline time / candidate time
  double lo = 0;      ///< lower end of the confidence interval
  double hi = 0;      ///< upper end
  int rounds = 0;     ///< paired samples used
};

/// Speedup of `candidate` over `baseline`, whose samples are paired by round
/// (both were timed in the same interleaved round). The interval comes from a
/// paired bootstrap over rounds: each resample draws rounds with replacement,
/// keeps both timings of a drawn round together, and recomputes the ratio of
/// medians of bucket averages. Deterministic for a given seed.
SpeedupEstimate bootstrapSpeedup(const std::vector<double> &baseline,
                                 const std::vector<double> &candidate, int numBuckets = 10,
                                 int resamples = 2000, uint64_t seed = 1, double confidence = 0.95);

/// Smallest speedup that counts. The interval alone is not enough: with a few
/// hundred rounds it gets so narrow that the original against a copy of
/// itself was called faster at 1.0001x on the H200 (2 of 20 copies), a bias
/// of code placement or clocks, not an improvement anyone can keep.
constexpr double kMinFasterSpeedup = 1.01;

/// True when the interval lies entirely above 1.0 and the speedup itself is
/// at least kMinFasterSpeedup.
inline bool isFaster(const SpeedupEstimate &e) {
  return e.lo > 1.0 && e.speedup >= kMinFasterSpeedup;
}

/// Racing between timing rounds (issue 15 item 5), one rule for the
/// kernel-level worker and the program-level rounds. `estimates` holds one
/// entry per variant still timed (the original excluded); nullopt where it
/// has too few rounds yet to judge.
struct RaceVerdict {
  /// Per entry: it cannot win, so it stops being timed. Its interval lies
  /// below kMinFasterSpeedup (it can never count as faster) or, with
  /// dropBeaten, below the surest variant's lower end.
  std::vector<bool> cannotWin;
  /// The rounds may end: no variant is left, or one is left and its
  /// interval lies above 1 (more rounds would only narrow it), or every
  /// one left has settled (kSettledWidth): more rounds would not change
  /// their order by more than what a choice between them is worth.
  bool decided = false;
};

/// An interval narrower than this fraction of its speedup has settled.
/// The example's whole-program rounds ran to their limit of 15 to tell
/// three plans apart at 1.02x [1.019, 1.024] and the like (H100).
constexpr double kSettledWidth = 0.01;
/// dropBeaten: a variant beaten by another's lower end leaves too. Only
/// where every timed run is checked (program rounds): the kernel worker
/// checks outputs in two rounds, and a variant that turns wrong later (the
/// fake driver's lazy-after-4) would have pushed correct ones out after 10
/// noisy rounds.
RaceVerdict raceVerdict(const std::vector<std::optional<SpeedupEstimate>> &estimates,
                        bool dropBeaten = false);

} // namespace cudal1

#endif
