// streams: launch A moves to a side stream that first waits for everything
// issued before it on A's stream (fork); the launches after A that are
// independent of it keep running on the original stream meanwhile; before
// the first later statement that is not such a launch (or an error check),
// the original stream waits for A (join), so copies, synchronizations, host
// reads and dependent launches see A's results as before.
//
// Independent: no buffer that one of the two writes is touched by the other,
// unless the Presburger test proves their elements disjoint; two different
// variables are different buffers only when both hold fresh allocations
// (cudaMalloc, a function named *alloc*, new), else they may alias.
#include "Streams.h"
#include "cudal1/Rewrite/HostCode.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/StringExtras.h"

#include "runtime/side-stream.inc" // the helper inserted: passes/runtime/side-stream.cuh

#define DEBUG_TYPE "streams"

using namespace clang;
using namespace cudal1;

namespace {

struct Span {
  const CompoundStmt *block = nullptr;
  std::vector<unsigned> launches;   ///< independent launches after A
  const Stmt *joinBefore = nullptr; ///< null: at the end of the block
};

std::string findSpan(TransformContext &ctx, unsigned a, Span &span) {
  ASTContext &ast = ctx.unit.ast();
  const ProgramModel &m = ctx.model();
  const CUDAKernelCallExpr *ka = ctx.unit.launchExpr(a);
  if (std::string why = roomAround(ast, ka, "the launch"); !why.empty())
    return why;
  if (const Stmt *p = bracelessParent(ast, ka))
    return "the launch is " + bracelessPlace(p, ka) + ": no launch follows it there";
  span.block = dyn_cast<CompoundStmt>(parentStmt(ast, ka));
  const FunctionDecl *fd = ctx.unit.launchFunction(a);
  const VarSet &fresh = freshAllocations(ctx, fd);
  FollowingLaunches run = followingLaunches(
      ctx, span.block, ka, [&](unsigned id, const CUDAKernelCallExpr *kc) -> std::string {
        if (m.launches[id].stream != m.launches[a].stream)
          return "it uses another stream";
        if (std::string h = hiddenEffects(kc->getDirectCallee()); !h.empty())
          return h;
        return launchConflict(ctx, a, id, fresh, /*sameThreadOk=*/false);
      });
  span.launches.assign(run.launches.begin(), run.launches.end());
  span.joinBefore = run.stop;
  std::string firstWhy = run.firstWhy;
  if (span.launches.empty())
    return firstWhy.empty() ? "no independent launch follows it in its block"
                            : "no independent launch follows it (" + firstWhy + ")";
  return "";
}

} // namespace

std::string Streams::legality(TransformContext &ctx, Target t) const {
  ASTContext &ast = ctx.unit.ast();
  const LaunchSite &l = ctx.model().launches[t.launch];
  const CUDAKernelCallExpr *kc = ctx.unit.launchExpr(t.launch);
  const FunctionDecl *fd = ctx.unit.launchFunction(t.launch);
  if (fd->isTemplateInstantiation() || fd->getTemplatedKind() != FunctionDecl::TK_NonTemplate)
    return "the launch is in a function template (one edit for every instantiation)";
  if (std::string why = writtenByMacro(ast, kc, "the launch"); !why.empty())
    return why;
  if (l.kernelIndex < 0)
    return "the kernel is not known";
  if (l.stream.find("cudal1Side") != std::string::npos)
    return "the launch already runs on a side stream";
  if (std::string why = hiddenEffects(kc->getDirectCallee()); !why.empty())
    return why;
  Span span;
  return findSpan(ctx, t.launch, span);
}

llvm::Error Streams::apply(TransformContext &ctx, Target t, const PlanStep &) const {
  ASTContext &ast = ctx.unit.ast();
  const LaunchSite &l = ctx.model().launches[t.launch];
  const CUDAKernelCallExpr *kc = ctx.unit.launchExpr(t.launch);
  Span span;
  findSpan(ctx, t.launch, span);
  ctx.insertHelperBefore(ctx.unit.launchFunction(t.launch), "Cudal1SideStream",
                         runtime::sideStream);
  std::string var = freshName(ctx, "cudal1Side");
  std::string origin = l.stream.empty() ? "0" : l.stream;
  std::string indent = indentAt(ast, kc->getBeginLoc());
  ctx.rewriter.InsertTextBefore(kc->getBeginLoc(), "static Cudal1SideStream " + var +
                                                       ";  // cudal1 streams\n" + indent);
  const CallExpr *cfg = kc->getConfig();
  auto cfgArg = [&](unsigned i, const char *def) -> std::string {
    if (i >= cfg->getNumArgs() || isa<CXXDefaultArgExpr>(cfg->getArg(i)))
      return def;
    return spelled(ast, cfg->getArg(i)->IgnoreUnlessSpelledInSource());
  };
  ctx.rewriter.ReplaceText(statementRange(ast, cfg), "<<<" + cfgArg(0, "1") + ", " +
                                                         cfgArg(1, "1") + ", " + cfgArg(2, "0") +
                                                         ", " + var + ".fork(" + origin + ")>>>");
  std::string join = var + ".join(" + origin + ");";
  if (span.joinBefore) {
    SourceLocation at = statementRange(ast, span.joinBefore).getBegin();
    ctx.rewriter.InsertTextBefore(at, join + "  // cudal1 streams\n" + indentAt(ast, at));
  } else {
    // At the end of the block, indented like the launch.
    std::string rb = indentAt(ast, span.block->getRBracLoc());
    std::string extra(indent.size() > rb.size() ? indent.size() - rb.size() : 0, ' ');
    ctx.rewriter.InsertTextBefore(span.block->getRBracLoc(), extra + join + "\n" + rb);
  }
  return llvm::Error::success();
}
