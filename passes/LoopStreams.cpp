// loop-streams: a host loop whose body is one kernel launch (and error
// checks) issues iteration i's launch on side stream i % S. Before the loop
// every side stream waits for the work issued so far on the launch's stream
// (fork); right after it the launch's stream waits for every side stream
// (join), so whatever follows the loop sees all iterations' results as
// before.
//
// Legal when the iterations are independent: every pointer the kernel
// writes through is `X[k]`, X a local array of the host function whose
// elements only ever hold fresh allocations and k the loop's counter (a
// different element, so a different buffer, in every iteration); every
// other pointer argument is `Y[k]` of such an array, an element of an array
// the kernel does not write, or a fresh allocation (HostEffects.h,
// freshAllocations). Offsets into one buffer (`p + k * n`) are refused: the
// disjointness of the iterations' elements is not proved here.
#include "LoopStreams.h"
#include "cudal1/Rewrite/HostCode.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include "runtime/side-stream.inc" // the helper inserted: passes/runtime/side-stream.cuh

#define DEBUG_TYPE "loop-streams"

using namespace clang;
using namespace cudal1;

namespace {

const CUDAKernelCallExpr *launchOf(const Stmt *s) {
  if (auto *e = dyn_cast_or_null<Expr>(s))
    return dyn_cast<CUDAKernelCallExpr>(e->IgnoreImplicit());
  return nullptr;
}

const VarDecl *varOf(const Expr *e) {
  if (auto *d = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts()))
    return dyn_cast<VarDecl>(d->getDecl());
  return nullptr;
}

/// The counter of a for loop: the variable its increment steps by a
/// nonzero constant (++k, k++, --k, k--, k += c, k -= c), or null.
const VarDecl *counterOf(ASTContext &ast, const Stmt *loop) {
  auto *f = dyn_cast<ForStmt>(loop);
  if (!f || !f->getInc())
    return nullptr;
  const Expr *inc = f->getInc()->IgnoreParenImpCasts();
  if (auto *u = dyn_cast<UnaryOperator>(inc))
    return u->isIncrementDecrementOp() ? varOf(u->getSubExpr()) : nullptr;
  if (auto *c = dyn_cast<CompoundAssignOperator>(inc)) {
    if (c->getOpcode() != BO_AddAssign && c->getOpcode() != BO_SubAssign)
      return nullptr;
    std::optional<llvm::APSInt> v = c->getRHS()->getIntegerConstantExpr(ast);
    return v && *v != 0 ? varOf(c->getLHS()) : nullptr;
  }
  return nullptr;
}

