// Training the policy from tuning databases (cudal1-train; docs/Policy.md,
// "Training"), the three stages of issue 17: (a) supervised, a within-kernel
// pairwise ranking loss on measured log speedups (ties within the measured
// noise ignored), imitation of the best plan, regression of the speedup with
// a learned variance and classification of verification; (b) correctness,
// which plans and compositions verify, from every recorded outcome; (c)
// contrastive RL offline, episodes of turns answered from the measurements,
// GRPO advantages, a KL term to the (a)/(b) policy and importance weights
// from the recorded proposal probabilities.
#ifndef CUDAL1_POLICY_TRAIN_H
#define CUDAL1_POLICY_TRAIN_H

#include "cudal1/Policy/Policy.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
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
  double logLo = 0;      ///< mean log of the interval's lower end (stage (c)'s reward)
  unsigned measurements = 0;
  /// The mean proposal probability recorded with its measurements; 0 when
  /// none was (imported or user plans).
  double probability = 0;
  /// Its effect (Tune/Effect.h), when its program's source was at hand
  /// (attachEffects).
  std::optional<EffectFeatures> effect;
};

/// A legal plan of a kernel's program that no database measured
/// (attachUnmeasured): a target of the heuristic's imitation alone.
struct UnmeasuredPlan {
  std::vector<PlanStep> steps;
  std::string text;
  std::optional<EffectFeatures> effect; ///< attachEffects, as for measured plans
};

enum class Split { Train, Validation, Test };
const char *splitName(Split s);

