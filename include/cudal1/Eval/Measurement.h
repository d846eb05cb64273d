// One variant measured on one GPU (DESIGN.md, "Words"): the value that goes
// from the evaluator through the tuner into the database and the report.
// What was measured only; who asked (kernel, plan, GPU, session, id) lives
// beside it in each carrier. Standard types only, so that the evaluator
// (no LLVM), the LLVM-side libraries and the policy can all include it.
#ifndef CUDAL1_EVAL_MEASUREMENT_H
#define CUDAL1_EVAL_MEASUREMENT_H

#include "cudal1/Eval/Outcome.h"

#include <string>
#include <vector>

namespace cudal1 {

struct Measurement {
  Outcome outcome = Outcome::NotRun;
  /// Who gave the figures: their times are of what the judge ran (the
  /// kernel over its captured launches for replay, else the whole program)
  /// and are never compared across judges.
  Judge judge = Judge::Program;
  bool timed = false;
  bool faster = false;     ///< the speedup interval lies above 1.0
  bool suspicious = false; ///< speedup above 10x: look again
  bool sideWork = false;   ///< work ran past the stop event
  /// Against the original timed in the same evaluation, with its 95%
  /// bootstrap interval; meaningful only when timed.
  double speedup = 0, lo = 0, hi = 0;
  double timeMs = 0;     ///< median of bucket averages; 0: unknown
  double baselineMs = 0; ///< the original's, same evaluation; 0: unknown
  /// The times (ms) that entered the statistics, in round order, of this
  /// variant and of the original; empty where they were not kept.
  std::vector<double> samplesMs, baselineSamplesMs;
  int rounds = 0;
  std::string compiler; ///< nvrtc or nvcc
  double compileSeconds = 0;
  std::string verifyMode;           ///< double-reference or fallback (...)
  std::vector<std::string> details; ///< messages, compile log excerpts
};

} // namespace cudal1

#endif
