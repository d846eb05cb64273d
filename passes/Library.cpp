// library: the launch of a recognized matrix product kernel becomes a cuBLAS
// call. Recognition is strict: the kernel is exactly one bounds-checked
// dot-product loop per output element,
//   if (row < M && col < N) { T acc = 0; for (int k = 0; k < K; ++k)
//     acc += A[..] * B[..]; C[row * N + col] = acc | alpha * acc | alpha * acc + beta * C[..]; }
// (GEMV: one thread per row, `y[r] = ...`), with the index expressions
// checked by the analysis (normalized affine indices compared as functions
// of the global thread ids and the loop counter), and the launch's grid
// proved to cover every output. Row-major C = op(A) op(B) is computed as
// column-major C^T = op(B)^T op(A)^T.
#include "Library.h"
#include "cudal1/Analysis/AffineIndex.h"
#include "cudal1/Rewrite/HostCode.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/StringSwitch.h"

#include "runtime/cub-sum.inc" // the helpers inserted: passes/runtime/cub-sum.cuh
#include "runtime/cublas.inc"  // and passes/runtime/cublas.cuh

#define DEBUG_TYPE "library"

using namespace clang;
using namespace cudal1;

namespace {

/// What the kernel computes, in terms of its parameters.
struct Product {
  bool gemv = false;
  std::string type;               ///< float | double
  const ParmVarDecl *a = nullptr; ///< the operand indexed by the row (A)
  const ParmVarDecl *b = nullptr; ///< the other operand (B, or x for GEMV)
  const ParmVarDecl *c = nullptr; ///< the output
  bool transA = false, transB = false;
  const ParmVarDecl *m = nullptr, *n = nullptr, *k = nullptr; ///< n unused for GEMV
  const Expr *alpha = nullptr, *beta = nullptr;               ///< in the kernel; null: 1, 0
};

/// The integer parameter of `fd` named `name` (the normalized side of a
/// guard that is a parameter is its name), or null.
const ParmVarDecl *integerParam(const FunctionDecl *fd, llvm::StringRef name) {
  const ParmVarDecl *found = nullptr;
  for (const ParmVarDecl *pv : fd->parameters())
    if (pv->getName() == name && pv->getType()->isIntegerType())
      found = pv;
  return found;
}

const ParmVarDecl *paramOf(const Expr *e) {
  if (auto *dre = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts()))
    return dyn_cast<ParmVarDecl>(dre->getDecl());
  return nullptr;
}

const VarDecl *varOf(const Expr *e) {
  if (auto *dre = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts()))
    return dyn_cast<VarDecl>(dre->getDecl());
  return nullptr;
}

/// A scalar factor: a kernel parameter or a literal.
bool isScalarFactor(const Expr *e) {
  e = e->IgnoreParenImpCasts();
  if (isa<FloatingLiteral>(e) || isa<IntegerLiteral>(e))
    return true;
  const ParmVarDecl *p = paramOf(e);
  return p && p->getType()->isArithmeticType();
}

