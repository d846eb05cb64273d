// Recognizers of matrix products and their reduction loops on the AST and
// the accesses' affine forms, so that a GEMM is seen whatever its variable
// names, operand order, accumulation (a local or the output in place),
// scaling, element type, transposition and thread mapping.
#include "cudal1/Analysis/Idioms.h"
#include "cudal1/Analysis/AffineIndex.h"
#include "cudal1/Frontend/ParsedUnit.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

using namespace clang;
using namespace cudal1;

namespace {

void walk(const Stmt *s, const std::function<void(const Stmt *)> &fn) {
  if (!s)
    return;
  fn(s);
  for (const Stmt *c : s->children())
    walk(c, fn);
}

const VarDecl *varOf(const Expr *e) {
  if (auto *dre = dyn_cast_or_null<DeclRefExpr>(e ? e->IgnoreParenImpCasts() : nullptr))
    return dyn_cast<VarDecl>(dre->getDecl());
  return nullptr;
}

const ParmVarDecl *paramOf(const Expr *e) { return dyn_cast_or_null<ParmVarDecl>(varOf(e)); }

std::string canonicalType(QualType t) {
  return t.getUnqualifiedType().getCanonicalType().getAsString();
}

/// Whether evaluating `s` may read memory, call a function (the builtins'
/// index getters excepted) or assign.
bool hasMemoryAccess(const Stmt *s) {
  bool found = false;
  walk(s, [&](const Stmt *x) {
    if (auto *bo = dyn_cast<BinaryOperator>(x); bo && bo->isAssignmentOp())
      found = true;
    if (auto *uo = dyn_cast<UnaryOperator>(x); uo && uo->isIncrementDecrementOp())
      found = true;
    if (auto *ce = dyn_cast<CallExpr>(x)) {
      const FunctionDecl *f = ce->getDirectCallee();
      if (!f || !f->getName().starts_with("__fetch_builtin_"))
        found = true;
    } else if (isa<ArraySubscriptExpr>(x) ||
               (isa<UnaryOperator>(x) && cast<UnaryOperator>(x)->getOpcode() == UO_Deref)) {
      found = true;
    }
  });
  return found;
}

bool usesWarpLevel(const FunctionDecl *fd) {
  bool found = false;
  walk(fd->getBody(), [&](const Stmt *s) {
    auto *ce = dyn_cast<CallExpr>(s);
    const FunctionDecl *f = ce ? ce->getDirectCallee() : nullptr;
    if (!f || !f->getIdentifier())
      return;
    StringRef n = f->getName();
    if (n.starts_with("__shfl") || n.starts_with("__ballot") || n.starts_with("__any") ||
        n.starts_with("__all") || n == "__activemask" || n == "__syncwarp" ||
        n.starts_with("__reduce_") || n.starts_with("__match"))
      found = true;
  });
  return found;
}

/// The number of `&&`-joined comparisons `a < b`, or -1 when a conjunct is
/// something else (a flag would slip past the guards, which list only the
/// conditions that bound thread ids).
int lessThanConjuncts(const Expr *e) {
  e = e->IgnoreParenImpCasts();
  auto *bo = dyn_cast<BinaryOperator>(e);
  if (!bo)
    return -1;
  if (bo->getOpcode() == BO_LAnd) {
    int l = lessThanConjuncts(bo->getLHS()), r = lessThanConjuncts(bo->getRHS());
    return l < 0 || r < 0 ? -1 : l + r;
  }
  return bo->getOpcode() == BO_LT ? 1 : -1;
}

bool isZero(ASTContext &ast, const Expr *e) {
  Expr::EvalResult r;
  if (!e || e->isValueDependent() || !e->EvaluateAsRValue(r, ast))
    return false;
  return (r.Val.isFloat() && r.Val.getFloat().isZero()) || (r.Val.isInt() && r.Val.getInt() == 0);
}

/// A scalar factor: an arithmetic parameter or a literal.
bool isScalarFactor(const Expr *e) {
  e = e->IgnoreParenImpCasts();
  if (isa<FloatingLiteral>(e) || isa<IntegerLiteral>(e))
    return true;
  const ParmVarDecl *p = paramOf(e);
  return p && p->getType()->isArithmeticType();
}

/// The leaves of a product tree `a * b * c`.
void factors(const Expr *e, std::vector<const Expr *> &out) {
  e = e->IgnoreParenImpCasts();
  if (auto *bo = dyn_cast<BinaryOperator>(e); bo && bo->getOpcode() == BO_Mul) {
    factors(bo->getLHS(), out);
    factors(bo->getRHS(), out);
    return;
  }
  out.push_back(e);
}

/// `e` is the value of `isValue` scaled by at most one scalar factor (in
/// either order); `factor` receives the factor or null.
bool scaledValue(const Expr *e, const std::function<bool(const Expr *)> &isValue,
                 const Expr *&factor) {
  e = e->IgnoreParenImpCasts();
  factor = nullptr;
  if (isValue(e))
    return true;
  auto *m = dyn_cast<BinaryOperator>(e);
  if (!m || m->getOpcode() != BO_Mul)
    return false;
  const Expr *l = m->getLHS()->IgnoreParenImpCasts(), *r = m->getRHS()->IgnoreParenImpCasts();
  if (isValue(r) && isScalarFactor(l))
    factor = l;
  else if (isValue(l) && isScalarFactor(r))
    factor = r;
  else
    return false;
  return true;
}

/// Two array elements designate the same element: the same parameter and
/// the same affine index.
bool sameElement(const ParsedUnit &u, unsigned kernel, const ArraySubscriptExpr *a,
                 const ArraySubscriptExpr *b) {
  const MemAccess *x = u.accessOf(kernel, a), *y = u.accessOf(kernel, b);
  return x && y && x->param == y->param && x->affine.affine && y->affine.affine &&
         x->affine.linear == y->affine.linear && x->affine.atoms == y->affine.atoms;
}

} // namespace

ThreadCoord cudal1::coordOf(const LinearPart &p, const AffineForm &form) {
  ThreadCoord c;
  for (unsigned d = 0; d < 3; ++d)
    if (isGlobalId(p, d)) {
      c.kind = ThreadCoord::Kind::GlobalId;
      c.axis = d;
      return c;
    }
  if (auto l = loopCounterOf(p)) {
    c.kind = ThreadCoord::Kind::Loop;
    c.loop = *l;
    return c;
  }
  if (p.constant.isZero() && p.terms.size() == 1 && p.terms[0].coeff.constant() == 1 &&
      p.terms[0].var[0] == '#') {
    unsigned i = 0;
    if (!llvm::StringRef(p.terms[0].var).drop_front(1).getAsInteger(10, i) &&
        i < form.atoms.size()) {
      const IndexAtom &atom = form.atoms[i];
      for (unsigned d = 0; d < 3; ++d)
        if (isGlobalId(atom.numerator, d)) {
          c.kind = atom.op == IndexAtom::Op::FloorDiv ? ThreadCoord::Kind::Quotient
                                                      : ThreadCoord::Kind::Remainder;
          c.axis = d;
          c.divisor = atom.divisor;
          return c;
        }
    }
  }
  return c;
}

std::string cudal1::guardedIds(const MemAccess &a, mlir::MLIRContext &ctx,
                               std::vector<GuardedId> &out) {
  IndexSpace space(ctx);
  for (const Guard &g : a.guards) {
    std::string why = "bound check '" + g.str() + "' is not 'global id < parameter'";
    if (g.op != GuardOp::LT)
      return why;
    AffineForm lhs = affineFormOf(g.lhs, space), rhs = affineFormOf(g.rhs, space);
    if (!lhs.affine || !rhs.affine || !rhs.linear.terms.empty())
      return why;
    GuardedId id{coordOf(lhs.linear, lhs), rhs.linear.constant, &g};
    // The condition of an enclosing loop bounds its counter, no thread.
    if (id.coord.kind == ThreadCoord::Kind::Loop)
      continue;
    if (id.coord.kind == ThreadCoord::Kind::Other)
      return why;
    out.push_back(id);
  }
  return "";
}

