// What an evaluation produced, per variant: the verification status kept
// apart from the timings (docs/formats/bundle.md, "Results").
#ifndef CUDAL1_EVAL_RESULTS_H
#define CUDAL1_EVAL_RESULTS_H

#include "cudal1/Eval/Error.h"
#include "cudal1/Eval/Outcome.h"

#include <string>
#include <vector>

namespace cudal1 {

constexpr int kResultsVersion = 1;

struct VariantResult {
  std::string id;
  Outcome outcome = Outcome::NotRun;
  /// What was measured: the manifest's plan hash and the hash of the
  /// source built (program bundles, variantHash in ProgramBundle.h); empty
  /// in results written before issue 19 or for bundles without hashes.
  std::string hash;
  std::string compiler; ///< nvrtc or nvcc
  double compileSeconds = 0;
  std::string verifyMode; ///< double-reference or fallback (...)
  double timeMs = 0;      ///< median of bucket averages, per workload
  double speedup = 0, lo = 0, hi = 0;
  bool timed = false;
  bool faster = false;     ///< interval above 1.0
  bool suspicious = false; ///< speedup above 10x: look again
  bool sideWork = false;   ///< work ran past the stop event
  int rounds = 0;
  /// The times (ms) that entered the statistics, in round order; empty in
  /// results written before they were recorded (docs/formats/bundle.md).
  std::vector<double> samplesMs;
  /// The program's own roofline floor, from its `floor: bytes=B flops=F
  /// dtype=D` line (bench/corpus/common.h); the original's result only.
  bool haveFloor = false;
  double floorBytes = 0, floorFlops = 0;
  std::string floorDtype;
  std::vector<std::string> details;    ///< messages, compile log excerpts
  std::vector<std::string> mismatches; ///< "arg 2 [17]: expected ... got ..."
};

struct EvalResults {
  std::string bundle;
  std::string gpu;
  std::string date;
  double wallSeconds = 0;
  std::vector<VariantResult> results; ///< the original first
  const VariantResult *find(const std::string &id) const;
};

std::string formatResults(const EvalResults &r);
Expected<EvalResults> parseResults(const std::string &text, const std::string &name);
Status writeResults(const std::string &path, const EvalResults &r);
Expected<EvalResults> readResults(const std::string &path);

} // namespace cudal1

#endif
