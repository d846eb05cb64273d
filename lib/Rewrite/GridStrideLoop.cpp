// The grid-stride conversion that the grid-stride, coarsen and vectorize
// passes share: `int i = gid; ...; if (i < n) S` becomes
// `for (int i = gid; i < n; i += blockDim.x * gridDim.x) S`, the form the
// front end recognises as grid-stride, so later steps (launch-config,
// coarsen) still see affine indices. With the same launch nothing changes.
#include "cudal1/Rewrite/GridStrideLoop.h"
#include "cudal1/Analysis/AffineIndex.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"

#include <functional>

#define DEBUG_TYPE "grid-stride"

using namespace clang;
using namespace cudal1;

namespace {

const char *gridStep = "blockDim.x * gridDim.x";

const VarDecl *varOf(const Expr *e) {
  if (auto *dre = dyn_cast_or_null<DeclRefExpr>(e ? e->IgnoreParenImpCasts() : nullptr))
    return dyn_cast<VarDecl>(dre->getDecl());
  return nullptr;
}

bool isThreadBuiltin(const VarDecl *vd) {
  return vd && !vd->hasLocalStorage() &&
         (vd->getName() == "threadIdx" || vd->getName() == "blockIdx");
}

/// Variables the body may change: assigned, incremented, address taken or
/// bound to a non-const reference argument.
llvm::DenseSet<const VarDecl *> mutatedVars(const Stmt *body) {
  llvm::DenseSet<const VarDecl *> out;
  forEachStmt(body, [&](const Stmt *s) {
    if (auto *bo = dyn_cast<BinaryOperator>(s)) {
      if (bo->isAssignmentOp())
        if (const VarDecl *v = varOf(bo->getLHS()))
          out.insert(v);
    } else if (auto *uo = dyn_cast<UnaryOperator>(s)) {
      if (uo->isIncrementDecrementOp() || uo->getOpcode() == UO_AddrOf)
        if (const VarDecl *v = varOf(uo->getSubExpr()))
          out.insert(v);
    } else if (auto *ce = dyn_cast<CallExpr>(s)) {
      const FunctionDecl *f = ce->getDirectCallee();
      for (unsigned i = 0; i < ce->getNumArgs(); ++i) {
        const VarDecl *v = varOf(ce->getArg(i));
        if (!v)
          continue;
        if (!f || i >= f->getNumParams()) {
          if (!f)
            out.insert(v); // unknown callee: be conservative
          continue;
        }
        QualType pt = f->getParamDecl(i)->getType();
        if (pt->isReferenceType() && !pt->getPointeeType().isConstQualified())
          out.insert(v);
      }
    } else if (auto *oc = dyn_cast<CXXOperatorCallExpr>(s)) {
      if (oc->isAssignmentOp() && oc->getNumArgs() > 0)
        if (const VarDecl *v = varOf(oc->getArg(0)))
          out.insert(v);
    }
  });
  return out;
}

bool usesThreadIdentityImpl(const Stmt *s, llvm::DenseSet<const FunctionDecl *> &seen,
                            const SourceManager *sm) {
  bool found = false;
  forEachStmt(s, [&](const Stmt *c) {
    if (found)
      return;
    if (auto *dre = dyn_cast<DeclRefExpr>(c)) {
      if (isThreadBuiltin(dyn_cast<VarDecl>(dre->getDecl())))
        found = true;
    } else if (auto *ce = dyn_cast<CallExpr>(c)) {
      const FunctionDecl *f = ce->getDirectCallee();
      if (!f)
        return;
      llvm::StringRef n = f->getName().empty() ? "" : f->getName();
      if (n.starts_with("__syncthreads") || n == "__syncwarp" || n.starts_with("__shfl") ||
          n.starts_with("__ballot") || n.starts_with("__any") || n.starts_with("__all") ||
          n == "__activemask" || n.starts_with("__reduce_") || n.starts_with("__match") ||
          n == "__lanemask_lt")
        found = true;
      else if (const FunctionDecl *def = f->getDefinition();
               def && def->hasBody() && seen.insert(def).second &&
               !(sm && sm->isInSystemHeader(def->getLocation())))
        found = usesThreadIdentityImpl(def->getBody(), seen, sm);
    }
  });
  return found;
}

/// The kernel shape grid-stride converts.
struct Shape {
  const CompoundStmt *body = nullptr;
  const DeclStmt *declStmt = nullptr;
  const VarDecl *var = nullptr;
  const IfStmt *guard = nullptr;
  unsigned guardIndex = 0;
  bool earlyReturn = false;
  const BinaryOperator *bound = nullptr;
  const Expr *limit = nullptr;          ///< the bound's other side
  std::vector<const Expr *> otherConds; ///< the rest of the condition
  std::string loopCond;
};

bool isVoidReturn(const Stmt *s) {
  if (auto *cs = dyn_cast_or_null<CompoundStmt>(s))
    s = cs->size() == 1 ? cs->body_front() : nullptr;
  auto *r = dyn_cast_or_null<ReturnStmt>(s);
  return r && !r->getRetValue();
}

void splitOn(const Expr *e, BinaryOperatorKind op, std::vector<const Expr *> &out) {
  e = e->IgnoreParenImpCasts();
  if (auto *bo = dyn_cast<BinaryOperator>(e); bo && bo->getOpcode() == op) {
    splitOn(bo->getLHS(), op, out);
    splitOn(bo->getRHS(), op, out);
    return;
  }
  out.push_back(e);
}

std::string text(ASTContext &ast, SourceLocation b, SourceLocation e) {
  return Lexer::getSourceText(CharSourceRange::getTokenRange(b, e), ast.getSourceManager(),
                              ast.getLangOpts())
      .str();
}

/// Finds the guard and the index in a kernel body (syntax only).
std::string matchShape(ASTContext &ast, const FunctionDecl *fd, Shape &m) {
  m.body = dyn_cast_or_null<CompoundStmt>(fd->getBody());
  if (!m.body || m.body->size() == 0)
    return "the kernel has no body";
  std::vector<const Stmt *> stmts(m.body->body_begin(), m.body->body_end());
  int guardAt = -1;
  for (unsigned i = 0; i < stmts.size(); ++i)
    if (auto *is = dyn_cast<IfStmt>(stmts[i]); is && !is->getElse() && !is->getInit() &&
                                               !is->getConditionVariable() &&
                                               isVoidReturn(is->getThen())) {
      guardAt = i;
      m.earlyReturn = true;
      break;
    }
  if (guardAt < 0) {
    auto *is = dyn_cast<IfStmt>(stmts.back());
    if (!is || is->getElse() || is->getInit() || is->getConditionVariable())
      return "no guard: expected `if (i < n) ...` as the last statement or `if (i >= n) "
             "return;` (without else)";
    guardAt = stmts.size() - 1;
  }
  m.guardIndex = guardAt;
  m.guard = cast<IfStmt>(stmts[guardAt]);
  const Expr *cond = m.guard->getCond();
  std::vector<const Expr *> parts;
  splitOn(cond, m.earlyReturn ? BO_LOr : BO_LAnd, parts);
  // Locals declared by top-level statements before the guard.
  llvm::DenseMap<const VarDecl *, const DeclStmt *> before;
  for (unsigned i = 0; i < unsigned(guardAt); ++i)
    if (auto *ds = dyn_cast<DeclStmt>(stmts[i]))
      for (const Decl *d : ds->decls())
        if (auto *vd = dyn_cast<VarDecl>(d))
          before[vd] = ds;
  for (const Expr *p : parts) {
    auto *bo = dyn_cast<BinaryOperator>(p);
    if (!m.bound && bo && bo->isRelationalOp()) {
      BinaryOperatorKind op = bo->getOpcode();
      const VarDecl *l = varOf(bo->getLHS()), *r = varOf(bo->getRHS());
      // Normal form `var OP limit`, where OP must keep the loop going while
      // var is small: < or <= (guard), >= or > (early return).
      bool upper = m.earlyReturn ? (op == BO_GE || op == BO_GT) : (op == BO_LT || op == BO_LE);
      bool lower = m.earlyReturn ? (op == BO_LE || op == BO_LT) : (op == BO_GT || op == BO_GE);
      if (l && before.count(l) && upper) {
        m.var = l;
        m.limit = bo->getRHS();
      } else if (r && before.count(r) && lower) {
        m.var = r;
        m.limit = bo->getLHS();
      }
      if (m.var) {
        m.bound = bo;
        m.declStmt = before[m.var];
        continue;
      }
    }
    m.otherConds.push_back(p);
  }
  if (!m.bound)
    return m.earlyReturn ? "the early return does not test a local index against a bound "
                           "(`if (i >= n) return;`)"
                         : "the guard does not bound a local index from above (`if (i < n)`)";
  if (!m.declStmt->isSingleDecl())
    return "the index '" + m.var->getNameAsString() + "' must be declared in its own statement";
  const SourceManager &sm = ast.getSourceManager();
  for (SourceLocation l :
       {m.guard->getBeginLoc(), m.guard->getRParenLoc(), m.guard->getEndLoc(),
        m.declStmt->getBeginLoc(), m.declStmt->getEndLoc(), m.body->getRBracLoc()})
    if (l.isInvalid() || l.isMacroID())
      return "the guard or the index declaration is written inside a macro";
  if (!sm.isWrittenInMainFile(m.guard->getBeginLoc()))
    return "the kernel is not defined in the main file";
  if (!m.earlyReturn) {
    m.loopCond = text(ast, cond->getBeginLoc(), cond->getEndLoc());
  } else if (parts.size() == 1) {
    BinaryOperatorKind neg = BinaryOperator::negateComparisonOp(m.bound->getOpcode());
    m.loopCond = text(ast, m.bound->getLHS()->getBeginLoc(), m.bound->getLHS()->getEndLoc()) + " " +
                 BinaryOperator::getOpcodeStr(neg).str() + " " +
                 text(ast, m.bound->getRHS()->getBeginLoc(), m.bound->getRHS()->getEndLoc());
  } else {
    m.loopCond = "!(" + text(ast, cond->getBeginLoc(), cond->getEndLoc()) + ")";
  }
  return "";
}

/// The normalized text (docs/Frontend.md) of a side-effect-free integer
/// expression over builtins, constants and unmodified locals and
/// parameters; nullopt outside that grammar.
std::optional<std::string> normalize(ASTContext &ast, const Expr *e,
                                     const llvm::DenseSet<const VarDecl *> &mutated,
                                     unsigned depth = 0) {
  if (!e || depth > 16)
    return std::nullopt;
  e = e->IgnoreParens();
  if (!e->isValueDependent() && !e->isTypeDependent()) {
    Expr::EvalResult r;
    if (e->getType()->isIntegerType() && e->EvaluateAsInt(r, ast)) {
      int64_t v = r.Val.getInt().getSExtValue();
      return v < 0 ? "(0 - " + std::to_string(-v) + ")" : std::to_string(v);
    }
  }
  const Expr *p = e->IgnoreParenImpCasts();
  if (auto *po = dyn_cast<PseudoObjectExpr>(p))
    p = po->getSyntacticForm()->IgnoreParenImpCasts();
  if (auto *mp = dyn_cast<MSPropertyRefExpr>(p)) {
    const Expr *base = mp->getBaseExpr()->IgnoreParenImpCasts();
    if (auto *ove = dyn_cast<OpaqueValueExpr>(base); ove && ove->getSourceExpr())
      base = ove->getSourceExpr()->IgnoreParenImpCasts();
    auto *dre = dyn_cast<DeclRefExpr>(base);
    llvm::StringRef member = mp->getPropertyDecl()->getName();
    if (!dre)
      return std::nullopt;
    llvm::StringRef n = dre->getDecl()->getName();
    if (n != "threadIdx" && n != "blockIdx" && n != "blockDim" && n != "gridDim")
      return std::nullopt;
    if (member.starts_with("__fetch_builtin_"))
      member = member.drop_front(strlen("__fetch_builtin_"));
    return (n + "." + member).str();
  }
  if (auto *ce = dyn_cast<CastExpr>(p))
    return normalize(ast, ce->getSubExpr(), mutated, depth + 1);
  if (auto *bo = dyn_cast<BinaryOperator>(p)) {
    const char *op = bo->getOpcode() == BO_Add   ? " + "
                     : bo->getOpcode() == BO_Sub ? " - "
                     : bo->getOpcode() == BO_Mul ? " * "
                                                 : nullptr;
    if (!op)
      return std::nullopt;
    auto l = normalize(ast, bo->getLHS(), mutated, depth + 1);
    auto r = normalize(ast, bo->getRHS(), mutated, depth + 1);
    if (!l || !r)
      return std::nullopt;
    return "(" + *l + op + *r + ")";
  }
  if (auto *dre = dyn_cast<DeclRefExpr>(p)) {
    auto *vd = dyn_cast<VarDecl>(dre->getDecl());
    if (!vd || mutated.count(vd))
      return std::nullopt;
    if (isa<ParmVarDecl>(vd))
      return vd->getNameAsString();
    if (vd->hasLocalStorage() && vd->hasInit())
      return normalize(ast, vd->getInit(), mutated, depth + 1);
  }
  return std::nullopt;
}

/// Whether `e` has the same value in every thread and every iteration:
/// it reads only unmodified parameters, unmodified locals with invariant
/// initializers, globals and launch dimensions.
bool invariant(const Expr *e, const VarDecl *index, const llvm::DenseSet<const VarDecl *> &mutated,
               const SourceManager &sm, unsigned depth = 0) {
  if (depth > 16)
    return false;
  bool ok = true;
  forEachStmt(e, [&](const Stmt *s) {
    if (!ok)
      return;
    if (auto *dre = dyn_cast<DeclRefExpr>(s)) {
      auto *vd = dyn_cast<VarDecl>(dre->getDecl());
      if (!vd)
        return;
      if (vd == index || isThreadBuiltin(vd) || mutated.count(vd))
        ok = false;
      else if (vd->hasLocalStorage() && !isa<ParmVarDecl>(vd))
        ok = vd->hasInit() && invariant(vd->getInit(), index, mutated, sm, depth + 1);
    } else if (isa<CallExpr>(s)) {
      llvm::DenseSet<const FunctionDecl *> seen;
      if (usesThreadIdentityImpl(s, seen, &sm))
        ok = false;
    }
  });
  return ok;
}

/// The legality of one kernel (one instantiation).
std::string legalOne(TransformContext &ctx, unsigned kernel) {
  ASTContext &ast = ctx.unit.ast();
  const SourceManager &sm = ast.getSourceManager();
  const Kernel &k = ctx.model().kernels[kernel];
  const KernelAnalysis &ka = ctx.analysis(kernel);
  const FunctionDecl *fd = ctx.unit.kernelDecl(kernel);
  // 1. Kernel-wide properties.
  if (ka.gridStride)
    return "the kernel is grid-stride already";
  if (!k.shared.empty() || !k.barriers.empty())
    return "the kernel uses shared memory or barriers, which tie work to its thread";
  if (usesWarpIntrinsics(fd))
    return "the kernel uses warp-level intrinsics";
  IndexSpace space(ctx.mlir);
  for (const MemAccess &a : k.accesses) {
    auto e = space.parse(a.normalized);
    if (!e)
      continue;
    for (unsigned d :
         {IndexSpace::ThreadY, IndexSpace::ThreadZ, IndexSpace::BlockY, IndexSpace::BlockZ})
      if (e->isFunctionOfDim(d))
        return "the access " + a.param + "[" + a.index + "] uses the y or z thread dimension";
  }
  // 2. The shape.
  Shape m;
  if (std::string why = matchShape(ast, fd, m); !why.empty())
    return why;
  const VarDecl *var = m.var;
  std::string name = var->getNameAsString();
  llvm::DenseSet<const VarDecl *> mutated = mutatedVars(m.body);
  if (!var->getType()->isIntegerType() || var->getType().isConstQualified())
    return "the index '" + name + "' must be a non-const integer";
  if (mutated.count(var))
    return "the index '" + name + "' is modified in the kernel";
  // 3. The index is exactly the global id along x.
  auto norm = normalize(ast, var->getInit(), mutated);
  std::optional<mlir::AffineExpr> e = norm ? space.parse(*norm) : std::nullopt;
  auto gid = space.parse("blockIdx.x * blockDim.x + threadIdx.x");
  if (!e || globalCoefficient(*e, 0, space) != 1 || !sameFunction(*e, *gid, space))
    return "the index '" + name +
           "' is not initialised to the global thread id blockIdx.x * blockDim.x + threadIdx.x";
  // 4. Only declarations before the guard, and none of them uses the index
  // (it moves into the loop header).
  std::vector<const Stmt *> stmts(m.body->body_begin(), m.body->body_end());
  for (unsigned i = 0; i < m.guardIndex; ++i) {
    if (!isa<DeclStmt>(stmts[i]) && !isa<NullStmt>(stmts[i]))
      return "only declarations may precede the guard (line " +
             std::to_string(sm.getPresumedLineNumber(stmts[i]->getBeginLoc())) + ")";
    if (stmts[i] != m.declStmt && refersTo(stmts[i], var))
      return "a declaration before the guard uses the index '" + name + "'";
  }
  // 5. The loop body: what runs once per element.
  std::vector<const Stmt *> loopBody;
  if (m.earlyReturn)
    loopBody.assign(stmts.begin() + m.guardIndex + 1, stmts.end());
  else
    loopBody.push_back(m.guard->getThen());
  if (loopBody.empty())
    return "nothing follows the early return";
  llvm::DenseSet<const VarDecl *> inner;
  for (const Stmt *s : loopBody)
    for (const VarDecl *v : declaredIn(s))
      inner.insert(v);
  std::string why;
  for (const Stmt *s : loopBody)
    forEachStmt(s, [&](const Stmt *c) {
      if (!why.empty())
        return;
      if (isa<ReturnStmt>(c))
        why = "the loop body contains a return";
      else if (isa<GotoStmt>(c) || isa<IndirectGotoStmt>(c) || isa<LabelStmt>(c))
        why = "the loop body contains a goto or label";
      else if (auto *dre = dyn_cast<DeclRefExpr>(c)) {
        auto *vd = dyn_cast<VarDecl>(dre->getDecl());
        if (!vd || vd == var || inner.count(vd))
          return;
        if (isThreadBuiltin(vd))
          why = "the body uses " + vd->getNameAsString() + " other than through '" + name + "'";
        else if (vd->hasLocalStorage() && !invariant(dre, nullptr, mutated, sm))
          why = "the body uses '" + vd->getNameAsString() +
                "', which is modified or differs between threads";
      } else if (auto *ce = dyn_cast<CallExpr>(c)) {
        llvm::DenseSet<const FunctionDecl *> seen;
        if (usesThreadIdentityImpl(ce, seen, &sm))
          why = "the body calls a function that uses the thread identity";
      }
    });
  if (!why.empty())
    return why;
  // 6. The bound and the rest of the condition do not vary with the thread.
  if (!invariant(m.limit, var, mutated, sm))
    return "the bound '" + spelled(ast, m.limit) + "' is not thread-invariant";
  for (const Expr *c : m.otherConds)
    if (!invariant(c, var, mutated, sm))
      return "the condition part '" + spelled(ast, c) + "' is not thread-invariant";
  return "";
}

std::string fileText(const SourceManager &sm, SourceLocation b, SourceLocation e) {
  bool invalid = false;
  const char *p = sm.getCharacterData(b, &invalid);
  const char *q = sm.getCharacterData(e, &invalid);
  return invalid ? "" : std::string(p, q);
}

/// Removes a statement; when it is alone on its line, also its indentation
/// and trailing blanks (the line stays, so line numbers do not move).
void removeStmt(ASTContext &ast, Rewriter &rw, const Stmt *s, SourceLocation afterEnd) {
  const SourceManager &sm = ast.getSourceManager();
  SourceLocation b = s->getBeginLoc();
  auto [fid, off] = sm.getDecomposedLoc(b);
  llvm::StringRef buf = sm.getBufferData(fid);
  unsigned lineStart = off;
  while (lineStart > 0 && buf[lineStart - 1] != '\n')
    --lineStart;
  unsigned endOff = sm.getFileOffset(afterEnd), e = endOff;
  while (e < buf.size() && (buf[e] == ' ' || buf[e] == '\t'))
    ++e;
  bool aloneBefore =
      buf.substr(lineStart, off - lineStart).find_first_not_of(" \t") == llvm::StringRef::npos;
  bool aloneAfter = e >= buf.size() || buf[e] == '\n' || buf[e] == '\r';
  if (aloneBefore && aloneAfter)
    rw.RemoveText(CharSourceRange::getCharRange(b.getLocWithOffset(-int(off - lineStart)),
                                                afterEnd.getLocWithOffset(e - endOff)));
  else
    rw.RemoveText(CharSourceRange::getCharRange(b, afterEnd));
}

} // namespace

