// Applying a plan step by step on the evolving source, and listing legal
// transforms. Each step re-parses the current text, so every legality check
// sees the code as the earlier steps left it.
#include "cudal1/Rewrite/PlanDriver.h"
#include "cudal1/Frontend/Frontend.h"
#include "cudal1/Frontend/ParsedUnit.h"
#include "cudal1/Rewrite/HostCode.h"
#include "cudal1/Rewrite/LegalSpace.h"
#include "cudal1/Rewrite/RewriteUtils.h"
#include "cudal1/Rewrite/Transform.h"

#include "mlir/IR/MLIRContext.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

using namespace cudal1;

namespace {

llvm::Error stepError(const PlanStep &s, unsigned index, const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "plan:1:%u: error: step %u (%s): %s", s.column, index + 1,
                                 s.transform.c_str(), msg.c_str());
}

/// Kernels that share one definition (instantiations of one template) are
/// rewritten once; this is the representative of each.
std::vector<unsigned> distinctKernels(const ProgramModel &m, const std::string &name) {
  std::vector<unsigned> out;
  std::set<std::string> seen;
  for (unsigned k = 0; k < m.kernels.size(); ++k) {
    if (!name.empty() && m.kernels[k].name != name)
      continue;
    if (seen.insert(m.kernels[k].pos.str()).second)
      out.push_back(k);
  }
  return out;
}

/// The targets of a step. Kernel-level steps check legality on every
/// instantiation of a template but edit it once.
llvm::Expected<std::vector<Target>> resolve(const ProgramModel &m, const Transform &t,
                                            const PlanStep &s, unsigned index, size_t numCopies) {
  std::vector<Target> out;
  bool launchLevel = t.level() == Transform::Level::Launch;
  // Host-level transforms take exactly one host loop or synchronization.
  if (t.level() == Transform::Level::HostLoop) {
    if (s.scope.loop < 0)
      return stepError(s, index, "applies to a host loop: scope it with @loop#id");
    if (size_t(s.scope.loop) >= m.hostLoops.size())
      return stepError(s, index, "there is no host loop #" + std::to_string(s.scope.loop));
    Target tg;
    tg.loop = s.scope.loop;
    return std::vector<Target>{tg};
  }
  if (t.level() == Transform::Level::HostSync) {
    if (s.scope.sync < 0)
      return stepError(s, index, "applies to a host synchronization: scope it with @sync#id");
    if (size_t(s.scope.sync) >= m.syncs.size())
      return stepError(s, index,
                       "there is no host synchronization #" + std::to_string(s.scope.sync));
    Target tg;
    tg.sync = s.scope.sync;
    return std::vector<Target>{tg};
  }
  if (t.level() == Transform::Level::HostCopy) {
    if (s.scope.copy < 0)
      return stepError(s, index, "applies to a host copy: scope it with @copy#id");
    if (size_t(s.scope.copy) >= numCopies)
      return stepError(s, index, "there is no host copy #" + std::to_string(s.scope.copy));
    Target tg;
    tg.copy = s.scope.copy;
    return std::vector<Target>{tg};
  }
  if (s.scope.copy >= 0)
    return stepError(s, index, "only host-copy transforms (async-copy) take @copy#id");
  if (s.scope.loop >= 0 || s.scope.sync >= 0)
    return stepError(
        s, index,
        "a kernel- or launch-level transform cannot be scoped to a host loop or synchronization");
  if (s.scope.launch >= 0) {
    if (size_t(s.scope.launch) >= m.launches.size())
      return stepError(s, index, "there is no launch site #" + std::to_string(s.scope.launch));
    const LaunchSite &l = m.launches[s.scope.launch];
    if (l.kernelIndex < 0)
      return stepError(s, index, "launch site #" + std::to_string(l.id) + " has no known kernel");
    out.push_back({unsigned(l.kernelIndex), launchLevel ? int(l.id) : -1});
    return out;
  }
  std::vector<unsigned> kernels = distinctKernels(m, s.scope.kernel);
  if (kernels.empty())
    return stepError(s, index, "there is no kernel named '" + s.scope.kernel + "'");
  if (s.scope.kernel.empty() && kernels.size() > 1)
    return stepError(s, index,
                     "the file has several kernels: scope the step with @kernel or @#launch");
  for (unsigned k : kernels) {
    if (!launchLevel) {
      out.push_back({k, -1});
      continue;
    }
    for (unsigned sib : kernelsSharingDefinition(m, k))
      for (const LaunchSite &l : m.launches)
        if (l.kernelIndex == int(sib))
          out.push_back({sib, int(l.id)});
  }
  if (out.empty())
    return stepError(s, index, "kernel '" + s.scope.kernel + "' has no launch site in this file");
  return out;
}