std::string cudal1::recognizeDotLoop(const ParsedUnit &u, unsigned kernel, const Stmt *s,
                                     DotLoop &d) {
  ASTContext &ast = const_cast<ParsedUnit &>(u).ast();
  const Kernel &km = u.model().kernels[kernel];
  const char *shape = "the loop must be 'for (k = 0; k < K; ++k) acc += A[..] * B[..]'";
  auto *loop = dyn_cast_or_null<ForStmt>(s);
  if (!loop)
    return shape;
  d = DotLoop();
  d.loop = loop;
  // 1. The counter: `int k = 0` or `k = 0`, `k < K` (or `K > k`), `++k`,
  //    `k++`, `k += 1`, `k = k + 1`.
  const Expr *init = nullptr;
  if (auto *ds = dyn_cast_or_null<DeclStmt>(loop->getInit()); ds && ds->isSingleDecl()) {
    if (auto *vd = dyn_cast<VarDecl>(ds->getSingleDecl()); vd && vd->hasInit()) {
      d.counter = vd;
      init = vd->getInit();
    }
  } else if (auto *bo = dyn_cast_or_null<BinaryOperator>(loop->getInit());
             bo && bo->getOpcode() == BO_Assign) {
    d.counter = varOf(bo->getLHS());
    init = bo->getRHS();
  }
  Expr::EvalResult z;
  if (!d.counter || !d.counter->getType()->isIntegerType() || !init->EvaluateAsInt(z, ast) ||
      z.Val.getInt() != 0)
    return "the loop must start at 0";
  auto *cond = dyn_cast_or_null<BinaryOperator>(
      loop->getCond() ? loop->getCond()->IgnoreParenImpCasts() : nullptr);
  if (cond && cond->getOpcode() == BO_LT && varOf(cond->getLHS()) == d.counter)
    d.bound = cond->getRHS();
  else if (cond && cond->getOpcode() == BO_GT && varOf(cond->getRHS()) == d.counter)
    d.bound = cond->getLHS();
  const Expr *inc = loop->getInc() ? loop->getInc()->IgnoreParenImpCasts() : nullptr;
  bool stepOne = false;
  if (auto *uo = dyn_cast_or_null<UnaryOperator>(inc))
    stepOne = uo->isIncrementOp() && varOf(uo->getSubExpr()) == d.counter;
  else if (auto *bo = dyn_cast_or_null<BinaryOperator>(inc);
           bo && varOf(bo->getLHS()) == d.counter) {
    Expr::EvalResult one;
    const Expr *step = nullptr;
    if (bo->getOpcode() == BO_AddAssign)
      step = bo->getRHS();
    else if (auto *add = dyn_cast<BinaryOperator>(bo->getRHS()->IgnoreParenImpCasts());
             bo->getOpcode() == BO_Assign && add && add->getOpcode() == BO_Add &&
             varOf(add->getLHS()) == d.counter)
      step = add->getRHS();
    stepOne = step && step->EvaluateAsInt(one, ast) && one.Val.getInt() == 1;
  }
  if (!d.bound || !stepOne)
    return "the loop must be 'for (int k = 0; k < K; ++k)'";
  // The model's loop, whose counter the affine forms name.
  bool found = false;
  for (unsigned i = 0; i < km.loops.size() && !found; ++i)
    if (u.loopStmt(kernel, i) == loop) {
      d.loopId = i;
      found = km.loops[i].affine;
    }
  if (!found)
    return "the analysis does not see the loop's counter as affine";
  // 2. The body: one update of the accumulator.
  const Stmt *body = loop->getBody();
  if (auto *cs = dyn_cast<CompoundStmt>(body); cs && cs->size() == 1)
    body = cs->body_front();
  const Expr *target = nullptr;
  auto *update = dyn_cast<BinaryOperator>(body);
  if (update && update->getOpcode() == BO_AddAssign) {
    target = update->getLHS();
    d.summand = update->getRHS();
  } else if (update && update->getOpcode() == BO_Assign) {
    // T = T + S or T = S + T.
    auto *add = dyn_cast<BinaryOperator>(update->getRHS()->IgnoreParenImpCasts());
    auto same = [&](const Expr *e) {
      const Expr *l = update->getLHS()->IgnoreParenImpCasts(), *r = e->IgnoreParenImpCasts();
      if (const VarDecl *v = varOf(l))
        return varOf(r) == v;
      auto *la = dyn_cast<ArraySubscriptExpr>(l), *ra = dyn_cast<ArraySubscriptExpr>(r);
      if (!la || !ra || !sameElement(u, kernel, la, ra))
        return false;
      d.targetRead = ra;
      return true;
    };
    if (add && add->getOpcode() == BO_Add) {
      if (same(add->getLHS()))
        d.summand = add->getRHS();
      else if (same(add->getRHS()))
        d.summand = add->getLHS();
    }
    if (d.summand)
      target = update->getLHS();
  }
  if (!target)
    return "the loop body must be 'acc += X[..] * Y[..]'";
  d.update = update;
  target = target->IgnoreParenImpCasts();
  if (const VarDecl *v = varOf(target); v && v->hasLocalStorage() && !isa<ParmVarDecl>(v))
    d.accumulator = v;
  else if (auto *ase = dyn_cast<ArraySubscriptExpr>(target);
           ase && u.accessOf(kernel, ase, AccessKind::Write))
    d.target = ase;
  else
    return "the loop body must be 'acc += X[..] * Y[..]'";
  // 3. The summand: two global elements and at most one scalar factor.
  std::vector<const Expr *> fs;
  factors(d.summand, fs);
  std::vector<const ArraySubscriptExpr *> arrays;
  for (const Expr *f : fs) {
    if (auto *ase = dyn_cast<ArraySubscriptExpr>(f)) {
      if (!u.accessOf(kernel, ase, AccessKind::Read) || hasMemoryAccess(ase->getIdx()))
        return "the operands and the output must be array elements";
      arrays.push_back(ase);
    } else if (isScalarFactor(f) && !d.scale) {
      d.scale = f;
    } else {
      return "the loop body must be 'acc += X[..] * Y[..]'";
    }
  }
  if (arrays.size() != 2)
    return "the operands and the output must be array elements";
  d.x = arrays[0];
  d.y = arrays[1];
  d.xAccess = u.accessOf(kernel, d.x, AccessKind::Read);
  d.yAccess = u.accessOf(kernel, d.y, AccessKind::Read);
  auto *mul = dyn_cast<BinaryOperator>(d.summand->IgnoreParenImpCasts());
  d.plainProduct = update->getOpcode() == BO_AddAssign && d.accumulator && !d.scale && mul &&
                   mul->getLHS()->IgnoreParenImpCasts() == d.x &&
                   mul->getRHS()->IgnoreParenImpCasts() == d.y;
  return "";
}

namespace {

/// The parameter of `fd` that a symbolic value names, if it is an integer one.
const ParmVarDecl *integerParam(const FunctionDecl *fd, const SymbolicValue &v) {
  std::optional<std::string> n = v.name();
  if (!n)
    return nullptr;
  const ParmVarDecl *found = nullptr;
  for (const ParmVarDecl *pv : fd->parameters())
    if (pv->getName() == *n && pv->getType()->isIntegerType())
      found = pv;
  return found;
}

/// The coordinates of a two-dimensional index [{ld: outer}, {1: inner}].
bool rowMajor(const AffineForm &f, ThreadCoord &outer, ThreadCoord &inner, SymbolicValue &ld) {
  if (!f.affine || f.dims.size() != 2 || f.dims[1].stride != SymbolicValue{{Monomial{1, {}}}})
    return false;
  outer = coordOf(f.dims[0].index, f);
  inner = coordOf(f.dims[1].index, f);
  ld = f.dims[0].stride;
  return outer.kind != ThreadCoord::Kind::Other && inner.kind != ThreadCoord::Kind::Other;
}

/// The coordinate of a one-dimensional index.
bool vectorIndex(const AffineForm &f, ThreadCoord &c) {
  if (!f.affine || f.dims.size() != 1 || f.dims[0].stride != SymbolicValue{{Monomial{1, {}}}})
    return false;
  c = coordOf(f.dims[0].index, f);
  return c.kind != ThreadCoord::Kind::Other;
}

ThreadCoord loopCoord(unsigned loop) {
  ThreadCoord c;
  c.kind = ThreadCoord::Kind::Loop;
  c.loop = loop;
  return c;
}

} // namespace

