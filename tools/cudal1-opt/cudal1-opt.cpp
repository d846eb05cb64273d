// cudal1-opt: the standalone source-to-source tool. Flags are parsed here
// into an OptRequest; lib/Driver checks and runs it (docs/cudal1-opt.md).
#include "cudal1/Config.h"
#include "cudal1/Driver/OptDriver.h"
#include "cudal1/Support/CommandLine.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

using namespace llvm;
using cudal1::JudgeMode;

namespace {
cl::OptionCategory cat("cudal1-opt options");
template <typename T> using Opt = cl::opt<T>;
using S = std::string;

Opt<S> inputFile(cl::Positional, cl::desc("<input.cu>"), cl::cat(cat));
Opt<S> analyze("analyze", cl::ValueOptional, cl::value_desc("json|text"), cl::cat(cat),
               cl::desc("Print the kernels, launches and their analysis (=json, default)"));
Opt<S> listTransforms("list-transforms", cl::ValueOptional, cl::value_desc("text|json"),
                      cl::cat(cat),
                      cl::desc("List, per kernel and launch site, the legal transforms and "
                               "their parameters (=text, the default, or =json)"));
Opt<S> plan("plan", cl::desc("Apply a plan, e.g. '@k: unroll(loop=0, factor=4)'"),
            cl::value_desc("plan"), cl::cat(cat));
Opt<S> checkPlan("check-plan", cl::value_desc("plan"), cl::cat(cat),
                 cl::desc("Measure a plan against the original as a whole program, with the "
                          "tuner's reproducibility check (needs a GPU); prints the verdict"));
Opt<S> planFile("plan-file", cl::value_desc("file"), cl::cat(cat),
                cl::desc("Apply each plan of a file (one per line) to the input, parsing it "
                         "once; line L is written to DIR/L.cu (-o DIR)"));
Opt<bool> instrument("instrument", cl::cat(cat),
                     cl::desc("Wrap every launch in the capture runtime (for captures)"));
Opt<S> reference("reference", cl::value_desc("kernel"), cl::cat(cat),
                 cl::desc("Write the double-precision reference of a kernel (docs/Reference.md)"));
Opt<bool> apply("apply", cl::cat(cat),
                cl::desc("Apply the tuning database's best plans (what the plugin compiles "
                         "in apply mode)"));
Opt<S> gpuArch("gpu-arch", cl::value_desc("sm_NN"), cl::cat(cat),
               cl::desc("With --apply: the architecture tuned for (default: the database's)"));
Opt<S> gpuName("gpu", cl::value_desc("name"), cl::cat(cat),
               cl::desc("With --apply: the GPU model (default: the best of any model of the "
                        "architecture)"));
Opt<bool> dbStats("db-stats", cl::desc("Summarise the tuning database (no input file)"),
                  cl::cat(cat));
Opt<S> db("db", cl::value_desc("path"), cl::cat(cat),
          cl::desc("The tuning database (default: $CUDAL1_DB, else "
                   "$XDG_CACHE_HOME/cudal1/tune.db)"));
Opt<bool> tune("tune", cl::cat(cat),
               cl::desc("Tune: derive variants, build, verify and time them here (needs a "
                        "GPU), record them, write the best to -o"));
Opt<S> emitBundle("emit-bundle", cl::value_desc("dir"), cl::cat(cat),
                  cl::desc("Tune without a GPU: write the variants as a bundle for cudal1-eval"));
Opt<S> importResults("import-results", cl::value_desc("dir"), cl::cat(cat),
                     cl::desc("Read cudal1-eval's results of an emitted bundle, record them, "
                              "write the best to -o"));
cl::list<S> continueFrom("continue", cl::value_desc("dir"), cl::cat(cat),
                         cl::desc("With --emit-bundle or --import-results: an earlier evaluated "
                                  "bundle of the same file (repeatable); the next round is "
                                  "proposed from its results, the import chooses across all"));
Opt<unsigned> budget("budget", cl::desc("Variants to evaluate (default 32)"), cl::init(32),
                     cl::cat(cat));
Opt<double> timeLimit("time-limit", cl::desc("Seconds for tuning (default: none)"), cl::init(0),
                      cl::cat(cat));
Opt<unsigned> race("race", cl::cat(cat),
                   cl::desc("--tune: per round, time only the N variants fastest in their "
                            "verification runs (default 0: all)"));
Opt<unsigned> screen("screen", cl::init(1), cl::cat(cat),
                     cl::desc("--tune with --race: rank by the median of N runs per variant "
                              "(default 1: the verification run)"));
Opt<JudgeMode>
    judge("judge", cl::desc("--tune, --emit-bundle: how plans are judged (docs/Tuning.md)"),
          cl::init(JudgeMode::Auto),
          cl::values(clEnumValN(JudgeMode::Auto, "auto", "kernel plans by replay when captured"),
                     clEnumValN(JudgeMode::Replay, "replay", "the same"),
                     clEnumValN(JudgeMode::Program, "program", "every plan as a whole program")),
          cl::cat(cat));
Opt<bool> holdContext("hold-context",
                      cl::desc("--tune: a process holds a CUDA context while programs run, "
                               "so that each starts on an awake GPU (default true; "
                               "--hold-context=false to measure without)"),
                      cl::init(true), cl::cat(cat));
Opt<bool> searchOnly("search-only",
                     cl::desc("--tune: measure the budget's plans and record them, and choose "
                              "nothing: no final round, no reproducibility check, no best "
                              "choice, no output (an evaluation's or a data campaign's run)"),
                     cl::cat(cat));
Opt<S> strategy("strategy",
                cl::desc("policy (the default when a model is installed, docs/Policy.md), "
                         "heuristic (the default otherwise) or random"),
                cl::cat(cat));
Opt<unsigned> seed("seed", cl::desc("Seed of the random strategy"), cl::init(1), cl::cat(cat));
cl::list<S> transforms("transforms", cl::CommaSeparated, cl::value_desc("name,..."), cl::cat(cat),
                       cl::desc("--tune, --emit-bundle: propose only these transforms' steps"));
Opt<S> buildCmd("build-cmd", cl::value_desc("command"), cl::cat(cat),
                cl::desc("How the program is built, with {src} and {exe} (default: nvcc -O3 "
                         "-arch=sm_90 {src} -o {exe})"));
Opt<S> runCmd("run-cmd", cl::desc("How the built program runs, with {exe} (default: {exe})"),
              cl::value_desc("command"), cl::cat(cat));
Opt<S> timeRegex("time-regex", cl::value_desc("regex"), cl::cat(cat),
                 cl::desc("Regex whose first group is the time (ms) the program prints for its "
                          "GPU region (default: wall time)"));
Opt<S> ignoreRegex("ignore-regex", cl::desc("Output lines not compared (timings, dates)"),
                   cl::value_desc("regex"), cl::cat(cat));
Opt<double> relTol("rel-tol", cl::init(1e-4), cl::cat(cat),
                   cl::desc("Relative tolerance on the numbers a variant prints (default 1e-4)"));
Opt<S> report("report", cl::value_desc("file.html"), cl::cat(cat),
              cl::desc("With --tune or --import-results: write an HTML report (docs/Report.md)"));
Opt<S> reportCeilings("report-ceilings", cl::value_desc("file"), cl::cat(cat),
                      cl::desc("The output of bench/roofline/ceilings on the tuning GPU, for the "
                               "report's roofline"));
Opt<S> output("o", cl::desc("Output file (default: standard output)"), cl::value_desc("file"),
              cl::init("-"), cl::cat(cat));
Opt<S> buildPath("p", cl::desc("Build directory with compile_commands.json"),
                 cl::value_desc("build-dir"), cl::cat(cat));

template <typename T> std::optional<T> given(const Opt<T> &o) {
  return o.getNumOccurrences() ? std::optional<T>(o.getValue()) : std::nullopt;
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cudal1::JoinOptionValues plans(argc, argv, {"plan", "check-plan"}); // never a response file
  int split = argc; // everything after `--` is the compile command of the input
  for (int i = 1; i < argc && split == argc; ++i)
    if (StringRef(argv[i]) == "--")
      split = i;
  cl::HideUnrelatedOptions(cat);
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "cudal1-opt " << cudal1::config::version << " (LLVM 19, CUDA 13)\n";
  });
  if (!cl::ParseCommandLineOptions(split, argv, cudal1::kOptOverview, &errs()))
    return cudal1::OptUsageError;
  cudal1::OptRequest r;
  r.input = inputFile;
  r.analyze = given(analyze);
  r.listTransforms = given(listTransforms);
  r.plan = given(plan);
  r.checkPlan = given(checkPlan);
  r.planFile = given(planFile);
  r.instrument = instrument;
  r.reference = given(reference);
  r.apply = apply;
  r.gpuArch = given(gpuArch);
  r.gpuName = given(gpuName);
  r.dbStats = dbStats;
  r.db = given(db);
  r.tune = tune;
  r.emitBundle = given(emitBundle);
  r.importResults = given(importResults);
  r.continueFrom.assign(continueFrom.begin(), continueFrom.end());
  r.budget = budget;
  r.timeLimit = timeLimit;
  r.race = given(race);
  r.screen = given(screen);
  r.judge = judge;
  r.holdContext = holdContext;
  r.searchOnly = searchOnly;
  r.strategy = strategy;
  r.seed = seed;
  r.transforms.assign(transforms.begin(), transforms.end());
  r.buildCmd = buildCmd;
  r.runCmd = runCmd;
  r.timeRegex = timeRegex;
  r.ignoreRegex = ignoreRegex;
  r.relTol = relTol;
  r.report = given(report);
  r.reportCeilings = given(reportCeilings);
  r.output = output;
  r.buildPath = buildPath;
  r.haveDashDash = split < argc;
  r.compileArgs.assign(argv + std::min(split + 1, argc), argv + argc);
  return cudal1::runOpt(r);
}
