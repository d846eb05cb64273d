//===- EvalArgs.cpp - cudal1-eval's flags ---------------------------------===//
#include "cudal1/Eval/EvalArgs.h"
#include "cudal1/Eval/Numbers.h"

#include <algorithm>
#include <cstdint>

namespace cudal1 {

Expected<EvalArgs> parseEvalArgs(const std::vector<std::string> &words) {
  EvalArgs out;
  EvalRequest &req = out.request;
  EvalOptions &opts = req.options;
  cuda::WorkerArgs &worker = req.worker;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string &a = words[i];
    std::string error;
    auto value = [&]() -> std::string {
      if (i + 1 >= words.size()) {
        error = a + " needs a value";
        return "";
      }
      return words[++i];
    };
    // Finite numbers only, so that the int casts below are defined.
    auto num = [&]() -> double {
      std::string v = value();
      double d = 0;
      if (error.empty() && !parseFinite(v, 0, 1e9, d))
        error = a + ": '" + v + "' is not a number from 0 to 1e9";
      return d;
    };
    if (a == "--help" || a == "-h") {
      out.help = true;
      return out;
    } else if (a == "--version") {
      out.version = true;
      return out;
    } else if (a == "--probe")
      req.probe = true;
    else if (a == "--hold-context")
      req.holdContext = true;
    else if (a == "--hold-max")
      req.holdSeconds = num();
    else if (a == "--gpu")
      opts.gpu = worker.gpu = int(num());
    else if (a == "--jobs")
      opts.jobs = int(num());
    else if (a == "--time-budget")
      opts.timeBudget = num();
    else if (a == "--window")
      opts.window = worker.windowSeconds = num();
    else if (a == "--original-verified")
      opts.originalVerified = true;
    else if (a == "--time-all")
      opts.race = worker.race = false;
    else if (a == "--rounds")
      req.rounds = std::max(1, int(num()));
    else if (a == "--race")
      req.race = int(num());
    else if (a == "--screen")
      req.screen = std::max(1, int(num()));
    else if (a == "--verify-jobs")
      opts.verifyParallel = std::max(1, int(num()));
    else if (a == "--verify-bundles")
      opts.bundlesParallel = std::max(1, int(num()));
    else if (a == "--verify-batch")
      opts.verifyBatch = int(num());
    else if (a == "--timeout")
      opts.verifyTimeout = num();
    else if (a == "--seed") {
      std::string v = value();
      uint64_t seed = 0;
      if (error.empty() && !parseInteger<uint64_t>(v, 0, UINT64_MAX, seed))
        error = "--seed: '" + v + "' is not an unsigned integer";
      opts.seed = worker.seed = seed;
    } else if (a == "--keep-work")
      opts.workDir = value(), opts.keepWork = true;
    else if (a == "--compile-cache")
      opts.compileCache = value();
    else if (a == "--phases")
      req.phasesFile = value();
    else if (a == "--keep-workers")
      opts.keptWorkers = value();
    else if (a == "--worker-idle")
      opts.keptWorkerIdle = worker.idleSeconds = num();
    else if (a == "--socket")
      worker.socket = value();
    else if (a == "-o" || a == "--output")
      req.output = value();
    else if (a == "--worker")
      worker.mode = value();
    else if (a == "--bundle")
      worker.bundleDir = value();
    else if (a == "--work")
      worker.workDir = value();
    else if (a == "--candidate-timeout")
      worker.candidateTimeout = num();
    else if (a == "--id")
      worker.ids.push_back(value());
    else if (!a.empty() && a[0] == '-')
      error = "unknown option " + a;
    else
      req.bundleDirs.push_back(a);
    if (!error.empty())
      return makeError(error);
  }
  if (worker.mode.empty() && !req.probe && !req.holdContext && req.bundleDirs.empty())
    return makeError("no bundle given");
  return out;
}

} // namespace cudal1
