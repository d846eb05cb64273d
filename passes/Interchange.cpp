// interchange: `for (c ...) for (r ...) S` becomes `for (r ...) for (c ...) S`
// when that makes the inner loop walk more accesses at unit stride. Only the
// two loop headers trade places, so the body and its formatting stay as
// written. Legal only when no iteration reads what another writes, except
// reductions, whose order may change (reassociation, as the evaluator allows).
#include "Interchange.h"
#include "cudal1/Analysis/AffineIndex.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include <functional>
#include <map>
#include <set>

#define DEBUG_TYPE "interchange"

using namespace clang;
using namespace cudal1;

namespace {

const VarDecl *counterOf(const ForStmt *fs) {
  auto *ds = dyn_cast_or_null<DeclStmt>(fs->getInit());
  if (!ds || !ds->isSingleDecl())
    return nullptr;
  return dyn_cast<VarDecl>(ds->getSingleDecl());
}

const ParmVarDecl *pointerParam(const Expr *e) {
  auto *dre = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts());
  auto *p = dre ? dyn_cast<ParmVarDecl>(dre->getDecl()) : nullptr;
  return p && p->getType()->isPointerType() ? p : nullptr;
}

/// The class of a reduction operator; reductions of one variable must share it.
int reductionClass(BinaryOperatorKind op) {
  switch (op) {
  case BO_AddAssign:
  case BO_SubAssign:
  case BO_Add:
    return 1;
  case BO_MulAssign:
  case BO_Mul:
    return 2;
  case BO_OrAssign:
    return 3;
  case BO_AndAssign:
    return 4;
  case BO_XorAssign:
    return 5;
  default:
    return 0;
  }
}

struct Nest {
  const ForStmt *outer = nullptr, *inner = nullptr;
  unsigned outerId = 0, innerId = 0;
};

/// The perfect nest whose outer loop is `id`, or why there is none.
std::string findNest(TransformContext &ctx, unsigned kernel, unsigned id, Nest &n) {
  const Kernel &k = ctx.model().kernels[kernel];
  std::string loop = "loop " + std::to_string(id);
  n.outer = dyn_cast_or_null<ForStmt>(ctx.unit.loopStmt(kernel, id));
  if (!n.outer)
    return loop + " is not a for loop";
  const Stmt *body = n.outer->getBody();
  if (auto *cs = dyn_cast<CompoundStmt>(body)) {
    body = nullptr;
    for (const Stmt *s : cs->body())
      if (!isa<NullStmt>(s)) {
        if (body)
          return loop + " is not perfectly nested: its body holds more than one for loop";
        body = s;
      }
  }
  n.inner = dyn_cast_or_null<ForStmt>(body);
  if (!n.inner)
    return loop + " is not perfectly nested: its body is not a single for loop";
  n.outerId = id;
  bool found = false;
  for (const KernelLoop &l : k.loops)
    if (l.parent == int(id) && ctx.unit.loopStmt(kernel, l.id) == n.inner) {
      n.innerId = l.id;
      found = true;
    }
  if (!found)
    return loop + ": the inner loop is not known to the analysis";
  for (unsigned l : {n.outerId, n.innerId})
    if (!k.loops[l].affine)
      return "loop " + std::to_string(l) +
             " is not affine (its counter changes other than by "
             "its step)";
  const SourceManager &sm = ctx.unit.ast().getSourceManager();
  for (const ForStmt *fs : {n.outer, n.inner}) {
    if (!counterOf(fs))
      return "loop " + std::to_string(fs == n.outer ? n.outerId : n.innerId) +
             " does not declare its counter in its header";
    for (SourceLocation l : {fs->getBeginLoc(), fs->getRParenLoc()})
      if (l.isMacroID() || !sm.isWrittenInMainFile(l))
        return loop + ": a loop header is written inside a macro";
  }
  return "";
}