/// cudal1 edits only the file it is given, with the .cu files it includes
/// from its own directory inlined (IncludedSources.h): kernels defined in
/// headers and host code written in headers are out of reach. Where a
/// target is is the parse's question (the main file's text, inlined files
/// included), what it is called the model's (an inlined kernel's position
/// is its own file's, through #line).
std::string outsideMainFile(ParsedUnit &unit, Target t) {
  const ProgramModel &m = unit.model();
  const clang::SourceManager &sm = unit.ast().getSourceManager();
  auto inMain = [&](const clang::Stmt *s) {
    return s && sm.isInMainFile(sm.getFileLoc(s->getBeginLoc()));
  };
  auto header = [&](const std::string &file) {
    // A .cu that was not inlined says why. Positions name it by its
    // absolute path, the include list as written.
    for (const NotInlined &n : unit.notInlinedSources())
      if (absoluteLexicalPath(n.path) == file)
        return ", an included .cu file that is not inlined: " + n.why +
               "; cudal1 rewrites only the file it is given and the .cu files inlined into it";
    return std::string(" (a header); cudal1 rewrites only the file it is given");
  };
  if (t.copy >= 0)
    return ""; // hostCopies() lists the main file's copies only
  if (t.loop >= 0)
    return inMain(unit.hostLoopStmt(t.loop)) ? ""
                                             : "the loop is in " + m.hostLoops[t.loop].pos.file +
                                                   header(m.hostLoops[t.loop].pos.file);
  if (t.sync >= 0)
    return inMain(unit.syncCall(t.sync)) ? ""
                                         : "the synchronization is in " + m.syncs[t.sync].pos.file +
                                               header(m.syncs[t.sync].pos.file);
  if (t.launch >= 0)
    return inMain(unit.launchExpr(t.launch)) ? ""
                                             : "the launch is in " + m.launches[t.launch].pos.file +
                                                   header(m.launches[t.launch].pos.file);
  if (m.kernels[t.kernel].fromHeader)
    return "the kernel is defined in " + m.kernels[t.kernel].pos.file +
           header(m.kernels[t.kernel].pos.file);
  return "";
}

/// The loops of kernel k that no rewrite can reach, with the reason: all of
/// a kernel defined in a header; a loop whose `for` a macro writes (the
/// rewrites edit the file's text, not macro expansions).
std::vector<LegalLoop> fixedLoops(ParsedUnit &unit, unsigned k) {
  const Kernel &kernel = unit.model().kernels[k];
  const clang::SourceManager &sm = unit.ast().getSourceManager();
  std::vector<LegalLoop> out;
  for (const KernelLoop &l : kernel.loops) {
    LegalLoop ll{l.id, l.kind, l.pos.str(), ""};
    clang::SourceLocation at = unit.loopStmt(k, l.id)->getBeginLoc();
    if (kernel.fromHeader) {
      ll.notRewritable = "in " + l.pos.file + " (a header)";
    } else if (at.isMacroID()) {
      llvm::StringRef macro = clang::Lexer::getImmediateMacroName(at, sm, unit.ast().getLangOpts());
      SourcePos spelled = unit.positionOf(sm.getSpellingLoc(at));
      ll.notRewritable = "written by macro " + macro.str();
      if (!spelled.file.empty())
        ll.notRewritable += " (" + spelled.file + ":" + std::to_string(spelled.line) + ")";
      ll.notRewritable += "; cudal1 does not edit macro expansions";
    } else {
      continue;
    }
    out.push_back(std::move(ll));
  }
  return out;
}