std::string cudal1::recognizeGemm(const ParsedUnit &cu, unsigned kernel, mlir::MLIRContext &mctx,
                                  GemmIdiom &g) {
  ParsedUnit &u = const_cast<ParsedUnit &>(cu);
  ASTContext &ast = u.ast();
  const FunctionDecl *fd = u.kernelDecl(kernel);
  const Kernel &km = u.model().kernels[kernel];
  g = GemmIdiom();
  const char *shape = "not the canonical product 'if (row < M && col < N) { T acc = 0; for (int "
                      "k = 0; k < K; ++k) acc += A[..] * B[..]; C[..] = acc; }' (or in place: "
                      "'C[..] *= beta; for (..) C[..] += alpha * A[..] * B[..];')";
  auto *body = dyn_cast_or_null<CompoundStmt>(fd->getBody());
  if (!body || body->body_empty())
    return shape;
  if (!km.barriers.empty() || !km.atomics.empty() || !km.shared.empty() || usesWarpLevel(fd))
    return "the kernel synchronizes, uses atomics or shared memory";
  // Integer declarations without effects (the counter may be declared
  // without a value, PolyBench style).
  auto indexDecls = [&](const DeclStmt *ds) {
    for (const Decl *dc : ds->decls()) {
      auto *vd = dyn_cast<VarDecl>(dc);
      if (!vd || !vd->getType()->isIntegerType() ||
          (vd->hasInit() && hasMemoryAccess(vd->getInit())))
        return false;
    }
    return true;
  };
  // 1. Index declarations, then one if statement.
  const IfStmt *guard = nullptr;
  for (const Stmt *s : body->body()) {
    if (guard)
      return std::string(shape) + ": a statement follows the bounds check";
    if (auto *ds = dyn_cast<DeclStmt>(s)) {
      for (const Decl *dc : ds->decls()) {
        auto *vd = dyn_cast<VarDecl>(dc);
        if (!vd || !vd->getType()->isIntegerType() || !vd->hasInit() ||
            hasMemoryAccess(vd->getInit()))
          return std::string(shape) +
                 ": only integer index declarations may precede the bounds check";
      }
      continue;
    }
    guard = dyn_cast<IfStmt>(s);
    if (!guard || guard->getElse() || guard->getInit() || guard->getConditionVariable())
      return shape;
  }
  if (!guard || hasMemoryAccess(guard->getCond()))
    return shape;
  g.guard = guard;
  int conditions = lessThanConjuncts(guard->getCond());
  if (conditions < 1)
    return "the bounds check must be comparisons 'a < b' joined by &&";
  // 2. Inside: index declarations, then { T acc = 0; loop; store } or
  //    { [C[..] *= beta | C[..] = 0]; loop }.
  auto *then = dyn_cast<CompoundStmt>(guard->getThen());
  if (!then)
    return std::string(shape) + ": the bounds check must hold exactly the accumulator, the loop "
                                "and the store";
  auto loopAt = std::find_if(then->body_begin(), then->body_end(),
                             [](const Stmt *s) { return isa<ForStmt>(s); });
  if (loopAt == then->body_end())
    return shape;
  if (std::string why = recognizeDotLoop(u, kernel, *loopAt, g.dot); !why.empty())
    return std::string(shape) + ": " + why;
  // The statements that matter; index declarations (not the accumulator's)
  // may come anywhere before the loop.
  std::vector<const Stmt *> st;
  size_t li = 0;
  for (auto it = then->body_begin(); it != then->body_end(); ++it) {
    if (auto *ds = dyn_cast<DeclStmt>(*it);
        ds && it < loopAt && indexDecls(ds) &&
        !(ds->isSingleDecl() && ds->getSingleDecl() == g.dot.accumulator))
      continue;
    if (it == loopAt)
      li = st.size();
    st.push_back(*it);
  }
  DotLoop &d = g.dot;
  const ArraySubscriptExpr *outRead = nullptr; // C[..] read by the store or the scaling
  std::vector<const Expr *> cExprs;            // every expression of C's element
  const Expr *outerScale = nullptr;
  if (d.accumulator) {
    // 2a. A local accumulator: T acc = 0; the loop; C[..] = F(acc).
    auto *accDecl = li == 1 ? dyn_cast<DeclStmt>(st[0]) : nullptr;
    auto *store = st.size() == 3 && li == 1 ? dyn_cast<BinaryOperator>(st[2]) : nullptr;
    if (!accDecl || !accDecl->isSingleDecl() || accDecl->getSingleDecl() != d.accumulator || !store)
      return std::string(shape) + ": the bounds check must hold exactly the accumulator, the loop "
                                  "and the store";
    if (!d.accumulator->hasInit() || !isZero(ast, d.accumulator->getInit()))
      return std::string(shape) + ": the accumulator must start at zero";
    g.elementType = canonicalType(d.accumulator->getType());
    auto *out = store->getOpcode() == BO_Assign
                    ? dyn_cast<ArraySubscriptExpr>(store->getLHS()->IgnoreParenImpCasts())
                    : nullptr;
    if (!out)
      return std::string(shape) + ": the operands and the output must be array elements";
    g.store = out;
    cExprs.push_back(out);
    // acc, alpha * acc, alpha * acc + beta * C[same] (either order of the sum).
    const Expr *rhs = store->getRHS()->IgnoreParenImpCasts();
    auto isAcc = [&](const Expr *e) { return varOf(e) == d.accumulator; };
    auto isOut = [&](const Expr *e) {
      auto *a = dyn_cast<ArraySubscriptExpr>(e);
      if (a)
        outRead = a;
      return a != nullptr;
    };
    const Expr *betaFactor = nullptr;
    if (!scaledValue(rhs, isAcc, outerScale)) {
      auto *sum = dyn_cast<BinaryOperator>(rhs);
      bool ok = sum && sum->getOpcode() == BO_Add &&
                ((scaledValue(sum->getLHS(), isAcc, outerScale) &&
                  scaledValue(sum->getRHS(), isOut, betaFactor)) ||
                 (scaledValue(sum->getRHS(), isAcc, outerScale) &&
                  scaledValue(sum->getLHS(), isOut, betaFactor)));
      if (!ok || !betaFactor)
        return std::string(shape) + ": the store must be 'C[..] = acc', 'alpha * acc' or "
                                    "'alpha * acc + beta * C[..]'";
      g.beta = GemmScalar{betaFactor, 0};
      cExprs.push_back(outRead);
    }
  } else {
    // 2b. In place: [C[..] *= beta | C[..] = beta * C[..] | C[..] = 0]; the loop.
    if (li + 1 != st.size() || li > 1)
      return std::string(shape) + ": the bounds check must hold the scaling of C and the loop";
    g.accumulation = GemmIdiom::Accumulation::InPlace;
    g.store = d.target;
    g.elementType = canonicalType(d.target->getType());
    cExprs.push_back(d.target);
    if (d.targetRead)
      cExprs.push_back(d.targetRead);
    g.beta = GemmScalar{nullptr, 1};
    if (li == 1) {
      auto *init = dyn_cast<BinaryOperator>(st[0]);
      auto *lhs =
          init ? dyn_cast<ArraySubscriptExpr>(init->getLHS()->IgnoreParenImpCasts()) : nullptr;
      if (!lhs || !sameElement(u, kernel, lhs, d.target))
        return std::string(shape) + ": the statement before the loop must scale C's element";
      cExprs.push_back(lhs);
      const Expr *factor = nullptr;
      auto isSelf = [&](const Expr *e) {
        auto *a = dyn_cast<ArraySubscriptExpr>(e);
        if (a && sameElement(u, kernel, a, d.target)) {
          outRead = a;
          return true;
        }
        return false;
      };
      if (init->getOpcode() == BO_MulAssign && isScalarFactor(init->getRHS()))
        g.beta = GemmScalar{init->getRHS()->IgnoreParenImpCasts(), 0};
      else if (init->getOpcode() == BO_Assign && isZero(ast, init->getRHS()))
        g.beta = GemmScalar{nullptr, 0};
      else if (init->getOpcode() == BO_Assign && scaledValue(init->getRHS(), isSelf, factor) &&
               factor) {
        g.beta = GemmScalar{factor, 0};
        cExprs.push_back(outRead);
      } else {
        return std::string(shape) + ": the statement before the loop must be 'C[..] *= beta' or "
                                    "'C[..] = 0'";
      }
    }
  }
  // Alpha: a factor of the summand or of the store, not both.
  if (d.scale && outerScale)
    return "the product is scaled both inside and after the loop";
  if (d.scale || outerScale)
    g.alpha = GemmScalar{d.scale ? d.scale : outerScale, 0};
  // 3. The arrays: pointer parameters of the element type, the output
  //    distinct from the operands.
  auto pointerParam = [&](const ArraySubscriptExpr *a) -> const ParmVarDecl * {
    const ParmVarDecl *pv = paramOf(a->getBase());
    if (!pv || !pv->getType()->isPointerType() ||
        canonicalType(pv->getType()->getPointeeType()) != g.elementType)
      return nullptr;
    return pv;
  };
  for (const Expr *e : cExprs)
    if (hasMemoryAccess(cast<ArraySubscriptExpr>(e)->getIdx()))
      return "an index reads memory, calls a function or assigns";
  const ParmVarDecl *px = pointerParam(d.x), *py = pointerParam(d.y);
  g.c = pointerParam(g.store);
  bool sameOut = true;
  for (const Expr *e : cExprs)
    sameOut &= pointerParam(cast<ArraySubscriptExpr>(e)) == g.c;
  if (!px || !py || !g.c || !sameOut)
    return "the operands and the output must be pointer parameters of element type " +
           g.elementType;
  if (px == g.c || py == g.c)
    return "the output is also an operand";
  // 4. Nothing else is read or written: every access is one of these.
  std::set<const Expr *> known(cExprs.begin(), cExprs.end());
  known.insert(d.x);
  known.insert(d.y);
  bool others = km.loops.size() != 1;
  for (unsigned i = 0; i < km.accesses.size(); ++i)
    others |= !known.count(u.accessExpr(kernel, i));
  if (others)
    return "the kernel has other global accesses or loops than the product's";
  const MemAccess *ac = u.accessOf(kernel, g.store, AccessKind::Write);
  if (!ac || !d.xAccess || !d.yAccess)
    return "the analysis does not see the product's accesses";
  for (const Expr *e : cExprs) {
    const MemAccess *m = u.accessOf(kernel, e);
    if (!m || !m->affine.affine || !(m->affine.linear == ac->affine.linear) ||
        !(m->affine.atoms == ac->affine.atoms))
      return "the output index is not 'row * N + col'";
  }
  // 5. The bounds check: guarded thread coordinates with parameter bounds.
  std::vector<GuardedId> ids;
  if (std::string why = guardedIds(*ac, mctx, ids); !why.empty())
    return why;
  if (ids.size() != size_t(conditions))
    return "the bounds check has conditions that do not bound a thread id";
  const ParmVarDecl *kp = paramOf(d.bound);
  if (!kp || !kp->getType()->isIntegerType())
    return "the loop bound must be an integer parameter of the kernel";
  g.k = kp;
  ThreadCoord kc = loopCoord(d.loopId);
  auto boundOf = [&](const ThreadCoord &c) -> const GuardedId * {
    for (const GuardedId &id : ids)
      if (id.coord == c)
        return &id;
    return nullptr;
  };
  // Operands: A [lda: row][1: k] or transposed [lda: k][1: row]; B [ldb:
  // k][1: col] or transposed [ldb: col][1: k]; x[k].
  auto asMatrix = [&](const MemAccess *m, const ThreadCoord &rc, bool rowSide, GemmOperand &op) {
    ThreadCoord o, i;
    SymbolicValue ld;
    if (!rowMajor(m->affine, o, i, ld))
      return false;
    const ThreadCoord &first = rowSide ? rc : kc, &second = rowSide ? kc : rc;
    if (o == first && i == second)
      op.transposed = false;
    else if (o == second && i == first)
      op.transposed = true;
    else
      return false;
    op.ld = ld;
    op.access = m;
    return true;
  };
  auto assign = [&](GemmOperand &op, const ArraySubscriptExpr *e, const MemAccess *m,
                    const ParmVarDecl *p) {
    op.read = e;
    op.access = m;
    op.param = p;
  };
  ThreadCoord outer, inner, single;
  SymbolicValue ldc;
  bool outRowMajor = rowMajor(ac->affine, outer, inner, ldc);
  // C[idx] where the operands read with row = idx / N and col = idx % N:
  // idx is row * N + col (0 <= col < N), the same element of a row-major C.
  if (!outRowMajor && vectorIndex(ac->affine, single) && single.kind == ThreadCoord::Kind::GlobalId)
    for (const MemAccess *m : {d.xAccess, d.yAccess}) {
      ThreadCoord o, i;
      SymbolicValue ld;
      if (outRowMajor || !rowMajor(m->affine, o, i, ld))
        continue;
      for (const ThreadCoord &c : {o, i})
        if (!outRowMajor &&
            (c.kind == ThreadCoord::Kind::Quotient || c.kind == ThreadCoord::Kind::Remainder) &&
            c.axis == single.axis) {
          outer = inner = c;
          outer.kind = ThreadCoord::Kind::Quotient;
          inner.kind = ThreadCoord::Kind::Remainder;
          ldc = c.divisor;
          outRowMajor = true;
        }
    }
  if (outRowMajor && ids.size() >= 1) {
    // GEMM, 2-D (row and column global ids of two axes) or 1-D (quotient
    // and remainder of the x global id by the column count).
    g.row = outer;
    g.col = inner;
    g.ldc = ldc;
    using K = ThreadCoord::Kind;
    if (outer.kind == K::GlobalId && inner.kind == K::GlobalId && outer.axis != inner.axis &&
        ids.size() == 2 && boundOf(outer) && boundOf(inner)) {
      g.mapping = GemmIdiom::Mapping::TwoD;
      g.m = integerParam(fd, boundOf(outer)->bound);
      g.n = integerParam(fd, boundOf(inner)->bound);
      for (const GuardedId *id : {boundOf(outer), boundOf(inner)})
        if (!integerParam(fd, id->bound))
          return "bound check '" + id->guard->str() + "' is not 'global id < parameter'";
    } else if (outer.kind == K::Quotient && inner.kind == K::Remainder &&
               outer.axis == inner.axis && outer.divisor == inner.divisor) {
      g.mapping = GemmIdiom::Mapping::OneD;
      g.n = integerParam(fd, outer.divisor);
      ThreadCoord gid;
      gid.kind = K::GlobalId;
      gid.axis = outer.axis;
      // Either `row < M` [&& `col < N`] or `gid < M * N`.
      const GuardedId *rowBound = boundOf(outer), *flat = boundOf(gid);
      if (rowBound && !flat && ids.size() <= 2 &&
          (ids.size() == 1 || (boundOf(inner) && boundOf(inner)->bound == outer.divisor)))
        g.m = integerParam(fd, rowBound->bound);
      else if (flat && ids.size() == 1 && g.n && flat->bound.terms.size() == 1 &&
               flat->bound.terms[0].coeff == 1 && flat->bound.terms[0].symbols.size() == 2) {
        const std::vector<std::string> &s = flat->bound.terms[0].symbols;
        std::string other = s[0] == g.n->getName() ? s[1] : s[1] == g.n->getName() ? s[0] : "";
        if (!other.empty())
          g.m = integerParam(fd, SymbolicValue{{Monomial{1, {other}}}});
      }
      if (!g.m)
        return "the bounds check of a 1-D mapping must be 'row < M' or 'idx < M * N' with row = "
               "idx / N and col = idx % N";
    } else {
      return "the bounds check must be 'row < M && col < N' (GEMM) or 'r < M' (GEMV) on global "
             "thread ids";
    }
    if (!g.m || !g.n)
      return "the bounds check must compare with integer parameters of the kernel";
    GemmOperand a, b;
    if (asMatrix(d.xAccess, outer, true, a) && asMatrix(d.yAccess, inner, false, b)) {
      assign(a, d.x, d.xAccess, px);
      assign(b, d.y, d.yAccess, py);
    } else if (asMatrix(d.yAccess, outer, true, a) && asMatrix(d.xAccess, inner, false, b)) {
      assign(a, d.y, d.yAccess, py);
      assign(b, d.x, d.xAccess, px);
    } else {
      return "the operand indices are not those of a row-major product (A[row * K + k] or "
             "A[k * M + row], B[k * N + col] or B[col * K + k])";
    }
    g.a = a;
    g.b = b;
    return "";
  }
  if (vectorIndex(ac->affine, single) && single.kind == ThreadCoord::Kind::GlobalId &&
      ids.size() == 1 && boundOf(single)) {
    // GEMV: y[r]; A[r * K + k] or A[k * M + r]; x[k].
    g.matrixVector = true;
    g.row = single;
    g.ldc = SymbolicValue{{Monomial{1, {}}}};
    g.m = integerParam(fd, boundOf(single)->bound);
    if (!g.m)
      return "bound check '" + boundOf(single)->guard->str() + "' is not 'global id < parameter'";
    auto isVector = [&](const MemAccess *m) {
      ThreadCoord c;
      return vectorIndex(m->affine, c) && c == kc;
    };
    GemmOperand a, x;
    if (asMatrix(d.xAccess, single, true, a) && isVector(d.yAccess)) {
      assign(a, d.x, d.xAccess, px);
      assign(x, d.y, d.yAccess, py);
    } else if (asMatrix(d.yAccess, single, true, a) && isVector(d.xAccess)) {
      assign(a, d.y, d.yAccess, py);
      assign(x, d.x, d.xAccess, px);
    } else {
      return "the operand indices are not those of a row-major matrix-vector product "
             "(A[r * K + k] or A[k * M + r], x[k])";
    }
    g.a = a;
    g.b = x;
    return "";
  }
  if (ids.size() == 2)
    return "the output index is not 'row * N + col'";
  if (ids.size() == 1)
    return "the output index is not the global thread id";
  return "the bounds check must be 'row < M && col < N' (GEMM) or 'r < M' (GEMV) on global "
         "thread ids";
}

