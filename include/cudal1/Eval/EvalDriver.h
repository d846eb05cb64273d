//===- EvalDriver.h - What cudal1-eval does with its flags -------*- C++ -*-===//
//
// cudal1-eval parses its flags (without LLVM) into an EvalRequest; this runs
// it: a verification worker, the GPU probe, or a kernel or program bundle
// evaluated into a results file.
//
//===----------------------------------------------------------------------===//
#ifndef CUDAL1_EVAL_EVALDRIVER_H
#define CUDAL1_EVAL_EVALDRIVER_H

#include "cudal1/Eval/Cuda.h"
#include "cudal1/Eval/Evaluator.h"
#include "cudal1/Eval/ProgramBundle.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace cudal1 {

struct EvalRequest {
  /// One program or kernel bundle, or several kernel bundles: those are
  /// compiled in one pool, then verified and timed one after the other.
  std::vector<std::string> bundleDirs;
  std::string output;     ///< empty: BUNDLE/results.txt (one bundle only)
  std::string phasesFile; ///< empty: none; else where the time went (EvalPhaseTimes)
  bool probe = false;
  /// --hold-context: hold a context until stdin closes (cuda::holdContext).
  bool holdContext = false;
  double holdSeconds = 6 * 3600; ///< --hold-max: the holder's own limit
  EvalOptions options;
  cuda::WorkerArgs worker;               ///< worker.mode set: run as a verification worker
  int rounds = 15, race = 0, screen = 1; ///< program bundles only
};

/// Runs the request and returns cudal1-eval's exit code: 0 when the original
/// was verified, 1 for unreadable input, 2 when the evaluation failed, 77
/// from --probe without a GPU.
int runEvalRequest(const EvalRequest &request);

/// How the kernel part of a program bundle is evaluated.
struct KernelPlanRun {
  EvalOptions options;                         ///< for the kernel bundles
  EvalPhaseTimes *phases = nullptr;            ///< where their time went
  double buildTimeout = 600, runTimeout = 600; ///< the instrumented program's
  bool keepWork = false;                       ///< keep the capture's directory
  std::function<void(const std::string &)> say;
};

/// The kernel part of a split-path bundle (cudal1/Eval/KernelPlans.h):
/// builds and runs the instrumented program once to capture the launches,
/// judges each captured kernel's variants by replay (one kernel bundle per
/// kernel, BUNDLE/kernels/kN/results.txt) and writes BUNDLE/kernels/status.txt.
/// Returns the ids judged by replay; the others stay with the program
/// bundle's evaluation. A failed capture or replay is a remark in
/// status.txt (those kernels' plans fall back to whole programs), not an
/// error; an error only for an unreadable manifest or status file.
Expected<std::set<std::string>> evaluateKernelPlans(const ProgramBundle &program,
                                                    const KernelPlanRun &run);

} // namespace cudal1

#endif
