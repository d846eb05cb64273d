// The printers of --list-transforms: the legal space as JSON (for scripts)
// and as text (for people). Both walk the same LegalSpace. And enablement:
// which refused steps become legal once a gatekeeper step (drop-sync,
// restrict) is applied first (issue 18 item 2, docs/Plans.md).
#include "cudal1/Rewrite/LegalSpace.h"
#include "cudal1/Analysis/HostEffects.h"
#include "cudal1/Frontend/ParsedUnit.h"
#include "cudal1/Rewrite/HostCode.h"
#include "cudal1/Rewrite/PlanDriver.h"
#include "cudal1/Rewrite/Transform.h"

#include "mlir/IR/MLIRContext.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <set>

#define DEBUG_TYPE "legal-space"

using namespace cudal1;

namespace {

/// The prerequisite steps as plan text, one entry per step.
std::string stepsText(const std::vector<PlanStep> &steps) { return printPlan(Plan{steps}); }

llvm::json::Array paramsJson(const std::vector<ParamSpace> &space) {
  llvm::json::Array params;
  for (const ParamSpace &p : space) {
    llvm::json::Array values;
    for (const std::string &v : p.values)
      values.push_back(v);
    params.push_back(llvm::json::Object{{"name", p.name}, {"values", std::move(values)}});
  }
  return params;
}

llvm::json::Array transformsJson(const LegalSite &site) {
  llvm::json::Array arr;
  for (const LegalTransform &t : site.transforms) {
    llvm::json::Object o{{"name", t.name}, {"legal", t.legal}};
    if (t.legal) {
      o["params"] = paramsJson(t.params);
      if (t.fastMath)
        o["fast_math"] = true;
      if (!t.links.empty()) {
        llvm::json::Array links;
        for (const std::string &l : t.links)
          links.push_back(l);
        o["links"] = std::move(links);
      }
    } else {
      o["reason"] = t.reason;
      if (!t.enabledBy.empty()) {
        llvm::json::Array pre;
        for (const PlanStep &p : t.enabledBy)
          pre.push_back(printPlan(Plan{{p}}));
        o["enabled_by"] = std::move(pre);
        o["params"] = paramsJson(t.params);
      }
    }
    arr.push_back(std::move(o));
  }
  return arr;
}

llvm::json::Value siteJson(const LegalSite &s) {
  llvm::json::Object o{{"location", s.location}};
  switch (s.level) {
  case Transform::Level::Kernel:
    o["name"] = s.kernelName;
    o["key"] = s.kernelKey;
    break;
  case Transform::Level::Launch:
    o["id"] = s.scope.launch;
    o["kernel"] = s.kernelName;
    break;
  case Transform::Level::HostLoop: {
    o["id"] = s.scope.loop;
    o["function"] = s.function;
    llvm::json::Array ids;
    for (unsigned l : s.launches)
      ids.push_back(l);
    o["launches"] = std::move(ids);
    break;
  }
  case Transform::Level::HostSync:
    o["id"] = s.scope.sync;
    o["call"] = s.call;
    o["function"] = s.function;
    break;
  case Transform::Level::HostCopy:
    o["id"] = s.scope.copy;
    o["call"] = s.call;
    break;
  }
  if (!s.notRewritable.empty())
    o["not_rewritable"] = s.notRewritable;
  if (!s.fixedLoops.empty()) {
    llvm::json::Array loops;
    for (const LegalLoop &l : s.fixedLoops)
      loops.push_back(llvm::json::Object{{"id", l.id},
                                         {"kind", l.kind},
                                         {"location", l.location},
                                         {"not_rewritable", l.notRewritable}});
    o["fixed_loops"] = std::move(loops);
  }
  o["transforms"] = transformsJson(s);
  return o;
}

llvm::json::Array sitesJson(const std::vector<LegalSite> &sites) {
  llvm::json::Array arr;
  for (const LegalSite &s : sites)
    arr.push_back(siteJson(s));
  return arr;
}

void printParams(llvm::raw_ostream &os, const std::vector<ParamSpace> &params) {
  if (params.empty())
    return;
  os << "(";
  for (size_t i = 0; i < params.size(); ++i) {
    os << (i ? ", " : "") << params[i].name << "=";
    for (size_t j = 0; j < params[i].values.size(); ++j)
      os << (j ? "|" : "") << params[i].values[j];
  }
  os << ")";
}

void printTransforms(llvm::raw_ostream &os, const LegalSite &site) {
  if (!site.notRewritable.empty())
    os << "  (not rewritable: " << site.notRewritable << ")\n";
  for (const LegalLoop &l : site.fixedLoops)
    os << "  loop " << l.id << " (" << l.kind << ")  " << l.location
       << "  (not rewritable: " << l.notRewritable << ")\n";
  for (const LegalTransform &t : site.transforms) {
    if (!t.legal) {
      os << "  - " << t.name << ": " << t.reason << "\n";
      // The refused step as the tuner can take it: after its prerequisites.
      if (!t.enabledBy.empty()) {
        os << "    + " << t.name;
        printParams(os, t.params);
        os << "  enabled by " << stepsText(t.enabledBy) << "\n";
      }
      continue;
    }
    os << "  " << t.name;
    printParams(os, t.params);
    os << (t.fastMath ? "  [fast-math]" : "");
    for (const std::string &l : t.links)
      os << "  [link -l" << l << "]";
    os << "\n";
  }
}

} // namespace

