// The split path's bundles seen from the tuner: a round of candidates
// written as a program bundle, and an evaluated bundle absorbed back
// (docs/formats/program-bundle.md).
#ifndef CUDAL1_TUNE_SPLITPATH_H
#define CUDAL1_TUNE_SPLITPATH_H

#include "cudal1/Eval/Results.h"
#include "cudal1/Tune/Tuner.h"

#include <functional>
#include <string>

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

} // namespace cudal1

#endif
