// Candidates evaluated as whole programs: written as a program bundle
// (docs/formats/program-bundle.md) and run by the program-level evaluator,
// here (a GPU is present) or on another machine (the split path:
// cudal1-opt --emit-bundle, cudal1-eval, cudal1-opt --import-results).
#ifndef CUDAL1_TUNE_PROGRAMEVALUATOR_H
#define CUDAL1_TUNE_PROGRAMEVALUATOR_H

#include "cudal1/Eval/ProgramEval.h"
#include "cudal1/Tune/Tuner.h"

#include <string>
#include <vector>

namespace cudal1 {

struct ProgramSetup {
  std::string originalFile; ///< the user's source (its directory's headers are copied)
  /// {src} {exe} {bundle} are replaced (ProgramBundle::build / run).
  std::vector<std::string> build = {"nvcc", "-O3", "-arch=sm_90", "{src}", "-o", "{exe}"};
  std::vector<std::string> run = {"{exe}"};
  std::string timeRegex; ///< empty: whole-process wall time
  std::string ignoreRegex;
  double rel = 1e-4; ///< relative tolerance on printed numbers
  /// The reference program's source (deriveReferenceProgram), written to
  /// bundles as reference.cu; "" judges variants against the original's
  /// output.
  std::string referenceSource;
};

/// Writes DIR/manifest.txt, DIR/original.cu (a copy of the user's file), one
/// source per candidate, the headers next to the user's file that it
/// includes with quotes, and DIR/plans.tsv (id, kernel key, kernel, plan,
/// hash); the manifest carries the same variantHash per variant. Returns
/// the bundle written, so that an evaluator in this process takes it as it
/// is instead of reading the manifest back.
Expected<ProgramBundle> writeProgramBundle(const std::string &dir, const ProgramSetup &setup,
                                           const std::vector<Candidate> &candidates,
                                           const std::vector<std::string> &kernelKeys,
                                           const std::vector<std::string> &kernelNames);

/// One line of plans.tsv.
struct BundlePlan {
  std::string id, kernelKey, kernel, plan;
  std::string hash; ///< variantHash(plan, source); "" in bundles before issue 19
};
Expected<std::vector<BundlePlan>> readBundlePlans(const std::string &dir);

/// Success when every result in `results` (DIR/results.txt) was measured on
/// the plan and source that DIR holds now: its hash equals variantHash of
/// the plan in plans.tsv and the variant's source file (the original: of
/// "" and original.cu), and the manifest's and plans.tsv's hashes agree.
/// Otherwise an error naming the variant, e.g. after a new bundle was
/// emitted into an evaluated bundle's directory. A result without a hash
/// (cudal1-eval before issue 19) is refused: ids alone do not show which
/// plan was measured.
Status checkResultsMatch(const std::string &dir, const std::vector<BundlePlan> &plans,
                         const EvalResults &results);

/// A variant's result as the tuner takes it: its Measurement, with the
/// original's time and samples of the same evaluation as the baseline and
/// the verification mismatches after its details.
Measurement candidateMeasurement(const VariantResult &v, const VariantResult &original);

class ProgramEvaluator : public VariantEvaluator {
public:
  /// The reference program's run is kept in options.referenceCache (made
  /// here when null): give the same cache to every program evaluator of a
  /// session and it is built and run once.
  ProgramEvaluator(ProgramSetup setup, ProgramEvalOptions options,
                   std::vector<std::string> kernelKeys, std::vector<std::string> kernelNames);
  std::shared_ptr<ProgramReferenceRun> referenceRun() const { return options.referenceCache; }
  /// The executables built so far (options.buildCache, made here when
  /// null): give it to a later evaluator of the session (the check).
  std::shared_ptr<ProgramBuildCache> builds() const { return options.buildCache; }
  /// The original's runs so far (options.originalRuns, made here when null).
  std::shared_ptr<ProgramOriginalRuns> originalRuns() const { return options.originalRuns; }
  /// Builds the candidates' programs into the cache, on half the cores (a
  /// replay may be timing beside it), running nothing.
  void prepare(const std::vector<Candidate> &candidates) override;
  llvm::Expected<std::vector<Measurement>>
  evaluate(const std::vector<Candidate> &candidates) override;
  /// The GPU the last evaluation ran on.
  std::string gpuName() const override { return gpu; }
  /// The original's result in the last evaluation (its roofline floor).
  const VariantResult &lastOriginal() const { return original; }
  /// Seconds its evaluations spent building (what prepare() had not built)
  /// and running; prepare()'s own builds, beside a replay, in neither.
  double buildSeconds() const { return buildWall; }
  double runSeconds() const { return runWall; }
  /// Of runSeconds: the original's and the reference's runs, verification
  /// (and screening) runs, timing rounds.
  double originalRunSeconds() const { return originalWall; }
  double verifyRunSeconds() const { return verifyWall; }
  double roundsRunSeconds() const { return roundsWall; }

private:
  ProgramSetup setup;
  ProgramEvalOptions options;
  std::vector<std::string> keys, names;
  std::string gpu;
  VariantResult original;
  unsigned batch = 0;
  double buildWall = 0, runWall = 0, originalWall = 0, verifyWall = 0, roundsWall = 0;
};

} // namespace cudal1

#endif
