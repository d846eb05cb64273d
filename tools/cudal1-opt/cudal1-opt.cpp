// cudal1-opt: the standalone source-to-source tool. Flags are parsed here;
// the work happens in the libraries (docs/cudal1-opt.md).
#include "cudal1/Analysis/AnalysisReport.h"
#include "cudal1/Apply/ApplyBest.h"
#include "cudal1/Config.h"
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Frontend/Frontend.h"
#include "cudal1/Rewrite/Instrument.h"
#include "cudal1/Rewrite/PlanDriver.h"
#include "cudal1/Rewrite/Reference.h"
#include "cudal1/Support/AtomicFile.h"
#include "cudal1/Support/CommandLine.h"
#include "cudal1/Tune/Session.h"
#include "cudal1/TuneDB/TuneDB.h"

#include "clang/Tooling/CompilationDatabase.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include <optional>
#include <unistd.h>

using namespace llvm;

namespace {
// Exit codes (docs/cudal1-opt.md).
enum ExitCode { Ok = 0, InputError = 1, UsageError = 2, NothingToDo = 3, PlanRefused = 4 };

cl::OptionCategory category("cudal1-opt options");
cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.cu>"), cl::cat(category));
cl::opt<std::string> analyze("analyze", cl::ValueOptional,
                             cl::desc("Print the kernels, launches and their analysis "
                                      "(=json, the default, or =text)"),
                             cl::value_desc("json|text"), cl::cat(category));
cl::opt<std::string> listTransformsOpt(
    "list-transforms", cl::ValueOptional,
    cl::desc("List, per kernel and launch site, the legal transforms and their parameters "
             "(=text, the default, or =json)"),
    cl::value_desc("text|json"), cl::cat(category));
cl::opt<std::string> planText("plan", cl::desc("Apply a plan, e.g. '@k: unroll(loop=0, factor=4)'"),
                              cl::value_desc("plan"), cl::cat(category));
cl::opt<bool> instrument("instrument",
                         cl::desc("Wrap every launch in the capture runtime (for captures)"),
                         cl::cat(category));
cl::opt<std::string> referenceKernel("reference",
                                     cl::desc("Write the double-precision reference of a kernel "
                                              "(docs/Reference.md)"),
                                     cl::value_desc("kernel"), cl::cat(category));
cl::opt<bool> applyBest("apply",
                        cl::desc("Apply the tuning database's best plans (what the plugin "
                                 "compiles in apply mode)"),
                        cl::cat(category));
cl::opt<std::string> gpuArch("gpu-arch",
                             cl::desc("With --apply: the architecture tuned for (default: the "
                                      "one the database has)"),
                             cl::value_desc("sm_NN"), cl::cat(category));
cl::opt<std::string> gpuName("gpu",
                             cl::desc("With --apply: the GPU model (default: the best of any "
                                      "model of the architecture)"),
                             cl::value_desc("name"), cl::cat(category));
cl::opt<bool> dbStats("db-stats", cl::desc("Summarise the tuning database (no input file)"),
                      cl::cat(category));
cl::opt<std::string> dbPath("db",
                            cl::desc("The tuning database (default: $CUDAL1_DB, else "
                                     "$XDG_CACHE_HOME/cudal1/tune.db)"),
                            cl::value_desc("path"), cl::cat(category));
cl::opt<bool> tune("tune",
                   cl::desc("Tune: derive variants, build, verify and time them "
                            "here (needs a GPU), record them, write the best to -o"),
                   cl::cat(category));
cl::opt<std::string> emitBundle("emit-bundle",
                                cl::desc("Tune without a GPU: write the variants as a "
                                         "program bundle for cudal1-eval"),
                                cl::value_desc("dir"), cl::cat(category));
cl::opt<std::string> importResults("import-results",
                                   cl::desc("Read cudal1-eval's results of an emitted "
                                            "bundle, record them, write the best to -o"),
                                   cl::value_desc("dir"), cl::cat(category));
cl::list<std::string> continueFrom(
    "continue",
    cl::desc("With --emit-bundle or --import-results: an earlier evaluated bundle of the "
             "same file (repeatable); the next round is proposed from its results, the "
             "import chooses across all"),
    cl::value_desc("dir"), cl::cat(category));
cl::opt<unsigned> budget("budget", cl::desc("Variants to evaluate (default 32)"), cl::init(32),
                         cl::cat(category));
cl::opt<double> timeLimit("time-limit", cl::desc("Seconds for tuning (default: none)"), cl::init(0),
                          cl::cat(category));
cl::opt<unsigned> race("race",
                       cl::desc("--tune: per round, time only the N variants fastest in "
                                "their verification runs (default 0: all)"),
                       cl::init(0), cl::cat(category));
cl::opt<unsigned> screen("screen",
                         cl::desc("--tune with --race: rank by the median of N runs per variant "
                                  "(default 1: the verification run)"),
                         cl::init(1), cl::cat(category));
cl::opt<cudal1::JudgeMode> judgeMode(
    "judge", cl::desc("--tune: how plans are judged (docs/Tuning.md)"),
    cl::values(clEnumValN(cudal1::JudgeMode::Auto, "auto",
                          "kernel plans by replay when captured (default)"),
               clEnumValN(cudal1::JudgeMode::Replay, "replay", "the same"),
               clEnumValN(cudal1::JudgeMode::Program, "program", "every plan as a whole program")),
    cl::init(cudal1::JudgeMode::Auto), cl::cat(category));
cl::opt<std::string> strategyName("strategy", cl::desc("heuristic (default) or random"),
                                  cl::init("heuristic"), cl::cat(category));
cl::opt<unsigned> seed("seed", cl::desc("Seed of the random strategy"), cl::init(1),
                       cl::cat(category));
cl::opt<std::string> buildCmd("build-cmd",
                              cl::desc("How the program is built, with {src} and {exe} "
                                       "(default: nvcc -O3 -arch=sm_90 {src} -o {exe})"),
                              cl::value_desc("command"), cl::cat(category));
cl::opt<std::string> runCmd("run-cmd",
                            cl::desc("How the built program runs, with {exe} (default: {exe})"),
                            cl::value_desc("command"), cl::cat(category));
cl::opt<std::string> timeRegex("time-regex",
                               cl::desc("Regex whose first group is the time (ms) the program "
                                        "prints for its GPU region (default: wall time)"),
                               cl::value_desc("regex"), cl::cat(category));
cl::opt<std::string> ignoreRegex("ignore-regex",
                                 cl::desc("Output lines not compared (timings, dates)"),
                                 cl::value_desc("regex"), cl::cat(category));
cl::opt<double>
    relTol("rel-tol", cl::desc("Relative tolerance on the numbers a variant prints (default 1e-4)"),
           cl::init(1e-4), cl::cat(category));
cl::opt<std::string> reportFile("report",
                                cl::desc("With --tune or --import-results: write an HTML "
                                         "report of the tuning (docs/Report.md)"),
                                cl::value_desc("file.html"), cl::cat(category));
cl::opt<std::string> reportCeilings("report-ceilings",
                                    cl::desc("The output of bench/roofline/ceilings on the "
                                             "tuning GPU, for the report's roofline"),
                                    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: standard output)"),
                                cl::value_desc("file"), cl::init("-"), cl::cat(category));
