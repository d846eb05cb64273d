// Training the policy from tuning databases (cudal1-train; docs/Policy.md,
// "Training"). Stage (a) of issue 17: supervised, a within-kernel pairwise
// ranking loss on measured log speedups (ties within the measured noise
// ignored), imitation of the best plan, regression of the speedup with a
// learned variance and classification of verification.
#ifndef CUDAL1_POLICY_TRAIN_H
#define CUDAL1_POLICY_TRAIN_H

#include "cudal1/Policy/Policy.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace cudal1 {

/// One plan as measured for a kernel, repeated measurements merged.
struct MeasuredPlan {
  std::vector<PlanStep> steps;
  std::string text;
  Outcome outcome = Outcome::NotRun; ///< a wrong result anywhere makes it wrong
  bool timed = false;
  double logSpeedup = 0; ///< mean over the timed measurements
  double noise = 0;      ///< half-width of the (widest) log interval
  unsigned measurements = 0;
};

enum class Split { Train, Validation, Test };
const char *splitName(Split s);

/// A kernel on one GPU with everything measured for it.
struct KernelData {
  KernelState state;
  std::string program; ///< the program it belongs to (see loadDataset)
  Split split = Split::Train;
  std::vector<MeasuredPlan> plans;
};

struct Dataset {
  std::vector<KernelData> kernels; ///< sorted by key, then GPU
  int featureVersion = 0;
  unsigned measurements = 0, skipped = 0;
  std::vector<std::string> notes; ///< why measurements were skipped
};

struct SplitOptions {
  unsigned validationPercent = 10, testPercent = 10;
  /// "DB-FILE-NAME#SESSION" → program (bench/data/programs.tsv): sessions of
  /// one program join, and the program's name is its id.
  std::map<std::string, std::string> sessionPrograms;
  /// Fixed splits by program name or stem (bench/splits: the corpus test
  /// split is never trained on); other programs go by their hash.
  std::map<std::string, Split> programSplits;
};

/// The split of a program: a fixed one (by the name, else its file stem),
/// else FNV-1a of its id modulo 100, so that a program stays on its side
/// whatever else the data holds.
Split splitOf(const std::string &program, const SplitOptions &options);

/// Reads bench/data/programs.tsv (FILE<TAB>SESSION<TAB>PROGRAM) into
/// options.sessionPrograms; errors name the file and line.
llvm::Error readSessionPrograms(const std::string &path, SplitOptions &options);
/// Reads DIR/{train,validation,test}.txt (one program per line, '#'
/// comments) into options.programSplits.
llvm::Error readProgramSplits(const std::string &dir, SplitOptions &options);

/// Merges the databases' measurements by (kernel key, GPU model) and plan.
/// Combination entries ("program:...") and the original (the empty plan)
/// are not candidates. A program is a connected group of kernels and
/// sessions: kernels measured in one session belong together (one
/// --tune run is one file), and a kernel key seen in two sessions joins
/// them, so that near-identical kernels stay on one side of the split.
/// Features are read at `featureVersion` from the first database that has them.
llvm::Expected<Dataset> loadDataset(const std::vector<std::string> &databases, int featureVersion,
                                    const SplitOptions &split);

/// Writes one new database (this cudal1's schema) holding every measurement
/// of `databases`, in order, and the kernels' features at `featureVersion`;
/// inputs of older schemas are migrated in temporary copies. Refuses an
/// existing `out`. Best choices are not copied: they belong to a user's builds.
llvm::Error exportMerged(const std::vector<std::string> &databases, const std::string &out,
                         int featureVersion, unsigned &measurements);

struct TrainOptions {
  std::string outDir;
  bool overwrite = false;
  std::string curveFile; ///< empty: OUTDIR/curve.txt
  uint64_t seed = 1;
  unsigned epochs = 200, hidden = 64, evalEvery = 10;
  double learningRate = 3e-3;
  std::string dataNote; ///< recorded in the model (the databases)
};

struct SplitScore {
  unsigned kernels = 0, pairs = 0;
  unsigned refused = 0; ///< kernels the model refused (scored as the heuristic would)
  double pairAccuracy = 0, top1 = 0;
};

struct TrainSummary {
  unsigned trainKernels = 0, validationKernels = 0, testKernels = 0;
  SplitScore train, validation, test; ///< of the final model
  std::string curve;                  ///< the training curve as written
};

/// Fits the encoding on the training split, trains, writes the model and
/// the curve. Deterministic for a seed.
llvm::Expected<TrainSummary> trainPolicy(const Dataset &data, const TrainOptions &options);

/// Scores a kernel's timed plans (higher: expected faster); may set
/// `refused` when it stood in for a model that refused the kernel.
using RankFn = std::function<llvm::Expected<std::vector<double>>(
    const KernelData &, const std::vector<const MeasuredPlan *> &, bool &refused)>;
/// Pairwise accuracy on non-tied pairs (a predicted tie counts half) and the
/// share of kernels (with a clear best) whose top-scored plan is the best
/// measured, on the timed plans of a split.
llvm::Expected<SplitScore> evaluateRanking(const Dataset &data, Split split, const RankFn &rank);
/// The policy's ranking; a kernel it refuses is ranked as the heuristic
/// would (as the strategy then proposes).
llvm::Expected<SplitScore> evaluatePolicy(const Policy &policy, const Dataset &data, Split split);
/// The heuristic's order: singles by heuristicRank, compositions after them.
llvm::Expected<SplitScore> evaluateHeuristic(const Dataset &data, Split split);

} // namespace cudal1

#endif