// --- sums ---------------------------------------------------------------------

namespace {

/// `e` reads the CUDA builtin `var.member` (threadIdx.x, blockDim.x).
bool isBuiltin(const Expr *e, StringRef var, StringRef member) {
  e = e->IgnoreParenImpCasts();
  if (auto *po = dyn_cast<PseudoObjectExpr>(e))
    e = po->getSyntacticForm()->IgnoreParenImpCasts();
  auto *mp = dyn_cast<MSPropertyRefExpr>(e);
  if (!mp)
    return false;
  const Expr *base = mp->getBaseExpr()->IgnoreParenImpCasts();
  if (auto *ove = dyn_cast<OpaqueValueExpr>(base); ove && ove->getSourceExpr())
    base = ove->getSourceExpr()->IgnoreParenImpCasts();
  auto *dre = dyn_cast<DeclRefExpr>(base);
  StringRef m = mp->getPropertyDecl()->getName();
  return dre && dre->getDecl()->getName() == var &&
         (m == member || m == ("__fetch_builtin_" + member).str());
}

std::optional<int64_t> intValue(ASTContext &ast, const Expr *e) {
  Expr::EvalResult r;
  if (e->isValueDependent() || !e->EvaluateAsInt(r, ast))
    return std::nullopt;
  return r.Val.getInt().getExtValue();
}

/// blockIdx.x * blockDim.x + threadIdx.x, the factors and terms in any order.
bool isGlobalIdX(const Expr *e) {
  auto *add = dyn_cast<BinaryOperator>(e->IgnoreParenImpCasts());
  if (!add || add->getOpcode() != BO_Add)
    return false;
  auto product = [](const Expr *x) {
    auto *m = dyn_cast<BinaryOperator>(x->IgnoreParenImpCasts());
    return m && m->getOpcode() == BO_Mul &&
           ((isBuiltin(m->getLHS(), "blockIdx", "x") && isBuiltin(m->getRHS(), "blockDim", "x")) ||
            (isBuiltin(m->getLHS(), "blockDim", "x") && isBuiltin(m->getRHS(), "blockIdx", "x")));
  };
  return (product(add->getLHS()) && isBuiltin(add->getRHS(), "threadIdx", "x")) ||
         (product(add->getRHS()) && isBuiltin(add->getLHS(), "threadIdx", "x"));
}

std::string calleeOf(const CallExpr *ce) {
  const FunctionDecl *f = ce->getDirectCallee();
  return f && f->getIdentifier() ? f->getName().str() : "";
}

const ParmVarDecl *integerParamNamed(const FunctionDecl *fd, StringRef name) {
  const ParmVarDecl *found = nullptr;
  for (const ParmVarDecl *pv : fd->parameters())
    if (pv->getName() == name && pv->getType()->isIntegerType())
      found = pv;
  return found;
}

} // namespace