std::string targetName(const ProgramModel &m, Target t) {
  if (t.copy >= 0)
    return "host copy #" + std::to_string(t.copy);
  if (t.loop >= 0)
    return "host loop #" + std::to_string(t.loop) + " (" + m.hostLoops[t.loop].pos.str() + ")";
  if (t.sync >= 0)
    return "host synchronization #" + std::to_string(t.sync) + " (" + m.syncs[t.sync].pos.str() +
           ")";
  if (t.launch >= 0)
    return "launch site #" + std::to_string(t.launch) + " (" + m.launches[t.launch].pos.str() + ")";
  return "kernel '" + m.kernels[t.kernel].name + "'";
}

} // namespace

const Transform *cudal1::findTransform(llvm::StringRef name) {
  for (const auto &t : allTransforms())
    if (t->name() == name)
      return t.get();
  return nullptr;
}

bool cudal1::planNeedsFastMath(const Plan &plan) {
  return std::any_of(plan.steps.begin(), plan.steps.end(), [](const PlanStep &s) {
    const Transform *t = findTransform(s.transform);
    return t && t->fastMath();
  });
}

std::vector<std::string> cudal1::planLinks(const Plan &plan) {
  std::set<std::string> links;
  for (const PlanStep &s : plan.steps)
    if (const Transform *t = findTransform(s.transform))
      for (const std::string &l : t->links())
        links.insert(l);
  return std::vector<std::string>(links.begin(), links.end());
}

