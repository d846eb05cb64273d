// Applying plans to a translation unit and listing the legal transforms:
// the entry points that cudal1-opt (and later the plugin and the tuner) call.
#ifndef CUDAL1_REWRITE_PLANDRIVER_H
#define CUDAL1_REWRITE_PLANDRIVER_H

#include "cudal1/Rewrite/Plan.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace cudal1 {

struct RewriteInput {
  std::string file;              ///< path (includes resolve next to it)
  std::string code;              ///< its contents
  std::vector<std::string> args; ///< clang arguments (analysisArgs)
};

/// Applies the steps in order, re-parsing the evolving source before each
/// step; the result starts with a comment naming the plan (on the first line,
/// so line numbers stay those of the input). Any illegal step or
/// conflicting parameter refuses the whole plan with the reason; nothing is
/// returned then.
llvm::Expected<std::string> applyPlan(const RewriteInput &in, const Plan &plan);

/// Whether the plan contains an opt-in fast-math step.
bool planNeedsFastMath(const Plan &plan);

/// Per kernel and launch site, the legal transforms and their parameter
/// spaces (docs/cudal1-opt.md), as JSON or text.
llvm::Expected<std::string> listTransforms(const RewriteInput &in, bool json);

} // namespace cudal1

#endif
