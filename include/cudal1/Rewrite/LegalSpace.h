// The legal space of a translation unit: per kernel, launch site, host loop,
// host synchronization and host copy, every transform with whether it
// applies there (and why not) and the parameter values that make sense.
// The tuner consumes it as it is; `--list-transforms` prints it as text or
// JSON (docs/cudal1-opt.md). Nothing reads the printed forms back. A step
// refused only because of something another step removes (a host
// synchronization between two launches that fuse needs adjacent) is listed
// with those prerequisite steps (docs/Plans.md, "Enablement").
#ifndef CUDAL1_REWRITE_LEGALSPACE_H
#define CUDAL1_REWRITE_LEGALSPACE_H

#include "cudal1/Rewrite/Plan.h"
#include "cudal1/Rewrite/Transform.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace cudal1 {

class ParsedUnit;
struct RewriteInput;

/// One transform at one site.
struct LegalTransform {
  std::string name;
  bool legal = false;
  std::string reason;             ///< why not, when not legal
  std::vector<ParamSpace> params; ///< when legal or enabled
  /// When not legal: the steps that, applied first and in this order, make
  /// it legal at the same site (its ids are the original source's, which
  /// they keep); `params` are its space on that source. Empty: none known.
  std::vector<PlanStep> enabledBy;
  bool fastMath = false;          ///< opt-in fast-math: looser verification
  std::vector<std::string> links; ///< libraries a variant must link
};

/// A loop of a kernel that no rewrite can edit (`loop=ID` values skip it),
/// listed so that its id is accounted for.
struct LegalLoop {
  unsigned id = 0;
  std::string kind;     ///< for | while | do
  std::string location; ///< file:line:col, where the user reads it
  std::string notRewritable;
};

/// A place where transforms apply. `scope` is how a plan names it.
struct LegalSite {
  Transform::Level level = Transform::Level::Kernel;
  PlanScope scope; ///< @name, @#launch, @loop#N, @sync#N, @copy#N
  int kernel = -1; ///< into ProgramModel::kernels (kernel, launch)
  std::string kernelName, kernelKey;
  std::string location;           ///< file:line:col
  std::string function;           ///< host loops and syncs: the enclosing function
  std::string call;               ///< syncs and copies: the called function
  std::vector<unsigned> launches; ///< host loops: the launch ids inside
  /// Why nothing here can be rewritten (a header); transforms are empty then.
  std::string notRewritable;
  /// Kernels: the loops no rewrite can edit (in a header, or written by a
  /// macro), each with the reason.
  std::vector<LegalLoop> fixedLoops;
  std::vector<LegalTransform> transforms;
};

struct LegalSpace {
  std::string file;
  std::vector<LegalSite> kernels, launches, loops, syncs, copies;
  /// Host loops that launch no kernel (not targets, so not listed); host
  /// loop ids count every host loop of the unit, headers included.
  std::vector<unsigned> unlistedHostLoops;
  /// Included .cu files the unit was read with inlined (IncludedSources.h):
  /// their kernels and host code are listed and rewritable, and a plan's
  /// output holds them inlined.
  struct Inlined {
    std::string file, includedAt; ///< includedAt: INCLUDER:LINE of the directive
  };
  std::vector<Inlined> inlined;
};

/// Asks every registered pass about every site of the unit.
llvm::Expected<LegalSpace> legalSpace(ParsedUnit &unit);

/// How refused steps are checked for prerequisites (`enabledBy`).
enum class Enablement {
  Off,
  /// Every prerequisite of one kind applied at once through one rewrite and
  /// one parse, each refused step re-asked there; a prerequisite plan of
  /// several steps is then derived step by step to confirm it (bounded).
  /// Proved to agree with Derive by EnablementTest.
  Screen,
  /// Each site's prerequisite plan applied by applyPlan and the refused
  /// steps re-asked on the result: one parse per plan (the reference).
  Derive,
};

/// The legal space with each refused step's prerequisites, if any: the
/// prerequisites are drop-sync of the host synchronizations between a
/// launch and the next one (fuse, streams) or between a host loop's
/// launches (graph), and restrict on a kernel with two or more pointer
/// parameters (vectorize, interchange). `in` is the unit's input (it is
/// parsed again with the prerequisites applied).
llvm::Expected<LegalSpace> legalSpace(ParsedUnit &unit, const RewriteInput &in,
                                      Enablement how = Enablement::Screen);

/// The two printers of `--list-transforms`.
std::string printLegalSpaceText(const LegalSpace &space);
std::string printLegalSpaceJson(const LegalSpace &space);

} // namespace cudal1

#endif
