// async-copy: `cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost)` becomes
// an asynchronous copy into a pinned staging buffer on a side stream that
// first waits for everything issued before it on the origin stream (the
// legacy default stream, as the blocking copy did); the launches after it
// that are independent of it run on the origin stream meanwhile; before the
// first later statement that is not such a launch (or an error check), the
// origin stream waits for the copy, the host waits for it and copies the
// staging buffer into dst. Everything after that sees dst and the device
// exactly as after the blocking copy.
//
// Pinned staging instead of pinning dst itself (cudaHostRegister): the
// staging buffer is the helper's own, so nothing has to be proved about the
// lifetime, reallocation or escape of the user's buffer; the price is one
// host memcpy of the bytes at the join.
#include "AsyncCopy.h"
#include "cudal1/Rewrite/HostCode.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include "runtime/async-copy.inc" // the helper inserted: passes/runtime/async-copy.cuh

#define DEBUG_TYPE "async-copy"

using namespace clang;
using namespace cudal1;

namespace {

/// The variable whose memory a host pointer expression names: `p`, `p + i`,
/// `&x`, `v.data()`.
const VarDecl *hostBase(const Expr *e) {
  e = e->IgnoreParenImpCasts();
  if (auto *mc = dyn_cast<CXXMemberCallExpr>(e))
    if (mc->getMethodDecl() && mc->getMethodDecl()->getName() == "data" && mc->getNumArgs() == 0)
      if (auto *dre = dyn_cast<DeclRefExpr>(mc->getImplicitObjectArgument()->IgnoreParenImpCasts()))
        return dyn_cast<VarDecl>(dre->getDecl());
  if (auto *uo = dyn_cast<UnaryOperator>(e); uo && uo->getOpcode() == UO_AddrOf)
    if (auto *dre = dyn_cast<DeclRefExpr>(uo->getSubExpr()->IgnoreParenImpCasts()))
      return dyn_cast<VarDecl>(dre->getDecl());
  return pointerBaseVar(e);
}

bool mentions(const Stmt *s, const VarDecl *v) {
  bool found = false;
  forEachStmt(s, [&](const Stmt *x) {
    if (auto *dre = dyn_cast<DeclRefExpr>(x); dre && dre->getDecl() == v)
      found = true;
  });
  return found;
}

struct Site {
  const CallExpr *call = nullptr;
  const Stmt *stmt = nullptr; ///< the statement replaced (the call, or its error check)
  const CompoundStmt *block = nullptr;
  std::vector<unsigned> launches;     ///< independent launches after it
  const Stmt *finishBefore = nullptr; ///< null: at the end of the block
};

std::string findSite(TransformContext &ctx, unsigned copy, Site &site) {
  ASTContext &ast = ctx.unit.ast();
  std::vector<const CallExpr *> copies = hostCopies(ast);
  const CallExpr *ce = site.call = copies[copy];
  if (ce->getNumArgs() != 4)
    return "not a four-argument cudaMemcpy";
  if (spelled(ast, ce->getArg(3)->IgnoreParenImpCasts()) != "cudaMemcpyDeviceToHost")
    return "only device-to-host copies (kind written as cudaMemcpyDeviceToHost)";
  for (const Expr *a : ce->arguments())
    if (a->HasSideEffects(ast, /*IncludePossibleEffects=*/false))
      return "the copy's arguments have side effects";
  // 1. The statement: the call itself or an error check around it.
  const Stmt *s = enclosingStatement(ast, ce);
  if (!s)
    return "the copy is not a statement";
  if (s != ce && !isErrorCheck(ast, s, ce))
    return "the copy's result is used (only a plain call or an error check around it)";
  site.stmt = s;
  if (std::string why = roomAround(ast, s, "the copy"); !why.empty())
    return why;
  if (const Stmt *p = bracelessParent(ast, s))
    return "the copy is " + bracelessPlace(p, s) + ": no launch follows it there";
  site.block = dyn_cast<CompoundStmt>(parentStmt(ast, s));
  // 2. The function: templates are edited once for all instantiations; the
  //    origin is the legacy default stream, so every launch must use it.
  const FunctionDecl *fd = nullptr;
  {
    DynTypedNodeList parents = ast.getParents(*s);
    const Stmt *at = s;
    while (!parents.empty()) {
      if ((fd = parents[0].get<FunctionDecl>()))
        break;
      at = parents[0].get<Stmt>();
      if (!at)
        break;
      parents = ast.getParents(*at);
    }
  }
  if (!fd)
    return "the copy is not in a function";
  if (fd->isTemplateInstantiation() || fd->getTemplatedKind() != FunctionDecl::TK_NonTemplate)
    return "the copy is in a function template";
  const ProgramModel &m = ctx.model();
  for (const LaunchSite &l : m.launches)
    if (ctx.unit.launchFunction(l.id) == fd && !isDefaultStream(l.stream))
      return "the function launches on explicit streams (the copy's origin is the default stream)";
  const VarDecl *dst = hostBase(ce->getArg(0));
  const VarDecl *src = pointerBaseVar(ce->getArg(1));
  if (!dst)
    return "the destination is not a variable's memory (p, p + i, &x, v.data())";
  if (!src)
    return "the source is not a plain device pointer variable";
  // 3. The span: independent launches (none writes what the copy reads or
  //    mentions its destination) and error checks.
  const VarSet &fresh = freshAllocations(ctx, fd);
  FollowingLaunches run = followingLaunches(
      ctx, site.block, s, [&](unsigned id, const CUDAKernelCallExpr *kc) -> std::string {
        if (std::string h = hiddenEffects(kc->getDirectCallee()); !h.empty())
          return h;
        if (kc->HasSideEffects(ast, /*IncludePossibleEffects=*/false))
          return "its arguments have side effects";
        if (mentions(kc, dst))
          return "it uses the copy's destination '" + dst->getName().str() + "'";
        const KernelAnalysis &ka = ctx.analysis(m.launches[id].kernelIndex);
        for (unsigned i = 0; i < ka.params.size() && i < kc->getNumArgs(); ++i) {
          if (!ka.params[i].writes)
            continue;
          const VarDecl *w = pointerBaseVar(kc->getArg(i));
          if (!w)
            return "a written pointer argument is not a plain variable";
          if (w == src || !(fresh.count(w) && fresh.count(src)))
            return "it writes '" + w->getName().str() + "', which may be the copy's source '" +
                   src->getName().str() + "'";
        }
        return "";
      });
  site.launches = run.launches;
  site.finishBefore = run.stop;
  const std::string &firstWhy = run.firstWhy;
  if (site.launches.empty())
    return firstWhy.empty() ? "no independent launch follows the copy in its block"
                            : "no independent launch follows the copy (" + firstWhy + ")";
  return "";
}

} // namespace