std::string cudal1::printLegalSpaceJson(const LegalSpace &space) {
  llvm::json::Object root{{"schema", "cudal1-transforms"},
                          {"version", 1},
                          {"file", space.file},
                          {"kernels", sitesJson(space.kernels)},
                          {"launches", sitesJson(space.launches)},
                          {"loops", sitesJson(space.loops)},
                          {"syncs", sitesJson(space.syncs)},
                          {"copies", sitesJson(space.copies)}};
  if (!space.inlined.empty()) {
    llvm::json::Array files;
    for (const LegalSpace::Inlined &f : space.inlined)
      files.push_back(llvm::json::Object{{"file", f.file}, {"included_at", f.includedAt}});
    root["inlined"] = std::move(files);
  }
  if (!space.unlistedHostLoops.empty()) {
    llvm::json::Array ids;
    for (unsigned id : space.unlistedHostLoops)
      ids.push_back(id);
    root["unlisted_host_loops"] = std::move(ids);
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return out;
}

std::string cudal1::printLegalSpaceText(const LegalSpace &space) {
  std::string out;
  llvm::raw_string_ostream os(out);
  for (const LegalSite &s : space.kernels) {
    os << "kernel " << s.kernelName << "  " << s.location << "\n";
    printTransforms(os, s);
  }
  for (const LegalSite &s : space.launches) {
    os << "launch #" << s.scope.launch << " " << s.kernelName << "  " << s.location << "\n";
    printTransforms(os, s);
  }
  for (const LegalSite &s : space.loops) {
    os << "loop #" << s.scope.loop << " in " << s.function << "  " << s.location << "  launches";
    for (unsigned id : s.launches)
      os << " #" << id;
    os << "\n";
    printTransforms(os, s);
  }
  for (const LegalSite &s : space.syncs) {
    os << "sync #" << s.scope.sync << " " << s.call << "  " << s.location << "\n";
    printTransforms(os, s);
  }
  for (const LegalSite &s : space.copies) {
    os << "copy #" << s.scope.copy << " " << s.call << "  " << s.location << "\n";
    printTransforms(os, s);
  }
  // Host loop ids count every host loop of the unit (headers included):
  // say which ids the listing skips, as ranges.
  const std::vector<unsigned> &u = space.unlistedHostLoops;
  if (!u.empty()) {
    os << "host loops launching no kernel (not listed):";
    for (size_t i = 0; i < u.size();) {
      size_t j = i;
      while (j + 1 < u.size() && u[j + 1] == u[j] + 1)
        ++j;
      os << " #" << u[i];
      if (j > i)
        os << "-#" << u[j];
      i = j + 1;
    }
    os << "\n";
  }
  for (const LegalSpace::Inlined &f : space.inlined)
    os << "inlined " << f.file << "  included at " << f.includedAt
       << "  (its kernels are rewritten in the including unit, which a plan's output holds)\n";
  return out;
}

// ---------------------------------------------------------------------------
// Enablement: refused steps that another step's rewrite makes legal.

namespace {

/// Which gatekeeper a candidate's prerequisites apply.
enum class Gate { Syncs, Restrict };

/// One site whose refused steps may become legal after `pre`.
struct Candidate {
  LegalSite *site = nullptr;
  Target target;
  Gate gate = Gate::Syncs;
  std::vector<PlanStep> pre;     ///< in the order to apply them
  std::vector<unsigned> syncs;   ///< Gate::Syncs: the synchronizations dropped
  std::vector<unsigned> kernels; ///< Gate::Restrict: the kernel restricted
  /// Launches: fuse's `count` values kept are at most this, the launches
  /// from the site up to the first synchronization that `pre` leaves (the
  /// screen drops more than `pre`, so its chains could reach further).
  unsigned reach = 0;
  /// A chain of fuse (pre: every synchronization between its launches):
  /// only fuse is asked again, and what it enables is a further entry of
  /// the site, the counts beyond those listed already, with this reason.
  bool chain = false;
  std::string chainReason;
};

/// Derived plans beyond this many prerequisite plans of several steps are
/// not confirmed in Screen mode (each costs one parse per step): the listing
/// stays linear in the file's size.
constexpr unsigned kMaxConfirmations = 4;
/// fuse's longest chain (Fuse::maxChain, passes/Fuse.h).
constexpr unsigned kMaxChain = 8;

bool legalAt(const LegalSite &site, llvm::StringRef name) {
  for (const LegalTransform &t : site.transforms)
    if (t.name == name)
      return t.legal;
  return false;
}

bool hasRefused(const LegalSite &site, llvm::StringRef except) {
  for (const LegalTransform &t : site.transforms)
    if (!t.legal && t.name != except)
      return true;
  return false;
}

/// The sync steps, last first: dropping a synchronization renumbers only the
/// later ones, so each step's id is still the original's.
std::vector<PlanStep> dropSteps(std::vector<unsigned> ids) {
  std::sort(ids.rbegin(), ids.rend());
  std::vector<PlanStep> out;
  for (unsigned id : ids) {
    PlanStep s;
    s.scope.sync = int(id);
    s.transform = "drop-sync";
    out.push_back(s);
  }
  return out;
}

/// The launches from `launch` (itself counted) that fuse's chain reaches
/// in `block` before a statement other than a launch or an error check,
/// at most kMaxChain: with the synchronization after `launch` dropped, the
/// next one stops the chain.
unsigned pairReach(clang::ASTContext &ast, const clang::CompoundStmt *block,
                   const clang::Stmt *launch) {
  unsigned reach = 1;
  bool after = false, next = false;
  for (const clang::Stmt *st : block->body()) {
    if (!after) {
      after = st == launch;
      continue;
    }
    if (llvm::isa<clang::CUDAKernelCallExpr>(st)) {
      next = true;
      if (++reach == kMaxChain)
        break;
    } else if (next && !isErrorCheck(ast, st)) {
      break; // up to the next launch, the pair's synchronizations lie
    }
  }
  return std::max(reach, 2u);
}

/// The chains of fuse that drop-sync enables: in each block, a run of
/// launches with only error checks and droppable synchronizations between
/// them, cut into pieces of kMaxChain launches; a piece of three launches
/// or more with a synchronization inside is a candidate at its first launch,
/// its prerequisites every synchronization between its launches. One
/// candidate per piece, not per launch: the listing stays linear.
void chainCandidates(ParsedUnit &unit, LegalSpace &space,
                     const std::map<const clang::Stmt *, unsigned> &syncStmt,
                     std::vector<Candidate> &out) {
  if (syncStmt.empty())
    return;
  clang::ASTContext &ast = unit.ast();
  const Transform *fuse = findTransform("fuse");
  if (!fuse)
    return;
  std::map<const clang::Stmt *, LegalSite *> siteOf;
  for (LegalSite &site : space.launches)
    siteOf.emplace(unit.launchExpr(unsigned(site.scope.launch)), &site);
  mlir::MLIRContext mlir;
  clang::Rewriter rw(ast.getSourceManager(), ast.getLangOpts());
  TransformContext ctx(unit, rw, mlir);
  std::set<const clang::CompoundStmt *> seen;
  for (LegalSite &first : space.launches) {
    auto *block = llvm::dyn_cast_or_null<clang::CompoundStmt>(
        parentStmt(ast, unit.launchExpr(unsigned(first.scope.launch))));
    if (!block || !seen.insert(block).second)
      continue;
    // The runs of the block: each launch with the droppable
    // synchronizations between it and the launch before it in its run.
    std::vector<std::vector<std::pair<const clang::Stmt *, std::vector<unsigned>>>> runs(1);
    std::vector<unsigned> gap;
    for (const clang::Stmt *st : block->body()) {
      if (llvm::isa<clang::CUDAKernelCallExpr>(st)) {
        runs.back().push_back({st, runs.back().empty() ? std::vector<unsigned>{} : gap});
        gap.clear();
      } else if (auto it = syncStmt.find(st); it != syncStmt.end()) {
        gap.push_back(it->second);
      } else if (!isErrorCheck(ast, st)) {
        runs.emplace_back();
        gap.clear();
      }
    }
    for (const auto &run : runs)
      for (size_t head = 0; head + 2 < run.size(); head += kMaxChain) {
        size_t len = std::min<size_t>(kMaxChain, run.size() - head);
        std::vector<unsigned> syncs;
        for (size_t i = head + 1; i < head + len; ++i)
          syncs.insert(syncs.end(), run[i].second.begin(), run[i].second.end());
        auto it = siteOf.find(run[head].first);
        if (syncs.empty() || it == siteOf.end() || len < 3)
          continue;
        Candidate c;
        c.site = it->second;
        c.target = {unsigned(c.site->kernel), c.site->scope.launch};
        c.syncs = syncs;
        c.pre = dropSteps(syncs);
        c.reach = unsigned(len);
        c.chain = true;
        // Why the chain is refused as it stands: the first synchronization
        // in it (every count beyond the launches before it stops there).
        PlanStep step;
        step.transform = "fuse";
        step.params = {{"count", std::to_string(len)}};
        c.chainReason = fuse->checkParams(ctx, c.target, step);
        if (c.chainReason.empty())
          continue; // cannot happen: a synchronization lies in the chain
        out.push_back(std::move(c));
      }
  }
}

/// The sites whose refusals a gatekeeper may lift, each with its
/// prerequisites:
/// - a launch followed, before the next launch of its block, by host
///   synchronizations that drop-sync may remove (fuse and streams look for
///   the next launch with only error checks between);
/// - a host loop whose body has such synchronizations between its launches
///   (graph captures one run of launches);
/// - a kernel with two or more pointer parameters where restrict is legal,
///   and its launches (vectorize and interchange refuse pointers that may
///   alias unless they are __restrict__).
std::vector<Candidate> candidatesOf(ParsedUnit &unit, LegalSpace &space) {
  const ProgramModel &m = unit.model();
  clang::ASTContext &ast = unit.ast();
  std::vector<Candidate> out;
  // The statements that drop-sync would remove, by the droppable sync.
  std::map<const clang::Stmt *, unsigned> syncStmt;
  for (const LegalSite &s : space.syncs)
    if (legalAt(s, "drop-sync"))
      if (const clang::Stmt *st = enclosingStatement(ast, unit.syncCall(unsigned(s.scope.sync))))
        syncStmt.emplace(st, unsigned(s.scope.sync));
  if (!syncStmt.empty()) {
    for (LegalSite &site : space.launches) {
      if (!hasRefused(site, ""))
        continue;
      const clang::Stmt *launch = unit.launchExpr(unsigned(site.scope.launch));
      auto *block = llvm::dyn_cast_or_null<clang::CompoundStmt>(parentStmt(ast, launch));
      if (!block)
        continue;
      std::vector<unsigned> between;
      bool after = false, next = false;
      for (const clang::Stmt *st : block->body()) {
        if (!after) {
          after = st == launch;
          continue;
        }
        if (llvm::isa<clang::CUDAKernelCallExpr>(st)) {
          next = true;
          break;
        }
        if (auto it = syncStmt.find(st); it != syncStmt.end())
          between.push_back(it->second);
      }
      if (!next || between.empty())
        continue;
      Candidate c;
      c.site = &site;
      c.target = {unsigned(site.kernel), site.scope.launch};
      c.syncs = between;
      c.pre = dropSteps(between);
      c.reach = pairReach(ast, block, launch);
      out.push_back(std::move(c));
    }
    for (LegalSite &site : space.loops) {
      if (!hasRefused(site, ""))
        continue;
      unsigned id = unsigned(site.scope.loop);
      auto *body = llvm::dyn_cast_or_null<clang::CompoundStmt>(loopBody(unit.hostLoopStmt(id)));
      if (!body)
        continue;
      std::set<const clang::Stmt *> launches;
      for (unsigned l : m.hostLoops[id].launches)
        launches.insert(unit.launchExpr(l));
      std::vector<unsigned> between, pending;
      bool seen = false;
      for (const clang::Stmt *st : body->body()) {
        if (launches.count(st)) {
          // Syncs count only when a launch of the loop follows them.
          between.insert(between.end(), pending.begin(), pending.end());
          pending.clear();
          seen = true;
        } else if (auto it = syncStmt.find(st); seen && it != syncStmt.end()) {
          pending.push_back(it->second);
        }
      }
      if (between.empty())
        continue;
      Candidate c;
      c.site = &site;
      c.target.loop = int(id);
      c.syncs = between;
      c.pre = dropSteps(between);
      out.push_back(std::move(c));
    }
  }
  for (LegalSite &site : space.kernels) {
    if (!legalAt(site, "restrict"))
      continue;
    const clang::FunctionDecl *fd = unit.kernelDecl(unsigned(site.kernel));
    unsigned pointers = 0;
    for (const clang::ParmVarDecl *p : fd->parameters())
      pointers += p->getType()->isPointerType();
    if (pointers < 2)
      continue;
    PlanStep r;
    r.scope.kernel = site.kernelName;
    r.transform = "restrict";
    auto add = [&](LegalSite &s, Target tg) {
      if (!hasRefused(s, "restrict"))
        return;
      Candidate c;
      c.site = &s;
      c.target = tg;
      c.gate = Gate::Restrict;
      c.kernels = {unsigned(site.kernel)};
      c.pre = {r};
      out.push_back(std::move(c));
    };
    add(site, {unsigned(site.kernel), -1});
    for (LegalSite &l : space.launches)
      if (l.kernel == site.kernel)
        add(l, {unsigned(l.kernel), l.scope.launch});
  }
  chainCandidates(unit, space, syncStmt, out);
  return out;
}

/// Whether `after` has the sites of `before` under the same ids: the
/// gatekeepers edit no launch, loop or kernel away, so anything else means
/// the re-parse is not the unit the candidates describe.
bool sameSites(const ProgramModel &before, const ProgramModel &after) {
  if (before.kernels.size() != after.kernels.size() ||
      before.launches.size() != after.launches.size() ||
      before.hostLoops.size() != after.hostLoops.size())
    return false;
  for (size_t i = 0; i < before.kernels.size(); ++i)
    if (before.kernels[i].name != after.kernels[i].name)
      return false;
  for (size_t i = 0; i < before.launches.size(); ++i)
    if (before.launches[i].kernel != after.launches[i].kernel ||
        before.launches[i].pos.line != after.launches[i].pos.line)
      return false;
  return true;
}

/// A count value of fuse's space (0 if it is not a number).
unsigned countValue(const std::string &v) {
  unsigned n = 0;
  return llvm::StringRef(v).getAsInteger(10, n) ? 0 : n;
}

/// fuse's counts beyond `reach` dropped (and the parameter with them when
/// only 2, plain fuse, is left).
void limitCount(LegalTransform &e, unsigned reach) {
  if (e.name != "fuse")
    return;
  for (auto p = e.params.begin(); p != e.params.end(); ++p)
    if (p->name == "count") {
      llvm::erase_if(p->values, [&](const std::string &v) { return countValue(v) > reach; });
      if (p->values.size() < 2)
        e.params.erase(p);
      return;
    }
}

/// The highest fuse count a site offers already (2 for plain fuse, 0 when
/// none), legal or enabled.
unsigned offeredCount(const LegalSite &site) {
  unsigned most = 0;
  for (const LegalTransform &t : site.transforms) {
    if (t.name != "fuse" || !(t.legal || !t.enabledBy.empty()))
      continue;
    most = std::max(most, 2u);
    for (const ParamSpace &p : t.params)
      if (p.name == "count")
        for (const std::string &v : p.values)
          most = std::max(most, countValue(v));
  }
  return most;
}

/// A candidate's refused steps asked again on `after` (the source with at
/// least its prerequisites applied); the ones now legal, with their space.
std::vector<LegalTransform> recheck(ParsedUnit &after, const Candidate &c) {
  mlir::MLIRContext mlir;
  clang::Rewriter rw(after.ast().getSourceManager(), after.ast().getLangOpts());
  TransformContext ctx(after, rw, mlir);
  std::vector<LegalTransform> out;
  auto ask = [&](LegalTransform e) {
    const Transform *t = findTransform(e.name);
    if (!t || !t->legality(ctx, c.target).empty())
      return;
    // A pair's drop-sync reaching no third launch: plain fuse, without
    // asking for the chain (the screen's chains would be cut anyway).
    if (e.name == "fuse" && c.reach && c.reach < 3)
      e.params.clear();
    else
      e.params = t->space(ctx, c.target);
    if (c.reach)
      limitCount(e, c.reach);
    e.fastMath = t->fastMath();
    e.links = t->links();
    e.enabledBy = c.pre;
    out.push_back(std::move(e));
  };
  if (c.chain) {
    LegalTransform e;
    e.name = "fuse";
    e.reason = c.chainReason;
    ask(std::move(e));
    return out;
  }
  for (const LegalTransform &lt : c.site->transforms)
    if (!lt.legal && lt.name != c.pre.front().transform)
      ask(lt);
  return out;
}

/// A prerequisite plan that does not apply enables nothing; not an error.
void notEnabled(const std::string &what, llvm::Error e) {
  std::string why = llvm::toString(std::move(e));
  LLVM_DEBUG(llvm::dbgs() << what << ": " << why << "\n");
  (void)what;
}

llvm::Expected<std::unique_ptr<ParsedUnit>>
reparse(const ParsedUnit &before, const RewriteInput &in, const std::string &text) {
  QuietParses quiet; // a failed re-parse only means: nothing enabled
  auto u = ParsedUnit::parse(in.file, text, in.args);
  if (!u)
    return u.takeError();
  if (!sameSites(before.model(), (*u)->model()))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the sites moved under the prerequisites");
  return u;
}

/// The reference: the candidate's prerequisite plan applied by the plan
/// driver (legality of each step on the evolving source) and its refused
/// steps asked on the result.
std::vector<LegalTransform> derive(ParsedUnit &unit, const RewriteInput &in, const Candidate &c,
                                   std::map<std::string, std::unique_ptr<ParsedUnit>> &cache) {
  std::string key = stepsText(c.pre);
  auto it = cache.find(key);
  if (it == cache.end()) {
    std::unique_ptr<ParsedUnit> after;
    llvm::Expected<std::string> src = applyPlan(in, Plan{c.pre}, &unit);
    if (!src) {
      notEnabled(key, src.takeError());
    } else if (auto u = reparse(unit, in, *src); !u) {
      notEnabled(key, u.takeError());
    } else {
      after = std::move(*u);
    }
    it = cache.emplace(key, std::move(after)).first;
  }
  if (!it->second)
    return {};
  return recheck(*it->second, c);
}

/// Every prerequisite of one gate applied at once, through one rewrite of
/// the original (each is legal there): one parse for all candidates.
std::unique_ptr<ParsedUnit> screenUnit(ParsedUnit &unit, const RewriteInput &in, Gate gate,
                                       const std::vector<Candidate> &cands) {
  std::set<unsigned> syncs, kernels;
  for (const Candidate &c : cands)
    if (c.gate == gate) {
      syncs.insert(c.syncs.begin(), c.syncs.end());
      kernels.insert(c.kernels.begin(), c.kernels.end());
    }
  if (syncs.empty() && kernels.empty())
    return nullptr;
  mlir::MLIRContext mlir;
  clang::SourceManager &sm = unit.ast().getSourceManager();
  clang::Rewriter rw(sm, unit.ast().getLangOpts());
  TransformContext ctx(unit, rw, mlir);
  const Transform *t = findTransform(gate == Gate::Syncs ? "drop-sync" : "restrict");
  if (!t)
    return nullptr;
  for (unsigned id : gate == Gate::Syncs ? syncs : kernels) {
    Target tg;
    PlanStep step;
    step.transform = t->name().str();
    if (gate == Gate::Syncs)
      tg.sync = int(id);
    else
      tg.kernel = id;
    if (llvm::Error e = t->apply(ctx, tg, step)) {
      notEnabled("screen", std::move(e));
      return nullptr;
    }
  }
  ctx.finishEdits();
  const clang::RewriteBuffer *buf = rw.getRewriteBufferFor(sm.getMainFileID());
  if (!buf)
    return nullptr;
  auto u = reparse(unit, in, std::string(buf->begin(), buf->end()));
  if (!u) {
    notEnabled("screen", u.takeError());
    return nullptr;
  }
  return std::move(*u);
}

void enable(LegalSite &site, std::vector<LegalTransform> found) {
  for (LegalTransform &e : found)
    for (LegalTransform &t : site.transforms)
      if (t.name == e.name && !t.legal && t.enabledBy.empty()) {
        t = std::move(e);
        break;
      }
}

/// A chain's fuse: a further entry of the site with the counts beyond those
/// it offers already (legal, or enabled by fewer synchronizations dropped).
void enable(const Candidate &c, std::vector<LegalTransform> found) {
  if (!c.chain)
    return enable(*c.site, std::move(found));
  unsigned offered = offeredCount(*c.site);
  for (LegalTransform &e : found) {
    std::vector<std::string> counts;
    for (ParamSpace &p : e.params)
      if (p.name == "count")
        for (const std::string &v : p.values)
          if (countValue(v) > std::max(offered, 2u))
            counts.push_back(v);
    if (counts.empty())
      continue;
    std::string listed;
    for (const std::string &v : counts)
      listed += (listed.empty() ? "" : "|") + v;
    e.reason = "count=" + listed + ": " + e.reason;
    e.params = {{"count", counts}};
    // Right after the site's last fuse entry.
    auto &ts = c.site->transforms;
    auto at = std::find_if(ts.rbegin(), ts.rend(), [](const LegalTransform &t) {
                return t.name == "fuse";
              }).base();
    ts.insert(at, std::move(e));
  }
}

/// A legal or enabled fuse whose counts include 2 becomes plain fuse (the
/// pair, as before chains) and a further entry for the longer chains, so
/// that the pair's plan text stays `fuse`.
void splitChains(LegalSpace &space) {
  for (LegalSite &site : space.launches)
    for (size_t i = 0; i < site.transforms.size(); ++i) {
      LegalTransform &t = site.transforms[i];
      if (t.name != "fuse" || t.params.size() != 1 || t.params[0].name != "count" ||
          t.params[0].values.empty() || t.params[0].values.front() != "2")
        continue;
      LegalTransform longer = t;
      longer.params[0].values.erase(longer.params[0].values.begin());
      t.params.clear();
      site.transforms.insert(site.transforms.begin() + long(i) + 1, std::move(longer));
      ++i;
    }
}

} // namespace

llvm::Expected<LegalSpace> cudal1::legalSpace(ParsedUnit &unit, const RewriteInput &in,
                                              Enablement how) {
  llvm::Expected<LegalSpace> space = legalSpace(unit);
  if (!space)
    return space;
  if (how == Enablement::Off) {
    splitChains(*space);
    return space;
  }
  std::vector<Candidate> cands = candidatesOf(unit, *space);
  std::map<std::string, std::unique_ptr<ParsedUnit>> derived;
  if (how == Enablement::Derive) {
    for (const Candidate &c : cands)
      enable(c, derive(unit, in, c, derived));
    splitChains(*space);
    return space;
  }
  unsigned confirmations = 0;
  for (Gate gate : {Gate::Syncs, Gate::Restrict}) {
    std::unique_ptr<ParsedUnit> screen = screenUnit(unit, in, gate, cands);
    if (!screen)
      continue;
    for (const Candidate &c : cands) {
      if (c.gate != gate)
        continue;
      std::vector<LegalTransform> found = recheck(*screen, c);
      // The screen applied every prerequisite at once, each legal on the
      // original; a plan of several steps must also derive step by step
      // (a synchronization may be droppable only while another one stays).
      // Not a chain's: its synchronizations lie between launches with only
      // error checks and droppable synchronizations between them, so after
      // dropping the later ones each host path from an earlier one runs
      // through launches and error checks into a path from the last one,
      // legal on the original; and fuse at its head sees only statements
      // between its launches, all dropped in both (EnablementTest checks
      // the screen against deriving).
      if (!found.empty() && c.pre.size() > 1 && !c.chain) {
        if (!derived.count(stepsText(c.pre)) && confirmations++ >= kMaxConfirmations)
          continue;
        found = derive(unit, in, c, derived);
      }
      enable(c, std::move(found));
    }
  }
  splitChains(*space);
  return space;
}
