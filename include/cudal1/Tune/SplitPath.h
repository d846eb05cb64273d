// The split path's bundles seen from the tuner: a round of candidates
// written as a program bundle, and an evaluated bundle absorbed back
// (docs/formats/program-bundle.md).
#ifndef CUDAL1_TUNE_SPLITPATH_H
#define CUDAL1_TUNE_SPLITPATH_H

#include "cudal1/Eval/Results.h"
#include "cudal1/Tune/Tuner.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cudal1 {

/// What one evaluated bundle said, after absorbing it into the tuner.
struct BundleRound {
  std::string gpu, date, timeRegex;
  VariantResult original; ///< its roofline floor
};

/// Reads an evaluated bundle's plans and results and gives them to the
/// tuner as one round. A plan whose kernel changed since is ignored with a
/// note.
llvm::Expected<BundleRound> absorbBundle(const std::string &dir, const TuneSpace &space,
                                         Tuner &tuner,
                                         const std::function<void(const std::string &)> &note);

/// The split path's reproducibility check (docs/Tuning.md, "Without a
/// GPU"): the final plan measured once more as a whole program, in a
/// program bundle of its own, DIR/check (the original and one variant,
/// `check`), built and run as the rounds' bundle DIR says (its build and run
/// commands, regexes, tolerance and reference program).
struct SplitCheck {
  std::string dir; ///< DIR/check
  /// Set when DIR/check/results.txt was there, measured on what the check
  /// bundle holds, for the final plan: the check's verdict (judgeCheck).
  /// Unset when the check bundle was (re)written and waits for cudal1-eval.
  std::optional<ReproCheck> check;
};

/// Where DIR/check has no results, writes it for `finalPlan` (derived from
/// `input`; kernelKeys and kernelNames as for writeProgramBundle). Where it
/// has them, they must be bound to its plan and sources (checkResultsMatch)
/// and its plan must be `finalPlan`, else an error says what to do.
llvm::Expected<SplitCheck> splitPathCheck(const std::string &dir, const RewriteInput &input,
                                          const Plan &finalPlan,
                                          const std::vector<std::string> &kernelKeys,
                                          const std::vector<std::string> &kernelNames,
                                          const std::function<void(const std::string &)> &note);

} // namespace cudal1

#endif
