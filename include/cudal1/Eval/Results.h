// What an evaluation produced, per variant: the verification status kept
// apart from the timings (docs/formats/bundle.md, "Results").
#ifndef CUDAL1_EVAL_RESULTS_H
#define CUDAL1_EVAL_RESULTS_H

#include "cudal1/Eval/Error.h"
#include "cudal1/Eval/Measurement.h"

#include <string>
#include <vector>

namespace cudal1 {

constexpr int kResultsVersion = 1;

/// One variant's line of a results file: the Measurement (outcome, times,
/// samples, compiler, verify mode, messages) and what the file adds to it.
/// The judge is not written: replay results are judged by their verify
/// mode (ReplayEvaluator), program results by the program; the baseline
/// figures stay empty here, the original's own result holds them.
struct VariantResult : Measurement {
  std::string id;
  /// What was measured: the manifest's plan hash and the hash of the
  /// source built (program bundles, variantHash in ProgramBundle.h); empty
  /// in results written before issue 19 or for bundles without hashes.
  std::string hash;
  /// The program's own roofline floor, from its `floor: bytes=B flops=F
  /// dtype=D` line (bench/corpus/common.h); the original's result only.
  bool haveFloor = false;
  double floorBytes = 0, floorFlops = 0;
  std::string floorDtype;
  std::vector<std::string> mismatches; ///< "arg 2 [17]: expected ... got ..."
};

struct EvalResults {
  std::string bundle;
  std::string gpu;
  std::string date;
  double wallSeconds = 0;
  /// Of wallSeconds, the build step's (not written to results files).
  double buildSeconds = 0;
  /// Of wallSeconds (program bundles, not written either): the original's
  /// and the reference program's runs, the variants' verification and
  /// screening runs, and the timing rounds.
  double originalSeconds = 0, verifySeconds = 0, roundsSeconds = 0;
  std::vector<VariantResult> results; ///< the original first
  const VariantResult *find(const std::string &id) const;
};

std::string formatResults(const EvalResults &r);
Expected<EvalResults> parseResults(const std::string &text, const std::string &name);
Status writeResults(const std::string &path, const EvalResults &r);
Expected<EvalResults> readResults(const std::string &path);

} // namespace cudal1

#endif
