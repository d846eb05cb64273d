// The legal space of a translation unit: per kernel, launch site, host loop,
// host synchronization and host copy, every transform with whether it
// applies there (and why not) and the parameter values that make sense.
// The tuner consumes it as it is; `--list-transforms` prints it as text or
// JSON (docs/cudal1-opt.md). Nothing reads the printed forms back.
#ifndef CUDAL1_REWRITE_LEGALSPACE_H
#define CUDAL1_REWRITE_LEGALSPACE_H

#include "cudal1/Rewrite/Plan.h"
#include "cudal1/Rewrite/Transform.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace cudal1 {

class ParsedUnit;

/// One transform at one site.
struct LegalTransform {
  std::string name;
  bool legal = false;
  std::string reason;             ///< why not, when not legal
  std::vector<ParamSpace> params; ///< when legal
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
};

/// Asks every registered pass about every site of the unit.
llvm::Expected<LegalSpace> legalSpace(ParsedUnit &unit);

/// The two printers of `--list-transforms`.
std::string printLegalSpaceText(const LegalSpace &space);
std::string printLegalSpaceJson(const LegalSpace &space);

} // namespace cudal1

#endif
