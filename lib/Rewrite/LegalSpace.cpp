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
};

/// Derived plans beyond this many prerequisite plans of several steps are
/// not confirmed in Screen mode (each costs one parse per step): the listing
/// stays linear in the file's size.
constexpr unsigned kMaxConfirmations = 4;

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

/// A candidate's refused steps asked again on `after` (the source with at
/// least its prerequisites applied); the ones now legal, with their space.
std::vector<LegalTransform> recheck(ParsedUnit &after, const Candidate &c) {
  mlir::MLIRContext mlir;
  clang::Rewriter rw(after.ast().getSourceManager(), after.ast().getLangOpts());
  TransformContext ctx(after, rw, mlir);
  std::vector<LegalTransform> out;
  for (const LegalTransform &lt : c.site->transforms) {
    if (lt.legal || lt.name == c.pre.front().transform)
      continue;
    const Transform *t = findTransform(lt.name);
    if (!t || !t->legality(ctx, c.target).empty())
      continue;
    LegalTransform e = lt;
    e.params = t->space(ctx, c.target);
    e.fastMath = t->fastMath();
    e.links = t->links();
    e.enabledBy = c.pre;
    out.push_back(std::move(e));
  }
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
      if (t.name == e.name && !t.legal && t.enabledBy.empty())
        t = std::move(e);
}

} // namespace

llvm::Expected<LegalSpace> cudal1::legalSpace(ParsedUnit &unit, const RewriteInput &in,
                                              Enablement how) {
  llvm::Expected<LegalSpace> space = legalSpace(unit);
  if (!space || how == Enablement::Off)
    return space;
  std::vector<Candidate> cands = candidatesOf(unit, *space);
  std::map<std::string, std::unique_ptr<ParsedUnit>> derived;
  if (how == Enablement::Derive) {
    for (const Candidate &c : cands)
      enable(*c.site, derive(unit, in, c, derived));
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
      if (!found.empty() && c.pre.size() > 1) {
        if (!derived.count(stepsText(c.pre)) && confirmations++ >= kMaxConfirmations)
          continue;
        found = derive(unit, in, c, derived);
      }
      enable(*c.site, std::move(found));
    }
  }
  return space;
}