/// Whether evaluating `s` may read memory, call a function (the
/// threadIdx/blockIdx builtins' property getters excepted) or assign.
bool hasMemoryAccess(const Stmt *s) {
  bool found = false;
  forEachStmt(s, [&](const Stmt *x) {
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

/// The number of `&&`-joined comparisons `a < b` in a condition, or -1 when
/// any conjunct is something else (the analysis' guards list only the
/// conditions that bound thread ids; a flag would slip past them).
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

/// The model's access at an expression's position (global accesses through
/// pointer parameters only).
const MemAccess *accessAt(TransformContext &ctx, const Kernel &k, const Expr *e, AccessKind kind) {
  const SourceManager &sm = ctx.unit.ast().getSourceManager();
  SourceLocation at = sm.getFileLoc(e->getBeginLoc());
  for (const MemAccess &m : k.accesses)
    if (m.kind == kind && m.pos.line == sm.getPresumedLineNumber(at) &&
        m.pos.col == sm.getPresumedColumnNumber(at))
      return &m;
  return nullptr;
}

/// Finds the product pattern in kernel `kernel`, or says why it is not one.
std::string match(TransformContext &ctx, unsigned kernel, Product &p) {
  ASTContext &ast = ctx.unit.ast();
  const FunctionDecl *fd = ctx.unit.kernelDecl(kernel);
  const Kernel &km = ctx.model().kernels[kernel];
  const char *shape = "not the canonical product 'if (row < M && col < N) { T acc = 0; for (int "
                      "k = 0; k < K; ++k) acc += A[..] * B[..]; C[..] = acc; }'";
  auto *body = dyn_cast_or_null<CompoundStmt>(fd->getBody());
  if (!body || body->body_empty())
    return shape;
  if (!km.barriers.empty() || !km.atomics.empty() || !km.shared.empty() || usesWarpIntrinsics(fd))
    return "the kernel synchronizes, uses atomics or shared memory";
  // 1. Index declarations (pure integer arithmetic), then one if statement.
  const IfStmt *guard = nullptr;
  for (const Stmt *s : body->body()) {
    if (guard)
      return std::string(shape) + ": a statement follows the bounds check";
    if (auto *ds = dyn_cast<DeclStmt>(s)) {
      for (const Decl *d : ds->decls()) {
        auto *vd = dyn_cast<VarDecl>(d);
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
  int conditions = lessThanConjuncts(guard->getCond());
  if (conditions < 1)
    return "the bounds check must be comparisons 'a < b' joined by &&";
  // 2. { T acc = 0; for (...) acc += X * Y; Z[..] = F(acc); }
  auto *then = dyn_cast<CompoundStmt>(guard->getThen());
  if (!then || then->size() != 3)
    return std::string(shape) + ": the bounds check must hold exactly the accumulator, the loop "
                                "and the store";
  auto *accDecl = dyn_cast<DeclStmt>(then->body_front());
  auto *loop = dyn_cast<ForStmt>(*(then->body_begin() + 1));
  auto *store = dyn_cast<BinaryOperator>(then->body_back());
  const VarDecl *acc =
      accDecl && accDecl->isSingleDecl() ? dyn_cast<VarDecl>(accDecl->getSingleDecl()) : nullptr;
  if (!acc || !acc->hasInit() || !loop || !store || store->getOpcode() != BO_Assign)
    return shape;
  {
    Expr::EvalResult r;
    if (!acc->getInit()->EvaluateAsRValue(r, ast) ||
        !((r.Val.isFloat() && r.Val.getFloat().isZero()) || (r.Val.isInt() && r.Val.getInt() == 0)))
      return std::string(shape) + ": the accumulator must start at zero";
  }
  p.type = acc->getType().getCanonicalType().getAsString();
  if (p.type != "float" && p.type != "double")
    return "the element type is " + p.type + " (cuBLAS: float or double)";
  auto *init = dyn_cast_or_null<DeclStmt>(loop->getInit());
  const VarDecl *kv =
      init && init->isSingleDecl() ? dyn_cast<VarDecl>(init->getSingleDecl()) : nullptr;
  Expr::EvalResult z;
  if (!kv || !kv->hasInit() || !kv->getInit()->EvaluateAsInt(z, ast) || z.Val.getInt() != 0)
    return std::string(shape) + ": the loop must start at 0";
  auto *cond = dyn_cast_or_null<BinaryOperator>(loop->getCond());
  auto *inc = dyn_cast_or_null<UnaryOperator>(loop->getInc());
  if (!cond || cond->getOpcode() != BO_LT || varOf(cond->getLHS()) != kv || !inc ||
      !inc->isIncrementOp() || varOf(inc->getSubExpr()) != kv)
    return std::string(shape) + ": the loop must be 'for (int k = 0; k < K; ++k)'";
  p.k = paramOf(cond->getRHS());
  if (!p.k || !p.k->getType()->isIntegerType())
    return "the loop bound must be an integer parameter of the kernel";
  const Stmt *lb = loop->getBody();
  if (auto *cs = dyn_cast<CompoundStmt>(lb); cs && cs->size() == 1)
    lb = cs->body_front();
  auto *add = dyn_cast<CompoundAssignOperator>(lb);
  auto *mul = add ? dyn_cast<BinaryOperator>(add->getRHS()->IgnoreParenImpCasts()) : nullptr;
  if (!add || add->getOpcode() != BO_AddAssign || varOf(add->getLHS()) != acc || !mul ||
      mul->getOpcode() != BO_Mul)
    return std::string(shape) + ": the loop body must be 'acc += X[..] * Y[..]'";
  auto *x = dyn_cast<ArraySubscriptExpr>(mul->getLHS()->IgnoreParenImpCasts());
  auto *y = dyn_cast<ArraySubscriptExpr>(mul->getRHS()->IgnoreParenImpCasts());
  auto *out = dyn_cast<ArraySubscriptExpr>(store->getLHS()->IgnoreParenImpCasts());
  if (!x || !y || !out)
    return std::string(shape) + ": the operands and the output must be array elements";
  for (const ArraySubscriptExpr *a : {x, y, out})
    if (hasMemoryAccess(a->getIdx()))
      return "an index reads memory, calls a function or assigns";
  // The store: acc, alpha * acc, acc * alpha, alpha * acc + beta * C[same].
  const Expr *rhs = store->getRHS()->IgnoreParenImpCasts();
  const ArraySubscriptExpr *outRead = nullptr; // C[..] in beta * C[..]
  auto scaled = [&](const Expr *e, const Expr *&factor, auto isValue) {
    e = e->IgnoreParenImpCasts();
    if (isValue(e)) {
      factor = nullptr;
      return true;
    }
    auto *m = dyn_cast<BinaryOperator>(e);
    if (!m || m->getOpcode() != BO_Mul)
      return false;
    if (isValue(m->getRHS()->IgnoreParenImpCasts()) && isScalarFactor(m->getLHS()))
      factor = m->getLHS()->IgnoreParenImpCasts();
    else if (isValue(m->getLHS()->IgnoreParenImpCasts()) && isScalarFactor(m->getRHS()))
      factor = m->getRHS()->IgnoreParenImpCasts();
    else
      return false;
    return true;
  };
  auto isAcc = [&](const Expr *e) { return varOf(e) == acc; };
  auto isOut = [&](const Expr *e) {
    auto *a = dyn_cast<ArraySubscriptExpr>(e);
    if (a)
      outRead = a;
    return a != nullptr;
  };
  const Expr *alpha = nullptr, *beta = nullptr;
  bool hasBeta = false;
  if (!scaled(rhs, alpha, isAcc)) {
    auto *sum = dyn_cast<BinaryOperator>(rhs);
    if (!sum || sum->getOpcode() != BO_Add || !scaled(sum->getLHS(), alpha, isAcc) ||
        !scaled(sum->getRHS(), beta, isOut) || !beta)
      return std::string(shape) + ": the store must be 'C[..] = acc', 'alpha * acc' or "
                                  "'alpha * acc + beta * C[..]'";
    hasBeta = true;
  }
  p.alpha = alpha;
  p.beta = beta;
  // 3. The arrays: distinct pointer parameters of the element type.
  auto pointerParam = [&](const ArraySubscriptExpr *a) -> const ParmVarDecl * {
    const ParmVarDecl *pv = paramOf(a->getBase());
    if (!pv || !pv->getType()->isPointerType() ||
        pv->getType()->getPointeeType().getUnqualifiedType().getCanonicalType().getAsString() !=
            p.type)
      return nullptr;
    return pv;
  };
  if (outRead && hasMemoryAccess(outRead->getIdx()))
    return "an index reads memory, calls a function or assigns";
  const ParmVarDecl *px = pointerParam(x), *py = pointerParam(y), *pc = pointerParam(out);
  if (!px || !py || !pc || (outRead && pointerParam(outRead) != pc))
    return "the operands and the output must be pointer parameters of element type " + p.type;
  if (px == pc || py == pc)
    return "the output is also an operand";
  p.c = pc;
  // 4. The model saw exactly these global accesses (nothing else is read or written).
  if (km.accesses.size() != (hasBeta ? 4u : 3u) || km.loops.size() != 1)
    return "the kernel has other global accesses or loops than the product's";
  const MemAccess *ax = accessAt(ctx, km, x, AccessKind::Read);
  const MemAccess *ay = accessAt(ctx, km, y, AccessKind::Read);
  const MemAccess *ac = accessAt(ctx, km, out, AccessKind::Write);
  const MemAccess *acr = outRead ? accessAt(ctx, km, outRead, AccessKind::Read) : nullptr;
  if (!ax || !ay || !ac || (outRead && !acr))
    return "the analysis does not see the product's accesses";
  // 5. The bounds check: `gY < M && gX < N` (GEMM) or `gX < M` (GEMV).
  IndexSpace space(ctx.mlir);
  auto gx = space.parse("blockIdx.x * blockDim.x + threadIdx.x");
  auto gy = space.parse("blockIdx.y * blockDim.y + threadIdx.y");
  std::string loopVar = "$k" + std::to_string(km.loops[0].id);
  const ParmVarDecl *boundX = nullptr, *boundY = nullptr;
  for (const Guard &g : ac->guards) {
    auto lhs = g.op == GuardOp::LT ? space.parse(g.lhs) : std::nullopt;
    const ParmVarDecl *bound = g.op == GuardOp::LT ? integerParam(fd, g.rhs) : nullptr;
    if (!lhs || !bound)
      return "bound check '" + g.str() + "' is not 'global id < parameter'";
    if (sameFunction(*lhs, *gx, space) && !boundX)
      boundX = bound;
    else if (sameFunction(*lhs, *gy, space) && !boundY)
      boundY = bound;
    else
      return "bound check '" + g.str() + "' is not on the global x or y thread id";
  }
  auto parsed = [&](const MemAccess *m) { return space.parse(m->normalized); };
  auto is = [&](const MemAccess *m, const std::string &text) {
    auto e = parsed(m);
    auto f = space.parse(text);
    return e && f && !usesOpaque(*e, space) && sameFunction(*e, *f, space);
  };
  std::string gX = "(blockIdx.x * blockDim.x + threadIdx.x)";
  std::string gY = "(blockIdx.y * blockDim.y + threadIdx.y)";
  std::string K = p.k->getName().str();
  if (ac->guards.size() != size_t(conditions))
    return "the bounds check has conditions that do not bound a thread id";
  if (boundX && boundY && ac->guards.size() == 2) {
    // GEMM: C[gY * N + gX]; A[gY * K + k] or A[k * M + gY]; B[k * N + gX] or B[gX * K + k].
    std::string M = boundY->getName().str(), N = boundX->getName().str();
    p.m = boundY, p.n = boundX;
    if (!is(ac, gY + " * " + N + " + " + gX) || (acr && !is(acr, gY + " * " + N + " + " + gX)))
      return "the output index is not 'row * " + N + " + col'";
    auto asA = [&](const MemAccess *m, bool &trans) {
      if (is(m, gY + " * " + K + " + " + loopVar))
        return trans = false, true;
      if (is(m, loopVar + " * " + M + " + " + gY))
        return trans = true, true;
      return false;
    };
    auto asB = [&](const MemAccess *m, bool &trans) {
      if (is(m, loopVar + " * " + N + " + " + gX))
        return trans = false, true;
      if (is(m, gX + " * " + K + " + " + loopVar))
        return trans = true, true;
      return false;
    };
    if (asA(ax, p.transA) && asB(ay, p.transB))
      p.a = px, p.b = py;
    else if (asA(ay, p.transA) && asB(ax, p.transB))
      p.a = py, p.b = px;
    else
      return "the operand indices are not those of a row-major product (A[row * K + k] or "
             "A[k * M + row], B[k * N + col] or B[col * K + k])";
    return "";
  }
  if (boundX && !boundY && ac->guards.size() == 1) {
    // GEMV: y[gX]; A[gX * K + k] or A[k * M + gX]; x[k].
    std::string M = boundX->getName().str();
    p.gemv = true;
    p.m = boundX;
    if (!is(ac, gX) || (acr && !is(acr, gX)))
      return "the output index is not the global thread id";
    auto asA = [&](const MemAccess *m, bool &trans) {
      if (is(m, gX + " * " + K + " + " + loopVar))
        return trans = false, true;
      if (is(m, loopVar + " * " + M + " + " + gX))
        return trans = true, true;
      return false;
    };
    if (asA(ax, p.transA) && is(ay, loopVar))
      p.a = px, p.b = py;
    else if (asA(ay, p.transA) && is(ax, loopVar))
      p.a = py, p.b = px;
    else
      return "the operand indices are not those of a row-major matrix-vector product "
             "(A[r * K + k] or A[k * M + r], x[k])";
    return "";
  }
  return "the bounds check must be 'row < M && col < N' (GEMM) or 'r < M' (GEMV) on global "
         "thread ids";
}

/// A recognized atomic sum: `if (gX < n) atomicAdd(out, f(x[gX]))`.
struct Sum {
  const ParmVarDecl *x = nullptr, *out = nullptr, *n = nullptr;
  std::string outType;
  std::string transform; ///< Cudal1AsOut or Cudal1Square
  long long tree = 0;    ///< block tree reduction: its shared array's size
};

std::string stripped(ASTContext &ast, const Expr *e);

/// The block tree reduction with one atomic per block (l1_sum_atomic):
///   __shared__ T cache[S]; [int tid = threadIdx.x;] int i = GLOBAL-ID;
///   cache[tid] = (i < n) ? x[i] : 0; __syncthreads();
///   for (int s = blockDim.x / 2; s > 0; s /= 2 | s >>= 1) {
///     if (tid < s) cache[tid] += cache[tid + s]; __syncthreads(); }
///   if (tid == 0) atomicAdd(out, cache[0]);
/// compared statement by statement as text (spaces and parentheses aside),
/// with x read at the global id by the analysis. The block size is checked
/// at the launch (a power of two, at most S).
std::string matchTreeSum(TransformContext &ctx, unsigned kernel, Sum &p) {
  ASTContext &ast = ctx.unit.ast();
  const FunctionDecl *fd = ctx.unit.kernelDecl(kernel);
  const Kernel &km = ctx.model().kernels[kernel];
  const char *shape = "not a GEMM/GEMV, an atomic sum or the block tree sum with one atomicAdd "
                      "per block";
  auto *body = dyn_cast_or_null<CompoundStmt>(fd->getBody());
  if (!body || km.atomics.size() != 1 || km.loops.size() != 1 || km.shared.size() != 1)
    return shape;
  std::vector<const Stmt *> st(body->body_begin(), body->body_end());
  if (st.size() != 6 && st.size() != 7)
    return shape;
  auto text = [&](const Stmt *x) { return isa<Expr>(x) ? stripped(ast, cast<Expr>(x)) : ""; };
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
  p.outType = arr->getElementType().getUnqualifiedType().getCanonicalType().getAsString();
  // 2. tid and i.
  size_t at = 1;
  std::string tid = "threadIdx.x";
  if (st.size() == 7) {
    const VarDecl *t = declOf(st[at++]);
    if (!t || !t->getType()->isIntegerType() || !t->hasInit() ||
        stripped(ast, t->getInit()) != "threadIdx.x")
      return shape;
    tid = t->getName().str();
  }
  const VarDecl *i = declOf(st[at++]);
  if (!i || !i->getType()->isIntegerType() || !i->hasInit())
    return shape;
  std::string gid = stripped(ast, i->getInit());
  if (gid != "blockIdx.x*blockDim.x+threadIdx.x" && gid != "threadIdx.x+blockIdx.x*blockDim.x" &&
      gid != "blockDim.x*blockIdx.x+threadIdx.x")
    return shape;
  std::string c = cache->getName().str(), iv = i->getName().str();
  // 3. The load: cache[tid] = (i < n) ? x[i] : 0.
  auto *load = dyn_cast<BinaryOperator>(st[at++]);
  auto *cond =
      load ? dyn_cast<ConditionalOperator>(load->getRHS()->IgnoreParenImpCasts()) : nullptr;
  if (!load || load->getOpcode() != BO_Assign || !cond ||
      text(load->getLHS()) != c + "[" + tid + "]")
    return shape;
  auto *lt = dyn_cast<BinaryOperator>(cond->getCond()->IgnoreParenImpCasts());
  auto *xi = dyn_cast<ArraySubscriptExpr>(cond->getTrueExpr()->IgnoreParenImpCasts());
  Expr::EvalResult zero;
  if (!lt || lt->getOpcode() != BO_LT || text(lt->getLHS()) != iv || !xi ||
      text(xi->getIdx()) != iv || !cond->getFalseExpr()->EvaluateAsRValue(zero, ast) ||
      !((zero.Val.isFloat() && zero.Val.getFloat().isZero()) ||
        (zero.Val.isInt() && zero.Val.getInt() == 0)))
    return shape;
  p.n = paramOf(lt->getRHS());
  p.x = paramOf(xi->getBase());
  if (!p.n || !p.n->getType()->isIntegerType() || !p.x || !p.x->getType()->isPointerType())
    return shape;
  // 4. __syncthreads(); the loop; the atomic.
  auto isBarrier = [&](const Stmt *x) {
    auto *ce = dyn_cast<CallExpr>(x);
    return ce && calleeName(ce) == "__syncthreads" && ce->getNumArgs() == 0;
  };
  if (!isBarrier(st[at++]))
    return shape;
  auto *loop = dyn_cast<ForStmt>(st[at++]);
  const VarDecl *sv = loop && loop->getInit() ? declOf(loop->getInit()) : nullptr;
  auto *lb = loop ? dyn_cast<CompoundStmt>(loop->getBody()) : nullptr;
  if (!sv || !sv->hasInit() || stripped(ast, sv->getInit()) != "blockDim.x/2" || !loop->getCond() ||
      text(loop->getCond()) != sv->getName().str() + ">0" || !loop->getInc() || !lb ||
      lb->size() != 2)
    return shape;
  std::string sn = sv->getName().str(), inc = text(loop->getInc());
  if (inc != sn + "/=2" && inc != sn + ">>=1")
    return shape;
  auto *add = dyn_cast<IfStmt>(lb->body_front());
  if (!add || add->getElse() || text(add->getCond()) != tid + "<" + sn ||
      !isa<Expr>(add->getThen()) ||
      text(cast<Expr>(add->getThen())) != c + "[" + tid + "]+=" + c + "[" + tid + "+" + sn + "]" ||
      !isBarrier(lb->body_back()))
    return shape;
  auto *fin = dyn_cast<IfStmt>(st[at++]);
  auto *call = fin && !fin->getElse() ? dyn_cast<CallExpr>(fin->getThen()) : nullptr;
  if (!fin || text(fin->getCond()) != tid + "==0" || !call || calleeName(call) != "atomicAdd" ||
      call->getNumArgs() != 2 || text(call->getArg(1)) != c + "[0]")
    return shape;
  p.out = paramOf(call->getArg(0));
  if (!p.out || !p.out->getType()->isPointerType() ||
      p.out->getType()->getPointeeType().getUnqualifiedType().getCanonicalType().getAsString() !=
          p.outType)
    return "the block sum's shared array and target have different types";
  if (p.out == p.x)
    return "the sum's input is also its target";
  // 5. The analysis reads x at the global id.
  IndexSpace space(ctx.mlir);
  auto gx = space.parse("blockIdx.x * blockDim.x + threadIdx.x");
  for (const MemAccess &m : km.accesses)
    if (m.param == p.x->getName()) {
      auto e = space.parse(m.normalized);
      if (!e || !sameFunction(*e, *gx, space))
        return "the summand does not read x at the global thread id";
    } else if (m.param != p.out->getName() || !m.atomic) {
      return "the kernel has other global accesses than the sum's";
    }
  p.transform = "Cudal1AsOut";
  return "";
}

std::string matchSum(TransformContext &ctx, unsigned kernel, Sum &p) {
  const FunctionDecl *fd = ctx.unit.kernelDecl(kernel);
  const Kernel &km = ctx.model().kernels[kernel];
  const char *shape = "not a GEMM/GEMV or the canonical atomic sum 'int i = blockIdx.x * "
                      "blockDim.x + threadIdx.x; if (i < n) atomicAdd(out, x[i]);'";
  auto *body = dyn_cast_or_null<CompoundStmt>(fd->getBody());
  if (!body || body->body_empty())
    return shape;
  if (!km.barriers.empty() || !km.shared.empty() || !km.loops.empty() || km.atomics.size() != 1 ||
      usesWarpIntrinsics(fd))
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
  if (!call || calleeName(call) != "atomicAdd" || call->getNumArgs() != 2)
    return shape;
  p.out = paramOf(call->getArg(0));
  if (!p.out || !p.out->getType()->isPointerType())
    return "the atomic sum's target must be a pointer parameter";
  p.outType =
      p.out->getType()->getPointeeType().getUnqualifiedType().getCanonicalType().getAsString();
  // f(x[i]): x[i], (T)x[i] or x[i] * x[i].
  const Expr *v = call->getArg(1)->IgnoreParenImpCasts();
  p.transform = "Cudal1AsOut";
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
    p.transform = "Cudal1Square";
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
  IndexSpace space(ctx.mlir);
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
    const ParmVarDecl *b = g.op == GuardOp::LT ? integerParam(fd, g.rhs) : nullptr;
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

/// The value of a compile-time integer: a literal, a const variable, or a
/// component of a dim3 variable initialised with constants (`block.x`).
std::optional<int64_t> constValue(ASTContext &ast, const Expr *e) {
  e = e->IgnoreParenImpCasts();
  Expr::EvalResult r;
  if (e->EvaluateAsInt(r, ast))
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

/// Whether every use of `v` in `fd` after its declaration only reads it:
/// the proof that the grid covers the outputs compares the grid's
/// initializer with the launch's arguments as text, which holds only when
/// neither variable changes in between. Conservative: a use that is not
/// loaded as a value (member reads of a dim3 included) or copied into a
/// dim3 counts as a change.
bool onlyRead(ASTContext &ast, const FunctionDecl *fd, const VarDecl *v) {
  bool ok = true;
  forEachStmt(fd->getBody(), [&](const Stmt *s) {
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
          return; // read
        at = p;
        continue;
      }
      if (auto *ce = dyn_cast<CXXConstructExpr>(p); ce && ce->getConstructor()->isCopyConstructor())
        return; // copied (dim3 by value)
      ok = false;
      return;
    }
  });
  return ok;
}

/// The variables an expression reads, or false when it calls a function or
/// reads memory (its value could change without a variable changing).
bool plainVariables(const Expr *e, std::vector<const VarDecl *> &out) {
  if (hasMemoryAccess(e))
    return false;
  forEachStmt(e, [&](const Stmt *s) {
    if (auto *dre = dyn_cast<DeclRefExpr>(s))
      if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()))
        out.push_back(vd);
  });
  return true;
}

/// Component `d` of a dim3 configuration argument, as written.
const Expr *dimComponent(const Expr *cfg, unsigned d) {
  const Expr *s = cfg->IgnoreUnlessSpelledInSource();
  if (auto *dre = dyn_cast<DeclRefExpr>(s))
    if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()); vd && vd->hasInit())
      s = vd->getInit()->IgnoreUnlessSpelledInSource();
  if (auto *ce = dyn_cast<CXXConstructExpr>(s)) {
    if (d < ce->getNumArgs() && !isa<CXXDefaultArgExpr>(ce->getArg(d)))
      return ce->getArg(d);
    return nullptr; // defaulted: 1
  }
  return d == 0 ? s : nullptr;
}

std::string stripped(ASTContext &ast, const Expr *e) {
  std::string s = spelled(ast, e->IgnoreParenImpCasts());
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '(' && c != ')')
      out += c;
  return out;
}

/// Whether grid component `d` times block component `d` covers `bound`:
/// the grid is `(X + b - 1) / b` (or `(X + (b - 1)) / b`) with b the block's
/// size in d and X the launch argument bound to the kernel's bound.
std::string covers(TransformContext &ctx, unsigned launch, unsigned d, const Expr *bound) {
  ASTContext &ast = ctx.unit.ast();
  const char *dn[] = {"x", "y", "z"};
  std::string why = std::string("cannot prove the grid covers every output in ") + dn[d] +
                    " (expected grid." + dn[d] + " = (" + spelled(ast, bound) + " + b - 1) / b " +
                    "with b the block's constant size)";
  const Expr *blockArg = launchConfigArg(ctx, launch, 1);
  const Expr *gridArg = launchConfigArg(ctx, launch, 0);
  if (!blockArg || !gridArg)
    return why;
  const Expr *bc = dimComponent(blockArg, d);
  std::optional<int64_t> b = bc ? constValue(ast, bc) : std::optional<int64_t>(1);
  const Expr *gc = dimComponent(gridArg, d);
  if (!b || !gc)
    return why;
  auto *div = dyn_cast<BinaryOperator>(gc->IgnoreParenImpCasts());
  if (!div || div->getOpcode() != BO_Div || constValue(ast, div->getRHS()) != b)
    return why;
  // Numerator: X + c with c == b - 1, or (X + c1) - c2 with c1 - c2 == b - 1.
  auto *num = dyn_cast<BinaryOperator>(div->getLHS()->IgnoreParenImpCasts());
  const Expr *x = nullptr;
  if (num && num->getOpcode() == BO_Add && constValue(ast, num->getRHS()) == *b - 1) {
    x = num->getLHS();
  } else if (num && num->getOpcode() == BO_Sub) {
    auto *inner = dyn_cast<BinaryOperator>(num->getLHS()->IgnoreParenImpCasts());
    auto c2 = constValue(ast, num->getRHS());
    auto c1 =
        inner && inner->getOpcode() == BO_Add ? constValue(ast, inner->getRHS()) : std::nullopt;
    if (c1 && c2 && *c1 - *c2 == *b - 1)
      x = inner->getLHS();
  }
  if (!x || stripped(ast, x) != stripped(ast, bound))
    return why;
  // The variables compared as text (and the dim3 variables read) keep their
  // values from the grid's computation to the launch.
  std::vector<const VarDecl *> vars;
  if (!plainVariables(bound, vars) || !plainVariables(x, vars))
    return why + "; the bound calls a function or reads memory";
  for (const Expr *cfg : {gridArg, blockArg})
    if (auto *dre = dyn_cast<DeclRefExpr>(cfg->IgnoreUnlessSpelledInSource()))
      if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()))
        vars.push_back(vd);
  forEachStmt(div->getRHS(), [&](const Stmt *s) {
    if (auto *dre = dyn_cast<DeclRefExpr>(s))
      if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()))
        vars.push_back(vd);
  });
  const FunctionDecl *fd = ctx.unit.launchFunction(launch);
  for (const VarDecl *v : vars)
    if (v->isLocalVarDeclOrParm() && !onlyRead(ast, fd, v))
      return why + "; '" + v->getName().str() + "' changes in the function";
    else if (!v->isLocalVarDeclOrParm() && !v->getType().isConstQualified())
      return why + "; '" + v->getName().str() + "' is a global variable";
  return "";
}