std::string cudal1::recognizeTreeSum(const ParsedUnit &cu, unsigned kernel, mlir::MLIRContext &mctx,
                                     SumIdiom &p) {
  ParsedUnit &u = const_cast<ParsedUnit &>(cu);
  ASTContext &ast = u.ast();
  const FunctionDecl *fd = u.kernelDecl(kernel);
  const Kernel &km = u.model().kernels[kernel];
  p = SumIdiom();
  const char *shape = "not a GEMM/GEMV, an atomic sum or the block tree sum with one atomicAdd "
                      "per block";
  auto *body = dyn_cast_or_null<CompoundStmt>(fd->getBody());
  if (!body || km.atomics.size() != 1 || km.loops.size() != 1 || km.shared.size() != 1)
    return shape;
  std::vector<const Stmt *> st(body->body_begin(), body->body_end());
  if (st.size() != 6 && st.size() != 7)
    return shape;
  auto declOf = [&](const Stmt *x) -> const VarDecl * {
    auto *ds = dyn_cast<DeclStmt>(x);
    return ds && ds->isSingleDecl() ? dyn_cast<VarDecl>(ds->getSingleDecl()) : nullptr;
  };
  // 1. The shared array.
  const VarDecl *cache = declOf(st[0]);
  const auto *arr = cache ? ast.getAsConstantArrayType(cache->getType()) : nullptr;
  if (!cache || !cache->hasAttr<CUDASharedAttr>() || !arr)
    return shape;
  p.tree = arr->getSize().getSExtValue();
  p.outType = canonicalType(arr->getElementType());
  // 2. [int tid = threadIdx.x;] int i = GLOBAL-ID;
  size_t at = 1;
  const VarDecl *tidVar = nullptr;
  if (st.size() == 7) {
    tidVar = declOf(st[at++]);
    if (!tidVar || !tidVar->getType()->isIntegerType() || !tidVar->hasInit() ||
        !isBuiltin(tidVar->getInit(), "threadIdx", "x"))
      return shape;
  }
  auto isTid = [&](const Expr *e) {
    return tidVar ? varOf(e) == tidVar : isBuiltin(e, "threadIdx", "x");
  };
  const VarDecl *i = declOf(st[at++]);
  if (!i || !i->getType()->isIntegerType() || !i->hasInit() || !isGlobalIdX(i->getInit()))
    return shape;
  auto isCacheAt = [&](const Expr *e, const std::function<bool(const Expr *)> &idx) {
    auto *a = dyn_cast<ArraySubscriptExpr>(e->IgnoreParenImpCasts());
    return a && varOf(a->getBase()) == cache && idx(a->getIdx());
  };
  // 3. The load: cache[tid] = (i < n) ? x[i] : 0.
  auto *load = dyn_cast<BinaryOperator>(st[at++]);
  auto *cond =
      load ? dyn_cast<ConditionalOperator>(load->getRHS()->IgnoreParenImpCasts()) : nullptr;
  if (!load || load->getOpcode() != BO_Assign || !cond || !isCacheAt(load->getLHS(), isTid))
    return shape;
  auto *lt = dyn_cast<BinaryOperator>(cond->getCond()->IgnoreParenImpCasts());
  auto *xi = dyn_cast<ArraySubscriptExpr>(cond->getTrueExpr()->IgnoreParenImpCasts());
  if (!lt || lt->getOpcode() != BO_LT || varOf(lt->getLHS()) != i || !xi ||
      varOf(xi->getIdx()) != i || !isZero(ast, cond->getFalseExpr()))
    return shape;
  p.n = paramOf(lt->getRHS());
  p.x = paramOf(xi->getBase());
  if (!p.n || !p.n->getType()->isIntegerType() || !p.x || !p.x->getType()->isPointerType())
    return shape;
  // 4. __syncthreads(); the halving loop; the atomic.
  auto isBarrier = [&](const Stmt *x) {
    auto *ce = dyn_cast<CallExpr>(x);
    return ce && calleeOf(ce) == "__syncthreads" && ce->getNumArgs() == 0;
  };
  if (!isBarrier(st[at++]))
    return shape;
  auto *loop = dyn_cast<ForStmt>(st[at++]);
  const VarDecl *sv = loop && loop->getInit() ? declOf(loop->getInit()) : nullptr;
  auto *lb = loop ? dyn_cast<CompoundStmt>(loop->getBody()) : nullptr;
  auto *half = sv && sv->hasInit() ? dyn_cast<BinaryOperator>(sv->getInit()->IgnoreParenImpCasts())
                                   : nullptr;
  auto *lc = loop && loop->getCond()
                 ? dyn_cast<BinaryOperator>(loop->getCond()->IgnoreParenImpCasts())
                 : nullptr;
  auto *inc = loop && loop->getInc()
                  ? dyn_cast<CompoundAssignOperator>(loop->getInc()->IgnoreParenImpCasts())
                  : nullptr;
  if (!half || half->getOpcode() != BO_Div || !isBuiltin(half->getLHS(), "blockDim", "x") ||
      intValue(ast, half->getRHS()) != 2 || !lc || lc->getOpcode() != BO_GT ||
      varOf(lc->getLHS()) != sv || intValue(ast, lc->getRHS()) != 0 || !inc ||
      varOf(inc->getLHS()) != sv ||
      !((inc->getOpcode() == BO_DivAssign && intValue(ast, inc->getRHS()) == 2) ||
        (inc->getOpcode() == BO_ShrAssign && intValue(ast, inc->getRHS()) == 1)) ||
      !lb || lb->size() != 2)
    return shape;
  // if (tid < s) cache[tid] += cache[tid + s]; __syncthreads();
  auto *add = dyn_cast<IfStmt>(lb->body_front());
  auto *ac = add ? dyn_cast<BinaryOperator>(add->getCond()->IgnoreParenImpCasts()) : nullptr;
  auto *upd = add ? dyn_cast<CompoundAssignOperator>(add->getThen()) : nullptr;
  auto isTidPlusS = [&](const Expr *e) {
    auto *s = dyn_cast<BinaryOperator>(e->IgnoreParenImpCasts());
    return s && s->getOpcode() == BO_Add &&
           ((isTid(s->getLHS()) && varOf(s->getRHS()) == sv) ||
            (varOf(s->getLHS()) == sv && isTid(s->getRHS())));
  };
  if (!add || add->getElse() || !ac || ac->getOpcode() != BO_LT || !isTid(ac->getLHS()) ||
      varOf(ac->getRHS()) != sv || !upd || upd->getOpcode() != BO_AddAssign ||
      !isCacheAt(upd->getLHS(), isTid) || !isCacheAt(upd->getRHS(), isTidPlusS) ||
      !isBarrier(lb->body_back()))
    return shape;
  // if (tid == 0) atomicAdd(out, cache[0]);
  auto *fin = dyn_cast<IfStmt>(st[at++]);
  auto *fc = fin ? dyn_cast<BinaryOperator>(fin->getCond()->IgnoreParenImpCasts()) : nullptr;
  auto *call = fin && !fin->getElse() ? dyn_cast<CallExpr>(fin->getThen()) : nullptr;
  auto isZeroIndex = [&](const Expr *e) { return intValue(ast, e) == 0; };
  if (!fin || !fc || fc->getOpcode() != BO_EQ || !isTid(fc->getLHS()) ||
      intValue(ast, fc->getRHS()) != 0 || !call || calleeOf(call) != "atomicAdd" ||
      call->getNumArgs() != 2 || !isCacheAt(call->getArg(1), isZeroIndex))
    return shape;
  p.out = paramOf(call->getArg(0));
  if (!p.out || !p.out->getType()->isPointerType() ||
      canonicalType(p.out->getType()->getPointeeType()) != p.outType)
    return "the block sum's shared array and target have different types";
  if (p.out == p.x)
    return "the sum's input is also its target";
  // 5. The analysis reads x at the global id.
  IndexSpace space(mctx);
  auto gx = space.parse("blockIdx.x * blockDim.x + threadIdx.x");
  for (const MemAccess &m : km.accesses)
    if (m.param == p.x->getName()) {
      auto e = space.parse(m.normalized);
      if (!e || !sameFunction(*e, *gx, space))
        return "the summand does not read x at the global thread id";
    } else if (m.param != p.out->getName() || !m.atomic) {
      return "the kernel has other global accesses than the sum's";
    }
  p.square = false;
  return "";
}