std::string AsyncCopy::legality(TransformContext &ctx, Target t) const {
  Site site;
  return findSite(ctx, t.copy, site);
}

llvm::Error AsyncCopy::apply(TransformContext &ctx, Target t, const PlanStep &) const {
  ASTContext &ast = ctx.unit.ast();
  Site site;
  findSite(ctx, t.copy, site);
  const FunctionDecl *fd = nullptr;
  {
    DynTypedNodeList parents = ast.getParents(*site.stmt);
    while (!parents.empty() && !(fd = parents[0].get<FunctionDecl>())) {
      const Stmt *at = parents[0].get<Stmt>();
      if (!at)
        break;
      parents = ast.getParents(*at);
    }
  }
  ctx.insertHelperBefore(fd, "Cudal1AsyncCopy", runtime::asyncCopy);
  std::string var = freshName(ctx, "cudal1Copy");
  CharSourceRange r = statementRange(ast, site.stmt);
  std::string indent = indentAt(ast, r.getBegin());
  const CallExpr *ce = site.call;
  ctx.rewriter.ReplaceText(r, "static Cudal1AsyncCopy " + var + ";  // cudal1 async-copy\n" +
                                  indent + var + ".start(" + spelled(ast, ce->getArg(0)) + ", " +
                                  spelled(ast, ce->getArg(1)) + ", " + spelled(ast, ce->getArg(2)) +
                                  ", 0)");
  std::string finish = var + ".finish(0);";
  if (site.finishBefore) {
    SourceLocation at = statementRange(ast, site.finishBefore).getBegin();
    ctx.rewriter.InsertTextBefore(at, finish + "  // cudal1 async-copy\n" + indentAt(ast, at));
  } else {
    std::string rb = indentAt(ast, site.block->getRBracLoc());
    std::string extra(indent.size() > rb.size() ? indent.size() - rb.size() : 0, ' ');
    ctx.rewriter.InsertTextBefore(site.block->getRBracLoc(), extra + finish + "\n" + rb);
  }
  return llvm::Error::success();
}
