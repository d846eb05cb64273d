// cudal1-eval: evaluates a bundle of variants on this machine's GPU and
// writes a results file. Flags only; the work is in lib/Eval.
#include "cudal1/Eval/EvalDriver.h"
#include "cudal1/Eval/Numbers.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace cudal1;

namespace {
const char *kUsage =
    "usage: cudal1-eval BUNDLE... [--gpu N] [--jobs J] [--time-budget S]\n"
    "                   [--window S] [--time-all] [--timeout S] [--seed N] [--keep-work DIR]\n"
    "                   [--rounds N] [--race K [--screen N]] [-o RESULTS]\n"
    "                   [--compile-cache DIR] [--phases FILE]\n"
    "                   [--keep-workers DIR [--worker-idle S]]\n"
    "       cudal1-eval --probe [--gpu N]   (exit 77 when there is no GPU)\n"
    "       cudal1-eval --hold-context [--gpu N] [--hold-max S]\n"
    "                   (holds a context until stdin closes: cudal1-opt --tune\n"
    "                   keeps the GPU awake for the programs it runs)\n"
    "\n"
    "Compiles the bundle's variants, verifies each against the double-precision\n"
    "reference in its own process, times the verified ones against the original\n"
    "and writes RESULTS (default BUNDLE/results.txt). A program bundle (first\n"
    "line 'cudal1-program-bundle 1') is built, run and compared by its printed\n"
    "output instead. Several kernel bundles are compiled in one pool, then\n"
    "verified and timed in turn, each writing BUNDLE/results.txt. See\n"
    "docs/Evaluator.md.\n"
    "  --gpu N          GPU ordinal (default 0)\n"
    "  --jobs J         parallel compiles (default: all cores)\n"
    "  --time-budget S  seconds for the whole evaluation (default: none)\n"
    "  --window S       timing window (default: 0.25 s per candidate, 2..30)\n"
    "  --time-all       time every verified variant for the whole window (by\n"
    "                   default one that cannot win stops after 10 rounds,\n"
    "                   and the window ends once the race is decided)\n"
    "  --original-verified  the originals were verified against the same\n"
    "                   captures and references before (a tuner's later\n"
    "                   batches): they are not verified again\n"
    "  --timeout S      limit per verification worker (default 30)\n"
    "  --verify-jobs N  verification workers at a time (default 1)\n"
    "  --verify-bundles N  bundles of one call verified side by side (default 4)\n"
    "  --verify-batch N candidates per verification worker (default 0: all;\n"
    "                   a worker stops at the first one that is not ok)\n"
    "  --compile-cache DIR  reuse cubins compiled from the same source and\n"
    "                   flags (kept across calls of one tuning session)\n"
    "  --phases FILE    write where the time went (compile, verify, timing)\n"
    "  --keep-workers DIR  one worker per kernel stays alive after this call,\n"
    "                   listening in DIR, and keeps its set-up (context,\n"
    "                   captured launches, reference outputs) for the next\n"
    "                   call with the same DIR; a fault still ends it. The\n"
    "                   caller stops them (a tuner at its end), or they exit\n"
    "                   after --worker-idle S seconds without a request\n"
    "                   (default 300)\n"
    "Program bundles:\n"
    "  --rounds N       timing rounds (default 15)\n"
    "  --race K         time only the K variants fastest in their (serial)\n"
    "                   verification runs; 0 (default): all verified ones\n"
    "  --screen N       with --race: rank by the median of N runs per variant\n"
    "                   (default 1: the verification run)\n";

// Flag values: finite numbers only, so that the int casts below are defined.
bool number(const char *s, double &out) { return parseFinite(s, 0, 1e9, out); }

int usageError(const std::string &msg) {
  std::fprintf(stderr, "cudal1-eval: %s\n(try --help)\n", msg.c_str());
  return 1;
}
} // namespace

int main(int argc, char **argv) {
  EvalRequest req;
  EvalOptions &opts = req.options;
  cuda::WorkerArgs &worker = req.worker;
  std::string &output = req.output;
  bool &probe = req.probe;
  int &rounds = req.rounds, &race = req.race, &screen = req.screen; // program bundles only
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (i + 1 >= argc) {
        usageError(std::string(flag) + " needs a value");
        std::exit(1);
      }
      return argv[++i];
    };
    auto num = [&](const char *flag) {
      double d;
      const char *v = value(flag);
      if (!number(v, d)) {
        usageError(std::string(flag) + ": '" + v + "' is not a number from 0 to 1e9");
        std::exit(1);
      }
      return d;
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--version") {
      std::printf("cudal1-eval 0.1.0 (bundle format 1, capture format 1, "
                  "results format 1)\n");
      return 0;
    } else if (a == "--probe")
      probe = true;
    else if (a == "--hold-context")
      req.holdContext = true;
    else if (a == "--hold-max")
      req.holdSeconds = num("--hold-max");
    else if (a == "--gpu")
      opts.gpu = worker.gpu = int(num("--gpu"));
    else if (a == "--jobs")
      opts.jobs = int(num("--jobs"));
    else if (a == "--time-budget")
      opts.timeBudget = num("--time-budget");
    else if (a == "--window")
      opts.window = worker.windowSeconds = num("--window");
    else if (a == "--original-verified")
      opts.originalVerified = true;
    else if (a == "--time-all")
      opts.race = worker.race = false;
    else if (a == "--rounds")
      rounds = std::max(1, int(num("--rounds")));
    else if (a == "--race")
      race = int(num("--race"));
    else if (a == "--screen")
      screen = std::max(1, int(num("--screen")));
    else if (a == "--verify-jobs")
      opts.verifyParallel = std::max(1, int(num("--verify-jobs")));
    else if (a == "--verify-bundles")
      opts.bundlesParallel = std::max(1, int(num("--verify-bundles")));
    else if (a == "--verify-batch")
      opts.verifyBatch = int(num("--verify-batch"));
    else if (a == "--timeout")
      opts.verifyTimeout = num("--timeout");
    else if (a == "--seed") {
      const char *v = value("--seed");
      uint64_t seed = 0;
      if (!parseInteger<uint64_t>(v, 0, UINT64_MAX, seed))
        return usageError(std::string("--seed: '") + v + "' is not an unsigned integer");
      opts.seed = worker.seed = seed;
    } else if (a == "--keep-work")
      opts.workDir = value("--keep-work"), opts.keepWork = true;
    else if (a == "--compile-cache")
      opts.compileCache = value("--compile-cache");
    else if (a == "--phases")
      req.phasesFile = value("--phases");
    else if (a == "--keep-workers")
      opts.keptWorkers = value("--keep-workers");
    else if (a == "--worker-idle")
      opts.keptWorkerIdle = worker.idleSeconds = num("--worker-idle");
    else if (a == "--socket")
      worker.socket = value("--socket");
    else if (a == "-o" || a == "--output")
      output = value("-o");
    else if (a == "--worker")
      worker.mode = value("--worker");
    else if (a == "--bundle")
      worker.bundleDir = value("--bundle");
    else if (a == "--work")
      worker.workDir = value("--work");
    else if (a == "--candidate-timeout")
      worker.candidateTimeout = num("--candidate-timeout");
    else if (a == "--id")
      worker.ids.push_back(value("--id"));
    else if (!a.empty() && a[0] == '-')
      return usageError("unknown option " + a);
    else
      req.bundleDirs.push_back(a);
  }
  if (worker.mode.empty() && !probe && !req.holdContext && req.bundleDirs.empty())
    return usageError("no bundle given");
  return runEvalRequest(req);
}
