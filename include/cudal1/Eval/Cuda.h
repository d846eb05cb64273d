// The GPU-facing entry points of the evaluator, in std types only. Their
// implementations in lib/Eval/Cuda/ are the only code that calls the driver
// API and NVRTC.
#ifndef CUDAL1_EVAL_CUDA_H
#define CUDAL1_EVAL_CUDA_H

#include "cudal1/Eval/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cudal1::cuda {

/// Name of GPU `ordinal`, or an error when there is no driver or no such GPU.
Expected<std::string> deviceName(int ordinal);

/// Compiles one self-contained CUDA source with NVRTC into a cubin.
/// `log` receives NVRTC's log either way.
Expected<std::vector<uint8_t>> compileWithNvrtc(const std::string &source, const std::string &name,
                                                const std::vector<std::string> &options,
                                                std::string &log);

/// What a worker process is asked to do (cudal1-eval --worker ...).
struct WorkerArgs {
  /// "verify", "time", or "serve": a kept worker (KeptWorkers.h) that
  /// answers verify and time requests at `socket` until told to stop.
  std::string mode;
  std::string bundleDir;
  std::string workDir; ///< holds ID.cubin; the worker writes its report here
  /// verify: the candidates, verified in order until the first that is
  /// not ok; time: the original first, then the verified variants.
  std::vector<std::string> ids;
  int gpu = 0;
  /// verify: seconds one candidate may take (0: no limit); past it the
  /// worker writes its report (outcome timeout) and exits with code 4.
  double candidateTimeout = 0;
  double windowSeconds = 2;
  /// time: variants that cannot win stop being timed, and the window ends
  /// once the race is decided (Stats.h, raceVerdict); false: every variant
  /// for the whole window.
  bool race = true;
  uint64_t seed = 1;
  std::string socket;       ///< serve: where to listen
  double idleSeconds = 300; ///< serve: exit after this long without a request
};

/// Holds a context on GPU `gpu` until standard input closes (the process
/// that started it ended or let go) or maxSeconds pass (<= 0: no limit).
/// Why: a CUDA process starts in about 290 ms on an idle H100 and 165 ms
/// while another process holds a context (bench/startup), and the
/// whole-program judge starts one per run (ContextHolder.h). Prints
/// "holding NAME" once the context exists; 0 when it ended as asked, 2 when
/// no context could be made (the reason on stderr).
int holdContext(int gpu, double maxSeconds);

/// Runs a worker in this process (meant to be a child: a fault kills it).
/// Writes WORK/ID.verify (one per candidate reached) or WORK/timing.txt; the
/// exit code says whether the reports are complete (0), our setup failed (2),
/// the worker stopped on a CUDA error (3) or a candidate's time limit (4).
int runWorker(const WorkerArgs &args);

} // namespace cudal1::cuda

#endif
