// Program-level evaluation (docs/Evaluator.md, "Whole programs"): builds a
// program bundle's original and variants with the user's command, checks
// each variant's printed output against the original's, and times them in
// interleaved rounds. Results use the kernel-level format and statistics.
#ifndef CUDAL1_EVAL_PROGRAMEVAL_H
#define CUDAL1_EVAL_PROGRAMEVAL_H

#include "cudal1/Eval/Error.h"
#include "cudal1/Eval/ProgramBundle.h"
#include "cudal1/Eval/Results.h"
#include "cudal1/Eval/Verify.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cudal1 {

/// The reference program's run (ProgramBundle::reference): built and run
/// once per session, shared by its evaluations through
/// ProgramEvalOptions::referenceCache.
struct ProgramReferenceRun {
  bool ran = false;    ///< built and run (or tried to)
  bool usable = false; ///< its output has the original's shape: variants are judged by it
  std::vector<std::string> lines; ///< compared lines
  /// What it is (its first line's summary: which kernels were promoted) and,
  /// when not usable, why not; notes of kernels that ran in float.
  std::string note;
};

/// Executables built during a session, by what they were built from: the
/// build command before substitution, the libraries and the source's bytes
/// (programBuildKey). The original of every batch, a plan proposed again
/// and the reproducibility check's two programs are then built once, and a
/// batch's builds can run while another judge has the GPU (issue 15 item 5).
/// Thread-safe; the executables live in a directory of its own, removed
/// with it.
class ProgramBuildCache {
public:
  ProgramBuildCache() = default;
  ~ProgramBuildCache();
  ProgramBuildCache(const ProgramBuildCache &) = delete;
  ProgramBuildCache &operator=(const ProgramBuildCache &) = delete;
  /// The executable built for `key`, "" when there is none.
  std::string find(const std::string &key);
  /// Moves `exe` into the cache under `key` and returns its path there; ""
  /// when it could not (then `exe` stays where it is, uncached).
  std::string insert(const std::string &key, const std::string &exe);
  unsigned hits() const { return hitCount; }
  unsigned builds() const { return buildCount; }

private:
  std::mutex mutex;
  std::string dir;
  std::map<std::string, std::string> exes;
  unsigned hitCount = 0, buildCount = 0;
};

/// The original's runs kept between evaluations of a session
/// (ProgramEvalOptions::originalRuns): its first run's output and how much
/// its numbers moved in every run since, for the build `key` they are of.
/// An evaluation that builds the same original takes them instead of two
/// more runs, and leaves its own runs (the rounds') here for the next.
struct ProgramOriginalRuns {
  std::string key; ///< programBuildKey of the original; "" before any run
  int exitCode = 0;
  std::vector<std::string> first;              ///< compared lines of its first run
  std::string firstRaw;                        ///< that run's stdout (the floor line)
  double firstMs = 0;                          ///< the faster of its first two runs
  std::vector<std::vector<std::string>> later; ///< compared lines of later runs
};

/// The key of one build: the command words (with their {src}/{exe}
/// placeholders), the libraries, and the source.
std::string programBuildKey(const std::vector<std::string> &buildCommand,
                            const std::vector<std::string> &links, const std::string &source);

/// The replay rule's constants at program level (Verify.h's Tolerance): a
/// printed number passes when
///   |v - r| <= k * max_j |o_j - r| + rel * |r| + abs + unit
/// with r the reference program's number, o_j the original's runs, and unit
/// that of the last digit printed in r or v (a printed number is known to
/// its last digit). Integers (every spelling integral) use k alone: exact
/// where the original matches the reference.
struct ReferenceRule {
  double k = Tolerance{}.k;
  double rel = 1e-4; ///< the bundle's tolerance (ProgramBundle::rel)
  double abs = 0;
};

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
  /// With screenRuns > 1: a verified variant whose verification run took
  /// more than (1 + screenMargin) times the raceKeep-th fastest one's is a
  /// clear loser, ranked by that run alone (no more screening runs); 0:
  /// every verified variant is screened.
  double screenMargin = 0;
  /// Racing in the rounds (issue 15 item 5): after a few rounds a variant
  /// that cannot win stops being timed, and the rounds end when one variant
  /// is left and decided faster. Off for a reproducibility check, which
  /// needs its rounds for the original's drift.
  bool stopWhenDecided = false;
  double runTimeout = 60; ///< per run of a program (a hang is killed)
  std::string workDir;    ///< empty: a fresh directory under $TMPDIR
  bool keepWork = false;
  uint64_t seed = 1;
  std::function<void(const std::string &)> progress;
  /// The reference program's run, kept between evaluations (--tune builds
  /// and runs it once per session); null: each evaluation runs it.
  std::shared_ptr<ProgramReferenceRun> referenceCache;
  /// Executables kept between evaluations; null: each evaluation builds
  /// everything it runs.
  std::shared_ptr<ProgramBuildCache> buildCache;
  /// The original's runs kept between evaluations; null: each evaluation
  /// runs the original twice before the variants.
  std::shared_ptr<ProgramOriginalRuns> originalRuns;
  /// A reproducibility check's rounds end early once this says the
  /// samples so far (the original's and the one variant's, paired by
  /// round) decide it; null: they run to maxRounds.
  std::function<bool(const std::vector<double> &original, const std::vector<double> &variant)>
      checkDecided;
  int minCheckRounds = 12; ///< rounds before checkDecided is asked
};

/// Builds the bundle's original and variants into `cache` (nothing runs):
/// what evaluateProgramBundle with the same cache will then find built. The
/// tuner calls it while the GPU replays kernel plans. Variants that do not
/// build are left out; evaluateProgramBundle builds them again and reports
/// their errors.
void prebuildProgramBundle(const ProgramBundle &bundle, int jobs, ProgramBuildCache &cache);

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

/// The program-level double-reference rule (ReferenceRule): lines and text
/// must match the reference's exactly; NaN/Inf must be where the reference
/// has them, or where an original run has them; a finite number where the
/// original is not finite passes. Appends up to `maxMismatches`
/// descriptions; true when everything passes.
bool compareWithReference(const std::vector<std::string> &reference,
                          const std::vector<std::vector<std::string>> &originalRuns,
                          const std::vector<std::string> &variant, const ReferenceRule &rule,
                          std::vector<std::string> &mismatches, size_t maxMismatches = 8);

/// The unit of the last digit of a printed number: 0.01 for "3.14", 1e5
/// for "1.69e+07", 1 for "42"; 0 when it is not a finite number.
double printedUnit(const std::string &number);

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
