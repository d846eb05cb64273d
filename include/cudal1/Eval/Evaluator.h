// The evaluator: compiles a bundle's variants, verifies each in its own
// process, times the verified ones against the original in one session and
// returns the measurements. cudal1-eval and the tuning driver both call it.
#ifndef CUDAL1_EVAL_EVALUATOR_H
#define CUDAL1_EVAL_EVALUATOR_H

#include "cudal1/Eval/Bundle.h"
#include "cudal1/Eval/Error.h"
#include "cudal1/Eval/Results.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cudal1 {

struct EvalOptions {
  int gpu = 0;
  int jobs = 0;          ///< parallel compiles; 0: all cores
  double timeBudget = 0; ///< seconds for the whole evaluation; 0: none
  double window = 0;     ///< timing window in seconds; 0: automatic
  /// Kernel bundles: racing in the timing window (WorkerArgs::race); false
  /// times every verified variant for the whole window (--time-all).
  bool race = true;
  /// Kernel bundles: the original was verified against the same capture
  /// and reference in an earlier evaluation of this session (the tuner's
  /// later batches): it is not verified again (--original-verified).
  bool originalVerified = false;
  double verifyTimeout = 30; ///< per-candidate limit (a hang is killed)
  /// Verification workers at a time. 1 by default: running several on one
  /// GPU has not been validated on the H200 yet (the CONTEXT_IS_DESTROYED
  /// failures first blamed on concurrency came from a driver-ABI bug, since
  /// fixed in lib/Eval/Cuda/Driver.h).
  int verifyParallel = 1;
  /// Bundles verified side by side when one evaluation holds several (a
  /// tuner round of several kernels): each with its own workers, all before
  /// any bundle is timed (issue 15 item 5). 1: one bundle after another.
  int bundlesParallel = 4;
  /// Candidates one verification worker takes in turn (0: all of its
  /// queue). A worker stops at the first candidate that is not ok, so a
  /// fault never judges the next one; 1 is a process per candidate.
  int verifyBatch = 0;
  std::string workDir; ///< empty: a fresh directory under $TMPDIR
  /// Compiled cubins by content, kept across evaluations of one session
  /// (CompileJob::cacheDir): the original and the reference compile once.
  std::string compileCache;
  bool keepWork = false;
  uint64_t seed = 1;
  /// The cudal1-eval executable that runs workers (--worker ...). Empty:
  /// $CUDAL1_EVAL, else this process's own executable.
  std::string workerExecutable;
  /// Kept workers (KeptWorkers.h): a directory where one worker per kernel
  /// (and verification slot) stays alive between evaluations with its
  /// set-up. Empty: a worker process per request.
  std::string keptWorkers;
  double keptWorkerIdle = 300; ///< seconds a kept worker waits for a request
  /// Receives one-line progress messages ("compile 3/12", ...).
  std::function<void(const std::string &)> progress;
};

/// Evaluates a bundle. An error means the evaluation itself could not run
/// (bad bundle or capture, no GPU, the original does not compile); faults of
/// candidates are results, not errors.
Expected<EvalResults> evaluateBundle(const Bundle &bundle, const EvalOptions &options);

/// Where an evaluation's time went (seconds since it began: compile
/// includes reading the captures).
struct EvalPhaseTimes {
  double compile = 0, verify = 0, timing = 0;
  /// Of timing: the timing workers' rounds (their window-s), the rest
  /// being their starts, set-up and warm-ups.
  double timingRounds = 0;
  unsigned compiled = 0, cached = 0, verified = 0;
  /// Worker requests, and those that found their kernel's set-up kept by
  /// an earlier one (kept workers).
  unsigned setups = 0, keptSetups = 0;
};

/// Evaluates several bundles: the variants of all of them are compiled in
/// one pool over all cores, then each bundle is verified and timed on its
/// own, in order. One result per bundle, as evaluateBundle gives it.
std::vector<Expected<EvalResults>> evaluateBundles(const std::vector<Bundle> &bundles,
                                                   const EvalOptions &options,
                                                   EvalPhaseTimes *phases = nullptr);

/// Computes speedups from per-round samples (exposed for tests): fills
/// time, speedup, interval, faster, suspicious and side-work of `v`
/// relative to the original's samples.
void summarizeTiming(const std::vector<double> &originalT, const std::vector<double> &originalAll,
                     const std::vector<double> &t, const std::vector<double> &all, uint64_t seed,
                     VariantResult &v);

/// A fixed-width table of the results for people.
std::string formatSummary(const EvalResults &results);

} // namespace cudal1

#endif