namespace {

/// Where the application of a plan stands after some of its steps: the
/// source so far, and what the input launched (a later step may not target
/// a kernel an earlier one took the launches of).
struct PlanProgress {
  std::string text;
  std::set<std::string> launchedInInput;
};

/// "Step i does not parse" as applyStep says it.
llvm::Error notParsing(const PlanStep &step, unsigned i, const std::string &why) {
  return stepError(step, i, "the source before this step does not parse: " + why);
}

/// Applies step i of a plan to `p` (its steps before i applied) on
/// `parsedText`, a parse of p.text the caller made, or else parsing p.text
/// first.
llvm::Error applyStep(const RewriteInput &in, const PlanStep &step, unsigned i, PlanProgress &p,
                      ParsedUnit *parsedText, mlir::MLIRContext &mlir) {
  std::string &text = p.text;
  std::set<std::string> &launchedInInput = p.launchedInInput;
  {
    const Transform *t = findTransform(step.transform);
    if (!t)
      return stepError(step, i, "unknown transform (see --list-transforms)");
    std::unique_ptr<ParsedUnit> parsed;
    ParsedUnit *unit = parsedText;
    if (!unit) {
      auto u = ParsedUnit::parse(in.file, text, in.args);
      if (!u)
        return notParsing(step, i, llvm::toString(u.takeError()));
      parsed = std::move(*u);
      unit = parsed.get();
    }
    const ProgramModel &m = unit->model();
    auto targets = resolve(m, *t, step, i, hostCopies(unit->ast()).size());
    if (!targets)
      return targets.takeError();
    std::set<std::string> launched;
    for (const LaunchSite &l : m.launches)
      if (l.kernelIndex >= 0)
        launched.insert(m.kernels[l.kernelIndex].name);
    if (i == 0)
      launchedInInput = launched;
    // A kernel whose launches an earlier step took away (fuse, library) no
    // longer runs: a step on it would change nothing but dead code.
    for (Target tg : *targets) {
      bool kernelLevel = tg.launch < 0 && tg.loop < 0 && tg.sync < 0 && tg.copy < 0;
      const std::string &name = m.kernels[tg.kernel].name;
      if (kernelLevel && launchedInInput.count(name) && !launched.count(name))
        return stepError(step, i,
                         "kernel '" + name +
                             "' no longer runs: an earlier step of the "
                             "plan replaced its launches");
    }
    clang::SourceManager &sm = unit->ast().getSourceManager();
    clang::Rewriter rewriter(sm, unit->ast().getLangOpts());
    TransformContext ctx(*unit, rewriter, mlir);
    // 1. Every target must be legal, with these parameters, before any edit.
    for (Target tg : *targets) {
      std::vector<unsigned> check = {tg.kernel};
      bool hostLevel = tg.loop >= 0 || tg.sync >= 0 || tg.copy >= 0;
      if (tg.launch < 0 && !hostLevel)
        check = kernelsSharingDefinition(m, tg.kernel);
      for (unsigned k : check) {
        Target c = tg;
        c.kernel = k;
        std::string why = outsideMainFile(*unit, c);
        if (why.empty())
          why = t->legality(ctx, c);
        if (!why.empty())
          return stepError(step, i, "not legal at " + targetName(m, c) + ": " + why);
        if (std::string why = t->checkParams(ctx, c, step); !why.empty())
          return stepError(step, i, why + " at " + targetName(m, c));
      }
    }
    // 2. Edit.
    for (Target tg : *targets)
      if (llvm::Error e = t->apply(ctx, tg, step))
        return stepError(step, i, llvm::toString(std::move(e)));
    ctx.finishEdits();
    // 3. Only the main file may change.
    for (auto it = rewriter.buffer_begin(); it != rewriter.buffer_end(); ++it)
      if (it->first != sm.getMainFileID()) {
        // A buffer without a file is a macro's scratch space or a builtin.
        auto entry = sm.getFileEntryRefForID(it->first);
        return stepError(step, i,
                         "the rewrite would change " +
                             (entry ? entry->getName().str() + " (a header)"
                                    : std::string("a buffer that is not a file")) +
                             "; cudal1 rewrites only the file it is given");
      }
    if (const clang::RewriteBuffer *buf = rewriter.getRewriteBufferFor(sm.getMainFileID()))
      text = std::string(buf->begin(), buf->end());
  }
  return llvm::Error::success();
}

/// The variant source of a plan whose steps gave `text`.
std::string planSource(const Plan &plan, const std::string &text) {
  // Libraries the variant must link are named on the first line too, for
  // whoever builds it (program bundles carry them as `link=NAME`).
  std::string links;
  for (const std::string &l : planLinks(plan))
    links += " -l" + l;
  return "/* cudal1-opt plan: " + printPlan(plan) + " */ " +
         (links.empty() ? "" : "/* cudal1 link:" + links + " */ ") + text;
}

} // namespace

llvm::Expected<std::string> cudal1::applyPlan(const RewriteInput &in, const Plan &plan,
                                              ParsedUnit *parsedInput) {
  mlir::MLIRContext mlir;
  PlanProgress p{in.code, {}};
  for (unsigned i = 0; i < plan.steps.size(); ++i)
    if (llvm::Error e = applyStep(in, plan.steps[i], i, p, i == 0 ? parsedInput : nullptr, mlir))
      return std::move(e);
  return planSource(plan, p.text);
}

struct cudal1::PlanPrefixCache::Entries {
  std::mutex lock;
  std::map<std::string, PlanProgress> after; ///< printPlan of a prefix -> its progress
};

cudal1::PlanPrefixCache::PlanPrefixCache() : entries(std::make_unique<Entries>()) {}
cudal1::PlanPrefixCache::~PlanPrefixCache() = default;

