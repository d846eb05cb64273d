// coarsen: divides a launch's x grid by F and makes the kernel grid-stride
// (when it is not already), so that fewer threads each handle F elements.
// The other launches of the kernel keep their grid and stay correct.
#include "Coarsen.h"
#include "cudal1/Rewrite/GridStrideLoop.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "coarsen"

using namespace clang;
using namespace cudal1;

namespace {

/// "" when the kernel is grid-stride already in a way a smaller grid keeps
/// correct, else the reason.
std::string alreadyGridStride(TransformContext &ctx, unsigned kernel) {
  for (unsigned k : kernelsSharingDefinition(ctx.model(), kernel)) {
    if (!ctx.analysis(k).gridStride)
      return "not grid-stride";
    if (std::string why = gridstride::gridStrideCoversWork(ctx, k); !why.empty())
      return why;
  }
  return "";
}

} // namespace

std::string Coarsen::legality(TransformContext &ctx, Target t) const {
  if (t.launch < 0)
    return "needs a launch site";
  if (std::string gs = gridstride::legality(ctx, t.kernel); !gs.empty()) {
    if (!ctx.analysis(t.kernel).gridStride)
      return "the kernel cannot be made grid-stride: " + gs;
    if (std::string why = alreadyGridStride(ctx, t.kernel); !why.empty())
      return why;
  }
  const Expr *e = launchConfigArg(ctx, t.launch, 0);
  if (e)
    e = e->IgnoreUnlessSpelledInSource();
  if (!e || e->HasSideEffects(ctx.unit.ast(), /*IncludePossibleEffects=*/false))
    return "the grid expression has side effects";
  if (std::string why; configRange(ctx, t.launch, 0, &why).isInvalid())
    return why;
  if (spelled(ctx.unit.ast(), e).empty())
    return "the grid expression has no source text";
  return "";
}

std::vector<ParamSpace> Coarsen::space(TransformContext &, Target) const {
  return {{"factor", {"2", "4", "8"}}};
}

std::string Coarsen::checkParams(TransformContext &ctx, Target t, const PlanStep &step) const {
  if (!step.param("factor"))
    return "missing parameter factor=2|4|8";
  return Transform::checkParams(ctx, t, step);
}

llvm::Error Coarsen::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
  std::optional<unsigned> factor = step.uintParam("factor", 2, 8);
  if (!factor) // checkParams took it from the space: cannot happen
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "coarsen: bad factor=");
  unsigned f = *factor;
  // 1. The kernel: grid-stride, once per definition (a no-op when an
  // earlier launch of this step already converted it).
  if (!ctx.analysis(t.kernel).gridStride)
    gridstride::apply(ctx, t.kernel);
  // 2. The launch: ceil(grid.x / F).
  const Expr *g = launchConfigArg(ctx, t.launch, 0)->IgnoreUnlessSpelledInSource();
  std::string ng = gridstride::shrunkGrid(ctx.unit.ast(), g, f);
  LLVM_DEBUG(llvm::dbgs() << "coarsen: grid " << spelled(ctx.unit.ast(), g) << " -> " << ng
                          << "\n");
  ctx.rewriter.ReplaceText(configRange(ctx, t.launch, 0), ng);
  return llvm::Error::success();
}

std::optional<LaunchRemapStep> Coarsen::remapLaunch(const PlanStep &step) const {
  // F elements per thread: the x grid divided by F, rounded up (what
  // gridstride::shrunkGrid writes).
  return LaunchRemapStep::divideX(step.uintParam("factor", 1, 1u << 20).value_or(1));
}