/// Whether every element of local array `a` only ever holds a fresh
/// allocation: each use of `a` in `fd` is an element `a[i]` that is read,
/// whose address is the first argument of cudaMalloc*/cudaHostAlloc, or
/// that is assigned a call whose callee's name contains "alloc".
class ArrayUses : public RecursiveASTVisitor<ArrayUses> {
public:
  ArrayUses(ASTContext &ast, const VarDecl *a) : ast(ast), a(a) {}
  std::string why;
  bool VisitDeclRefExpr(DeclRefExpr *d) {
    if (d->getDecl() != a || !why.empty())
      return true;
    const Stmt *p = parentStmt(ast, d);
    while (p && isa<ImplicitCastExpr, ParenExpr>(p))
      p = parentStmt(ast, p);
    auto *sub = dyn_cast_or_null<ArraySubscriptExpr>(p);
    if (!sub || sub->getBase()->IgnoreParenImpCasts() != d) {
      why = "it is used other than by its elements";
      return true;
    }
    const Stmt *q = parentStmt(ast, sub);
    while (q && isa<ParenExpr>(q))
      q = parentStmt(ast, q);
    if (auto *ic = dyn_cast_or_null<ImplicitCastExpr>(q))
      if (ic->getCastKind() == CK_LValueToRValue)
        return true; // read
    if (auto *u = dyn_cast_or_null<UnaryOperator>(q); u && u->getOpcode() == UO_AddrOf) {
      const Stmt *c = parentStmt(ast, u);
      while (c && isa<ImplicitCastExpr, CStyleCastExpr, CXXReinterpretCastExpr, CXXStaticCastExpr,
                      ParenExpr>(c))
        c = parentStmt(ast, c);
      auto *call = dyn_cast_or_null<CallExpr>(c);
      std::string name = call ? calleeName(call) : "";
      if (call && call->getNumArgs() > 0 && call->getArg(0)->IgnoreParenCasts() == u &&
          (llvm::StringRef(name).starts_with("cudaMalloc") || name == "cudaHostAlloc"))
        return true;
      why = "the address of an element is taken";
      return true;
    }
    if (auto *b = dyn_cast_or_null<BinaryOperator>(q); b && b->getOpcode() == BO_Assign) {
      auto *call = dyn_cast<CallExpr>(b->getRHS()->IgnoreParenCasts());
      if (call && llvm::StringRef(calleeName(call)).contains_insensitive("alloc"))
        return true;
      if (auto *n = dyn_cast<CXXNewExpr>(b->getRHS()->IgnoreParenCasts()); n)
        return true;
      why = "an element is assigned something other than an allocation";
      return true;
    }
    why = "an element is used other than read or allocated";
    return true;
  }

private:
  ASTContext &ast;
  const VarDecl *a;
};

std::string freshArray(ASTContext &ast, const FunctionDecl *fd, const VarDecl *a) {
  if (!a->hasLocalStorage() || !a->getType()->isConstantArrayType() ||
      !a->getType()->getAsArrayTypeUnsafe()->getElementType()->isPointerType())
    return "it is not a local array of pointers";
  ArrayUses v(ast, a);
  v.TraverseStmt(fd->getBody());
  return v.why;
}

/// The loop's one launch and the checks that make its iterations
/// independent.
struct Shape {
  const Stmt *loop = nullptr;
  const CUDAKernelCallExpr *kc = nullptr;
  unsigned launch = 0;
  std::string origin; ///< the launch's stream, "0" when none
};

