// library: the launch of a recognized matrix product kernel becomes a cuBLAS
// call. The kernel must compute exactly a GEMM or GEMV, one thread per
// output (recognizeGemm, lib/Analysis/Idioms: a local accumulator or the
// output accumulated in place, any scaling, names, operand order,
// transposition and 2-D or 1-D mapping), with dense operands, and the
// launch's grid must cover every output (gridCovers). Row-major
// C = op(A) op(B) is computed as column-major C^T = op(B)^T op(A)^T.
#include "Library.h"
#include "cudal1/Analysis/AffineIndex.h"
#include "cudal1/Analysis/Idioms.h"
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
  GemmScalar alpha, beta;                                     ///< in the kernel
  bool oneD = false;                 ///< one thread per output along x: idx / N, idx % N
  unsigned rowAxis = 1, colAxis = 0; ///< the grid dimensions of rows and columns
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

/// Finds the product in kernel `kernel` (Idioms.h) and checks what cuBLAS
/// needs of it, or says why it is not one.
std::string match(TransformContext &ctx, unsigned kernel, Product &p) {
  GemmIdiom g;
  if (std::string why = recognizeGemm(ctx.unit, kernel, ctx.mlir, g); !why.empty())
    return why;
  p.type = g.elementType;
  if (p.type != "float" && p.type != "double")
    return "the element type is " + p.type + " (cuBLAS: float or double)";
  p.gemv = g.matrixVector;
  p.a = g.a.param;
  p.b = g.b.param;
  p.c = g.c;
  p.transA = g.a.transposed;
  p.transB = g.b.transposed;
  p.m = g.m;
  p.n = g.n;
  p.k = g.k;
  p.alpha = g.alpha;
  p.beta = g.beta;
  p.oneD = g.mapping == GemmIdiom::Mapping::OneD;
  p.rowAxis = g.row.axis;
  p.colAxis = g.col.axis;
  // cuBLAS reads dense matrices: each leading dimension is the extent the
  // bounds give (A is M x K or K x M, B K x N or N x K, C M x N).
  auto is = [](const SymbolicValue &v, const ParmVarDecl *pv) {
    return pv && v.name() == pv->getName().str();
  };
  if (p.gemv) {
    if (!is(g.a.ld, p.transA ? p.m : p.k))
      return "the operand indices are not those of a row-major matrix-vector product "
             "(A[r * K + k] or A[k * M + r], x[k])";
    return "";
  }
  if (!is(g.ldc, p.n))
    return "the output index is not 'row * " + p.n->getName().str() + " + col'";
  if (!is(g.a.ld, p.transA ? p.m : p.k) || !is(g.b.ld, p.transB ? p.k : p.n))
    return "the operand indices are not those of a row-major product (A[row * K + k] or "
           "A[k * M + row], B[k * N + col] or B[col * K + k])";
  return "";
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

/// The launch argument bound to a kernel parameter.
const Expr *argFor(const CUDAKernelCallExpr *kc, const ParmVarDecl *p) {
  return p->getFunctionScopeIndex() < kc->getNumArgs() ? kc->getArg(p->getFunctionScopeIndex())
                                                       : nullptr;
}

/// Whether the launch's grid covers `bound` (a product of kernel parameters)
/// threads along dimension `d` (Idioms.h, gridCovers).
std::string covers(TransformContext &ctx, unsigned launch, unsigned d,
                   std::vector<const ParmVarDecl *> bound) {
  const CUDAKernelCallExpr *kc = ctx.unit.launchExpr(launch);
  Monomial m{1, {}};
  std::string text;
  for (const ParmVarDecl *p : bound) {
    m.symbols.push_back(p->getName().str());
    const Expr *arg = argFor(kc, p);
    text += (text.empty() ? "" : " * ") + (arg ? spelled(ctx.unit.ast(), arg) : "?");
  }
  std::sort(m.symbols.begin(), m.symbols.end());
  return gridCovers(ctx.unit, launch, d, SymbolicValue{{m}}, text);
}

/// A kernel-side scalar (alpha or beta) as host text: the launch argument
/// of a parameter, or the literal; `def` when absent.
std::string scalarText(ASTContext &ast, const CUDAKernelCallExpr *kc, const GemmScalar &s) {
  const Expr *e = s.expr;
  if (!e)
    return std::to_string(s.constant);
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
    return covers(ctx, launch, 0, {sum.n});
  }
  // The output must not be an operand under another name we can see.
  const VarDecl *cv = pointerBaseVar(argFor(kc, p.c));
  if (!cv || cv == pointerBaseVar(argFor(kc, p.a)) || cv == pointerBaseVar(argFor(kc, p.b)))
    return "the output argument is not a variable distinct from the operands";
  if (p.gemv)
    return covers(ctx, launch, 0, {p.m});
  if (p.oneD)
    return covers(ctx, launch, p.colAxis, {p.m, p.n});
  // Columns first, then rows (x before y for the usual mapping).
  if (std::string why = covers(ctx, launch, p.colAxis, {p.n}); !why.empty())
    return why;
  return covers(ctx, launch, p.rowAxis, {p.m});
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
  std::string alpha = "(" + type + ")" + scalarText(ast, kc, p.alpha);
  std::string beta = "(" + type + ")" + scalarText(ast, kc, p.beta);
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