/// Whether the launches show that two pointer parameters never alias: each
/// passes distinct plain buffer variables for them (or both are __restrict__).
bool distinct(TransformContext &ctx, unsigned kernel, const ParmVarDecl *p, const ParmVarDecl *q) {
  if (p->getType().isRestrictQualified() && q->getType().isRestrictQualified())
    return true;
  std::vector<unsigned> launches = ctx.launchesOf(kernel);
  if (launches.empty() || !referencedOutsideLaunches(ctx, kernel).empty())
    return false;
  unsigned a = p->getFunctionScopeIndex(), b = q->getFunctionScopeIndex();
  for (unsigned id : launches) {
    const LaunchSite &l = ctx.model().launches[id];
    if (a >= l.argBuffers.size() || b >= l.argBuffers.size() || l.argBuffers[a].empty() ||
        l.argBuffers[b].empty() || l.args[a] != l.argBuffers[a] || l.args[b] != l.argBuffers[b] ||
        l.argBuffers[a] == l.argBuffers[b])
      return false;
  }
  return true;
}

/// The number of iterations of a loop `for (v = 0; v < N; ++v)`, or nullopt.
std::optional<mlir::AffineExpr> tripCount(const KernelLoop &l, const ForStmt *fs,
                                          IndexSpace &space) {
  auto *bo = dyn_cast_or_null<BinaryOperator>(fs->getCond());
  auto *dre = bo ? dyn_cast<DeclRefExpr>(bo->getLHS()->IgnoreParenImpCasts()) : nullptr;
  if (!bo || bo->getOpcode() != BO_LT || !dre || dre->getDecl() != counterOf(fs) || l.init != "0" ||
      l.step != "1")
    return std::nullopt;
  return space.parse(l.bound);
}

std::optional<unsigned> dimOf(IndexSpace &space, unsigned loop) {
  std::string name = "$k" + std::to_string(loop);
  for (unsigned d = 0; d < space.numDims(); ++d)
    if (space.dimName(d) == name)
      return d;
  return std::nullopt;
}

bool isConst(const std::optional<mlir::AffineExpr> &e, int64_t v) {
  auto c = e ? llvm::dyn_cast<mlir::AffineConstantExpr>(*e) : nullptr;
  return c && c.getValue() == v;
}