std::string cudal1::recognizeAtomicSum(const ParsedUnit &cu, unsigned kernel,
                                       mlir::MLIRContext &mctx, SumIdiom &p) {
  ParsedUnit &u = const_cast<ParsedUnit &>(cu);
  p = SumIdiom();
  const FunctionDecl *fd = u.kernelDecl(kernel);
  const Kernel &km = u.model().kernels[kernel];
  const char *shape = "not a GEMM/GEMV or the canonical atomic sum 'int i = blockIdx.x * "
                      "blockDim.x + threadIdx.x; if (i < n) atomicAdd(out, x[i]);'";
  auto *body = dyn_cast_or_null<CompoundStmt>(fd->getBody());
  if (!body || body->body_empty())
    return shape;
  if (!km.barriers.empty() || !km.shared.empty() || !km.loops.empty() || km.atomics.size() != 1 ||
      usesWarpLevel(fd))
    return shape;
  const IfStmt *guard = nullptr;
  for (const Stmt *s : body->body()) {
    if (guard)
      return shape;
    if (auto *ds = dyn_cast<DeclStmt>(s)) {
      for (const Decl *d : ds->decls()) {
        auto *vd = dyn_cast<VarDecl>(d);
        if (!vd || !vd->getType()->isIntegerType() || !vd->hasInit() ||
            hasMemoryAccess(vd->getInit()))
          return shape;
      }
      continue;
    }
    guard = dyn_cast<IfStmt>(s);
    if (!guard || guard->getElse() || guard->getInit() || guard->getConditionVariable() ||
        hasMemoryAccess(guard->getCond()))
      return shape;
  }
  if (!guard)
    return shape;
  if (lessThanConjuncts(guard->getCond()) != 1)
    return "the bounds check must be one comparison 'i < n'";
  const Stmt *then = guard->getThen();
  if (auto *cs = dyn_cast<CompoundStmt>(then); cs && cs->size() == 1)
    then = cs->body_front();
  auto *call = dyn_cast<CallExpr>(then);
  if (!call || calleeOf(call) != "atomicAdd" || call->getNumArgs() != 2)
    return shape;
  p.out = paramOf(call->getArg(0));
  if (!p.out || !p.out->getType()->isPointerType())
    return "the atomic sum's target must be a pointer parameter";
  p.outType =
      p.out->getType()->getPointeeType().getUnqualifiedType().getCanonicalType().getAsString();
  // f(x[i]): x[i], (T)x[i] or x[i] * x[i].
  const Expr *v = call->getArg(1)->IgnoreParenImpCasts();
  p.square = false;
  if (auto *c = dyn_cast<ExplicitCastExpr>(v)) {
    if (c->getType().getUnqualifiedType().getCanonicalType().getAsString() != p.outType)
      return "the summand is cast to another type than the target's";
    v = c->getSubExpr()->IgnoreParenImpCasts();
  }
  std::vector<const ArraySubscriptExpr *> reads;
  if (auto *m = dyn_cast<BinaryOperator>(v); m && m->getOpcode() == BO_Mul) {
    auto *l = dyn_cast<ArraySubscriptExpr>(m->getLHS()->IgnoreParenImpCasts());
    auto *r = dyn_cast<ArraySubscriptExpr>(m->getRHS()->IgnoreParenImpCasts());
    if (!l || !r)
      return shape;
    reads = {l, r};
    p.square = true;
  } else if (auto *a = dyn_cast<ArraySubscriptExpr>(v)) {
    reads = {a};
  } else {
    return "the summand must be x[i], (T)x[i] or x[i] * x[i]";
  }
  p.x = paramOf(reads[0]->getBase());
  for (const ArraySubscriptExpr *r : reads)
    if (!p.x || paramOf(r->getBase()) != p.x || !p.x->getType()->isPointerType() ||
        hasMemoryAccess(r->getIdx()))
      return "the summand must read one pointer parameter at a plain index";
  if (p.x == p.out)
    return "the sum's input is also its target";
  // The model: x read at the global id, the target at index 0, nothing else.
  if (km.accesses.size() != reads.size() + 2)
    return "the kernel has other global accesses than the sum's";
  IndexSpace space(mctx);
  auto gx = space.parse("blockIdx.x * blockDim.x + threadIdx.x");
  const ParmVarDecl *bound = nullptr;
  for (const MemAccess &m : km.accesses) {
    auto e = space.parse(m.normalized);
    if (!e || usesOpaque(*e, space))
      return "the analysis cannot read index '" + m.index + "'";
    if (m.param == p.out->getName() && m.atomic) {
      if (!sameFunction(*e, *space.parse("0"), space))
        return "the atomic target is not out[0]";
      continue;
    }
    if (m.param != p.x->getName() || m.kind != AccessKind::Read || !sameFunction(*e, *gx, space))
      return "the summand does not read x at the global thread id";
    if (m.guards.size() != 1)
      return "the bounds check must be one comparison 'i < n'";
    const Guard &g = m.guards[0];
    auto lhs = g.op == GuardOp::LT ? space.parse(g.lhs) : std::nullopt;
    const ParmVarDecl *b = g.op == GuardOp::LT ? integerParamNamed(fd, g.rhs) : nullptr;
    if (!lhs || !b || !sameFunction(*lhs, *gx, space) || (bound && bound != b))
      return "bound check '" + g.str() + "' is not 'global id < parameter'";
    bound = b;
  }
  p.n = bound;
  if (!p.n)
    return shape;
  static const char *types[] = {"float",        "double",    "int",
                                "unsigned int", "long long", "unsigned long long"};
  if (std::find(std::begin(types), std::end(types), p.outType) == std::end(types))
    return "the sum's type is " + p.outType;
  return "";
}