cl::opt<std::string> buildPath("p", cl::desc("Build directory with compile_commands.json"),
                               cl::value_desc("build-dir"), cl::cat(category));
cl::opt<std::string> planFile("plan-file",
                              cl::desc("Apply each plan of a file (one per line) to the input, "
                                       "parsing it once; line L is written to DIR/L.cu (-o DIR)"),
                              cl::value_desc("file"), cl::cat(category));

/// --plan-file: every non-empty line that does not start with '#' is a plan;
/// refusals are reported as PLANFILE:LINE:COL and the rest still applied.
int runPlanFile(const std::vector<std::string> &args) {
  auto plans = MemoryBuffer::getFile(planFile);
  auto input = MemoryBuffer::getFile(inputFile);
  if (!plans || !input) {
    WithColor::error(errs(), "cudal1-opt")
        << "cannot read '" << (plans ? inputFile : planFile) << "'\n";
    return InputError;
  }
  if (outputFile == "-" || sys::fs::create_directories(outputFile)) {
    WithColor::error(errs(), "cudal1-opt")
        << "--plan-file needs -o DIR, a directory it can create or write into\n";
    return UsageError;
  }
  // A refusal reads "plan:1:COL: error: ..."; it is reported at the plan's line.
  auto report = [&](unsigned line, const std::string &msg) {
    StringRef m(msg);
    std::string where = planFile + ":" + std::to_string(line) + ":";
    errs() << (m.consume_front("plan:1:") ? where + m.str() : where + " error: " + msg) << "\n";
  };
  std::vector<cudal1::Plan> parsed;
  std::vector<unsigned> lines;
  bool refused = false;
  SmallVector<StringRef> text;
  (*plans)->getBuffer().split(text, '\n');
  for (unsigned i = 0; i < text.size(); ++i) {
    StringRef t = text[i].trim();
    if (t.empty() || t.starts_with("#"))
      continue;
    Expected<cudal1::Plan> p = cudal1::parsePlan(t.str());
    if (!p) {
      report(i + 1, toString(p.takeError()));
      refused = true;
      continue;
    }
    parsed.push_back(std::move(*p));
    lines.push_back(i + 1);
  }
  cudal1::RewriteInput in{inputFile, (*input)->getBuffer().str(), args};
  Error e = cudal1::applyPlans(in, parsed, [&](size_t i, Expected<std::string> out) {
    if (!out) {
      report(lines[i], toString(out.takeError()));
      refused = true;
      return;
    }
    std::string dst = outputFile + "/" + std::to_string(lines[i]) + ".cu";
    Error w = cudal1::checkOutputIsNotInput(dst, inputFile);
    if (!w)
      w = cudal1::writeFileAtomically(dst, *out);
    if (w) {
      report(lines[i], toString(std::move(w)));
      refused = true;
    }
  });
  if (e) {
    WithColor::error(errs(), "cudal1-opt") << toString(std::move(e)) << "\n";
    return InputError;
  }
  return refused ? PlanRefused : Ok;
}
/// --tune, --emit-bundle and --import-results: one tuning session.
int runTuning(const cudal1::RewriteInput &in) {
  cudal1::SessionOptions so;
  so.mode = tune                             ? cudal1::SessionOptions::Tune
            : emitBundle.getNumOccurrences() ? cudal1::SessionOptions::EmitBundle
                                             : cudal1::SessionOptions::ImportResults;
  so.bundleDir = emitBundle.getNumOccurrences() ? emitBundle : importResults;
  so.continueFrom.assign(continueFrom.begin(), continueFrom.end());
  so.budget = budget;
  so.timeLimit = timeLimit;
  so.race = race;
  so.screen = screen;
  so.judge = judgeMode;
  so.strategy = strategyName;
  so.seed = seed;
  so.setup = cudal1::programSetup(in, buildCmd, runCmd, so.arch);
  so.setup.timeRegex = timeRegex;
  so.setup.ignoreRegex = ignoreRegex;
  so.setup.rel = relTol;
  so.outputFile = outputFile;
  so.reportFile = reportFile;
  so.reportCeilings = reportCeilings;
  so.note = [](const std::string &m) { WithColor::note(errs(), "cudal1-opt") << m << "\n"; };
  bool terminal = ::isatty(2);
  if (terminal)
    so.progress = [](const std::string &m) {
      errs() << "\r\033[K[cudal1-opt] " << m;
      errs().flush();
    };
  // The split path's first half records nothing.
  std::optional<cudal1::TuneDB> db;
  if (so.mode != cudal1::SessionOptions::EmitBundle) {
    std::string path = dbPath.getNumOccurrences() ? dbPath.getValue() : cudal1::defaultTuneDBPath();
    Expected<cudal1::TuneDB> opened = cudal1::TuneDB::open(path);
    if (!opened) {
      WithColor::error(errs(), "cudal1-opt") << toString(opened.takeError()) << "\n";
      return InputError;
    }
    db = std::move(*opened);
  }
  cudal1::SessionStatus st = cudal1::runSession(in, so, nullptr, db ? &*db : nullptr);
  if (terminal)
    errs() << "\r\033[K";
  if (st.kind == cudal1::SessionStatus::Ok)
    return Ok;
  WithColor::error(errs(), "cudal1-opt") << st.message << "\n";
  return st.kind == cudal1::SessionStatus::UsageError    ? UsageError
         : st.kind == cudal1::SessionStatus::NothingToDo ? NothingToDo
                                                         : InputError;
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cudal1::JoinOptionValues plans(argc, argv, {"plan"}); // never a response file
  // Everything after `--` is the compile command of the input.
  int split = argc;
  for (int i = 1; i < argc; ++i)
    if (StringRef(argv[i]) == "--") {
      split = i;
      break;
    }
  std::vector<std::string> userArgs(argv + std::min(split + 1, argc), argv + argc);
  bool haveDashDash = split < argc;

  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "cudal1-opt " << cudal1::config::version << " (LLVM 19, CUDA 13)\n";
  });
  if (!cl::ParseCommandLineOptions(
          split, argv,
          "cudal1-opt: analyse and rewrite CUDA C++ kernels\n\n"
          "  cudal1-opt FILE.cu --analyze[=text] [-o OUT] [-- CLANG-FLAGS]\n"
          "  cudal1-opt FILE.cu --list-transforms[=json]\n"
          "  cudal1-opt FILE.cu --plan 'PLAN' -o OUT.cu\n"
          "  cudal1-opt FILE.cu --instrument -o OUT.cu\n"
          "  cudal1-opt FILE.cu --reference KERNEL -o REF.cu\n"
          "  cudal1-opt FILE.cu --tune [--budget N] [--strategy S] [--db PATH] -o OUT.cu\n"
          "  cudal1-opt FILE.cu --emit-bundle DIR [--budget N]   (then cudal1-eval DIR)\n"
          "  cudal1-opt FILE.cu --import-results DIR [--db PATH] -o OUT.cu\n"
          "  cudal1-opt FILE.cu --apply [--db PATH] [--gpu-arch sm_NN] -o OUT.cu\n"
          "  cudal1-opt FILE.cu --analyze -p BUILD-DIR\n"
          "  cudal1-opt --db-stats [--db PATH]\n",
          &errs()))
    return UsageError;
  if (dbStats) {
    if (!inputFile.empty() || analyze.getNumOccurrences() ||
        listTransformsOpt.getNumOccurrences() || planText.getNumOccurrences() || instrument ||
        tune || applyBest || emitBundle.getNumOccurrences() || importResults.getNumOccurrences() ||
        !buildPath.empty() || haveDashDash) {
      WithColor::error(errs(), "cudal1-opt")
          << "--db-stats takes no input file and is exclusive with the other modes\n";
      return UsageError;
    }
    std::string path = dbPath.getNumOccurrences() ? dbPath.getValue() : cudal1::defaultTuneDBPath();
    cudal1::TuneDBOptions ro;
    ro.mode = cudal1::TuneDBMode::ReadOnly;
    Expected<cudal1::TuneDB> db = cudal1::TuneDB::open(path, ro);
    Expected<cudal1::TuneDBStats> st =
        db ? db->stats() : Expected<cudal1::TuneDBStats>(db.takeError());
    if (!st) {
      WithColor::error(errs(), "cudal1-opt") << toString(st.takeError()) << "\n";
      return InputError;
    }
    if (Error e = cudal1::writeFileAtomically(outputFile, cudal1::formatTuneDBStats(*st, path))) {
      WithColor::error(errs(), "cudal1-opt") << toString(std::move(e)) << "\n";
      return InputError;
    }
    return Ok;
  }
  bool tuning = tune || emitBundle.getNumOccurrences() || importResults.getNumOccurrences();
  if (dbPath.getNumOccurrences() && !tuning && !applyBest) {
    WithColor::error(errs(), "cudal1-opt")
        << "--db is used only with --db-stats, --tune, --import-results and --apply\n";
    return UsageError;
  }
  bool judging = tune || importResults.getNumOccurrences();
  if ((reportFile.getNumOccurrences() || reportCeilings.getNumOccurrences()) && !judging) {
    WithColor::error(errs(), "cudal1-opt")
        << "--report and --report-ceilings are used only with --tune and --import-results\n";
    return UsageError;
  }
  if (reportCeilings.getNumOccurrences() && !reportFile.getNumOccurrences()) {
    WithColor::error(errs(), "cudal1-opt") << "--report-ceilings needs --report FILE\n";
    return UsageError;
  }
  if (continueFrom.getNumOccurrences() && !emitBundle.getNumOccurrences() &&
      !importResults.getNumOccurrences()) {
    WithColor::error(errs(), "cudal1-opt")
        << "--continue is used only with --emit-bundle or --import-results\n";
    return UsageError;
  }
  if ((race.getNumOccurrences() || screen.getNumOccurrences()) && !tune) {
    WithColor::error(errs(), "cudal1-opt")
        << "--race and --screen are used only with --tune (for a bundle: cudal1-eval --race)\n";
    return UsageError;
  }
  if ((gpuArch.getNumOccurrences() || gpuName.getNumOccurrences()) && !applyBest) {
    WithColor::error(errs(), "cudal1-opt") << "--gpu-arch and --gpu are used only with --apply\n";
    return UsageError;
  }
  if (inputFile.empty()) {
    WithColor::error(errs(), "cudal1-opt") << "no input file (see --help)\n";
    return UsageError;
  }
  if (Error e = cudal1::checkOutputIsNotInput(outputFile, inputFile)) { // every mode
    WithColor::error(errs(), "cudal1-opt") << toString(std::move(e)) << "\n";
    return UsageError;
  }
  int modes = (analyze.getNumOccurrences() > 0) + (listTransformsOpt.getNumOccurrences() > 0) +
              (planText.getNumOccurrences() > 0) + (instrument ? 1 : 0) + (tune ? 1 : 0) +
              (emitBundle.getNumOccurrences() > 0) + (importResults.getNumOccurrences() > 0) +
              (applyBest ? 1 : 0);
  modes += planFile.getNumOccurrences() > 0;
  modes += referenceKernel.getNumOccurrences() > 0;
  if (modes == 0) {
    WithColor::error(errs(), "cudal1-opt")
        << "nothing to do: give --analyze, --list-transforms, --plan, --instrument, --tune, "
           "--emit-bundle, --import-results or --apply (see --help)\n";
    return UsageError;
  }
  if (modes > 1) {
    WithColor::error(errs(), "cudal1-opt")
        << "--analyze, --list-transforms, --plan, --instrument, --tune, --emit-bundle, "
           "--import-results and --apply are exclusive\n";
    return UsageError;
  }
  std::string format = analyze.getNumOccurrences()
                           ? (analyze.empty() ? "json" : analyze.getValue())
                           : (listTransformsOpt.empty() ? "text" : listTransformsOpt.getValue());
  if (format != "json" && format != "text") {
    WithColor::error(errs(), "cudal1-opt")
        << (analyze.getNumOccurrences() ? "--analyze=" : "--list-transforms=") << format
        << ": expected 'json' or 'text'\n";
    return UsageError;
  }
  std::optional<cudal1::Plan> plan;
  if (planText.getNumOccurrences()) {
    Expected<cudal1::Plan> p = cudal1::parsePlan(planText);
    if (!p) {
      errs() << toString(p.takeError()) << "\n  " << planText << "\n";
      return UsageError;
    }
    plan = std::move(*p);
  }

  // The compile command: -p BUILD-DIR, else the flags after --, else a
  // compilation database found above the file, else plain CUDA flags.
  if (!buildPath.empty() || !haveDashDash) {
    std::string err;
    std::unique_ptr<clang::tooling::CompilationDatabase> db =
        !buildPath.empty()
            ? clang::tooling::CompilationDatabase::loadFromDirectory(buildPath, err)
            : clang::tooling::CompilationDatabase::autoDetectFromSource(inputFile, err);
    if (!db && !buildPath.empty()) {
      WithColor::error(errs(), "cudal1-opt")
          << "no compile_commands.json in '" << buildPath << "' (" << err << ")\n";
      return UsageError;
    }
    if (db) {
      std::vector<clang::tooling::CompileCommand> cmds = db->getCompileCommands(inputFile);
      if (cmds.empty() && !buildPath.empty()) {
        WithColor::error(errs(), "cudal1-opt")
            << "'" << inputFile << "' has no entry in " << buildPath << "/compile_commands.json\n";
        return UsageError;
      }
      if (!cmds.empty()) {
        std::vector<std::string> fromDb = cudal1::userArgsFromCompileCommand(cmds.front());
        userArgs.insert(userArgs.begin(), fromDb.begin(), fromDb.end());
      }
    }
  }

  std::vector<std::string> notes;
  std::vector<std::string> args = cudal1::analysisArgs(userArgs, &notes);
  for (const std::string &n : notes)
    WithColor::note(errs(), "cudal1-opt") << n << "\n";
  if (planFile.getNumOccurrences())
    return runPlanFile(args);

  std::string out;
  if (analyze.getNumOccurrences()) {
    Expected<cudal1::ProgramModel> model = cudal1::buildProgramModel(inputFile, args);
    if (!model) {
      WithColor::error(errs(), "cudal1-opt") << toString(model.takeError()) << "\n";
      return InputError;
    }
    if (model->kernels.empty()) {
      WithColor::error(errs(), "cudal1-opt")
          << inputFile << ": no CUDA kernels (__global__ functions) in this translation unit\n";
      return NothingToDo;
    }
    out = format == "json" ? cudal1::analysisJson(*model) : cudal1::analysisText(*model);
  } else {
    if (sys::fs::is_directory(inputFile)) {
      WithColor::error(errs(), "cudal1-opt") << "'" << inputFile << "' is a directory\n";
      return InputError;
    }
    auto buf = MemoryBuffer::getFile(inputFile);
    if (!buf) {
      WithColor::error(errs(), "cudal1-opt")
          << "cannot read '" << inputFile << "': " << buf.getError().message() << "\n";
      return InputError;
    }
    cudal1::RewriteInput in{inputFile, (*buf)->getBuffer().str(), args};
    if (tuning)
      return runTuning(in);
    if (referenceKernel.getNumOccurrences()) {
      Expected<cudal1::ReferenceKernel> r = cudal1::deriveReference(in, referenceKernel);
      if (!r) { // exit 4 when the kernel cannot be promoted, 1 when it is not there
        bool refused = false;
        handleAllErrors(r.takeError(), [&](const ErrorInfoBase &e) {
          WithColor::error(errs(), "cudal1-opt") << e.message() << "\n";
          refused = e.convertToErrorCode() == std::errc::operation_not_supported;
        });
        return refused ? PlanRefused : InputError;
      }
      for (const std::string &n : r->notes)
        WithColor::note(errs(), "cudal1-opt") << n << "\n";
      out = std::move(r->source);
    } else if (applyBest) {
      cudal1::ApplyOptions ao;
      ao.dbPath = dbPath.getNumOccurrences() ? dbPath.getValue() : cudal1::defaultTuneDBPath();
      ao.gpuArch = gpuArch;
      ao.gpuName = gpuName;
      Expected<cudal1::ApplyResult> r = cudal1::applyBestPlans(in, ao);
      if (!r) {
        WithColor::error(errs(), "cudal1-opt") << toString(r.takeError()) << "\n";
        return InputError;
      }
      for (const std::string &w : r->warnings)
        WithColor::warning(errs(), "cudal1-opt") << w << "\n";
      for (const cudal1::AppliedPlan &p : r->applied)
        WithColor::note(errs(), "cudal1-opt") << "applied " << p.plan << "\n";
      if (r->applied.empty())
        WithColor::note(errs(), "cudal1-opt") << "no tuned plan applies; the output is the input\n";
      out = std::move(r->source);
    } else {
      Expected<std::string> result = plan         ? cudal1::applyPlan(in, *plan)
                                     : instrument ? cudal1::instrumentSource(in)
                                                  : cudal1::listTransforms(in, format == "json");
      if (!result) {
        errs() << toString(result.takeError()) << "\n";
        if (plan)
          errs() << "  " << planText << "\n";
        return plan ? PlanRefused : InputError;
      }
      out = std::move(*result);
    }
  }
  if (Error e = cudal1::writeFileAtomically(outputFile, out)) {
    WithColor::error(errs(), "cudal1-opt") << toString(std::move(e)) << "\n";
    return InputError;
  }
  return Ok;
}
