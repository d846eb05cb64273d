// tile-shared: the naive matrix product (one thread per output, a k loop
// reading a row of A and a column of B from global memory) rewritten so that
// each block stages T x T tiles of A and B in shared memory. The k order of
// the sum is unchanged, so results are bit-identical; out-of-range tile
// elements are loaded as zero. The bounds check moves below the tiled loop,
// so every thread of the block reaches the barriers.
#include "TileShared.h"
#include "cudal1/Analysis/AffineIndex.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Rewrite/Core/Rewriter.h"

#define DEBUG_TYPE "tile-shared"

using namespace clang;
using namespace cudal1;

namespace {

/// The pieces of the recognised pattern
///   if (ROW-CHECKS && COL-CHECKS) { T acc = E0; for (int k = 0; k < K; ++k) acc += X * Y; REST }
struct DotPattern {
  const IfStmt *guard = nullptr;
  const DeclStmt *accDecl = nullptr;
  const ForStmt *loop = nullptr;
  const ArraySubscriptExpr *rowOperand = nullptr; ///< depends on y only (A)
  const ArraySubscriptExpr *colOperand = nullptr; ///< depends on x only (B)
  bool rowFirst = true;                           ///< operand order in the product
  std::vector<const Expr *> rowChecks, colChecks;
  const Expr *bound = nullptr;
  std::vector<const Stmt *> rest;
};

bool hasReturn(const Stmt *s) {
  if (!s)
    return false;
  if (isa<ReturnStmt>(s))
    return true;
  for (const Stmt *c : s->children())
    if (hasReturn(c))
      return true;
  return false;
}

void conjuncts(const Expr *e, std::vector<const Expr *> &out) {
  e = e->IgnoreParenImpCasts();
  if (auto *bo = dyn_cast<BinaryOperator>(e); bo && bo->getOpcode() == BO_LAnd) {
    conjuncts(bo->getLHS(), out);
    conjuncts(bo->getRHS(), out);
    return;
  }
  out.push_back(e);
}

/// 1 = depends on x only, 2 = on y only, 0 = on neither, -1 = z, both or unknown.
int threadAxis(const std::string &normalized, IndexSpace &space) {
  auto e = space.parse(normalized);
  if (!e || usesOpaque(*e, space))
    return -1;
  bool x = e->isFunctionOfDim(IndexSpace::ThreadX) || e->isFunctionOfDim(IndexSpace::BlockX);
  bool y = e->isFunctionOfDim(IndexSpace::ThreadY) || e->isFunctionOfDim(IndexSpace::BlockY);
  bool z = e->isFunctionOfDim(IndexSpace::ThreadZ) || e->isFunctionOfDim(IndexSpace::BlockZ);
  if (z || (x && y))
    return -1;
  return x ? 1 : y ? 2 : 0;
}

const VarDecl *varOf(const Expr *e) {
  if (auto *dre = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts()))
    return dyn_cast<VarDecl>(dre->getDecl());
  return nullptr;
}

