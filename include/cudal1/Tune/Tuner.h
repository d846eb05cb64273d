// The tuning driver (DESIGN.md, "Tuning"): for each kernel of a translation
// unit, ask a search strategy for plans, derive the variants, have them
// evaluated, keep every measurement, and choose per kernel the best plan
// whose speedup interval lies above 1.0; repeat in rounds within a budget.
// The evaluator is an interface: in-process program evaluation where a GPU
// is present, a scripted one in tests, a bundle for another machine.
#ifndef CUDAL1_TUNE_TUNER_H
#define CUDAL1_TUNE_TUNER_H

#include "cudal1/Eval/Measurement.h"
#include "cudal1/Rewrite/PlanDriver.h"
#include "cudal1/Tune/KernelState.h"
#include "cudal1/Tune/Space.h"
#include "cudal1/Tune/Strategy.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cudal1 {

/// Candidate::kernel of the kernels' best plans measured together.
constexpr size_t kCombination = kNoKernel;
/// At most this many combinations of the kernels' bests are measured per
/// round (Tuner::combinations).
constexpr size_t kMaxCombinations = 3;
/// With one kernel tuned by replay, its best and the runners-up whose lower
/// end is at least kFinalistShare of the best's, at most kMaxFinalists in
/// all, are measured as whole programs (Tuner::programLevelBests).
constexpr size_t kMaxFinalists = 3;
constexpr double kFinalistShare = 0.95;

/// A plan and the source it derives: what is built and measured. The plan
/// travels as data beside the source, never inside it.
struct Variant {
  Plan plan;
  std::string source;             ///< the rewritten translation unit
  std::vector<std::string> links; ///< libraries to link (-l<name>)
  bool fastMath = false;          ///< verified with the fast-math tolerance
};

/// A derived variant: one kernel's plan applied to the whole unit.
struct Candidate {
  std::string id;    ///< "v003"; "combined" for the combination
  size_t kernel = 0; ///< into TuneSpace::kernels, or kCombination
  Variant variant;
  std::string strategy;   ///< which strategy proposed it ("" when imported)
  double probability = 1; ///< with which probability it was proposed
  /// Judged as a whole program whatever its plan: a kernel's best plan
  /// measured once more so that the final choice compares program-level
  /// speedups only (Tuner::summary). Not a candidate for the kernel's best.
  bool wholeProgram = false;
  std::string planText() const { return printPlan(variant.plan); }
};

/// The number of a variant id `vNNN` (Tuner's ids); none for other ids,
/// for digits that do not fit an unsigned, and for the largest unsigned
/// (the next id must exist).
std::optional<unsigned> variantNumber(llvm::StringRef id);

/// The variant of a plan: derived from the input, links and fast-math from
/// its steps.
llvm::Expected<Variant> deriveVariant(const RewriteInput &input, const Plan &plan);
/// The same from a source already derived for the plan (applyPlans).
Variant makeVariant(Plan plan, std::string source);

class VariantEvaluator {
public:
  virtual ~VariantEvaluator();
  /// One Measurement per candidate, in the order of `candidates`, with the
  /// original's time and samples of the same evaluation as its baseline.
  /// Its times and speedup are of what its judge measured: the kernel's
  /// own time over its captured launches (replay) or the whole program's
  /// (Judge::Program); the two are never compared with each other. An
  /// error only when the evaluation as a whole could not run (the original
  /// fails, no GPU).
  virtual llvm::Expected<std::vector<Measurement>>
  evaluate(const std::vector<Candidate> &candidates) = 0;
  virtual std::string gpuName() const = 0;
  /// Work for a later evaluate(candidates) that leaves the GPU alone
  /// (building the programs), done while another evaluator has the GPU.
  /// evaluate() does not depend on it having run. Default: nothing.
  virtual void prepare(const std::vector<Candidate> &) {}
};

struct TuneOptions {
  unsigned budget = 32;  ///< variants evaluated in all (not counting refused plans)
  unsigned perRound = 8; ///< variants per evaluation round
  double timeLimit = 0;  ///< seconds; 0: none
  bool combine = true;   ///< try the per-kernel bests together at the end
  std::function<void(const std::string &)> progress;
};

/// One evaluated (or refused) candidate: what was measured and, beside it,
/// what was asked and when.
struct TuneRecord {
  Candidate candidate; ///< source cleared after evaluation
  Measurement result;
  unsigned round = 0;
};

struct KernelBest {
  std::string kernel, key;
  Plan plan; ///< empty: keep the original
  double speedup = 1, lo = 1, hi = 1;
  Judge judge = Judge::Program; ///< who measured speedup, lo, hi
  /// The plan's whole-program figures, when it was measured as a whole
  /// program (judged so, or once more for the final choice) and was
  /// verified and faster there.
  bool haveProgram = false;
  double programSpeedup = 1, programLo = 1, programHi = 1;
  unsigned tried = 0, correct = 0;
  /// The plan is part of the final plan: verified and timed together with
  /// the other parts. Only these become the database's best choices, so
  /// that the plugin builds what was measured, not an untried combination.
  bool inFinal = false;
};