llvm::Expected<std::string> cudal1::applyPlan(const RewriteInput &in, const Plan &plan,
                                              PlanPrefixCache &cache) {
  // The longest prefix already applied (the plan itself not counted: its
  // source needs its own first line), then the rest, each prefix kept.
  auto key = [&](size_t n) {
    return printPlan(Plan{std::vector<PlanStep>(plan.steps.begin(), plan.steps.begin() + n)});
  };
  PlanProgress p{in.code, {}};
  size_t from = 0;
  {
    std::lock_guard<std::mutex> g(cache.entries->lock);
    for (size_t n = plan.steps.size(); n-- > 1;)
      if (auto it = cache.entries->after.find(key(n)); it != cache.entries->after.end()) {
        p = it->second;
        from = n;
        break;
      }
  }
  mlir::MLIRContext mlir;
  for (size_t i = from; i < plan.steps.size(); ++i) {
    if (llvm::Error e = applyStep(in, plan.steps[i], unsigned(i), p, nullptr, mlir))
      return std::move(e);
    std::lock_guard<std::mutex> g(cache.entries->lock);
    cache.entries->after.emplace(key(i + 1), p);
  }
  return planSource(plan, p.text);
}

llvm::Expected<std::string> cudal1::derivePlan(const RewriteInput &input,
                                               const std::string &planText) {
  llvm::Expected<Plan> plan = parsePlan(planText);
  if (!plan)
    return plan.takeError();
  return applyPlan(input, *plan);
}

cudal1::PlanCombination cudal1::combinePlans(const RewriteInput &in, const std::vector<Plan> &plans,
                                             const std::vector<double> &certainty,
                                             llvm::function_ref<void(size_t, llvm::Error)> rejected,
                                             PlanPrefixCache *cache) {
  PlanPrefixCache own;
  PlanPrefixCache &prefixes = cache ? *cache : own;
  std::vector<size_t> order(plans.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return certainty[a] > certainty[b]; });
  PlanCombination out;
  for (size_t i : order) {
    std::vector<size_t> trial = out.kept;
    trial.insert(std::upper_bound(trial.begin(), trial.end(), i), i);
    Plan joined;
    for (size_t j : trial)
      joined.steps.insert(joined.steps.end(), plans[j].steps.begin(), plans[j].steps.end());
    llvm::Expected<std::string> src = applyPlan(in, joined, prefixes);
    if (!src) {
      rejected(i, src.takeError());
      continue;
    }
    out.kept = std::move(trial);
    out.source = std::move(*src);
  }
  return out;
}

cudal1::PlanCombination
cudal1::combinePlans(const RewriteInput &in, const std::vector<std::string> &plans,
                     const std::vector<double> &certainty,
                     llvm::function_ref<void(size_t, llvm::Error)> rejected) {
  // Plan texts from a database: one that does not parse is rejected alone.
  std::vector<Plan> parsed;
  std::vector<double> sure;
  std::vector<size_t> index;
  for (size_t i = 0; i < plans.size(); ++i) {
    llvm::Expected<Plan> p = parsePlan(plans[i]);
    if (!p) {
      rejected(i, p.takeError());
      continue;
    }
    parsed.push_back(std::move(*p));
    sure.push_back(certainty[i]);
    index.push_back(i);
  }
  PlanCombination c = combinePlans(
      in, parsed, sure, [&](size_t i, llvm::Error e) { rejected(index[i], std::move(e)); });
  for (size_t &k : c.kept)
    k = index[k];
  return c;
}

