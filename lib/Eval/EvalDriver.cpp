//===- EvalDriver.cpp - cudal1-eval's dispatch ----------------------------===//
#include "cudal1/Eval/EvalDriver.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/ProgramEval.h"

#include <cstdio>
#include <unistd.h>

namespace cudal1 {

int runEvalRequest(const EvalRequest &r) {
  if (!r.worker.mode.empty())
    return cuda::runWorker(r.worker);
  if (r.probe) {
    Expected<std::string> name = cuda::deviceName(r.options.gpu);
    if (!name.ok()) {
      std::printf("no GPU: %s\n", name.error().message().c_str());
      return 77;
    }
    std::printf("%s\n", name->c_str());
    return 0;
  }
  EvalOptions opts = r.options;
  bool terminal = ::isatty(2);
  if (terminal)
    opts.progress = [](const std::string &m) {
      std::fprintf(stderr, "\r\033[K[cudal1-eval] %s", m.c_str());
      std::fflush(stderr);
    };
  // Program bundles (whole programs, built and run) or kernel bundles.
  Expected<std::vector<uint8_t>> manifest = readWholeFile(r.bundleDir + "/manifest.txt");
  bool programLevel =
      manifest.ok() && isProgramManifest(std::string(manifest->begin(), manifest->end()));
  Expected<EvalResults> results = Status::error("not evaluated");
  if (programLevel) {
    Expected<ProgramBundle> pb = readProgramBundle(r.bundleDir);
    if (!pb.ok()) {
      std::fprintf(stderr, "cudal1-eval: %s\n", pb.error().message().c_str());
      return 1;
    }
    ProgramEvalOptions po;
    po.jobs = opts.jobs;
    po.timeBudget = opts.timeBudget;
    po.maxRounds = r.rounds;
    po.raceKeep = r.race;
    po.screenRuns = r.screen;
    po.seed = opts.seed;
    po.progress = opts.progress;
    if (opts.keepWork)
      po.workDir = opts.workDir, po.keepWork = true;
    results = evaluateProgramBundle(*pb, po);
  } else {
    Expected<Bundle> bundle = readBundle(r.bundleDir);
    if (!bundle.ok()) {
      std::fprintf(stderr, "cudal1-eval: %s\n", bundle.error().message().c_str());
      return 1;
    }
    results = evaluateBundle(*bundle, opts);
  }
  if (terminal)
    std::fprintf(stderr, "\r\033[K");
  if (!results.ok()) {
    std::fprintf(stderr, "cudal1-eval: %s\n", results.error().message().c_str());
    return 2;
  }
  std::string output = r.output.empty() ? r.bundleDir + "/results.txt" : r.output;
  if (Status s = writeResults(output, *results); !s.ok()) {
    std::fprintf(stderr, "cudal1-eval: %s\n", s.message().c_str());
    return 2;
  }
  std::fputs(formatSummary(*results).c_str(), stdout);
  std::printf("results: %s (%.1f s on %s)\n", output.c_str(), results->wallSeconds,
              results->gpu.c_str());
  return results->results.front().outcome == Outcome::Ok ? 0 : 2;
}

} // namespace cudal1