/// Finds the pattern, or says why not.
std::string match(TransformContext &ctx, unsigned kernel, DotPattern &p) {
  const FunctionDecl *fd = ctx.unit.kernelDecl(kernel);
  const Kernel &k = ctx.model().kernels[kernel];
  auto *body = dyn_cast<CompoundStmt>(fd->getBody());
  if (!body || hasReturn(body))
    return "the kernel returns early; the tiled loop needs every thread of the block";
  if (usesWarpIntrinsics(fd) || !k.barriers.empty())
    return "the kernel already synchronizes (barriers or warp intrinsics)";
  const char *shape = "no dot-product loop 'for (k = 0; k < K; ++k) acc += A[..] * B[..]' as "
                      "the first loop inside the kernel's top-level bounds check";
  for (const Stmt *s : body->body()) {
    auto *is = dyn_cast<IfStmt>(s);
    if (!is || is->getElse() || is->getInit() || is->getConditionVariable())
      continue;
    auto *then = dyn_cast<CompoundStmt>(is->getThen());
    if (!then || then->size() < 2)
      continue;
    auto it = then->body_begin();
    auto *decl = dyn_cast<DeclStmt>(*it);
    auto *loop = dyn_cast<ForStmt>(*(it + 1));
    if (!decl || !decl->isSingleDecl() || !loop)
      continue;
    auto *acc = dyn_cast<VarDecl>(decl->getSingleDecl());
    if (!acc || !acc->hasInit() || acc->getInit()->HasSideEffects(ctx.unit.ast()))
      continue;
    // for (int k = 0; k < K; ++k)
    auto *init = dyn_cast_or_null<DeclStmt>(loop->getInit());
    const VarDecl *kv = init && init->isSingleDecl() ? dyn_cast<VarDecl>(init->getSingleDecl()) : nullptr;
    Expr::EvalResult zero;
    if (!kv || !kv->hasInit() || !kv->getInit()->EvaluateAsInt(zero, ctx.unit.ast()) ||
        zero.Val.getInt() != 0)
      continue;
    auto *cond = dyn_cast_or_null<BinaryOperator>(loop->getCond());
    if (!cond || cond->getOpcode() != BO_LT || varOf(cond->getLHS()) != kv)
      continue;
    const Expr *inc = loop->getInc();
    auto *uo = dyn_cast_or_null<UnaryOperator>(inc);
    if (!uo || !uo->isIncrementOp() || varOf(uo->getSubExpr()) != kv)
      continue;
    // acc += X * Y
    const Stmt *lb = loop->getBody();
    if (auto *cs = dyn_cast<CompoundStmt>(lb); cs && cs->size() == 1)
      lb = cs->body_front();
    auto *add = dyn_cast<CompoundAssignOperator>(lb);
    if (!add || add->getOpcode() != BO_AddAssign || varOf(add->getLHS()) != acc)
      continue;
    auto *mul = dyn_cast<BinaryOperator>(add->getRHS()->IgnoreParenImpCasts());
    if (!mul || mul->getOpcode() != BO_Mul)
      continue;
    auto *x = dyn_cast<ArraySubscriptExpr>(mul->getLHS()->IgnoreParenImpCasts());
    auto *y = dyn_cast<ArraySubscriptExpr>(mul->getRHS()->IgnoreParenImpCasts());
    if (!x || !y)
      continue;
    // The operands' thread dependence, from the model's normalized indices.
    IndexSpace space(ctx.mlir);
    const SourceManager &sm = ctx.unit.ast().getSourceManager();
    auto axisOf = [&](const ArraySubscriptExpr *a) -> int {
      unsigned line = sm.getPresumedLineNumber(sm.getFileLoc(a->getBeginLoc()));
      unsigned col = sm.getPresumedColumnNumber(sm.getFileLoc(a->getBeginLoc()));
      for (const MemAccess &m : k.accesses)
        if (m.pos.line == line && m.pos.col == col && m.kind == AccessKind::Read)
          return threadAxis(m.normalized, space);
      return -1; // not a global access through a parameter
    };
    int ax = axisOf(x), ay = axisOf(y);
    if (ax == 2 && ay == 1) {
      p.rowOperand = x, p.colOperand = y, p.rowFirst = true;
    } else if (ax == 1 && ay == 2) {
      p.rowOperand = y, p.colOperand = x, p.rowFirst = false;
    } else {
      return "the operands of the dot product must be a row (depending on y only) and a column "
             "(depending on x only) of global arrays";
    }
    // The bounds check splits into row checks and column checks.
    std::vector<const Expr *> parts;
    conjuncts(is->getCond(), parts);
    const MemAccess *rowAccess = nullptr;
    for (const MemAccess &m : k.accesses)
      if (m.pos.line == sm.getPresumedLineNumber(sm.getFileLoc(p.rowOperand->getBeginLoc())) &&
          m.pos.col == sm.getPresumedColumnNumber(sm.getFileLoc(p.rowOperand->getBeginLoc())))
        rowAccess = &m;
    if (!rowAccess || rowAccess->guards.size() < parts.size())
      return "the bounds check must be a conjunction of comparisons";
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!isa<BinaryOperator>(parts[i]) || !cast<BinaryOperator>(parts[i])->isComparisonOp())
        return "the bounds check must be a conjunction of comparisons";
      const std::string &g = rowAccess->guards[i];
      int axis = -1;
      for (const char *op : {" <= ", " >= ", " < ", " > ", " == ", " != "}) {
        size_t at = g.find(op);
        if (at == std::string::npos)
          continue;
        int l = threadAxis(g.substr(0, at), space), r = threadAxis(g.substr(at + strlen(op)), space);
        axis = l < 0 || r < 0 || (l && r && l != r) ? -1 : std::max(l, r);
        break;
      }
      if (axis < 0)
        return "a bound check mixes the x and y thread dimensions";
      if (axis != 1)
        p.rowChecks.push_back(parts[i]);
      if (axis != 2)
        p.colChecks.push_back(parts[i]);
    }
    p.guard = is;
    p.accDecl = decl;
    p.loop = loop;
    p.bound = cond->getRHS();
    for (auto r = it + 2; r != then->body_end(); ++r)
      p.rest.push_back(*r);
    if (is->getBeginLoc().isMacroID() || loop->getBeginLoc().isMacroID())
      return "the pattern is written inside a macro";
    return "";
  }
  return shape;
}

