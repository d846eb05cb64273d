// Plans: what to do to a translation unit, as data (DESIGN.md). A plan is an
// ordered list of transform steps with named parameters, each scoped to a
// kernel (@name), a launch site (@#id), a host loop (@loop#id), a host
// synchronization (@sync#id) or a host copy (@copy#id). Text form (docs/Plans.md):
//   @transpose: coalesce; launch-config(block=32x8); @#2: unroll(loop=0, factor=4)
#ifndef CUDAL1_REWRITE_PLAN_H
#define CUDAL1_REWRITE_PLAN_H

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudal1 {

/// The largest site id a scope may name (@#N, @loop#N, @sync#N, @copy#N);
/// larger ones are refused by parsePlan (docs/Plans.md, "Integer ranges").
constexpr int kMaxPlanId = 2147483647;

/// Which part of the translation unit a step applies to.
struct PlanScope {
  std::string kernel; ///< @name; "" when unscoped or scoped to a launch
  int launch = -1;    ///< @#id
  int loop = -1;      ///< @loop#id: a host loop
  int sync = -1;      ///< @sync#id: a host synchronization
  int copy = -1;      ///< @copy#id: a host cudaMemcpy
  bool empty() const { return kernel.empty() && launch < 0 && loop < 0 && sync < 0 && copy < 0; }
  bool operator==(const PlanScope &o) const {
    return kernel == o.kernel && launch == o.launch && loop == o.loop && sync == o.sync &&
           copy == o.copy;
  }
};

struct PlanStep {
  PlanScope scope;
  std::string transform;
  std::vector<std::pair<std::string, std::string>> params; ///< in the order written
  unsigned column = 0; ///< 1-based position in the plan text (for diagnostics)

  std::optional<std::string> param(const std::string &name) const;
  /// The parameter as a decimal integer in [lo, hi]; nullopt when it is
  /// absent, not an integer or out of range (never throws).
  std::optional<unsigned> uintParam(const std::string &name, unsigned lo = 0,
                                    unsigned hi = ~0u) const;
  bool operator==(const PlanStep &o) const {
    return scope == o.scope && transform == o.transform && params == o.params;
  }
};

struct Plan {
  std::vector<PlanStep> steps;
  bool operator==(const Plan &o) const { return steps == o.steps; }
};

/// Parses plan text; errors read "plan:1:COL: error: ..." .
llvm::Expected<Plan> parsePlan(const std::string &text);

/// The canonical text: scopes printed only where they change, steps joined
/// by "; ". parsePlan(printPlan(p)) == p.
std::string printPlan(const Plan &plan);

/// The largest dimension parseDims accepts (CUDA's largest block dimension).
constexpr unsigned kMaxDim = 1024;

/// "32x8" → {32, 8}; nullopt unless 1 to 3 integers from 1 to kMaxDim.
std::optional<std::vector<unsigned>> parseDims(const std::string &text);

} // namespace cudal1

#endif
