// cudal1-opt's tuning modes: --tune (evaluate here, a GPU is needed),
// --emit-bundle DIR and --import-results DIR (the split path through
// cudal1-eval on a GPU machine). docs/cudal1-opt.md, "Tuning".
#ifndef CUDAL1_OPT_TUNEMODE_H
#define CUDAL1_OPT_TUNEMODE_H

#include "cudal1/Rewrite/PlanDriver.h"

#include <string>
#include <vector>

namespace cudal1 {

struct TuneModeOptions {
  enum Mode { Tune, EmitBundle, ImportResults } mode = Tune;
  std::string bundleDir;
  /// Earlier bundles of the same file, evaluated: their results are
  /// absorbed first (--emit-bundle proposes the next round from them,
  /// --import-results chooses across all of them).
  std::vector<std::string> continueFrom;
  unsigned budget = 32;
  double timeLimit = 0;
  unsigned race = 0;       ///< --tune: time only this many per round (0: all)
  unsigned screen = 1;     ///< --tune: runs per variant that rank the race
  std::string strategy = "heuristic";
  uint64_t seed = 1;
  std::string dbPath;      ///< empty: no database
  std::string buildCmd;    ///< words; {src} {exe}; empty: nvcc -O3 -arch=sm_90
  std::string runCmd;      ///< words; {exe}; empty: the program alone
  std::string timeRegex;
  std::string ignoreRegex;
  double relTol = 1e-4;
  std::string outputFile = "-";
  std::string arch = "sm_90";
  std::string reportFile;     ///< empty: no HTML report (docs/Report.md)
  std::string reportCeilings; ///< bench/roofline/ceilings output; empty: nominal
};

/// Returns the process exit code (the same codes as the other modes).
int runTuneMode(const RewriteInput &input, const TuneModeOptions &options);

} // namespace cudal1

#endif