llvm::Expected<LegalSpace> cudal1::legalSpace(ParsedUnit &unit) {
  const ProgramModel &m = unit.model();
  mlir::MLIRContext mlir;
  clang::Rewriter rewriter(unit.ast().getSourceManager(), unit.ast().getLangOpts());
  TransformContext ctx(unit, rewriter, mlir);

  auto describe = [&](Target tg, Transform::Level level) {
    std::vector<LegalTransform> out;
    for (const auto &t : allTransforms()) {
      if (t->level() != level)
        continue;
      LegalTransform lt;
      lt.name = t->name().str();
      lt.reason = t->legality(ctx, tg);
      lt.legal = lt.reason.empty();
      if (lt.legal) {
        lt.params = t->space(ctx, tg);
        lt.fastMath = t->fastMath();
        lt.links = t->links();
      }
      out.push_back(std::move(lt));
    }
    return out;
  };
  // Targets in headers are listed once with the reason, not per transform.
  using Level = Transform::Level;
  auto fill = [&](LegalSite site, Target tg, Level level) {
    site.level = level;
    site.notRewritable = outsideMainFile(unit, tg);
    if (site.notRewritable.empty())
      site.transforms = describe(tg, site.level);
    return site;
  };
  LegalSpace space;
  space.file = m.mainFile;
  for (const InlinedSource &s : unit.inlinedSources())
    space.inlined.push_back({s.path, s.includer + ":" + std::to_string(s.line)});
  for (unsigned k : distinctKernels(m, "")) {
    LegalSite s;
    s.scope.kernel = m.kernels[k].name;
    s.kernel = int(k);
    s.kernelName = m.kernels[k].name;
    s.kernelKey = m.kernels[k].key;
    s.location = m.kernels[k].pos.str();
    s.fixedLoops = fixedLoops(unit, k);
    space.kernels.push_back(fill(std::move(s), {k, -1}, Level::Kernel));
  }
  for (const LaunchSite &l : m.launches) {
    if (l.kernelIndex < 0)
      continue;
    LegalSite s;
    s.scope.launch = int(l.id);
    s.kernel = l.kernelIndex;
    s.kernelName = l.kernel;
    s.kernelKey = m.kernels[l.kernelIndex].key;
    s.location = l.pos.str();
    space.launches.push_back(
        fill(std::move(s), {unsigned(l.kernelIndex), int(l.id)}, Level::Launch));
  }
  // Host loops that launch kernels, and host synchronizations.
  for (const HostLoop &hl : m.hostLoops) {
    if (hl.launches.empty()) {
      space.unlistedHostLoops.push_back(hl.id);
      continue;
    }
    Target tg;
    tg.loop = hl.id;
    LegalSite s;
    s.scope.loop = int(hl.id);
    s.function = hl.function;
    s.location = hl.pos.str();
    s.launches = hl.launches;
    space.loops.push_back(fill(std::move(s), tg, Level::HostLoop));
  }
  for (const HostSync &hs : m.syncs) {
    Target tg;
    tg.sync = hs.id;
    LegalSite s;
    s.scope.sync = int(hs.id);
    s.call = hs.call;
    s.function = hs.function;
    s.location = hs.pos.str();
    space.syncs.push_back(fill(std::move(s), tg, Level::HostSync));
  }
  // Host cudaMemcpy calls of the main file (@copy#N).
  const clang::SourceManager &sm = unit.ast().getSourceManager();
  std::vector<const clang::CallExpr *> cs = hostCopies(unit.ast());
  for (size_t i = 0; i < cs.size(); ++i) {
    Target tg;
    tg.copy = int(i);
    clang::PresumedLoc pl = sm.getPresumedLoc(sm.getFileLoc(cs[i]->getBeginLoc()));
    LegalSite s;
    s.scope.copy = int(i);
    s.call = calleeName(cs[i]);
    s.location = std::string(pl.getFilename()) + ":" + std::to_string(pl.getLine()) + ":" +
                 std::to_string(pl.getColumn());
    space.copies.push_back(fill(std::move(s), tg, Level::HostCopy));
  }
  return space;
}

llvm::Expected<std::string> cudal1::listTransforms(const RewriteInput &in, bool json) {
  auto unit = ParsedUnit::parse(in.file, in.code, in.args);
  if (!unit)
    return unit.takeError();
  llvm::Expected<LegalSpace> space = legalSpace(**unit, in);
  if (!space)
    return space.takeError();
  return json ? printLegalSpaceJson(*space) : printLegalSpaceText(*space);
}

