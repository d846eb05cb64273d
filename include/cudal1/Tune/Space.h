// The search space of one translation unit: per kernel, the legal steps
// (a transform at a scope with one value per parameter), read from the plan
// driver's --list-transforms listing so that the tuner proposes only what
// the passes accept.
#ifndef CUDAL1_TUNE_SPACE_H
#define CUDAL1_TUNE_SPACE_H

#include "cudal1/Rewrite/PlanDriver.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace cudal1 {

/// One fully parameterized step, e.g. "@#3: launch-config(block=256)".
struct TuneStep {
  std::string scope;     ///< "@name" or "@#id"
  std::string transform; ///< "launch-config"
  std::vector<std::pair<std::string, std::string>> params;
  bool fastMath = false;
  std::string text() const; ///< "@#3: launch-config(block=256)"
};

struct TuneKernel {
  std::string name, key;
  std::vector<unsigned> launches;
  std::vector<TuneStep> steps; ///< every legal step, all parameter values
};

/// Host-level steps (@loop#N, @sync#N) are gathered in one more TuneKernel
/// named "(host)", keyed "host:FILE-NAME".
struct TuneSpace {
  std::string file;
  std::vector<TuneKernel> kernels;
};

/// Builds the space from --list-transforms=json output. Steps at a launch
/// of a kernel with one launch site are scoped to the kernel instead, so
/// that a stored plan does not depend on launch numbering (which changes
/// when host code changes; kernel keys do not).
llvm::Expected<TuneSpace> parseTuneSpace(llvm::StringRef listJson);
llvm::Expected<TuneSpace> collectTuneSpace(const RewriteInput &in);

/// A plan made of steps, in order: "@k: a; @k: b(x=1)".
std::string planText(const std::vector<TuneStep> &steps);

} // namespace cudal1

#endif