/// The legality of interchanging the nest at loop `id`; counts the accesses
/// it makes unit-stride in the inner loop (gain) and those it stops being (loss).
std::string check(TransformContext &ctx, unsigned kernel, unsigned id,
                  unsigned *gainOut = nullptr) {
  const Kernel &k = ctx.model().kernels[kernel];
  ASTContext &ast = ctx.unit.ast();
  const SourceManager &sm = ast.getSourceManager();
  Nest n;
  if (std::string why = findNest(ctx, kernel, id, n); !why.empty())
    return why;
  const VarDecl *ov = counterOf(n.outer), *iv = counterOf(n.inner);
  // 1. Rectangular: the inner header does not use the outer counter, and no
  // header reads what the body changes.
  for (const Stmt *s :
       {n.inner->getInit(), (const Stmt *)n.inner->getCond(), (const Stmt *)n.inner->getInc()})
    if (refersTo(s, ov))
      return "the bounds of loop " + std::to_string(n.innerId) + " depend on '" +
             ov->getNameAsString() + "', the counter of loop " + std::to_string(n.outerId) +
             " (not a rectangular nest)";
  const Stmt *body = n.inner->getBody();
  // 2. The body: what it stores, and nothing that ties iterations together.
  std::set<const VarDecl *> locals;
  forEachStmt(body, [&](const Stmt *s) {
    if (auto *ds = dyn_cast<DeclStmt>(s))
      for (const Decl *d : ds->decls())
        if (auto *vd = dyn_cast<VarDecl>(d))
          locals.insert(vd);
  });
  std::string why;
  std::map<const VarDecl *, int> reductions;   ///< scalar → operator class
  std::set<const DeclRefExpr *> reductionRefs; ///< its uses inside the reductions
  std::map<const ParmVarDecl *, bool> stored;  ///< buffer → only `p[e] += ...`
  auto line = [&](const Stmt *s) {
    return std::to_string(sm.getPresumedLineNumber(sm.getFileLoc(s->getBeginLoc())));
  };
  forEachStmt(body, [&](const Stmt *s) {
    if (!why.empty())
      return;
    if (isa<BreakStmt>(s) || isa<ContinueStmt>(s) || isa<ReturnStmt>(s) || isa<GotoStmt>(s) ||
        isa<LabelStmt>(s)) {
      why = "the loop body contains a break, continue, return or goto (line " + line(s) + ")";
      return;
    }
    if (auto *ce = dyn_cast<CallExpr>(s)) {
      const FunctionDecl *f = ce->getDirectCallee();
      std::string name = f ? f->getNameAsString() : "";
      llvm::StringRef nm(name);
      if (nm.starts_with("__sync") || nm.starts_with("atomic") || nm.starts_with("__shfl") ||
          nm.starts_with("__threadfence"))
        why = "the loop body calls " + name + " (line " + line(s) + ")";
      else if (!f || !(f->isConstexpr() || sm.isInSystemHeader(f->getLocation())))
        why = "the loop body calls " + (f ? name + "()" : std::string("a function pointer")) +
              ", whose effects interchange does not analyse (line " + line(s) + ")";
      return;
    }
    const Expr *target = nullptr;
    BinaryOperatorKind op = BO_Comma;
    if (auto *bo = dyn_cast<BinaryOperator>(s); bo && bo->isAssignmentOp()) {
      target = bo->getLHS()->IgnoreParens();
      op = bo->getOpcode();
      // `s = s + e` is `s += e`.
      if (op == BO_Assign)
        if (auto *rhs = dyn_cast<BinaryOperator>(bo->getRHS()->IgnoreParenImpCasts());
            rhs && (rhs->getOpcode() == BO_Add || rhs->getOpcode() == BO_Mul))
          if (auto *l = dyn_cast<DeclRefExpr>(target))
            for (const Expr *side : {rhs->getLHS(), rhs->getRHS()})
              if (auto *r = dyn_cast<DeclRefExpr>(side->IgnoreParenImpCasts());
                  r && r->getDecl() == l->getDecl()) {
                op = rhs->getOpcode();
                reductionRefs.insert(r);
                break;
              }
    } else if (auto *uo = dyn_cast<UnaryOperator>(s); uo && uo->isIncrementDecrementOp()) {
      target = uo->getSubExpr()->IgnoreParens();
      op = BO_AddAssign;
    }
    if (!target)
      return;
    if (auto *dre = dyn_cast<DeclRefExpr>(target)) {
      auto *vd = dyn_cast<VarDecl>(dre->getDecl());
      if (vd && locals.count(vd))
        return;
      int cls = reductionClass(op);
      if (!vd || cls == 0 || (reductions.count(vd) && reductions[vd] != cls)) {
        why = "'" + dre->getDecl()->getNameAsString() +
              "' is assigned in the loop body and is not a reduction (" +
              dre->getDecl()->getNameAsString() + " += ...) (line " + line(s) + ")";
        return;
      }
      reductions[vd] = cls;
      reductionRefs.insert(dre);
      return;
    }
    if (auto *as = dyn_cast<ArraySubscriptExpr>(target)) {
      if (const ParmVarDecl *p = pointerParam(as->getBase())) {
        bool red = op == BO_AddAssign || op == BO_SubAssign;
        auto it = stored.find(p);
        stored[p] = red && (it == stored.end() || it->second);
        return;
      }
      if (auto *dre = dyn_cast<DeclRefExpr>(as->getBase()->IgnoreParenImpCasts()))
        if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()); vd && locals.count(vd))
          return;
    }
    why = "the loop body stores to " + spelled(ast, target) +
          ", which interchange does not analyse (line " + line(s) + ")";
  });
  if (!why.empty())
    return why;
  // A reduction variable is only read by its own reductions.
  for (const auto &[vd, cls] : reductions) {
    bool other = false;
    forEachStmt(body, [&](const Stmt *s) {
      if (auto *dre = dyn_cast<DeclRefExpr>(s);
          dre && dre->getDecl() == vd && !reductionRefs.count(dre))
        other = true;
    });
    if (other)
      return "'" + vd->getNameAsString() + "' is read in the loop body besides its reduction";
    for (const ForStmt *fs : {n.outer, n.inner})
      for (const Stmt *h : {fs->getInit(), (const Stmt *)fs->getCond(), (const Stmt *)fs->getInc()})
        if (refersTo(h, vd))
          return "the loop body changes '" + vd->getNameAsString() + "', which a loop header reads";
  }
  IndexSpace space(ctx.mlir);
  std::vector<const MemAccess *> inNest;
  for (const MemAccess &a : k.accesses)
    if (std::find(a.loops.begin(), a.loops.end(), n.innerId) != a.loops.end())
      inNest.push_back(&a);
  // 3. It pays: more accesses walk unit-stride in the new inner loop.
  unsigned gain = 0, loss = 0;
  for (const MemAccess *a : inNest) {
    auto e = space.parse(a->normalized);
    if (!e || usesOpaque(*e, space))
      continue;
    auto od = dimOf(space, n.outerId), id2 = dimOf(space, n.innerId);
    auto co = od ? coefficientOf(*e, *od, space) : std::nullopt;
    auto ci = id2 ? coefficientOf(*e, *id2, space) : std::nullopt;
    auto unit = [](const std::optional<mlir::AffineExpr> &c) {
      return isConst(c, 1) || isConst(c, -1);
    };
    auto spread = [&](const std::optional<mlir::AffineExpr> &c) {
      return c && !isConst(c, 0) && !unit(c);
    };
    if (od && id2) {
      gain += unit(co) && spread(ci);
      loss += unit(ci) && spread(co);
    }
  }
  if (gainOut)
    *gainOut = gain;
  if (gain <= loss)
    return "interchanging loops " + std::to_string(n.outerId) + " and " +
           std::to_string(n.innerId) + " makes " + std::to_string(gain) +
           " access(es) unit-stride in the inner loop and " + std::to_string(loss) +
           " no longer: no gain";
  // 4. Memory: a stored buffer is touched at one index, distinct per
  // iteration, or only accumulated into; it aliases no other buffer.
  for (const MemAccess *a : inNest)
    if (a->atomic)
      return "the loop body updates " + a->param + " atomically";
  const FunctionDecl *fd = ctx.unit.kernelDecl(kernel);
  auto paramNamed = [&](const std::string &name) -> const ParmVarDecl * {
    for (const ParmVarDecl *p : fd->parameters())
      if (p->getName() == name)
        return p;
    return nullptr;
  };
  for (const MemAccess *a : inNest)
    if (a->kind == AccessKind::Write && !stored.count(paramNamed(a->param)))
      return "the loop body stores to " + a->param + " through a local pointer (line " +
             std::to_string(a->pos.line) + ")";
  for (const auto &[p, onlyAccumulated] : stored) {
    std::string name = p->getNameAsString();
    std::optional<mlir::AffineExpr> index;
    for (const MemAccess *a : inNest) {
      if (a->param != name)
        continue;
      auto e = space.parse(a->normalized);
      if (!e || usesOpaque(*e, space))
        return "the index of " + name + "[" + a->index + "] (line " + std::to_string(a->pos.line) +
               ") is not affine";
      if (!index)
        index = e;
      else if (!sameFunction(*index, *e, space) && !onlyAccumulated)
        return name +
               " is stored to and accessed at different indices in the loop body ("
               "line " +
               std::to_string(a->pos.line) + "): iterations may depend on each other";
    }
    if (!onlyAccumulated && index) {
      auto od = dimOf(space, n.outerId), id2 = dimOf(space, n.innerId);
      auto co = od ? coefficientOf(*index, *od, space) : std::nullopt;
      auto ci = id2 ? coefficientOf(*index, *id2, space) : std::nullopt;
      auto to = tripCount(k.loops[n.outerId], n.outer, space);
      auto ti = tripCount(k.loops[n.innerId], n.inner, space);
      // Distinct per iteration: one counter moves the index by 1 and the
      // other by that loop's trip count (row-major `r * cols + c`, c < cols).
      bool inj = (isConst(ci, 1) && co && ti && sameFunction(*co, *ti, space)) ||
                 (isConst(co, 1) && ci && to && sameFunction(*ci, *to, space));
      if (!inj)
        return "the stores to " + name + " are not shown distinct per iteration (index " +
               space.print(*index) + "): interchange could reorder a dependence";
    }
    for (const MemAccess *a : inNest) {
      const ParmVarDecl *q = paramNamed(a->param);
      if (q && q != p && !distinct(ctx, kernel, p, q))
        return name + " is stored to and " + a->param +
               " is read in the loop body, and nothing shows they do not alias (launches "
               "passing distinct buffers, or __restrict__ on both)";
    }
  }
  return "";
}