llvm::Error cudal1::applyPlans(const RewriteInput &in, llvm::ArrayRef<Plan> plans,
                               llvm::function_ref<void(size_t, llvm::Expected<std::string>)> result,
                               ParsedUnit *parsedInput) {
  std::unique_ptr<ParsedUnit> parsedHere;
  if (!parsedInput) {
    auto u = ParsedUnit::parse(in.file, in.code, in.args);
    if (!u)
      return u.takeError();
    parsedHere = std::move(*u);
    parsedInput = parsedHere.get();
  }
  // The plans as a prefix tree: plans that begin with the same k steps
  // share the source after them, and one parse of that source (about a
  // second with the CUDA headers) serves every plan's step k+1, each
  // through its own Rewriter (the AST itself is never changed). A node is
  // the source after a prefix and the plans that continue from it; its
  // expansion applies each distinct next step once.
  struct Node {
    PlanProgress progress;
    unsigned depth = 0;
    std::vector<size_t> plans;
  };
  std::vector<std::optional<llvm::Expected<std::string>>> out(plans.size());
  auto expand = [&](const Node &node, ParsedUnit *unit, const std::string &notParsed) {
    mlir::MLIRContext mlir;
    std::vector<Node> next;
    std::vector<std::pair<const PlanStep *, std::vector<size_t>>> groups;
    for (size_t i : node.plans) {
      const PlanStep &s = plans[i].steps[node.depth];
      auto g = std::find_if(groups.begin(), groups.end(), [&](const auto &g) {
        return *g.first == s && g.first->column == s.column; // the column is in errors
      });
      if (g == groups.end())
        groups.push_back({&s, {i}});
      else
        g->second.push_back(i);
    }
    for (auto &[step, members] : groups) {
      Node child{node.progress, node.depth + 1, {}};
      llvm::Error e = unit ? applyStep(in, *step, node.depth, child.progress, unit, mlir)
                           : notParsing(*step, node.depth, notParsed);
      std::string refusal = e ? llvm::toString(std::move(e)) : "";
      for (size_t i : members) {
        if (!refusal.empty())
          out[i].emplace(
              llvm::make_error<llvm::StringError>(refusal, llvm::inconvertibleErrorCode()));
        else if (plans[i].steps.size() == child.depth)
          out[i].emplace(planSource(plans[i], child.progress.text));
        else
          child.plans.push_back(i);
      }
      if (!child.plans.empty())
        next.push_back(std::move(child));
    }
    return next;
  };
  // The first steps on the caller's parse of the input, on this thread (a
  // parse is not safe to read from two threads: clang fills caches as it
  // is read).
  Node root{PlanProgress{in.code, {}}, 0, {}};
  for (size_t i = 0; i < plans.size(); ++i)
    if (plans[i].steps.empty())
      out[i].emplace(planSource(plans[i], in.code));
    else
      root.plans.push_back(i);
  std::deque<Node> pending;
  for (Node &n : expand(root, parsedInput, ""))
    pending.push_back(std::move(n));
  // The deeper nodes, a parse each, over threads.
  std::mutex lock;
  std::condition_variable changed;
  unsigned busy = 0;
  bool quiet = QuietParses::active();
  auto worker = [&] {
    std::optional<QuietParses> silence;
    if (quiet)
      silence.emplace();
    for (;;) {
      Node node;
      {
        std::unique_lock<std::mutex> g(lock);
        changed.wait(g, [&] { return !pending.empty() || busy == 0; });
        if (pending.empty())
          return;
        node = std::move(pending.front());
        pending.pop_front();
        ++busy;
      }
      std::vector<Node> next;
      {
        auto u = ParsedUnit::parse(in.file, node.progress.text, in.args);
        if (u)
          next = expand(node, u->get(), "");
        else
          next = expand(node, nullptr, llvm::toString(u.takeError()));
      }
      {
        std::lock_guard<std::mutex> g(lock);
        for (Node &n : next)
          pending.push_back(std::move(n));
        --busy;
      }
      changed.notify_all();
    }
  };
  // A tree's breadth shows only as it unfolds: every thread waits for work
  // until none is pending and none is being expanded; this one joins in.
  unsigned threads =
      pending.empty() ? 1
                      : std::min<unsigned>(std::max(1u, std::thread::hardware_concurrency()), 16);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();
  for (size_t i = 0; i < plans.size(); ++i)
    result(i, std::move(*out[i]));
  return llvm::Error::success();
}