/// The final plan measured once more on its own (checkReproducible): the
/// evaluator's Measurement as it came, and the judgement of it.
struct ReproCheck {
  Measurement measured;
  double drift = 0;                    ///< the original's, in the same measurement
  double checkedLo = 0, checkedHi = 0; ///< the interval widened by the drift
  bool passed = false;
  std::string detail;
  /// Whether the check ran correct and timed (it has figures).
  bool timed() const { return measured.outcome == Outcome::Ok && measured.timed; }
};

struct TuneResult {
  std::vector<TuneRecord> records;
  std::vector<KernelBest> best; ///< per kernel of the space
  /// The plan to build with: the verified combination of the kernels' best
  /// plans, else the single best one; empty when nothing was faster.
  Plan finalPlan;
  double finalSpeedup = 1, finalLo = 1, finalHi = 1;
  /// Who measured the final figures: Judge::Program (whole program) unless
  /// no candidate had whole-program figures and a replayed single plan
  /// was taken on its kernel-level speedup.
  Judge finalJudge = Judge::Program;
  /// The final plan measured again on its own; when it did not pass, the
  /// final plan is empty and `rejectedPlan` holds what it was.
  std::optional<ReproCheck> check;
  Plan rejectedPlan;
  /// The kernels (indices into `best`) whose plans the final plan holds.
  std::vector<size_t> finalKernels;
  /// Nothing was chosen (SessionOptions::searchOnly): no best choice is
  /// recorded, an earlier one stands.
  bool searchOnly = false;
  unsigned rounds = 0, refused = 0;
  std::string gpu;
};

class Tuner {
public:
  Tuner(RewriteInput input, TuneSpace space, SearchStrategy &strategy, TuneOptions options);

  /// Runs rounds until the budget, the time limit or the strategy is spent.
  llvm::Expected<TuneResult> run(VariantEvaluator &evaluator);

  /// The split path: the next round's candidates (derived, not evaluated)...
  std::vector<Candidate> proposeRound(unsigned count);
  /// ...and what came back for them.
  void absorb(const std::vector<Candidate> &candidates, const std::vector<Measurement> &results);
  /// The per-kernel bests from what was absorbed so far, and the final
  /// plan, chosen like with like (docs/Tuning.md, "Choice"): among the
  /// options with whole-program figures (a best plan judged as a whole
  /// program or measured once more so, a verified combination of the
  /// current bests), the surest; only when none has them, the single best
  /// plan on its own judge's figures.
  TuneResult summary() const;
  /// The kernels' best plans judged by replay, as whole-program candidates
  /// (Candidate::wholeProgram) where at least two kernels have a best and
  /// the plan was not measured as a whole program yet: what the final
  /// choice needs to compare a combination with single plans. Where one
  /// kernel has a best, judged by replay, and close runners-up: the
  /// finalists, which the kernel's best is then chosen from by their
  /// whole-program figures (summary()).
  std::vector<Candidate> programLevelBests();
  /// The kernels' current best plans together, as candidates measured as
  /// whole programs (the split path puts them in its next bundle): the
  /// surest plans first, each joined when it still derives with those
  /// before it ("combined"), and for each plan left out, the combination
  /// that starts from it ("combined-2", ...), at most kMaxCombinations in
  /// all. None that joins fewer than two plans or was measured already.
  std::vector<Candidate> combinations(const std::function<void(const std::string &)> &say = {});

  /// Seconds spent deriving the rounds' variants (the passes on the source).
  double deriveSeconds() const { return deriveWall; }

  /// What the strategy sees of kernel k; the session adds the GPU and the
  /// database's exemplars before the first round.
  KernelState &state(size_t k) { return states[k]; }
  const KernelState &state(size_t k) const { return states[k]; }

private:
  /// programLevelBests' single-kernel case: the finalists of the one
  /// kernel with a best in `s`.
  std::vector<Candidate> finalists(const TuneResult &s);
  /// A replayed plan measured once more as a whole program (`whole-ID`),
  /// appended to `out` unless it was measured so already.
  void addWholeProgram(const TuneRecord &replayed, std::vector<Candidate> &out);
  RewriteInput input;
  TuneSpace space;
  SearchStrategy &strategy;
  TuneOptions opts;
  std::vector<KernelState> states;
  TuneResult result;
  unsigned nextId = 0;
  size_t nextKernel = 0;
  double deriveWall = 0;
};

} // namespace cudal1

#endif