/// The launch argument bound to a kernel parameter.
const Expr *argFor(const CUDAKernelCallExpr *kc, const ParmVarDecl *p) {
  return p->getFunctionScopeIndex() < kc->getNumArgs() ? kc->getArg(p->getFunctionScopeIndex())
                                                       : nullptr;
}

/// A kernel-side scalar (alpha or beta) as host text: the launch argument
/// of a parameter, or the literal; `def` when absent.
std::string scalarText(ASTContext &ast, const CUDAKernelCallExpr *kc, const Expr *e,
                       const char *def) {
  if (!e)
    return def;
  if (const ParmVarDecl *p = paramOf(e))
    return "(" + spelled(ast, argFor(kc, p)) + ")";
  return spelled(ast, e);
}

std::string launchChecks(TransformContext &ctx, unsigned launch, Product &p, Sum &sum,
                         bool &isSum) {
  isSum = false;
  ASTContext &ast = ctx.unit.ast();
  const LaunchSite &l = ctx.model().launches[launch];
  const CUDAKernelCallExpr *kc = ctx.unit.launchExpr(launch);
  const FunctionDecl *fd = ctx.unit.launchFunction(launch);
  if (fd->isTemplateInstantiation() || fd->getTemplatedKind() != FunctionDecl::TK_NonTemplate)
    return "the launch is in a function template (one edit for every instantiation)";
  if (kc->getBeginLoc().isMacroID() || kc->getEndLoc().isMacroID())
    return "the launch is written inside a macro";
  if (!isa_and_nonnull<CompoundStmt>(parentStmt(ast, kc)))
    return "the launch is not a statement of a block";
  if (l.kernelIndex < 0)
    return "the kernel is not known";
  if (std::string why = match(ctx, l.kernelIndex, p); !why.empty()) {
    // Not a product: an atomic sum? Report the product's reason unless the
    // kernel is an atomic sum of some shape.
    sum = Sum();
    std::string sumWhy = matchSum(ctx, l.kernelIndex, sum);
    if (!sumWhy.empty()) {
      const Kernel &km = ctx.model().kernels[l.kernelIndex];
      if (km.atomics.empty())
        return why;
      if (km.shared.empty())
        return sumWhy;
      sum = Sum();
      if (std::string treeWhy = matchTreeSum(ctx, l.kernelIndex, sum); !treeWhy.empty())
        return treeWhy;
    }
    isSum = true;
  }
  if (kc->getNumArgs() != kc->getDirectCallee()->getNumParams())
    return "default arguments are used";
  for (const Expr *a : kc->arguments())
    if (a->HasSideEffects(ast, /*IncludePossibleEffects=*/false))
      return "the launch's arguments have side effects";
  const CallExpr *cfg = kc->getConfig();
  for (const Expr *a : cfg->arguments())
    if (a->HasSideEffects(ast, /*IncludePossibleEffects=*/false))
      return "the launch's configuration has side effects";
  if (isSum) {
    // Each thread adds once: a grid or block with y or z > 1 adds each
    // element several times.
    for (unsigned which = 0; which < 2; ++which)
      for (unsigned d = 1; d < 3; ++d) {
        const Expr *cfgArg = launchConfigArg(ctx, launch, which);
        const Expr *c = cfgArg ? dimComponent(cfgArg, d) : nullptr;
        if (c && constValue(ast, c) != 1)
          return "the launch's grid or block is not one-dimensional";
      }
    if (sum.tree) {
      // The tree adds blockDim.x values exactly when it is a power of two
      // no larger than the shared array.
      const Expr *b = launchConfigArg(ctx, launch, 1);
      const Expr *bx = b ? dimComponent(b, 0) : nullptr;
      std::optional<int64_t> v = bx ? constValue(ast, bx) : std::nullopt;
      if (!v || *v <= 0 || (*v & (*v - 1)) || *v > sum.tree)
        return "the block tree sum needs a constant block size that is a power of two no larger "
               "than its shared array (" +
               std::to_string(sum.tree) + ")";
    }
    const VarDecl *ov = pointerBaseVar(argFor(kc, sum.out));
    if (!ov || ov == pointerBaseVar(argFor(kc, sum.x)))
      return "the sum's target argument is not a variable distinct from its input";
    return covers(ctx, launch, 0, argFor(kc, sum.n));
  }
  // The output must not be an operand under another name we can see.
  const VarDecl *cv = pointerBaseVar(argFor(kc, p.c));
  if (!cv || cv == pointerBaseVar(argFor(kc, p.a)) || cv == pointerBaseVar(argFor(kc, p.b)))
    return "the output argument is not a variable distinct from the operands";
  if (p.gemv)
    return covers(ctx, launch, 0, argFor(kc, p.m));
  if (std::string why = covers(ctx, launch, 0, argFor(kc, p.n)); !why.empty())
    return why;
  return covers(ctx, launch, 1, argFor(kc, p.m));
}