/// The square block size every launch of the kernel (and of its template
/// siblings) uses, if it is a constant dim3(T, T[, 1]); else the reason.
std::string squareBlock(TransformContext &ctx, unsigned kernel, unsigned &tile) {
  std::vector<unsigned> launches;
  for (unsigned k = 0; k < ctx.model().kernels.size(); ++k)
    if (ctx.model().kernels[k].pos.str() == ctx.model().kernels[kernel].pos.str())
      for (unsigned l : ctx.launchesOf(k))
        launches.push_back(l);
  if (launches.empty())
    return "the kernel has no launch site in this file, so its block shape is unknown";
  tile = 0;
  for (unsigned l : launches) {
    const Expr *b = launchConfigArg(ctx, l, 1);
    if (!b)
      return "launch #" + std::to_string(l) + " has no block argument";
    const Expr *s = b->IgnoreUnlessSpelledInSource();
    if (auto *dre = dyn_cast<DeclRefExpr>(s))
      if (auto *vd = dyn_cast<VarDecl>(dre->getDecl()); vd && vd->hasInit())
        s = vd->getInit()->IgnoreUnlessSpelledInSource();
    std::vector<uint64_t> dims;
    if (auto *ce = dyn_cast<CXXConstructExpr>(s)) {
      for (const Expr *a : ce->arguments()) {
        if (isa<CXXDefaultArgExpr>(a))
          continue;
        Expr::EvalResult r;
        if (!a->EvaluateAsInt(r, ctx.unit.ast()))
          return "launch #" + std::to_string(l) + " has a block shape not known at compile time";
        dims.push_back(r.Val.getInt().getZExtValue());
      }
    }
    if (dims.size() < 2 || dims[0] != dims[1] || (dims.size() == 3 && dims[2] != 1) ||
        (dims[0] != 8 && dims[0] != 16 && dims[0] != 32))
      return "launch #" + std::to_string(l) +
             " needs a square block of 8x8, 16x16 or 32x32 (compose with launch-config(block=16x16) first)";
    if (tile && tile != dims[0])
      return "the kernel's launches use different block shapes";
    tile = dims[0];
  }
  return "";
}

std::string joinChecks(TransformContext &ctx, const std::vector<const Expr *> &checks) {
  std::string s;
  for (const Expr *e : checks)
    s += (s.empty() ? "" : " && ") + spelled(ctx.unit.ast(), e);
  return s.empty() ? "true" : s;
}

} // namespace

std::string TileShared::legality(TransformContext &ctx, Target t) const {
  DotPattern p;
  if (std::string why = match(ctx, t.kernel, p); !why.empty())
    return why;
  unsigned tile;
  return squareBlock(ctx, t.kernel, tile);
}

