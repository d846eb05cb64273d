// Applying plans to a translation unit and listing the legal transforms:
// the entry points that cudal1-opt (and later the plugin and the tuner) call.
#ifndef CUDAL1_REWRITE_PLANDRIVER_H
#define CUDAL1_REWRITE_PLANDRIVER_H

#include "cudal1/Rewrite/Plan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace cudal1 {

class ParsedUnit;

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
/// `parsedInput`, when given, is a parse of `in` to use for the first step.
llvm::Expected<std::string> applyPlan(const RewriteInput &in, const Plan &plan,
                                      ParsedUnit *parsedInput = nullptr);

/// The sources after the prefixes of plans applied through it, so that
/// plans sharing a prefix apply it once (combinePlans tries growing
/// joinings of the same plans). Thread-safe; the same bytes as applyPlan.
class PlanPrefixCache {
public:
  PlanPrefixCache();
  ~PlanPrefixCache();
  PlanPrefixCache(const PlanPrefixCache &) = delete;
  PlanPrefixCache &operator=(const PlanPrefixCache &) = delete;

private:
  struct Entries;
  std::unique_ptr<Entries> entries;
  friend llvm::Expected<std::string> applyPlan(const RewriteInput &, const Plan &,
                                               PlanPrefixCache &);
};

/// applyPlan, starting from the longest prefix of `plan` that `cache`
/// holds and leaving every longer prefix in it.
llvm::Expected<std::string> applyPlan(const RewriteInput &in, const Plan &plan,
                                      PlanPrefixCache &cache);

/// The variant source of a plan given as text (parsePlan, then applyPlan).
llvm::Expected<std::string> derivePlan(const RewriteInput &input, const std::string &planText);

/// Plans of several kernels that apply together.
struct PlanCombination {
  std::vector<size_t> kept; ///< indices into the plans, in their order
  std::string source;       ///< the kept plans applied, in that order
};

/// Joins `plans` most certain first (highest `certainty`), each only if the
/// plan still derives with those already kept (fusing one kernel into the
/// next takes the next one's plan away, not the others'); the kept plans
/// are applied in the order given. `rejected` hears of each plan left out.
/// The tuner and the plugin both combine this way, so that the build derives
/// the very source that was measured.
/// `cache`, when given, is shared with other joinings of the same plans.
PlanCombination combinePlans(const RewriteInput &in, const std::vector<Plan> &plans,
                             const std::vector<double> &certainty,
                             llvm::function_ref<void(size_t, llvm::Error)> rejected,
                             PlanPrefixCache *cache = nullptr);
/// The same for plan texts (a database's best choices); one that does not
/// parse is rejected alone.
PlanCombination combinePlans(const RewriteInput &in, const std::vector<std::string> &plans,
                             const std::vector<double> &certainty,
                             llvm::function_ref<void(size_t, llvm::Error)> rejected);

/// Whether the plan contains an opt-in fast-math step.
bool planNeedsFastMath(const Plan &plan);

/// The libraries the plan's steps need linked (`-l<name>`), sorted, unique.
std::vector<std::string> planLinks(const Plan &plan);

/// Per kernel and launch site, the legal transforms and their parameter
/// spaces (docs/cudal1-opt.md), as JSON or text.
llvm::Expected<std::string> listTransforms(const RewriteInput &in, bool json);

/// Applies each plan to the same input, as applyPlan would (the same bytes),
/// parsing the input once for the first steps of all of them; `result` gets
/// each plan's index and its outcome, in order. Fails only when the input
/// does not parse. `parsedInput`, when given, is that parse (of `in`'s
/// code), made earlier by the caller.
llvm::Error applyPlans(const RewriteInput &in, llvm::ArrayRef<Plan> plans,
                       llvm::function_ref<void(size_t, llvm::Expected<std::string>)> result,
                       ParsedUnit *parsedInput = nullptr);

} // namespace cudal1

#endif
