//===- OptDriver.h - What cudal1-opt does with its flags ---------*- C++ -*-===//
//
// cudal1-opt parses its flags into an OptRequest and calls runOpt; the mode
// checks, the compile command and the dispatch to the libraries live here so
// that a second tool (cudal1-train, the CI recipe) can drive the same modes.
//
//===----------------------------------------------------------------------===//
#ifndef CUDAL1_DRIVER_OPTDRIVER_H
#define CUDAL1_DRIVER_OPTDRIVER_H

#include "cudal1/Tune/ReplayEvaluator.h"

#include <optional>
#include <string>
#include <vector>

namespace cudal1 {

/// cudal1-opt's exit codes (docs/cudal1-opt.md).
enum OptExit {
  OptOk = 0,
  OptInputError = 1,
  OptUsageError = 2,
  OptNothingToDo = 3,
  OptPlanRefused = 4
};

/// Every flag of cudal1-opt as a value. An optional is set when the flag was
/// given (with its value, possibly empty), so that "given" and "default" stay
/// apart for the mode checks.
struct OptRequest {
  std::string input;
  std::optional<std::string> analyze;        ///< json|text|"" (json)
  std::optional<std::string> listTransforms; ///< text|json|"" (text)
  std::optional<std::string> plan;
  /// --check-plan PLAN: the plan measured against the original as a whole
  /// program with the reproducibility check (lib/Tune/Reproduce.h).
  std::optional<std::string> checkPlan;
  std::optional<std::string> planFile;
  bool instrument = false;
  std::optional<std::string> reference; ///< the kernel
  bool apply = false;
  std::optional<std::string> gpuArch, gpuName;
  bool dbStats = false;
  std::optional<std::string> db;
  bool tune = false;
  std::optional<std::string> emitBundle, importResults;
  std::vector<std::string> continueFrom;
  unsigned budget = 32;
  double timeLimit = 0;
  std::optional<unsigned> race, screen;
  JudgeMode judge = JudgeMode::Auto;
  bool holdContext = true; ///< --hold-context (SessionOptions::holdContext)
  bool searchOnly = false; ///< --search-only (SessionOptions::searchOnly)
  /// Empty: "policy" when a model is installed and this build runs it
  /// (docs/Policy.md), else "heuristic".
  std::string strategy;
  unsigned seed = 1;
  std::vector<std::string> transforms; ///< --transforms: only these are proposed
  std::string buildCmd, runCmd, timeRegex, ignoreRegex;
  double relTol = 1e-4;
  std::optional<std::string> report, reportCeilings;
  std::string output = "-";
  std::string buildPath;                ///< -p BUILD-DIR
  bool haveDashDash = false;            ///< a `--` was given
  std::vector<std::string> compileArgs; ///< what follows `--`
};

/// The synopsis --help prints above the flags.
extern const char *const kOptOverview;

/// Checks the request, runs its mode and returns the exit code; every
/// diagnostic goes to stderr as "cudal1-opt: error: ...".
int runOpt(const OptRequest &request);

} // namespace cudal1

#endif