namespace {

/// `s` as an atomicAdd statement whose result is unused: the call, maybe
/// cast to void.
const CallExpr *atomicAddStatement(const Stmt *s) {
  auto *e = dyn_cast_or_null<Expr>(s);
  if (!e)
    return nullptr;
  e = e->IgnoreParens();
  if (auto *c = dyn_cast<CStyleCastExpr>(e); c && c->getType()->isVoidType())
    e = c->getSubExpr()->IgnoreParens();
  auto *ce = dyn_cast<CallExpr>(e);
  return ce && calleeOf(ce) == "atomicAdd" && ce->getNumArgs() == 2 ? ce : nullptr;
}

/// Whether the linear part `p` of `form` varies with threadIdx, directly or
/// through a quotient or remainder.
bool variesWithThread(const LinearPart &p, const AffineForm &form, unsigned depth = 0) {
  for (const AffineTerm &t : p.terms) {
    StringRef v = t.var;
    if (v.starts_with("threadIdx."))
      return true;
    unsigned atom = 0;
    if (v.consume_front("#") && !v.getAsInteger(10, atom) && atom < form.atoms.size() &&
        depth <= form.atoms.size() && variesWithThread(form.atoms[atom].numerator, form, depth + 1))
      return true;
  }
  return false;
}

} // namespace

std::string cudal1::recognizeUniformAtomic(const ParsedUnit &u, unsigned kernel,
                                           mlir::MLIRContext &mctx, UniformAtomic &m) {
  m = UniformAtomic();
  ASTContext &ast = const_cast<ParsedUnit &>(u).ast();
  const FunctionDecl *fd = u.kernelDecl(kernel);
  auto *body = dyn_cast_or_null<CompoundStmt>(fd->getBody());
  if (!body)
    return "the kernel has no body";
  // 1. Exactly one atomic, and every thread reaches it.
  unsigned atomics = 0;
  std::string why;
  walk(body, [&](const Stmt *s) {
    if (auto *ce = dyn_cast<CallExpr>(s); ce && StringRef(calleeOf(ce)).starts_with("atomic"))
      ++atomics;
    if (isa<ReturnStmt>(s))
      why = "the kernel returns early, so not every thread reaches the warp reduction";
    if (isa<GotoStmt>(s) || isa<IndirectGotoStmt>(s) || isa<LabelStmt>(s))
      why = "the kernel uses goto";
  });
  if (atomics == 0)
    return "the kernel has no atomicAdd";
  if (atomics > 1)
    return "the kernel has several atomics; only one is handled";
  if (!why.empty())
    return why;
  if (usesWarpLevel(fd))
    return "the kernel uses warp-level intrinsics already";
  // 2. A top-level statement, or one directly inside a top-level if
  // without else.
  for (const Stmt *s : body->body()) {
    if (const CallExpr *c = atomicAddStatement(s)) {
      m.stmt = cast<Expr>(s);
      m.call = c;
      break;
    }
    auto *is = dyn_cast<IfStmt>(s);
    if (!is || is->getElse() || is->getInit() || is->getConditionVariable())
      continue;
    std::vector<const Stmt *> inner;
    if (auto *cs = dyn_cast<CompoundStmt>(is->getThen()))
      inner.assign(cs->body_begin(), cs->body_end());
    else
      inner.push_back(is->getThen());
    for (const Stmt *x : inner)
      if (const CallExpr *c = atomicAddStatement(x)) {
        m.guard = is;
        m.stmt = cast<Expr>(x);
        m.call = c;
      }
    if (m.call)
      break;
  }
  if (!m.call)
    return "the atomicAdd is not a statement at the top of the kernel or directly inside a "
           "top-level if (or its result is used)";
  // 3. The value type.
  m.valueType = canonicalType(m.call->getDirectCallee()->getParamDecl(1)->getType());
  static const char *types[] = {"float", "double", "int", "unsigned int", "unsigned long long"};
  if (std::find(std::begin(types), std::end(types), m.valueType) == std::end(types))
    return "the atomicAdd's value type is not float, double, int, unsigned or unsigned long "
           "long";
  // 4. The address is the same for every thread of a block. The front end
  // keeps the access at the call (atomicAdd(p + i, v)) or at the element
  // whose address is taken (atomicAdd(&p[i], v)).
  const Expr *addr = m.call->getArg(0);
  if (addr->HasSideEffects(ast, /*IncludePossibleEffects=*/false))
    return "the atomic's address has side effects";
  m.target = u.accessOf(kernel, m.call, AccessKind::Write);
  if (auto *uo = dyn_cast<UnaryOperator>(addr->IgnoreParenImpCasts());
      !m.target && uo && uo->getOpcode() == UO_AddrOf)
    m.target = u.accessOf(kernel, uo->getSubExpr()->IgnoreParens(), AccessKind::Write);
  if (m.target && !m.target->atomic)
    m.target = nullptr;
  if (!m.target)
    return "the atomic's target is not an access through a kernel pointer parameter";
  const AffineForm &form = m.target->affine;
  std::string varies = "the atomic's index " + m.target->index + " depends on threadIdx";
  if (form.affine && variesWithThread(form.linear, form))
    return varies;
  if (!form.affine) {
    // A product of block indices (blockIdx.x * blockIdx.y) is outside the
    // affine form yet the same for the whole block: the index's affine
    // expression decides.
    IndexSpace space(mctx);
    auto e = space.parse(m.target->normalized);
    if (!e || usesOpaque(*e, space))
      return "the atomic's index " + m.target->index + " is not an affine expression (" +
             form.whyNot + ")";
    for (unsigned d : {IndexSpace::ThreadX, IndexSpace::ThreadY, IndexSpace::ThreadZ})
      if (e->isFunctionOfDim(d))
        return varies;
  }
  // 5. The address means the same after the if.
  std::set<const VarDecl *> mutated, inside;
  walk(body, [&](const Stmt *s) {
    const Expr *changed = nullptr;
    if (auto *bo = dyn_cast<BinaryOperator>(s); bo && bo->isAssignmentOp())
      changed = bo->getLHS();
    if (auto *uo = dyn_cast<UnaryOperator>(s);
        uo && (uo->isIncrementDecrementOp() || uo->getOpcode() == UO_AddrOf))
      changed = uo->getSubExpr();
    if (const VarDecl *v = varOf(changed))
      mutated.insert(v);
  });
  if (m.guard)
    walk(m.guard->getThen(), [&](const Stmt *s) {
      if (auto *ds = dyn_cast<DeclStmt>(s))
        for (const Decl *d : ds->decls())
          if (auto *vd = dyn_cast<VarDecl>(d))
            inside.insert(vd);
    });
  walk(addr, [&](const Stmt *s) {
    const VarDecl *vd = isa<DeclRefExpr>(s) ? varOf(cast<Expr>(s)) : nullptr;
    if (!vd || !vd->hasLocalStorage())
      return;
    if (inside.count(vd))
      why = "the atomic's address uses '" + vd->getNameAsString() + "', declared inside the if";
    else if (mutated.count(vd))
      why = "the atomic's address uses '" + vd->getNameAsString() + "', which is modified";
  });
  return why;
}

// --- grid coverage -----------------------------------------------------------

namespace {} // namespace

/// The value of a compile-time integer: a literal, a constant expression, or
/// a component of a dim3 variable initialised with constants (`block.x`).
std::optional<int64_t> cudal1::constValue(ASTContext &ast, const Expr *e) {
  e = e->IgnoreParenImpCasts();
  Expr::EvalResult r;
  if (!e->isValueDependent() && e->EvaluateAsInt(r, ast))
    return r.Val.getInt().getExtValue();
  auto *me = dyn_cast<MemberExpr>(e);
  if (!me)
    return std::nullopt;
  const VarDecl *vd = varOf(me->getBase());
  if (!vd || !vd->hasInit() || vd->getType().getAsString().find("dim3") == std::string::npos)
    return std::nullopt;
  unsigned comp = llvm::StringSwitch<unsigned>(me->getMemberDecl()->getName())
                      .Case("x", 0)
                      .Case("y", 1)
                      .Case("z", 2)
                      .Default(3);
  auto *ce = dyn_cast<CXXConstructExpr>(vd->getInit()->IgnoreUnlessSpelledInSource());
  if (!ce || comp >= ce->getNumArgs())
    return comp < 3 ? std::optional<int64_t>(1) : std::nullopt;
  if (isa<CXXDefaultArgExpr>(ce->getArg(comp)))
    return 1;
  return constValue(ast, ce->getArg(comp));
}

