// Program-level evaluation (docs/Evaluator.md, "Whole programs"): builds a
// program bundle's original and variants with the user's command, checks
// each variant's printed output against the original's, and times them in
// interleaved rounds. Results use the kernel-level format and statistics.
#ifndef CUDAL1_EVAL_PROGRAMEVAL_H
#define CUDAL1_EVAL_PROGRAMEVAL_H

#include "cudal1/Eval/Error.h"
#include "cudal1/Eval/ProgramBundle.h"
#include "cudal1/Eval/Results.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cudal1 {

struct ProgramEvalOptions {
  int jobs = 0;          ///< parallel builds; 0: all cores
  double timeBudget = 0; ///< seconds for the timing rounds; 0: none
  int maxRounds = 15;    ///< timing rounds; a time budget may end them sooner
  /// Racing: when more variants verify, only the `raceKeep` fastest by
  /// their verification run (one serial run each, timed like every run)
  /// enter the timing rounds; 0 times them all. The others stay verified
  /// `ok`, untimed, with the reason in their details.
  int raceKeep = 0;
  /// Racing ranks by the median of this many runs per verified variant (the
  /// verification run and screenRuns - 1 more, interleaved); 1: the
  /// verification run alone.
  int screenRuns = 1;
  double runTimeout = 60; ///< per run of a program (a hang is killed)
  std::string workDir;    ///< empty: a fresh directory under $TMPDIR
  bool keepWork = false;
  uint64_t seed = 1;
  std::function<void(const std::string &)> progress;
};

/// What one run printed, split for comparison.
struct ProgramOutput {
  std::vector<std::string> lines; ///< compared lines (ignored ones removed)
  bool haveTime = false;
  double timeMs = 0; ///< from the bundle's time regex
};

/// Splits stdout into compared lines and the reported time.
ProgramOutput splitProgramOutput(const std::string &stdoutText, const ProgramBundle &bundle);

/// Compares a variant's output with the original's. Numbers compare within
/// rel/abs (integers exactly), widened to four times the most any of the
/// original's other runs (`others`) moved from its `first`; text compares
/// exactly. Appends up to `maxMismatches` descriptions; true when
/// everything matches.
bool compareWithOriginalRuns(const std::vector<std::string> &first,
                             const std::vector<std::vector<std::string>> &others,
                             const std::vector<std::string> &variant, double rel, double abs,
                             std::vector<std::string> &mismatches, size_t maxMismatches = 8);
/// The same with two runs of the original.
bool compareProgramOutputs(const std::vector<std::string> &first,
                           const std::vector<std::string> &second,
                           const std::vector<std::string> &variant, double rel, double abs,
                           std::vector<std::string> &mismatches, size_t maxMismatches = 8);

/// Finds the first `floor: bytes=B flops=F [dtype=D]` line (the roofline
/// floor a program prints, bench/corpus/common.h `printFloor`); dtype
/// defaults to f32 as in bench/run. False when there is none or it is
/// malformed.
bool parseFloorLine(const std::string &text, double &bytes, double &flops, std::string &dtype);

/// The name of GPU 0 as nvidia-smi reports it; "" when there is none.
std::string queryGpuName();

Expected<EvalResults> evaluateProgramBundle(const ProgramBundle &bundle,
                                            const ProgramEvalOptions &options);

} // namespace cudal1

#endif
