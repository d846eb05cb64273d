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

#include <optional>

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

/// A recognized sum (Idioms.h) and the CUB transform that computes it.
struct Sum {
  const ParmVarDecl *x = nullptr, *out = nullptr, *n = nullptr;
  std::string outType;
  std::string transform; ///< Cudal1AsOut or Cudal1Square
  long long tree = 0;    ///< block tree reduction: its shared array's size
};

std::string fromIdiom(const std::string &why, const SumIdiom &s, Sum &p) {
  if (why.empty()) {
    p.x = s.x, p.out = s.out, p.n = s.n, p.outType = s.outType, p.tree = s.tree;
    p.transform = s.square ? "Cudal1Square" : "Cudal1AsOut";
  }
  return why;
}

std::string matchTreeSum(TransformContext &ctx, unsigned kernel, Sum &p) {
  SumIdiom s;
  return fromIdiom(recognizeTreeSum(ctx.unit, kernel, ctx.mlir, s), s, p);
}

std::string matchSum(TransformContext &ctx, unsigned kernel, Sum &p) {
  SumIdiom s;
  return fromIdiom(recognizeAtomicSum(ctx.unit, kernel, ctx.mlir, s), s, p);
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
  if (std::string why = writtenByMacro(ast, kc, "the launch"); !why.empty())
    return why;
  // A braceless body is fine: the sum's two statements get braces.
  if (std::string why = roomAround(ast, kc, "the launch"); !why.empty())
    return why;
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

/// Where the cuBLAS handle of a call is made (docs/passes/library.md
/// "Handle").
enum class Handle { Static, Local, Setup };

std::optional<Handle> parseHandle(llvm::StringRef v) {
  return llvm::StringSwitch<std::optional<Handle>>(v)
      .Case("static", Handle::Static)
      .Case("local", Handle::Local)
      .Case("setup", Handle::Setup)
      .Default(std::nullopt);
}

// The program's handle objects, after passes/runtime/cublas.cuh (each its
// own guard: a plan's steps may mix them).
const char *staticHandle = "#ifndef CUDAL1_CUBLAS_STATIC\n"
                           "#define CUDAL1_CUBLAS_STATIC\n"
                           "static Cudal1Cublas cudal1Cublas; // cudal1 library: made before main\n"
                           "#endif\n";
const char *setupHandle =
    "#ifndef CUDAL1_CUBLAS_SETUP\n"
    "#define CUDAL1_CUBLAS_SETUP\n"
    "static Cudal1CublasSetup cudal1CublasSetup; // cudal1 library: cuBLAS set up before main\n"
    "#endif\n";

} // namespace

std::string Library::checkParams(TransformContext &ctx, Target t, const PlanStep &step) const {
  for (const auto &[key, value] : step.params) {
    if (key != "handle")
      return "unknown parameter '" + key + "'";
    std::optional<Handle> h = parseHandle(value);
    if (!h)
      return "parameter handle=" + value + " is not one of {static, local, setup}";
    Product p;
    Sum sum;
    bool isSum;
    if (launchChecks(ctx, t.launch, p, sum, isSum).empty() && isSum && *h != Handle::Static)
      return "handle=" + value + ": the launch becomes a CUB sum, which has no cuBLAS handle";
  }
  return "";
}

std::string Library::legality(TransformContext &ctx, Target t) const {
  Product p;
  Sum sum;
  bool isSum;
  return launchChecks(ctx, t.launch, p, sum, isSum);
}

llvm::Error Library::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
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
    makeRoomAround(ctx, kc);
    replaceLaunch(ast, ctx.rewriter, kc,
                  "static Cudal1CubScratch " + var + ";  // cudal1 library\n" + indent +
                      "cudal1SumInto(" + var + ", " + arg(sum.x) + ", " + arg(sum.n) + ", " +
                      arg(sum.out) + ", " + sum.transform + "<" + sum.outType + ">(), " + stream +
                      ")",
                  was);
    return llvm::Error::success();
  }
  Handle handle = Handle::Static;
  if (std::optional<std::string> v = step.param("handle"))
    handle = *parseHandle(*v);
  // InsertTextBefore puts later text first: the handle's object, then the
  // helper above it.
  const FunctionDecl *fd = ctx.unit.launchFunction(t.launch);
  std::string var = "cudal1Cublas", local;
  if (handle == Handle::Static)
    ctx.insertHelperBefore(fd, "Cudal1CublasStatic", staticHandle);
  if (handle == Handle::Setup) {
    ctx.insertHelperBefore(fd, "Cudal1CublasSetup", setupHandle);
    var = "cudal1CublasSetup";
  }
  ctx.insertHelperBefore(fd, "Cudal1Cublas", runtime::cublas);
  if (handle == Handle::Local) {
    // Made where the call is, at its first execution, once.
    var = freshName(ctx, "cudal1Blas");
    makeRoomAround(ctx, kc);
    local = "static Cudal1Cublas " + var + "; // cudal1 library: handle made at the first call\n" +
            indentAt(ast, kc->getBeginLoc());
  }
  std::string type = p.type;
  std::string alpha = "(" + type + ")" + scalarText(ast, kc, p.alpha);
  std::string beta = "(" + type + ")" + scalarText(ast, kc, p.beta);
  std::string call;
  if (p.gemv)
    call = local + "cudal1Gemv(" + var + ", " + std::string(p.transA ? "true" : "false") + ", " +
           arg(p.m) + ", " + arg(p.k) + ", " + alpha + ", " + arg(p.a) + ", " + arg(p.b) + ", " +
           beta + ", " + arg(p.c) + ", " + stream + ")";
  else
    call = local + "cudal1Gemm(" + var + ", " + std::string(p.transA ? "true" : "false") + ", " +
           (p.transB ? "true" : "false") + ", " + arg(p.m) + ", " + arg(p.n) + ", " + arg(p.k) +
           ", " + alpha + ", " + arg(p.a) + ", " + arg(p.b) + ", " + beta + ", " + arg(p.c) + ", " +
           stream + ")";
  replaceLaunch(ast, ctx.rewriter, kc, call, was);
  return llvm::Error::success();
}