/// A kernel on one GPU with everything measured for it.
struct KernelData {
  KernelState state;
  std::string program; ///< the program it belongs to (see loadDataset)
  Split split = Split::Train;
  std::vector<MeasuredPlan> plans;
  /// Per recorded session, the plans it measured for this kernel in the
  /// order they were recorded (indices into `plans`): the episodes other
  /// strategies played (stage (c) replays them).
  std::vector<std::vector<unsigned>> episodes;
  /// Legal plans nobody measured (outside the test split only).
  std::vector<UnmeasuredPlan> unmeasured;
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

/// Where the effects of measured plans come from: the programs' sources.
struct EffectOptions {
  /// Programs (the dataset's program names, bench/data/programs.tsv) are
  /// paths relative to this directory.
  std::string sourceRoot = ".";
  /// Effects computed before (a TSV: effect version, kernel key, plan,
  /// values), read first and written back with the new ones; empty: none.
  std::string cacheFile;
  /// One line per program while computing (effects cost a parse per plan).
  std::function<void(const std::string &)> progress;
};

struct EffectSummary {
  unsigned plans = 0, withEffect = 0, fromCache = 0, computed = 0;
  /// The unmeasured plans (KernelData::unmeasured), beside the measured
  /// ones above; fromCache and computed count both.
  unsigned unmeasuredPlans = 0, unmeasuredWithEffect = 0;
  unsigned kernelsWithoutSource = 0; ///< their program is not a readable file
  unsigned kernelsChanged = 0;       ///< the source's kernel key differs: another version
  double seconds = 0;
};

/// Gives each measured plan its effect: applied to its program's source
/// (when the program names a file and the kernel's key still matches that
/// source), analysed and featurized as the policy strategy does when it
/// proposes (EffectCache). A plan that no longer derives has none.
llvm::Expected<EffectSummary> attachEffects(Dataset &data, const EffectOptions &options);

/// Where the legal plans nobody measured come from (attachUnmeasured).
struct UnmeasuredOptions {
  /// Programs are paths relative to this directory (as EffectOptions).
  std::string sourceRoot = ".";
  /// At most this many per kernel, a seeded sample of the unmeasured legal
  /// plans (0: none).
  unsigned perKernel = 16;
  uint64_t seed = 1;
  std::function<void(const std::string &)> progress;
};

struct UnmeasuredSummary {
  unsigned kernels = 0; ///< kernels given unmeasured plans
  unsigned legal = 0;   ///< legal plans of those kernels nobody measured
  unsigned plans = 0;   ///< of them, kept (the cap)
  unsigned kernelsWithoutSource = 0, kernelsChanged = 0;
  double seconds = 0;
};

/// Gives each kernel outside the test split the legal plans of its program
/// that were never measured, derived as the tuner derives its candidates
/// (collectTuneSpace on the program's source, then the policy strategy's
/// singles and composed steps: policyCandidates, fast-math left out), at
/// most `perKernel` of them, chosen by a hash of the seed, the kernel's key
/// and the plan (deterministic, independent of the data's order). Only
/// where the source's kernel still has the measured key. Call before
/// attachEffects, which then computes their effects too.
llvm::Expected<UnmeasuredSummary> attachUnmeasured(Dataset &data, const UnmeasuredOptions &options);

struct TrainOptions {
  std::string outDir;
  bool overwrite = false;
  std::string curveFile; ///< empty: OUTDIR/curve.txt (and curve.svg beside it)
  uint64_t seed = 1;
  unsigned epochs = 200, hidden = 64, evalEvery = 10;
  double learningRate = 3e-3;
  std::string dataNote; ///< recorded in the model (the databases)
  /// Start from this model (its schema and weights) instead of a new one:
  /// stages (b) and (c) after an earlier (a).
  std::string initModel;
  double effectDropout = 0.3;
  /// Stage (b): epochs of verification.
  unsigned verifyEpochs = 50;
  /// Stage (c): epochs of episodes of `budget` plans in turns of `group`;
  /// wrong and failed plans are rewarded -penalty.
  unsigned rlEpochs = 100, budget = 8, group = 4;
  double temperature = 0.5, klWeight = 0.05, penalty = 1.0, rlLearningRate = 1e-3;
  /// Stage (a)'s losses kept in stage (c) at this weight (0: pure RL).
  double rlAnchor = 0.5;
  /// Trained without: "exemplars" (none in context, the model reads none),
  /// "stage-c", "effect" (plans by their steps alone): the evaluation
  /// protocol's ablations.
  std::set<std::string> ablate;
  /// Every N-th curve point of each stage is saved as a model directory
  /// DIR/checkpoints/STAGE-EPOCH; 0: none.
  unsigned checkpointEvery = 0;
  /// Stage (a)'s imitation of the heuristic's order (a pairwise prior on
  /// plan pairs not both timed; policynet::TrainConfig::heuristicWeight).
  double heuristicWeight = 0;
  /// The unmeasured plans' part of that imitation (KernelData::unmeasured:
  /// ranked as the heuristic ranks them, below every plan measured faster
  /// than the original) at this share of heuristicWeight; 0: unused.
  double unmeasuredShare = 1;
  /// Model selection by grouped k-fold cross-validation over the programs
  /// outside the test split (train and validation splits pooled; 0 or 1:
  /// none, the validation split chooses the epochs kept): per stage the
  /// epoch, and for stage (a) the grid's learning rate and heuristic weight
  /// (empty grids: learningRate, heuristicWeight), by the held-out folds'
  /// pooled pairwise accuracy (then loss; stage (c): return first); then
  /// the model is trained on every non-test program with the chosen values.
  unsigned folds = 0;
  std::vector<double> cvLearningRates, cvHeuristicWeights;
  /// Train exactly the given epochs on the train and validation splits,
  /// selecting nothing (the values a cross-validation chose, given again).
  bool fixedEpochs = false;
  /// One line per fold run done (cross-validation takes minutes).
  std::function<void(const std::string &)> progress;
};

/// Grouped k-fold assignment: per kernel of `data` its fold (0..folds-1),
/// or -1 for the test split, which is never in a fold. A program's kernels
/// share a fold; programs go largest first (in an order the seed decides
/// among equal sizes) to the fold with the fewest kernels. An error when
/// folds < 2 or there are fewer non-test programs than folds.
llvm::Expected<std::vector<int>> assignFolds(const Dataset &data, unsigned folds, uint64_t seed);

/// The heuristic's preference for a plan (higher: tried earlier): singles
/// by heuristicRank, compositions after them.
double heuristicPlanScore(const std::vector<PlanStep> &steps);

/// The ablations cudal1-train knows.
const std::vector<std::string> &knownAblations();

struct SplitScore {
  unsigned kernels = 0, pairs = 0;
  unsigned refused = 0; ///< kernels the model refused (scored as the heuristic would)
  double pairAccuracy = 0, top1 = 0;
  /// The share of kernels with two or more timed plans whose top-scored
  /// plan is within 5% of the best measured one (the oracle): the first
  /// proposal's quality, ties included.
  double within5 = 0;
  unsigned within5Kernels = 0; ///< its denominator
};

struct TrainSummary {
  unsigned trainKernels = 0, validationKernels = 0, testKernels = 0;
  SplitScore train, validation, test; ///< of the final model
  std::string curve;                  ///< the training curve as written
  std::string stages;                 ///< the stages run ("abc")
  /// Stage (c)'s greedy episodes with the final model, per split: the mean
  /// best reward found within the budget and the share of kernels whose
  /// best measured plan was found.
  double trainReturn = 0, validationReturn = 0, trainFound = 0, validationFound = 0;
  /// The values the final run used (chosen by cross-validation when
  /// TrainOptions::folds >= 2), and the cross-validation's table (also
  /// OUTDIR/cv.txt; empty without it).
  unsigned epochsA = 0, epochsB = 0, epochsC = 0;
  double learningRate = 0, heuristicWeight = 0;
  std::string crossValidation;
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
