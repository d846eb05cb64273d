//===- OptDriver.cpp - cudal1-opt's modes ---------------------------------===//
#include "cudal1/Driver/OptDriver.h"
#include "cudal1/Analysis/AnalysisReport.h"
#include "cudal1/Apply/ApplyBest.h"
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Frontend/Frontend.h"
#include "cudal1/Policy/Policy.h"
#include "cudal1/Rewrite/Instrument.h"
#include "cudal1/Rewrite/PlanDriver.h"
#include "cudal1/Rewrite/Reference.h"
#include "cudal1/Support/AtomicFile.h"
#include "cudal1/Tune/Reproduce.h"
#include "cudal1/Tune/Session.h"
#include "cudal1/TuneDB/TuneDB.h"

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"

#include <unistd.h>

using namespace llvm;

namespace cudal1 {
namespace {

int fail(int code, const Twine &message) {
  WithColor::error(errs(), "cudal1-opt") << message << "\n";
  return code;
}
void note(const Twine &message) { WithColor::note(errs(), "cudal1-opt") << message << "\n"; }
void remark(const Twine &message) { WithColor::remark(errs(), "cudal1-opt") << message << "\n"; }

std::string dbPathOf(const OptRequest &r) { return r.db ? *r.db : defaultTuneDBPath(); }
bool tuning(const OptRequest &r) { return r.tune || r.emitBundle || r.importResults; }

/// The combinations of flags that make no sense, as usage errors; "" when the
/// request is sound.
std::string misuse(const OptRequest &r) {
  if (r.dbStats) {
    bool other = !r.input.empty() || r.analyze || r.listTransforms || r.plan || r.instrument ||
                 r.apply || tuning(r) || !r.buildPath.empty() || r.haveDashDash;
    return other ? "--db-stats takes no input file and is exclusive with the other modes" : "";
  }
  if (r.db && !tuning(r) && !r.apply)
    return "--db is used only with --db-stats, --tune, --import-results and --apply";
  if ((r.report || r.reportCeilings) && !r.tune && !r.importResults)
    return "--report and --report-ceilings are used only with --tune and --import-results";
  if (r.reportCeilings && !r.report)
    return "--report-ceilings needs --report FILE";
  if (!r.continueFrom.empty() && !r.emitBundle && !r.importResults)
    return "--continue is used only with --emit-bundle or --import-results";
  if (!r.transforms.empty() && !r.tune && !r.emitBundle)
    return "--transforms is used only with --tune and --emit-bundle";
  if (r.searchOnly && !r.tune)
    return "--search-only is used only with --tune";
  if (r.searchOnly && (r.output != "-" || r.report))
    return "--search-only writes no output and no report: leave out -o and --report";
  if ((r.race || r.screen) && !r.tune)
    return "--race and --screen are used only with --tune (for a bundle: cudal1-eval --race)";
  if ((r.gpuArch || r.gpuName) && !r.apply)
    return "--gpu-arch and --gpu are used only with --apply";
  if (r.input.empty())
    return "no input file (see --help)";
  int modes = bool(r.analyze) + bool(r.listTransforms) + bool(r.plan) + r.instrument + r.tune +
              bool(r.emitBundle) + bool(r.importResults) + r.apply + bool(r.planFile) +
              bool(r.reference) + bool(r.checkPlan);
  if (modes == 0)
    return "nothing to do: give --analyze, --list-transforms, --plan, --instrument, --tune, "
           "--emit-bundle, --import-results, --check-plan or --apply (see --help)";
  if (modes > 1)
    return "--analyze, --list-transforms, --plan, --instrument, --tune, --emit-bundle, "
           "--import-results, --check-plan and --apply are exclusive";
  return "";
}

int dbStats(const OptRequest &r) {
  std::string path = dbPathOf(r);
  TuneDBOptions ro;
  ro.mode = TuneDBMode::ReadOnly;
  llvm::Expected<TuneDB> db = TuneDB::open(path, ro);
  llvm::Expected<TuneDBStats> st = db ? db->stats() : llvm::Expected<TuneDBStats>(db.takeError());
  if (!st)
    return fail(OptInputError, toString(st.takeError()));
  if (Error e = writeFileAtomically(r.output, formatTuneDBStats(*st, path)))
    return fail(OptInputError, toString(std::move(e)));
  return OptOk;
}

/// The compile command: -p BUILD-DIR, else the flags after --, else a
/// compilation database found above the file, else plain CUDA flags.
llvm::Expected<std::vector<std::string>> compileCommand(const OptRequest &r) {
  std::vector<std::string> user = r.compileArgs;
  if (r.buildPath.empty() && r.haveDashDash)
    return user;
  std::string err;
  std::unique_ptr<clang::tooling::CompilationDatabase> db =
      !r.buildPath.empty()
          ? clang::tooling::CompilationDatabase::loadFromDirectory(r.buildPath, err)
          : clang::tooling::CompilationDatabase::autoDetectFromSource(r.input, err);
  if (!db && !r.buildPath.empty())
    return createStringError(inconvertibleErrorCode(),
                             "no compile_commands.json in '" + r.buildPath + "' (" + err + ")");
  if (!db)
    return user;
  std::vector<clang::tooling::CompileCommand> cmds = db->getCompileCommands(r.input);
  if (cmds.empty() && !r.buildPath.empty())
    return createStringError(inconvertibleErrorCode(), "'" + r.input + "' has no entry in " +
                                                           r.buildPath + "/compile_commands.json");
  if (!cmds.empty()) {
    std::vector<std::string> fromDb = userArgsFromCompileCommand(cmds.front());
    user.insert(user.begin(), fromDb.begin(), fromDb.end());
  }
  return user;
}

/// --plan-file: every non-empty line that does not start with '#' is a plan;
/// refusals are reported as PLANFILE:LINE:COL and the rest still applied.
int runPlanFile(const OptRequest &r, const std::string &planFile,
                const std::vector<std::string> &args) {
  auto plans = MemoryBuffer::getFile(planFile);
  auto input = MemoryBuffer::getFile(r.input);
  if (!plans || !input)
    return fail(OptInputError, "cannot read '" + (plans ? r.input : planFile) + "'");
  if (r.output == "-" || sys::fs::create_directories(r.output))
    return fail(OptUsageError, "--plan-file needs -o DIR, a directory it can create or write into");
  // A refusal reads "plan:1:COL: error: ..."; it is reported at the plan's line.
  auto report = [&](unsigned line, const std::string &msg) {
    StringRef m(msg);
    std::string where = planFile + ":" + std::to_string(line) + ":";
    errs() << (m.consume_front("plan:1:") ? where + m.str() : where + " error: " + msg) << "\n";
  };
  std::vector<Plan> parsed;
  std::vector<unsigned> lines;
  bool refused = false;
  SmallVector<StringRef> text;
  (*plans)->getBuffer().split(text, '\n');
  for (unsigned i = 0; i < text.size(); ++i) {
    StringRef t = text[i].trim();
    if (t.empty() || t.starts_with("#"))
      continue;
    llvm::Expected<Plan> p = parsePlan(t.str());
    if (!p) {
      report(i + 1, toString(p.takeError()));
      refused = true;
      continue;
    }
    parsed.push_back(std::move(*p));
    lines.push_back(i + 1);
  }
  RewriteInput in{r.input, (*input)->getBuffer().str(), args};
  Error e = applyPlans(in, parsed, [&](size_t i, llvm::Expected<std::string> out) {
    if (!out) {
      report(lines[i], toString(out.takeError()));
      refused = true;
      return;
    }
    std::string dst = r.output + "/" + std::to_string(lines[i]) + ".cu";
    Error w = checkOutputIsNotInput(dst, r.input);
    if (!w)
      w = writeFileAtomically(dst, *out);
    if (w) {
      report(lines[i], toString(std::move(w)));
      refused = true;
    }
  });
  if (e)
    return fail(OptInputError, toString(std::move(e)));
  return refused ? OptPlanRefused : OptOk;
}

/// The strategy when --strategy is not given: the learned policy where a
/// model is installed (the shipped models/policy or $CUDAL1_POLICY_MODEL) and
/// this build can run it, else the heuristic. Said once, so that a user knows
/// which search produced the result.
std::string defaultStrategy() {
  std::string dir = cudal1::defaultPolicyModelDir();
  if (!cudal1::policyBackendAvailable() || !sys::fs::exists(dir + "/model.json"))
    return "heuristic";
  WithColor::remark(errs(), "cudal1")
      << "strategy policy (the model in '" << dir << "'; --strategy heuristic to change)\n";
  return "policy";
}

/// --tune, --emit-bundle and --import-results: one tuning session.
int runTuning(const OptRequest &r, const RewriteInput &in) {
  SessionOptions so;
  so.mode = r.tune         ? SessionOptions::Tune
            : r.emitBundle ? SessionOptions::EmitBundle
                           : SessionOptions::ImportResults;
  so.bundleDir = r.emitBundle ? *r.emitBundle : r.importResults.value_or("");
  so.continueFrom = r.continueFrom;
  so.budget = r.budget;
  so.timeLimit = r.timeLimit;
  so.race = r.race.value_or(0);
  so.screen = r.screen.value_or(1);
  so.judge = r.judge;
  so.holdContext = r.holdContext;
  so.searchOnly = r.searchOnly;
  so.strategy = r.strategy.empty() ? defaultStrategy() : r.strategy;
  so.seed = r.seed;
  so.transforms = r.transforms;
  so.setup = programSetup(in, r.buildCmd, r.runCmd, so.arch);
  so.setup.timeRegex = r.timeRegex;
  so.setup.ignoreRegex = r.ignoreRegex;
  so.setup.rel = r.relTol;
  so.outputFile = r.output;
  so.reportFile = r.report.value_or("");
  so.reportCeilings = r.reportCeilings.value_or("");
  so.note = [](const std::string &m) { note(m); };
  bool terminal = ::isatty(2);
  if (terminal)
    so.progress = [](const std::string &m) {
      errs() << "\r\033[K[cudal1-opt] " << m;
      errs().flush();
    };
  // The split path's first half records nothing.
  std::optional<TuneDB> db;
  if (so.mode != SessionOptions::EmitBundle) {
    llvm::Expected<TuneDB> opened = TuneDB::open(dbPathOf(r));
    if (!opened)
      return fail(OptInputError, toString(opened.takeError()));
    for (const std::string &m : opened->migrationRemarks())
      remark(m);
    db = std::move(*opened);
  }
  SessionStatus st = runSession(in, so, nullptr, db ? &*db : nullptr);
  if (terminal)
    errs() << "\r\033[K";
  if (st.kind == SessionStatus::Ok)
    return OptOk;
  return fail(st.kind == SessionStatus::UsageError    ? OptUsageError
              : st.kind == SessionStatus::NothingToDo ? OptNothingToDo
                                                      : OptInputError,
              st.message);
}

/// --check-plan: exit 0 when the check ran, whatever its verdict.
int runCheck(const OptRequest &r, const RewriteInput &in, const Plan &plan, std::string &out) {
  ProgramSetup setup = programSetup(in, r.buildCmd, r.runCmd, "sm_90");
  setup.timeRegex = r.timeRegex;
  setup.ignoreRegex = r.ignoreRegex;
  setup.rel = r.relTol;
  for (const auto &[re, flag] : {std::pair(&setup.timeRegex, "--time-regex"),
                                 std::pair(&setup.ignoreRegex, "--ignore-regex")})
    if (!re->empty())
      if (Status s = checkProgramRegex(*re, flag); !s.ok())
        return fail(OptUsageError, s.message());
  raw_string_ostream os(out);
  llvm::Expected<ReproCheck> c =
      runCheckPlan(in, plan, setup, os, [](const std::string &m) { note(m); });
  if (!c)
    return fail(OptInputError, "--check-plan: " + toString(c.takeError()));
  return OptOk;
}

/// --reference: exit 4 when the kernel cannot be promoted, 1 when it is not there.
int runReference(const std::string &kernel, const RewriteInput &in, std::string &out) {
  llvm::Expected<ReferenceKernel> ref = deriveReference(in, kernel);
  if (!ref) {
    bool refused = false;
    handleAllErrors(ref.takeError(), [&](const ErrorInfoBase &e) {
      WithColor::error(errs(), "cudal1-opt") << e.message() << "\n";
      refused = e.convertToErrorCode() == std::errc::operation_not_supported;
    });
    return refused ? OptPlanRefused : OptInputError;
  }
  for (const std::string &n : ref->notes)
    note(n);
  out = std::move(ref->source);
  return OptOk;
}

int runApply(const OptRequest &r, const RewriteInput &in, std::string &out) {
  ApplyOptions ao;
  ao.dbPath = dbPathOf(r);
  ao.gpuArch = r.gpuArch.value_or("");
  ao.gpuName = r.gpuName.value_or("");
  llvm::Expected<ApplyResult> applied = applyBestPlans(in, ao);
  if (!applied)
    return fail(OptInputError, toString(applied.takeError()));
  for (const std::string &w : applied->warnings)
    WithColor::warning(errs(), "cudal1-opt") << w << "\n";
  for (const AppliedPlan &p : applied->applied)
    note("applied " + p.plan);
  if (applied->applied.empty())
    note("no tuned plan applies; the output is the input");
  out = std::move(applied->source);
  return OptOk;
}

int runAnalyze(const OptRequest &r, const std::vector<std::string> &args, bool json,
               std::string &out) {
  llvm::Expected<ProgramModel> model = buildProgramModel(r.input, args);
  if (!model)
    return fail(OptInputError, toString(model.takeError()));
  if (model->kernels.empty())
    return fail(OptNothingToDo,
                r.input + ": no CUDA kernels (__global__ functions) in this translation unit");
  out = json ? analysisJson(*model) : analysisText(*model);
  return OptOk;
}

} // namespace

const char *const kOptOverview =
    "cudal1-opt: analyse and rewrite CUDA C++ kernels\n\n"
    "  cudal1-opt FILE.cu --analyze[=text] [-o OUT] [-- CLANG-FLAGS]\n"
    "  cudal1-opt FILE.cu --list-transforms[=json]\n"
    "  cudal1-opt FILE.cu --plan 'PLAN' -o OUT.cu\n"
    "  cudal1-opt FILE.cu --instrument -o OUT.cu\n"
    "  cudal1-opt FILE.cu --reference KERNEL -o REF.cu\n"
    "  cudal1-opt FILE.cu --tune [--budget N] [--strategy S] [--db PATH] -o OUT.cu\n"
    "  cudal1-opt FILE.cu --emit-bundle DIR [--budget N]   (then cudal1-eval DIR)\n"
    "  cudal1-opt FILE.cu --import-results DIR [--db PATH] -o OUT.cu\n"
    "  cudal1-opt FILE.cu --check-plan 'PLAN' [--time-regex RE] [--build-cmd C] [--run-cmd C]\n"
    "  cudal1-opt FILE.cu --apply [--db PATH] [--gpu-arch sm_NN] -o OUT.cu\n"
    "  cudal1-opt FILE.cu --analyze -p BUILD-DIR\n"
    "  cudal1-opt --db-stats [--db PATH]\n";

int runOpt(const OptRequest &r) {
  if (std::string why = misuse(r); !why.empty())
    return fail(OptUsageError, why);
  if (r.dbStats)
    return dbStats(r);
  if (Error e = checkOutputIsNotInput(r.output, r.input)) // every mode
    return fail(OptUsageError, toString(std::move(e)));
  std::string format =
      r.analyze ? (r.analyze->empty() ? "json" : *r.analyze) : r.listTransforms.value_or("");
  if (format.empty())
    format = "text";
  if (format != "json" && format != "text")
    return fail(OptUsageError, (r.analyze ? "--analyze=" : "--list-transforms=") + format +
                                   ": expected 'json' or 'text'");
  std::optional<Plan> plan;
  if (r.plan || r.checkPlan) {
    const std::string &text = r.plan ? *r.plan : *r.checkPlan;
    llvm::Expected<Plan> p = parsePlan(text);
    if (!p) {
      errs() << toString(p.takeError()) << "\n  " << text << "\n";
      return OptUsageError;
    }
    plan = std::move(*p);
  }
  llvm::Expected<std::vector<std::string>> user = compileCommand(r);
  if (!user)
    return fail(OptUsageError, toString(user.takeError()));
  std::vector<std::string> notes;
  std::vector<std::string> args = analysisArgs(*user, &notes);
  for (const std::string &n : notes)
    note(n);
  if (r.planFile)
    return runPlanFile(r, *r.planFile, args);

  std::string out;
  int code = OptOk;
  if (r.analyze) {
    code = runAnalyze(r, args, format == "json", out);
  } else {
    if (sys::fs::is_directory(r.input))
      return fail(OptInputError, "'" + r.input + "' is a directory");
    auto buf = MemoryBuffer::getFile(r.input);
    if (!buf)
      return fail(OptInputError, "cannot read '" + r.input + "': " + buf.getError().message());
    RewriteInput in{r.input, (*buf)->getBuffer().str(), args};
    if (tuning(r))
      return runTuning(r, in);
    if (r.checkPlan)
      code = runCheck(r, in, *plan, out);
    else if (r.reference)
      code = runReference(*r.reference, in, out);
    else if (r.apply)
      code = runApply(r, in, out);
    else {
      llvm::Expected<std::string> result = plan           ? applyPlan(in, *plan)
                                           : r.instrument ? instrumentSource(in)
                                                          : listTransforms(in, format == "json");
      if (!result) {
        errs() << toString(result.takeError()) << "\n";
        if (plan)
          errs() << "  " << r.plan.value_or("") << "\n";
        return plan ? OptPlanRefused : OptInputError;
      }
      out = std::move(*result);
    }
  }
  if (code != OptOk)
    return code;
  if (Error e = writeFileAtomically(r.output, out))
    return fail(OptInputError, toString(std::move(e)));
  return OptOk;
}

} // namespace cudal1
