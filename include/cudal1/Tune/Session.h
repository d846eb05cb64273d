// One tuning session: the whole of `cudal1-opt --tune` and of the split
// path's two halves (`--emit-bundle`, `--import-results`), as a library
// call that a second tool (cudal1-train, the CI recipe) can make too.
// Stages and the types between them: docs/Architecture.md.
#ifndef CUDAL1_TUNE_SESSION_H
#define CUDAL1_TUNE_SESSION_H

#include "cudal1/Rewrite/PlanDriver.h"
#include "cudal1/Tune/ProgramEvaluator.h"
#include "cudal1/Tune/ReplayEvaluator.h"
#include "cudal1/Tune/Tuner.h"

#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>
#include <vector>

namespace cudal1 {

class TuneDB;

struct SessionOptions {
  enum Mode { Tune, EmitBundle, ImportResults } mode = Tune;
  std::string bundleDir;
  /// Earlier bundles of the same file, evaluated: their results are
  /// absorbed first (--emit-bundle proposes the next round from them,
  /// --import-results chooses across all of them).
  std::vector<std::string> continueFrom;
  unsigned budget = 32;
  double timeLimit = 0;
  unsigned race = 0;   ///< --tune: time only this many per round (0: all)
  unsigned screen = 1; ///< --tune: runs per variant that rank the race
  /// --tune: kernel-level plans judged by replay of captured launches
  /// (auto, replay) or every plan as a whole program (issue 15).
  JudgeMode judge = JudgeMode::Auto;
  /// --tune: a process holds a CUDA context for the session, so that the
  /// programs it runs find the GPU awake (Eval/ContextHolder.h).
  bool holdContext = true;
  /// --tune: the budget's plans are measured and recorded, and nothing is
  /// chosen: no whole-program round of the bests, no reproducibility
  /// check, no best choice in the database, no output. What an evaluation
  /// of the strategies (bench/policy/protocol) or a data campaign needs:
  /// the measurements, at about half the session's time.
  bool searchOnly = false;
  std::string strategy = "heuristic";
  uint64_t seed = 1;
  /// Only these transforms' steps are proposed (--transforms); empty: all.
  std::vector<std::string> transforms;
  /// Replaces `strategy` when set (tests; a tool with a strategy of its own).
  SearchStrategy *strategyInstance = nullptr;
  ProgramSetup setup;
  std::string arch = "sm_90";
  std::string outputFile = "-";
  std::string reportFile;     ///< empty: no HTML report (docs/Report.md)
  std::string reportCeilings; ///< bench/roofline/ceilings output; empty: nominal
  /// Where the session's own lines go (the summary table, what was written).
  llvm::raw_ostream *out = &llvm::outs();
  /// One-line notes and progress; empty: none.
  std::function<void(const std::string &)> note, progress;
};

/// How a session ended, for a tool's exit code.
struct SessionStatus {
  enum Kind { Ok, UsageError, InputError, NothingToDo } kind = Ok;
  std::string message; ///< for anything but Ok
};

/// The setup of the program runs from the command line's words: the build
/// command with {src} {exe} (empty: nvcc -O3 -arch=ARCH), the run command
/// with {exe}.
ProgramSetup programSetup(const RewriteInput &input, const std::string &buildCmd,
                          const std::string &runCmd, const std::string &arch);

/// Runs a session on `input`. `evaluator` measures in --tune (nullptr: the
/// program evaluator on this machine's GPU); `db` receives the
/// measurements and best choices, and gives the exemplars of earlier
/// sessions to the strategy (nullptr: none).
SessionStatus runSession(const RewriteInput &input, const SessionOptions &options,
                         VariantEvaluator *evaluator, TuneDB *db);

/// Takes the reproducibility check into the result: a failed check empties
/// the final plan (and with it every best choice of this session).
void applyCheck(TuneResult &result, const ReproCheck &check);

/// --search-only: the result keeps its measurements and per-kernel bests
/// (for the table) but chooses nothing: no final plan, no best choice to
/// record.
void chooseNothing(TuneResult &result);

/// The table printed at the end of a session.
std::string formatSessionSummary(const TuneResult &result);

/// Where a --tune run's wall time went, stage by stage (issue 15 item 5).
struct SessionTimings {
  double total = 0, legalSpace = 0, reference = 0, rounds = 0, check = 0;
  double derive = 0;            ///< deriving the variants, in `rounds`
  ReplayTimes replay;           ///< the kernel-level judge's share of `rounds`
  unsigned programVariants = 0; ///< judged as whole programs in `rounds`
  /// The whole programs' time in `rounds`: building (beyond what was built
  /// beside a replay) and running; builds done and found done.
  double programBuild = 0, programRun = 0;
  /// Of programRun: the original's and the reference program's runs, the
  /// variants' verification runs, the timing rounds.
  double programOriginal = 0, programVerify = 0, programRounds = 0;
  /// Waiting, after a replay, for the whole programs built beside it.
  double programBuildWait = 0;
  unsigned programBuilt = 0, programFoundBuilt = 0;
};
/// "time: ..." lines for people, printed after the session summary.
std::string formatTimings(const SessionTimings &timings);

} // namespace cudal1

#endif