bool gridstride::usesThreadIdentity(const Stmt *s) {
  llvm::DenseSet<const FunctionDecl *> seen;
  return usesThreadIdentityImpl(s, seen, nullptr);
}

std::optional<gridstride::GuardedKernel> gridstride::matchGuarded(ASTContext &ast,
                                                                  const FunctionDecl *fd) {
  Shape m;
  if (!matchShape(ast, fd, m).empty())
    return std::nullopt;
  GuardedKernel g;
  g.body = m.body;
  g.indexDecl = m.declStmt;
  g.index = m.var;
  g.guard = m.guard;
  g.earlyReturn = m.earlyReturn;
  g.bound = m.bound;
  g.otherConds = m.otherConds;
  if (m.earlyReturn)
    g.perElement.assign(m.body->body_begin() + m.guardIndex + 1, m.body->body_end());
  else
    g.perElement.push_back(m.guard->getThen());
  return g;
}

std::string gridstride::legality(TransformContext &ctx, unsigned kernel) {
  for (unsigned k : kernelsSharingDefinition(ctx.model(), kernel))
    if (std::string why = legalOne(ctx, k); !why.empty())
      return why;
  return "";
}

void gridstride::apply(TransformContext &ctx, unsigned kernel) {
  ASTContext &ast = ctx.unit.ast();
  const SourceManager &sm = ast.getSourceManager();
  const FunctionDecl *fd = editableDecl(ctx.unit.kernelDecl(kernel));
  Shape m;
  if (!matchShape(ast, fd, m).empty())
    return;
  SourceLocation headBegin = m.guard->getBeginLoc();
  SourceLocation headEnd =
      Lexer::getLocForEndOfToken(m.guard->getRParenLoc(), 0, sm, ast.getLangOpts());
  // Already converted by an earlier call (another launch of this kernel)?
  if (ctx.rewriter.getRewrittenText(CharSourceRange::getCharRange(headBegin, headEnd)) !=
      fileText(sm, headBegin, headEnd))
    return;
  std::string decl = text(ast, m.declStmt->getBeginLoc(), m.var->getEndLoc());
  std::string header = "for (" + decl + "; " + m.loopCond + "; " + m.var->getNameAsString() +
                       " += " + gridStep + ")";
  LLVM_DEBUG(llvm::dbgs() << "grid-stride: " << header << "\n");
  removeStmt(ast, ctx.rewriter, m.declStmt, m.declStmt->getEndLoc().getLocWithOffset(1));
  if (!m.earlyReturn) {
    ctx.rewriter.ReplaceText(CharSourceRange::getCharRange(headBegin, headEnd), header);
    return;
  }
  // `if (i >= n) return;` → `for (...) {` and a `}` before the kernel's end.
  SourceLocation end = m.guard->getEndLoc();
  if (isa<ReturnStmt>(m.guard->getThen())) {
    SourceLocation semi = Lexer::findLocationAfterToken(end, tok::semi, sm, ast.getLangOpts(),
                                                        /*SkipTrailingWhitespaceAndNewLine=*/false);
    end = semi.isValid() ? semi : end.getLocWithOffset(1);
  } else {
    end = end.getLocWithOffset(1);
  }
  ctx.rewriter.ReplaceText(CharSourceRange::getCharRange(headBegin, end), header + " {");
  // The rest of the body moves into the loop: indent it (line by line, so
  // line numbers stay).
  {
    auto [fid, from] = sm.getDecomposedLoc(end);
    unsigned to = sm.getFileOffset(m.body->getRBracLoc());
    llvm::StringRef buf = sm.getBufferData(fid);
    for (unsigned o = from; o < to; ++o)
      if (buf[o] == '\n' && o + 1 < to && buf[o + 1] != '\n' && buf[o + 1] != '\r') {
        size_t first = buf.find_first_not_of(" \t", o + 1);
        if (first != llvm::StringRef::npos && first < to && buf[first] != '\n')
          ctx.rewriter.InsertTextBefore(end.getLocWithOffset(o + 1 - from), "  ");
      }
  }
  SourceLocation rbrace = m.body->getRBracLoc();
  auto [fid, off] = sm.getDecomposedLoc(rbrace);
  llvm::StringRef buf = sm.getBufferData(fid);
  unsigned ls = off;
  while (ls > 0 && buf[ls - 1] != '\n')
    --ls;
  llvm::StringRef indent = buf.substr(ls, off - ls);
  if (indent.find_first_not_of(" \t") == llvm::StringRef::npos)
    ctx.rewriter.InsertTextBefore(rbrace, "  }\n" + indent.str());
  else
    ctx.rewriter.InsertTextBefore(rbrace, "} ");
}

