//===- EvalDriver.cpp - cudal1-eval's dispatch ----------------------------===//
#include "cudal1/Eval/EvalDriver.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/KernelPlans.h"
#include "cudal1/Eval/ProgramEval.h"

#include <sys/stat.h>

#include <cstdio>
#include <unistd.h>

namespace cudal1 {

int runEvalRequest(const EvalRequest &r) {
  if (!r.worker.mode.empty())
    return cuda::runWorker(r.worker);
  if (r.holdContext)
    return cuda::holdContext(r.options.gpu, r.holdSeconds);
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
  auto isProgramBundle = [](const std::string &dir) {
    Expected<std::vector<uint8_t>> manifest = readWholeFile(dir + "/manifest.txt");
    return manifest.ok() && isProgramManifest(std::string(manifest->begin(), manifest->end()));
  };
  if (r.bundleDirs.size() > 1 && !r.output.empty()) {
    std::fprintf(stderr, "cudal1-eval: -o takes one bundle; with several, each writes "
                         "BUNDLE/results.txt\n");
    return 1;
  }
  std::vector<Expected<EvalResults>> results;
  EvalPhaseTimes phases;
  if (r.bundleDirs.size() == 1 && isProgramBundle(r.bundleDirs.front())) {
    Expected<ProgramBundle> pb = readProgramBundle(r.bundleDirs.front());
    if (!pb.ok()) {
      std::fprintf(stderr, "cudal1-eval: %s\n", pb.error().message().c_str());
      return 1;
    }
    // Its kernel part (kernels/manifest.txt, --emit-bundle): kernel-level
    // plans judged by replay; what was replayed leaves the program run.
    struct stat sb;
    if (::stat((pb->dir + "/kernels/manifest.txt").c_str(), &sb) == 0) {
      KernelPlanRun kr;
      kr.options = opts;
      kr.options.progress = nullptr;
      kr.phases = &phases;
      kr.keepWork = opts.keepWork;
      kr.say = [terminal](const std::string &m) {
        std::fprintf(stderr, "%s[cudal1-eval] %s\n", terminal ? "\r\033[K" : "", m.c_str());
      };
      Expected<std::set<std::string>> replayed = evaluateKernelPlans(*pb, kr);
      if (!replayed.ok()) {
        std::fprintf(stderr, "cudal1-eval: %s\n", replayed.error().message().c_str());
        return 1;
      }
      std::vector<ProgramVariant> rest;
      for (ProgramVariant &v : pb->variants)
        if (!replayed->count(v.id))
          rest.push_back(std::move(v));
      pb->variants = std::move(rest);
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
    results.push_back(evaluateProgramBundle(*pb, po));
  } else {
    std::vector<Bundle> bundles;
    for (const std::string &dir : r.bundleDirs) {
      if (isProgramBundle(dir)) {
        std::fprintf(stderr, "cudal1-eval: %s: a program bundle is evaluated alone\n", dir.c_str());
        return 1;
      }
      Expected<Bundle> bundle = readBundle(dir);
      if (!bundle.ok()) {
        std::fprintf(stderr, "cudal1-eval: %s\n", bundle.error().message().c_str());
        return 1;
      }
      bundles.push_back(bundle.take());
    }
    results = evaluateBundles(bundles, opts, &phases);
  }
  if (terminal)
    std::fprintf(stderr, "\r\033[K");
  int code = 0;
  for (size_t b = 0; b < results.size(); ++b) {
    const std::string &dir = r.bundleDirs[b];
    if (!results[b].ok()) {
      std::fprintf(stderr, "cudal1-eval: %s%s%s\n", results.size() > 1 ? dir.c_str() : "",
                   results.size() > 1 ? ": " : "", results[b].error().message().c_str());
      code = 2;
      continue;
    }
    std::string output = r.output.empty() ? dir + "/results.txt" : r.output;
    if (Status s = writeResults(output, *results[b]); !s.ok()) {
      std::fprintf(stderr, "cudal1-eval: %s\n", s.message().c_str());
      code = 2;
      continue;
    }
    std::fputs(formatSummary(*results[b]).c_str(), stdout);
    std::printf("results: %s (%.1f s on %s)\n", output.c_str(), results[b]->wallSeconds,
                results[b]->gpu.c_str());
    if (results[b]->results.front().outcome != Outcome::Ok)
      code = 2;
  }
  if (!r.phasesFile.empty()) {
    char text[256];
    int n = std::snprintf(text, sizeof text,
                          "compile %.3f\nverify %.3f\ntiming %.3f\ntiming-rounds %.3f\n"
                          "compiled %u\ncached %u\nverified %u\nsetups %u\nkept-setups %u\n",
                          phases.compile, phases.verify, phases.timing, phases.timingRounds,
                          phases.compiled, phases.cached, phases.verified, phases.setups,
                          phases.keptSetups);
    if (Status s = writeFileAtomically(r.phasesFile, text, size_t(n)); !s.ok())
      std::fprintf(stderr, "cudal1-eval: %s\n", s.message().c_str());
  }
  return code;
}

} // namespace cudal1
