// Applying the tuning database's best plans to a translation unit at build
// time: what the Clang plugin does in `apply` mode and what
// `cudal1-opt --apply` does for builds that do not use clang (docs/Plugin.md).
#ifndef CUDAL1_APPLY_APPLYBEST_H
#define CUDAL1_APPLY_APPLYBEST_H

#include "cudal1/Rewrite/PlanDriver.h"

#include <optional>
#include <string>
#include <vector>

namespace cudal1 {

struct ApplyOptions {
  std::string dbPath;
  /// The architecture the database was tuned on ("sm_90"). Empty: the one
  /// architecture the database has plans for; with several, nothing applies.
  std::string gpuArch;
  /// Empty: the best of any GPU model of that architecture.
  std::string gpuName;
  /// Where derived sources are kept, keyed by a hash of the source, the
  /// arguments and every best choice that could apply to it; empty: none.
  /// The host and device jobs of one compile, and later builds of an
  /// unchanged file, then derive once. Trusted like the build directory.
  /// An entry keeps the derivation's warnings, which are given again
  /// whenever it is read, and is written whatever the outcome (a derivation
  /// past its budget too), so that a slow derivation is paid once.
  std::string cacheDir;
  /// The most time deriving may take (parsing and applying the plans), in
  /// milliseconds; past it the original is kept, with a warning. Non-zero:
  /// the derivation runs in a child process (fork), which also keeps a
  /// crash in it from ending the caller. 0: no budget, in this process.
  unsigned budgetMs = 0;
  /// Refuse arguments clang rejects (checkClangArgs) even when no plan could
  /// apply and nothing is parsed: `--apply -- --frobnicate` is an error,
  /// not "no plan". The plugin turns it off: its arguments are those of the
  /// compile it runs in.
  bool checkArgs = true;
};

struct AppliedPlan {
  std::string kernel; ///< name, or "(host)" for program-level steps
  std::string key;
  std::string plan;
  std::optional<double> speedup, lo, hi;
};

struct ApplyResult {
  /// The rewritten source; the input unchanged when nothing applies.
  std::string source;
  bool changed = false;
  /// False when the cheap check (is any tuned kernel named in this file?)
  /// said no and nothing was parsed.
  bool parsed = false;
  /// Taken from ApplyOptions::cacheDir (`applied` and `warnings` are those
  /// of the derivation that wrote the entry).
  bool cached = false;
  std::vector<AppliedPlan> applied;
  /// For the user: database problems, plans that no longer apply.
  std::vector<std::string> warnings;
};

/// Looks up the best plan of every kernel of `in` (by kernel key, so that a
/// changed kernel falls back to its original until it is retuned) and of its
/// host code (by host-code key: path and content), and applies them
/// together. A best choice applies only where it was measured: every step
/// of a kernel's row must be scoped to that kernel (`@name`, or `@#id` of a
/// launch of it), every step of the host row to host code (`@loop#`,
/// `@sync#`, `@copy#`), and a row has at most kMaxPlanSteps steps; any
/// other row is skipped with one warning naming it. A plan that no longer
/// applies or conflicts with another is left out with a warning. Never
/// fails because of the database (a missing or damaged one means "no
/// plans"); an error means the source could not be analysed.
llvm::Expected<ApplyResult> applyBestPlans(const RewriteInput &in, const ApplyOptions &options);

} // namespace cudal1

#endif