std::string gridstride::gridStrideCoversWork(TransformContext &ctx, unsigned kernel) {
  const Kernel &k = ctx.model().kernels[kernel];
  IndexSpace space(ctx.mlir);
  auto step = space.parse(gridStep);
  auto gid = space.parse("blockIdx.x * blockDim.x + threadIdx.x");
  // Loops that stride over the whole x grid from the thread's global id.
  std::vector<bool> xLoop(k.loops.size(), false);
  for (const KernelLoop &l : k.loops) {
    if (!l.gridStride || !l.affine)
      continue;
    auto s = space.parse(l.step), i = space.parse(l.init);
    if (!s || !i || !sameFunction(*s, *step, space) || globalCoefficient(*i, 0, space) != 1 ||
        !sameFunction(dropDims(*i - *gid, space), *i - *gid, space))
      continue;
    const Stmt *ls = ctx.unit.loopStmt(kernel, l.id);
    const Stmt *body = nullptr;
    if (auto *fs = dyn_cast_or_null<ForStmt>(ls))
      body = fs->getBody();
    if (!body || gridstride::usesThreadIdentity(body))
      continue;
    xLoop[l.id] = true;
  }
  for (const MemAccess &a : k.accesses) {
    bool inside = std::any_of(a.loops.begin(), a.loops.end(),
                              [&](unsigned l) { return l < xLoop.size() && xLoop[l]; });
    if (inside)
      continue;
    auto e = space.parse(a.normalized);
    bool uniform = e && !usesOpaque(*e, space);
    for (unsigned d = 0; uniform && d < IndexSpace::NumBuiltinDims; ++d)
      uniform = !e->isFunctionOfDim(d);
    if (!(a.atomic && uniform))
      return "the access " + a.param + "[" + a.index + "] at line " + std::to_string(a.pos.line) +
             " is outside the kernel's grid-stride loops (or those loops use the thread "
             "identity)";
  }
  return "";
}

std::string gridstride::shrunkGrid(ASTContext &ast, const Expr *g, unsigned f) {
  std::string text = spelled(ast, g);
  std::string fs = std::to_string(f), fm1 = std::to_string(f - 1);
  bool simple = isa<DeclRefExpr>(g) || isa<IntegerLiteral>(g) || isa<ParenExpr>(g) ||
                isa<CallExpr>(g) || isa<MemberExpr>(g);
  if (g->getType()->isIntegerType()) {
    std::string operand = simple ? text : "(" + text + ")";
    return "(" + operand + " + " + fm1 + ") / " + fs;
  }
  // A dim3 variable or dim3(...) is used as is; anything else is wrapped.
  bool isDim3 = isa<DeclRefExpr>(g) || isa<CXXTemporaryObjectExpr>(g) ||
                (isa<CXXFunctionalCastExpr>(g) && g->getType().getAsString() == "dim3");
  std::string d3 = isDim3 ? text : "dim3(" + text + ")";
  return "dim3((" + d3 + ".x + " + fm1 + ") / " + fs + ", " + d3 + ".y, " + d3 + ".z)";
}