/// Component `d` of a dim3 configuration argument, as written (null: 1).
const Expr *cudal1::dimComponent(const Expr *cfg, unsigned d) {
  const Expr *s = cfg->IgnoreUnlessSpelledInSource();
  if (auto *dre = dyn_cast<DeclRefExpr>(s))
    if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()); vd && vd->hasInit())
      s = vd->getInit()->IgnoreUnlessSpelledInSource();
  if (auto *ce = dyn_cast<CXXConstructExpr>(s)) {
    if (d < ce->getNumArgs() && !isa<CXXDefaultArgExpr>(ce->getArg(d)))
      return ce->getArg(d);
    return nullptr;
  }
  return d == 0 ? s : nullptr;
}

namespace {

/// A host integer expression as a polynomial in its variables (each named
/// by its declaration, so that shadowing names stay apart); null when it
/// has anything but constants, variables, + - * and casts.
std::optional<SymbolicValue> hostPolynomial(ASTContext &ast, const Expr *e,
                                            std::vector<const VarDecl *> &vars) {
  using Poly = std::map<std::vector<std::string>, int64_t>;
  std::function<std::optional<Poly>(const Expr *)> go = [&](const Expr *x) -> std::optional<Poly> {
    x = x->IgnoreParenImpCasts();
    if (auto c = constValue(ast, x))
      return *c ? Poly{{{}, *c}} : Poly{};
    if (auto *ce = dyn_cast<ExplicitCastExpr>(x))
      return ce->getType()->isIntegerType() ? go(ce->getSubExpr()) : std::nullopt;
    if (const VarDecl *v = varOf(x); v && v->getType()->isIntegerType()) {
      vars.push_back(v);
      char buf[32];
      snprintf(buf, sizeof buf, "@%p", (const void *)v);
      return Poly{{{v->getName().str() + buf}, 1}};
    }
    auto *bo = dyn_cast<BinaryOperator>(x);
    if (!bo ||
        (bo->getOpcode() != BO_Add && bo->getOpcode() != BO_Sub && bo->getOpcode() != BO_Mul))
      return std::nullopt;
    auto l = go(bo->getLHS());
    auto r = l ? go(bo->getRHS()) : std::nullopt;
    if (!r)
      return std::nullopt;
    Poly out;
    auto add = [&](const std::vector<std::string> &k, int64_t c) {
      if ((out[k] += c) == 0)
        out.erase(k);
    };
    if (bo->getOpcode() == BO_Mul) {
      for (const auto &[ka, ca] : *l)
        for (const auto &[kb, cb] : *r) {
          std::vector<std::string> k = ka;
          k.insert(k.end(), kb.begin(), kb.end());
          std::sort(k.begin(), k.end());
          add(k, ca * cb);
        }
    } else {
      out = *l;
      for (const auto &[k, c] : *r)
        add(k, bo->getOpcode() == BO_Add ? c : -c);
    }
    return out;
  };
  auto p = go(e);
  if (!p)
    return std::nullopt;
  SymbolicValue v;
  for (const auto &[k, c] : *p)
    v.terms.push_back(Monomial{c, k});
  return v;
}

/// Whether every use of `v` in `fd` only reads it: the grid's numerator and
/// the launch's arguments are compared as values, which holds only while
/// neither changes in between. Conservative: a use that is not loaded as a
/// value (member reads of a dim3 included) or copied counts as a change.
bool onlyRead(ASTContext &ast, const FunctionDecl *fd, const VarDecl *v) {
  bool ok = true;
  walk(fd->getBody(), [&](const Stmt *s) {
    auto *dre = dyn_cast<DeclRefExpr>(s);
    if (!ok || !dre || dre->getDecl() != v)
      return;
    const Stmt *at = dre;
    while (true) {
      auto parents = ast.getParents(*at);
      const Stmt *p = parents.empty() ? nullptr : parents[0].get<Stmt>();
      if (!p) {
        ok = false;
        return;
      }
      if (isa<ParenExpr>(p) || isa<MemberExpr>(p)) {
        at = p;
        continue;
      }
      if (auto *ice = dyn_cast<ImplicitCastExpr>(p)) {
        if (ice->getCastKind() == CK_LValueToRValue)
          return;
        at = p;
        continue;
      }
      if (auto *ce = dyn_cast<CXXConstructExpr>(p); ce && ce->getConstructor()->isCopyConstructor())
        return;
      ok = false;
      return;
    }
  });
  return ok;
}

} // namespace

std::string cudal1::gridCovers(ParsedUnit &u, unsigned launch, unsigned d,
                               const SymbolicValue &bound, const std::string &boundText) {
  ASTContext &ast = u.ast();
  const char *dn[] = {"x", "y", "z"};
  std::string why = std::string("cannot prove the grid covers every output in ") + dn[d] +
                    " (expected grid." + dn[d] + " = (" + boundText + " + b - 1) / b " +
                    "with b the block's constant size)";
  const CUDAKernelCallExpr *kc = u.launchExpr(launch);
  const CallExpr *cfg = kc->getConfig();
  if (!cfg || cfg->getNumArgs() < 2)
    return why;
  const Expr *gridArg = cfg->getArg(0), *blockArg = cfg->getArg(1);
  const Expr *bc = dimComponent(blockArg, d);
  std::optional<int64_t> b = bc ? constValue(ast, bc) : std::optional<int64_t>(1);
  const Expr *gc = dimComponent(gridArg, d);
  if (!b || !gc)
    return why;
  auto *div = dyn_cast<BinaryOperator>(gc->IgnoreParenImpCasts());
  if (!div || div->getOpcode() != BO_Div || constValue(ast, div->getRHS()) != b)
    return why;
  // The kernel's bound over the launch's arguments, and the numerator.
  std::vector<const VarDecl *> vars;
  const FunctionDecl *callee = kc->getDirectCallee();
  std::map<std::string, SymbolicValue> args;
  for (const ParmVarDecl *p : callee->parameters()) {
    if (p->getFunctionScopeIndex() >= kc->getNumArgs())
      continue;
    const Expr *a = kc->getArg(p->getFunctionScopeIndex());
    std::vector<const VarDecl *> used;
    if (auto v = hostPolynomial(ast, a, used)) {
      args[p->getName().str()] = *v;
      for (const Monomial &m : bound.terms)
        if (std::count(m.symbols.begin(), m.symbols.end(), p->getName().str()))
          vars.insert(vars.end(), used.begin(), used.end());
    }
  }
  // bound + b - 1 with the parameters replaced by the arguments.
  std::map<std::vector<std::string>, int64_t> want;
  for (const Monomial &m : bound.terms) {
    std::map<std::vector<std::string>, int64_t> prod{{{}, m.coeff}};
    for (const std::string &s : m.symbols) {
      auto it = args.find(s);
      if (it == args.end())
        return why + "; the bound calls a function or reads memory";
      std::map<std::vector<std::string>, int64_t> next;
      for (const auto &[ka, ca] : prod)
        for (const Monomial &t : it->second.terms) {
          std::vector<std::string> k = ka;
          k.insert(k.end(), t.symbols.begin(), t.symbols.end());
          std::sort(k.begin(), k.end());
          next[k] += ca * t.coeff;
        }
      prod = next;
    }
    for (const auto &[k, c] : prod)
      want[k] += c;
  }
  want[{}] += *b - 1;
  auto num = hostPolynomial(ast, div->getLHS(), vars);
  if (!num)
    return why;
  std::map<std::vector<std::string>, int64_t> have;
  for (const Monomial &m : num->terms)
    have[m.symbols] += m.coeff;
  for (auto *mp : {&want, &have})
    for (auto it = mp->begin(); it != mp->end();)
      it = it->second == 0 ? mp->erase(it) : std::next(it);
  if (want != have)
    return why;
  // The variables compared keep their values from the grid's computation to
  // the launch (and so do the dim3 variables read).
  for (const Expr *c : {gridArg, blockArg})
    if (const VarDecl *vd = varOf(c->IgnoreUnlessSpelledInSource()))
      vars.push_back(vd);
  walk(div->getRHS(), [&](const Stmt *s) {
    if (auto *dre = dyn_cast<DeclRefExpr>(s))
      if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()))
        vars.push_back(vd);
  });
  const FunctionDecl *fd = u.launchFunction(launch);
  for (const VarDecl *v : vars)
    if (v->isLocalVarDeclOrParm() && !onlyRead(ast, fd, v))
      return why + "; '" + v->getName().str() + "' changes in the function";
    else if (!v->isLocalVarDeclOrParm() && !v->getType().isConstQualified())
      return why + "; '" + v->getName().str() + "' is a global variable";
  return "";
}
