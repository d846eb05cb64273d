// The reproducibility check (issue 15): the final plan is measured once
// more as a whole program, original and tuned interleaved, in a measurement
// of its own, and used only when that measurement agrees. A gain that was
// the original's drift during tuning (seen on the H200: 1.31x in the
// tuning run, 1.02x a minute later) fails here.
#ifndef CUDAL1_TUNE_REPRODUCE_H
#define CUDAL1_TUNE_REPRODUCE_H

#include "cudal1/Tune/ProgramEvaluator.h"
#include "cudal1/Tune/Tuner.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace cudal1 {

/// Timing rounds of a check (--tune's, --check-plan's, and what the split
/// path's check bundle asks cudal1-eval for): enough that the original's
/// first and last thirds are ten rounds each.
constexpr int kCheckRounds = 30;

/// The reason a timed check fails when the original drifted by more than
/// the gain (its lower bound was above 1 before the widening).
extern const char *const kDriftFailure;

/// The original's drift over one measurement: the median of its last third
/// of rounds against the median of its first third, as |ratio - 1| (0 with
/// fewer than 3 rounds).
double originalDrift(const std::vector<double> &originalSamplesMs);

/// The check's verdict on one measurement of the final plan against the
/// original (its baselineSamplesMs are the original's rounds in order). The
/// check's interval is the measured one widened by the original's drift in
/// the same measurement (a drift larger than the interval means the
/// interval did not capture how the machine moved); it passes when the
/// outcome is ok and the widened interval lies above 1.
ReproCheck judgeCheck(Measurement measured);

/// Measures `finalPlan` (derived from `input`) against the original with
/// `evaluator` (as one candidate, id "check") and judges it (judgeCheck).
llvm::Expected<ReproCheck> checkReproducible(const RewriteInput &input, const Plan &finalPlan,
                                             VariantEvaluator &evaluator);

/// One line for people: "reproducibility check: 1.200x [1.190, 1.210],
/// original drift 23.1%, checked interval [0.975, 1.477]: passed" (or
/// "failed, the original is kept"); untimed: the outcome and its detail.
std::string formatCheckLine(const ReproCheck &check);

/// `cudal1-opt FILE --check-plan PLAN` (docs/cudal1-opt.md): measures one
/// plan against the original as a whole program on this machine's GPU with
/// kCheckRounds interleaved rounds, judged against the reference program
/// where one can be derived, and prints the verdict to `out` (the check's
/// line, its reason when it failed, the original's rounds). Errors: no GPU,
/// the plan does not apply, the evaluation failed.
llvm::Expected<ReproCheck> runCheckPlan(const RewriteInput &input, const Plan &plan,
                                        ProgramSetup setup, llvm::raw_ostream &out,
                                        const std::function<void(const std::string &)> &note);

} // namespace cudal1

#endif
