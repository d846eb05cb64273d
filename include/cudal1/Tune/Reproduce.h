// The reproducibility check (issue 15): the final plan is measured once
// more as a whole program, original and tuned interleaved, in a measurement
// of its own, and used only when that measurement agrees. A gain that was
// the original's drift during tuning (seen on the H200: 1.31x in the
// tuning run, 1.02x a minute later) fails here.
#ifndef CUDAL1_TUNE_REPRODUCE_H
#define CUDAL1_TUNE_REPRODUCE_H

#include "cudal1/Tune/Tuner.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace cudal1 {

/// The original's drift over one measurement: the median of its last third
/// of rounds against the median of its first third, as |ratio - 1| (0 with
/// fewer than 3 rounds).
double originalDrift(const std::vector<double> &originalSamplesMs);

/// Measures `finalPlan` (derived from `input`) against the original with
/// `evaluator`. The check's interval is the measured one widened by the
/// original's drift in the same measurement (a drift larger than the
/// interval means the interval did not capture how the machine moved); it
/// passes when the outcome is ok and the widened interval lies above 1.
llvm::Expected<ReproCheck> checkReproducible(const RewriteInput &input, const Plan &finalPlan,
                                             VariantEvaluator &evaluator);

} // namespace cudal1

#endif