/// Replaces the launch expression by `call` and puts `note` after its ';'.
void replaceLaunch(ASTContext &ast, Rewriter &rw, const CUDAKernelCallExpr *kc,
                   const std::string &call, const std::string &note) {
  CharSourceRange r = statementRange(ast, kc);
  rw.ReplaceText(r, call);
  SourceLocation semi = Lexer::findLocationAfterToken(r.getEnd().getLocWithOffset(-1), tok::semi,
                                                      ast.getSourceManager(), ast.getLangOpts(),
                                                      /*SkipTrailingWhitespaceAndNewLine=*/false);
  if (semi.isValid())
    rw.InsertTextAfter(semi, note);
}

} // namespace

std::string Library::legality(TransformContext &ctx, Target t) const {
  Product p;
  Sum sum;
  bool isSum;
  return launchChecks(ctx, t.launch, p, sum, isSum);
}

llvm::Error Library::apply(TransformContext &ctx, Target t, const PlanStep &) const {
  ASTContext &ast = ctx.unit.ast();
  const LaunchSite &l = ctx.model().launches[t.launch];
  const CUDAKernelCallExpr *kc = ctx.unit.launchExpr(t.launch);
  Product p;
  Sum sum;
  bool isSum;
  launchChecks(ctx, t.launch, p, sum, isSum);
  auto arg = [&](const ParmVarDecl *pv) { return spelled(ast, argFor(kc, pv)); };
  std::string stream = l.stream.empty() ? "0" : l.stream;
  std::string was =
      " /* cudal1 library: was " + kc->getDirectCallee()->getNameAsString() + "<<<...>>> */";
  if (isSum) {
    ctx.insertHelperBefore(ctx.unit.launchFunction(t.launch), "Cudal1CubScratch", runtime::cubSum);
    std::string var = freshName(ctx, "cudal1Cub");
    std::string indent = indentAt(ast, kc->getBeginLoc());
    replaceLaunch(ast, ctx.rewriter, kc,
                  "static Cudal1CubScratch " + var + ";  // cudal1 library\n" + indent +
                      "cudal1SumInto(" + var + ", " + arg(sum.x) + ", " + arg(sum.n) + ", " +
                      arg(sum.out) + ", " + sum.transform + "<" + sum.outType + ">(), " + stream +
                      ")",
                  was);
    return llvm::Error::success();
  }
  ctx.insertHelperBefore(ctx.unit.launchFunction(t.launch), "Cudal1Cublas", runtime::cublas);
  std::string type = p.type;
  std::string alpha = "(" + type + ")" + scalarText(ast, kc, p.alpha, "1");
  std::string beta = "(" + type + ")" + scalarText(ast, kc, p.beta, "0");
  std::string call;
  if (p.gemv)
    call = "cudal1Gemv(" + std::string(p.transA ? "true" : "false") + ", " + arg(p.m) + ", " +
           arg(p.k) + ", " + alpha + ", " + arg(p.a) + ", " + arg(p.b) + ", " + beta + ", " +
           arg(p.c) + ", " + stream + ")";
  else
    call = "cudal1Gemm(" + std::string(p.transA ? "true" : "false") + ", " +
           (p.transB ? "true" : "false") + ", " + arg(p.m) + ", " + arg(p.n) + ", " + arg(p.k) +
           ", " + alpha + ", " + arg(p.a) + ", " + arg(p.b) + ", " + beta + ", " + arg(p.c) + ", " +
           stream + ")";
  replaceLaunch(ast, ctx.rewriter, kc, call, was);
  return llvm::Error::success();
}
