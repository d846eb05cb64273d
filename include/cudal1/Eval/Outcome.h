// What became of one variant and who judged it: the one outcome and judge
// types that the evaluator writes, the tuner acts on, the database stores
// and the report shows.
// Standard types only, so that LLVM-side code can include it without the
// evaluator's own Expected (cudal1/Eval/Error.h).
#ifndef CUDAL1_EVAL_OUTCOME_H
#define CUDAL1_EVAL_OUTCOME_H

#include <string>

namespace cudal1 {

enum class Outcome {
  Ok, ///< compiled, verified, timed, re-validated
  CompileError,
  LoadError,        ///< module or entry point could not be loaded
  Crash,            ///< CUDA error (illegal address, trap) or a signal
  Timeout,          ///< killed after the time limit (a hang)
  Wrong,            ///< failed verification
  WrongAfterTiming, ///< verified once, wrong when re-validated after timing
  NotRun,           ///< skipped (time budget, broken original)
  Refused,          ///< the plan did not derive: never built (the tuner's)
};

/// The kebab-case name in results files and the database ("ok", "wrong", ...).
const char *outcomeName(Outcome o);
/// The inverse of outcomeName; false for an unknown name.
bool parseOutcome(const std::string &name, Outcome &out);

/// How a measurement was judged (issue 15): by running the whole program,
/// or by replaying captured launches against the double reference, or
/// against the fallback tolerance where no reference could be derived.
enum class Judge { Program, ReplayReference, ReplayFallback };

/// "program", "replay-double-reference", "replay-fallback": the names in the
/// database and the report.
const char *judgeName(Judge j);
/// The inverse of judgeName; false for an unknown name.
bool parseJudge(const std::string &name, Judge &out);

} // namespace cudal1

#endif