/// Loops at which the nest can be interchanged, and the first reason otherwise.
std::vector<unsigned> candidates(TransformContext &ctx, unsigned kernel, std::string &why) {
  std::vector<unsigned> out;
  const Kernel &k = ctx.model().kernels[kernel];
  for (const KernelLoop &l : k.loops) {
    std::string w = check(ctx, kernel, l.id);
    if (w.empty())
      out.push_back(l.id);
    else if (why.empty() || (why.find("perfectly nested") != std::string::npos &&
                             w.find("perfectly nested") == std::string::npos))
      why = w; // prefer a reason about an actual nest
  }
  if (k.loops.empty())
    why = "the kernel has no loop";
  return out;
}

} // namespace

std::string Interchange::legality(TransformContext &ctx, Target t) const {
  std::string why;
  if (candidates(ctx, t.kernel, why).empty())
    return why;
  return "";
}

std::vector<ParamSpace> Interchange::space(TransformContext &ctx, Target t) const {
  std::string why;
  ParamSpace loops{"loop", {}};
  for (unsigned id : candidates(ctx, t.kernel, why))
    loops.values.push_back(std::to_string(id));
  return {loops};
}

std::string Interchange::checkParams(TransformContext &ctx, Target t, const PlanStep &step) const {
  auto loop = step.param("loop");
  if (!loop)
    return "missing parameter loop=ID (the outer loop of the nest; see --list-transforms)";
  unsigned id = 0;
  if (llvm::StringRef(*loop).getAsInteger(10, id) ||
      id >= ctx.model().kernels[t.kernel].loops.size())
    return "there is no loop " + *loop;
  if (std::string why = check(ctx, t.kernel, id); !why.empty())
    return why;
  return Transform::checkParams(ctx, t, step);
}

llvm::Error Interchange::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
  std::optional<unsigned> loop = step.uintParam("loop");
  if (!loop) // checkParams parsed it: cannot happen
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "interchange: bad loop=");
  unsigned id = *loop;
  Nest n;
  if (std::string why = findNest(ctx, t.kernel, id, n); !why.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), why.c_str());
  ASTContext &ast = ctx.unit.ast();
  auto header = [&](const ForStmt *fs) {
    return CharSourceRange::getTokenRange(fs->getBeginLoc(), fs->getRParenLoc());
  };
  std::string outerText =
      Lexer::getSourceText(header(n.outer), ast.getSourceManager(), ast.getLangOpts()).str();
  std::string innerText =
      Lexer::getSourceText(header(n.inner), ast.getSourceManager(), ast.getLangOpts()).str();
  ctx.rewriter.ReplaceText(header(n.outer), innerText);
  ctx.rewriter.ReplaceText(header(n.inner), outerText);
  return llvm::Error::success();
}
