// cudal1-eval: evaluates a bundle of variants on this machine's GPU and
// writes a results file. Usage text only; the flags are parsed by
// lib/Eval/EvalArgs.cpp and the work is in lib/Eval.
#include "cudal1/Eval/EvalArgs.h"

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

int usageError(const std::string &msg) {
  std::fprintf(stderr, "cudal1-eval: %s\n(try --help)\n", msg.c_str());
  return 1;
}
} // namespace

int main(int argc, char **argv) {
  Expected<EvalArgs> args = parseEvalArgs(std::vector<std::string>(argv + 1, argv + argc));
  if (!args.ok())
    return usageError(args.error().message());
  if (args->help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (args->version) {
    std::printf("cudal1-eval 0.1.0 (bundle format 1, capture format 1, "
                "results format 1)\n");
    return 0;
  }
  return runEvalRequest(args->request);
}