std::string shapeOf(TransformContext &ctx, unsigned loopId, Shape &s) {
  ASTContext &ast = ctx.unit.ast();
  const ProgramModel &m = ctx.model();
  s.loop = ctx.unit.hostLoopStmt(loopId);
  const FunctionDecl *fd = ctx.unit.hostLoopFunction(loopId);
  if (fd->isTemplateInstantiation() || fd->getTemplatedKind() != FunctionDecl::TK_NonTemplate)
    return "the loop is in a function template (one edit for every instantiation)";
  if (std::string why = writtenByMacro(ast, s.loop, "the loop"); !why.empty())
    return why;
  // The fork goes before the loop and the join after it.
  if (std::string why = roomAround(ast, s.loop, "the loop"); !why.empty())
    return why;
  const HostLoop &hl = m.hostLoops[loopId];
  if (hl.launches.size() != 1)
    return "the loop holds " + std::to_string(hl.launches.size()) +
           " launches (loop-streams spreads the iterations of one launch)";
  const Stmt *body = loopBody(s.loop);
  const Stmt *only = nullptr;
  if (auto *cs = dyn_cast_or_null<CompoundStmt>(body)) {
    for (const Stmt *st : cs->body()) {
      if (launchOf(st)) {
        only = st;
        continue;
      }
      if (!isErrorCheck(ast, st))
        return "the loop's body holds a statement other than the launch and error checks (line " +
               std::to_string(ast.getSourceManager().getPresumedLineNumber(st->getBeginLoc())) +
               ")";
    }
  } else if (launchOf(body)) {
    only = body;
  }
  if (!only)
    return "the loop's body is not one launch statement";
  s.kc = launchOf(only);
  s.launch = hl.launches[0];
  if (ctx.unit.launchExpr(s.launch) != s.kc)
    return "the loop's launch is not a launch site of the model";
  const LaunchSite &l = m.launches[s.launch];
  if (l.kernelIndex < 0)
    return "the kernel is not known";
  if (l.stream.find("cudal1Side") != std::string::npos)
    return "the launch already runs on a side stream";
  if (std::string why = hiddenEffects(s.kc->getDirectCallee()); !why.empty())
    return why;
  for (const Expr *a : s.kc->arguments())
    if (a->HasSideEffects(ast, /*IncludePossibleEffects=*/false))
      return "the launch's arguments have side effects";
  const CallExpr *cfg = s.kc->getConfig();
  for (const Expr *a : cfg->arguments())
    if (a->HasSideEffects(ast, /*IncludePossibleEffects=*/false))
      return "the launch's configuration has side effects";
  s.origin = "0";
  if (!isDefaultStream(l.stream)) {
    const Expr *st = cfg->getNumArgs() > 3 ? cfg->getArg(3) : nullptr;
    const VarDecl *sv = st ? varOf(st) : nullptr;
    if (!sv)
      return "the launch's stream is not a variable or the default stream";
    s.origin = sv->getNameAsString();
  }

  if (auto *f = dyn_cast<ForStmt>(s.loop))
    if (f->getCond() && f->getCond()->HasSideEffects(ast, /*IncludePossibleEffects=*/false))
      return "the loop's condition has side effects";
  // The iterations' buffers.
  const Kernel &k = m.kernels[l.kernelIndex];
  const VarDecl *counter = counterOf(ast, s.loop);
  const VarSet &fresh = freshAllocations(ctx, fd);
  std::set<const VarDecl *> writtenArrays;
  std::vector<bool> written(s.kc->getNumArgs(), false);
  for (const MemAccess &a : k.accesses)
    if (a.kind == AccessKind::Write && a.paramIndex >= 0 && unsigned(a.paramIndex) < written.size())
      written[a.paramIndex] = true;
  for (const KernelCall &c : k.atomics)
    for (unsigned i = 0; i < k.params.size() && i < written.size(); ++i)
      if (k.params[i].name == c.target)
        written[i] = true;
  auto argText = [&](unsigned i) { return "'" + spelled(ast, s.kc->getArg(i)) + "'"; };
  // Pass 1: the written pointers are X[k], X a fresh array.
  for (unsigned i = 0; i < s.kc->getNumArgs(); ++i) {
    if (!written[i])
      continue;
    const Expr *e = s.kc->getArg(i)->IgnoreParenImpCasts();
    auto *sub = dyn_cast<ArraySubscriptExpr>(e);
    if (!sub) {
      if (isa<BinaryOperator>(e))
        return "the kernel writes through " + argText(i) +
               ", an offset into one buffer: that the iterations' elements are disjoint is not "
               "proved (an element X[k] of an array of fresh allocations is)";
      return "every iteration writes through " + argText(i) + " (the same buffer)";
    }
    const VarDecl *arr = varOf(sub->getBase());
    if (!arr)
      return "the kernel writes through " + argText(i) + ", not an element of an array variable";
    if (!counter)
      return "the loop's counter is not known (a for loop stepping a variable by a constant: "
             "++k, k += c)";
    if (varOf(sub->getIdx()) != counter)
      return "the kernel writes through " + argText(i) + ", not indexed by the loop's counter '" +
             counter->getNameAsString() + "'";
    if (std::string why = freshArray(ast, fd, arr); !why.empty())
      return "the elements of '" + arr->getNameAsString() +
             "' are not known to be distinct allocations: " + why;
    writtenArrays.insert(arr);
  }
  if (writtenArrays.empty())
    return "the kernel writes through no pointer argument (nothing to spread)";
  // Pass 2: what the other pointer arguments read is not what another
  // iteration writes.
  for (unsigned i = 0; i < s.kc->getNumArgs(); ++i) {
    const Expr *e = s.kc->getArg(i)->IgnoreParenImpCasts();
    if (written[i] || !e->getType()->isPointerType())
      continue;
    if (auto *sub = dyn_cast<ArraySubscriptExpr>(e)) {
      const VarDecl *arr = varOf(sub->getBase());
      if (arr && writtenArrays.count(arr)) {
        if (varOf(sub->getIdx()) != counter)
          return "the kernel reads " + argText(i) +
                 ", an element of an array another iteration writes";
        continue;
      }
      if (arr && freshArray(ast, fd, arr).empty())
        continue;
      return "the kernel reads " + argText(i) +
             ", not known to be distinct from the buffers the iterations write";
    }
    const VarDecl *v = varOf(e);
    if (!v || !fresh.count(v))
      return "the kernel reads " + argText(i) +
             ", not known to be distinct from the buffers the iterations write (a fresh "
             "allocation or an element of an array of them is)";
  }
  return "";
}