std::vector<ParamSpace> TileShared::space(TransformContext &ctx, Target t) const {
  unsigned tile = 0;
  squareBlock(ctx, t.kernel, tile);
  return {{"tile", {std::to_string(tile)}}};
}

llvm::Error TileShared::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
  DotPattern p;
  match(ctx, t.kernel, p);
  unsigned tile = 0;
  squareBlock(ctx, t.kernel, tile);
  ASTContext &ast = ctx.unit.ast();
  const SourceManager &sm = ast.getSourceManager();
  std::string T = std::to_string(tile);
  auto elem = [&](const ArraySubscriptExpr *a) {
    return a->getType().getUnqualifiedType().getAsString(PrintingPolicy(ast.getLangOpts()));
  };
  std::string ta = elem(p.rowOperand), tb = elem(p.colOperand);
  const VarDecl *kv = cast<VarDecl>(cast<DeclStmt>(p.loop->getInit())->getSingleDecl());
  std::string kName = kv->getNameAsString();
  std::string acc = cast<VarDecl>(p.accDecl->getSingleDecl())->getNameAsString();
  std::string bound = spelled(ast, p.bound);
  // Indentation of the if statement.
  unsigned col = sm.getPresumedColumnNumber(sm.getFileLoc(p.guard->getBeginLoc()));
  std::string in(col - 1, ' '), in2 = in + "  ", in3 = in2 + "  ", in4 = in3 + "  ";
  std::string a = "cudal1_tileA", b = "cudal1_tileB";
  std::string prod = p.rowFirst ? a + "[threadIdx.y][cudal1_k] * " + b + "[cudal1_k][threadIdx.x]"
                                : b + "[cudal1_k][threadIdx.x] * " + a + "[threadIdx.y][cudal1_k]";
  std::string s;
  s += "{ // tile-shared(tile=" + T + "): " + T + "x" + T + " tiles of both operands in shared memory\n";
  s += in2 + spelled(ast, p.accDecl) + "\n";
  s += in2 + "__shared__ " + ta + " " + a + "[" + T + "][" + T + "];\n";
  s += in2 + "__shared__ " + tb + " " + b + "[" + T + "][" + T + "];\n";
  s += in2 + "for (int cudal1_t = 0; cudal1_t < " + bound + "; cudal1_t += " + T + ") {\n";
  s += in3 + "{\n" + in4 + "int " + kName + " = cudal1_t + threadIdx.x;\n";
  s += in4 + a + "[threadIdx.y][threadIdx.x] = (" + joinChecks(ctx, p.rowChecks) + ") && " + kName +
       " < " + bound + " ? " + spelled(ast, p.rowOperand) + " : " + ta + "(0);\n" + in3 + "}\n";
  s += in3 + "{\n" + in4 + "int " + kName + " = cudal1_t + threadIdx.y;\n";
  s += in4 + b + "[threadIdx.y][threadIdx.x] = (" + joinChecks(ctx, p.colChecks) + ") && " + kName +
       " < " + bound + " ? " + spelled(ast, p.colOperand) + " : " + tb + "(0);\n" + in3 + "}\n";
  s += in3 + "__syncthreads();\n";
  s += in3 + "for (int cudal1_k = 0; cudal1_k < " + T + "; ++cudal1_k)\n";
  s += in4 + acc + " += " + prod + ";\n";
  s += in3 + "__syncthreads();\n" + in2 + "}\n";
  s += in2 + "if (" + spelled(ast, p.guard->getCond()) + ") {\n";
  for (const Stmt *r : p.rest) {
    std::string text = spelled(ast, r);
    if (!isa<CompoundStmt>(r) && !isa<IfStmt>(r) && !isa<ForStmt>(r) && !isa<WhileStmt>(r) &&
        (text.empty() || text.back() != ';'))
      text += ";";
    s += in3 + text + "\n";
  }
  s += in2 + "}\n" + in + "}";
  ctx.rewriter.ReplaceText(CharSourceRange::getTokenRange(p.guard->getSourceRange()), s);
  (void)step;
  return llvm::Error::success();
}