int streamsOf(const PlanStep &step) {
  std::optional<std::string> v = step.param("streams");
  return v ? std::atoi(v->c_str()) : 2;
}

} // namespace

std::string LoopStreams::legality(TransformContext &ctx, Target t) const {
  Shape s;
  return shapeOf(ctx, t.loop, s);
}

std::vector<ParamSpace> LoopStreams::space(TransformContext &, Target) const {
  return {{"streams", {"2", "4"}}};
}

llvm::Error LoopStreams::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
  ASTContext &ast = ctx.unit.ast();
  Shape s;
  if (std::string why = shapeOf(ctx, t.loop, s); !why.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", why.c_str());
  int n = streamsOf(step);
  const FunctionDecl *fd = ctx.unit.hostLoopFunction(t.loop);
  ctx.insertHelperBefore(fd, "Cudal1SideStream", runtime::sideStream);
  std::string var = freshName(ctx, "cudal1Iter");
  std::string side = var + "Streams";
  std::string count = std::to_string(n);
  // Fork and join written out, one call per stream: no loop is added (the
  // host loops' numbers after this one stay as they are).
  auto each = [&](const char *what) {
    std::string text;
    for (int i = 0; i < n; ++i)
      text += (i ? " " : "") + side + "[" + std::to_string(i) + "]." + what + "(" + s.origin + ");";
    return text;
  };
  std::string indent = indentAt(ast, s.loop->getBeginLoc());
  makeRoomAround(ctx, s.loop);
  SourceLocation begin = statementRange(ast, s.loop).getBegin();
  ctx.rewriter.InsertTextBefore(
      begin, "static Cudal1SideStream " + side + "[" + count +
                 "];  // cudal1 loop-streams: iteration i on stream i % " + count + "\n" + indent +
                 "unsigned " + var + " = 0;\n" + indent + each("fork") + "\n" + indent);
  const CallExpr *cfg = s.kc->getConfig();
  auto cfgArg = [&](unsigned i, const char *def) -> std::string {
    if (i >= cfg->getNumArgs() || isa<CXXDefaultArgExpr>(cfg->getArg(i)))
      return def;
    return spelled(ast, cfg->getArg(i)->IgnoreUnlessSpelledInSource());
  };
  ctx.rewriter.ReplaceText(statementRange(ast, cfg),
                           "<<<" + cfgArg(0, "1") + ", " + cfgArg(1, "1") + ", " + cfgArg(2, "0") +
                               ", " + side + "[" + var + "++ % " + count + "].stream>>>");
  SourceLocation end = statementEnd(ast, s.loop);
  if (end.isInvalid())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the end of the loop is not in the file");
  ctx.rewriter.InsertTextAfter(end,
                               "\n" + indent + each("join") + "  /* cudal1 loop-streams: join */");
  return llvm::Error::success();
}
