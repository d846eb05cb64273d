// launch-bounds: tells the compiler the largest block a kernel runs with, so
// it can budget registers for occupancy. Only the file's launches bound the
// block, so each of them must have a compile-time block size.
#include "LaunchBounds.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#define DEBUG_TYPE "launch-bounds"

using namespace clang;
using namespace cudal1;

namespace {

/// The largest constant block size over the launches of the kernel and its
/// sibling instantiations (they share the attribute), or why there is none.
struct BlockBound {
  unsigned threads = 0;
  int launch = -1;
  std::string why;
};

BlockBound largestBlock(TransformContext &ctx, unsigned kernel) {
  BlockBound b;
  for (unsigned s : kernelsSharingDefinition(ctx.model(), kernel)) {
    for (unsigned id : ctx.launchesOf(s)) {
      std::optional<unsigned> n = constantBlockSize(ctx, id);
      if (!n) {
        b.why = "the block size of launch #" + std::to_string(id) + " (" +
                ctx.model().launches[id].block + ") is not a compile-time constant";
        return b;
      }
      if (*n > b.threads) {
        b.threads = *n;
        b.launch = int(id);
      }
    }
  }
  if (b.launch < 0)
    b.why = "the kernel has no launch in this file, so its block size is unknown";
  else if (b.threads > 1024 || b.threads == 0)
    b.why = "launch #" + std::to_string(b.launch) + " has " + std::to_string(b.threads) +
            " threads per block, outside 1..1024";
  return b;
}

std::optional<unsigned> intParam(const PlanStep &step, const std::string &name) {
  auto v = step.param(name);
  unsigned n = 0;
  if (!v || llvm::StringRef(*v).getAsInteger(10, n))
    return std::nullopt;
  return n;
}

} // namespace

std::string LaunchBounds::legality(TransformContext &ctx, Target t) const {
  const FunctionDecl *pat = editableDecl(ctx.unit.kernelDecl(t.kernel));
  if (ctx.model().kernels[t.kernel].fromHeader)
    return "the kernel is defined in a header; cudal1 rewrites only the file it is given";
  for (const FunctionDecl *d : pat->redecls())
    if (d->hasAttr<CUDALaunchBoundsAttr>())
      return "the kernel already has __launch_bounds__";
  if (ctx.unit.kernelDecl(t.kernel)->hasAttr<CUDALaunchBoundsAttr>())
    return "the kernel already has __launch_bounds__";
  if (pat->getLocation().isMacroID())
    return "the kernel's name is written inside a macro";
  BlockBound b = largestBlock(ctx, t.kernel);
  if (!b.why.empty())
    return b.why;
  return referencedOutsideLaunches(ctx, t.kernel);
}

std::vector<ParamSpace> LaunchBounds::space(TransformContext &ctx, Target t) const {
  BlockBound b = largestBlock(ctx, t.kernel);
  ParamSpace minBlocks{"min-blocks", {}};
  for (unsigned m : {1u, 2u, 4u})
    if (b.threads * m <= 2048)
      minBlocks.values.push_back(std::to_string(m));
  return {{"threads", {std::to_string(b.threads)}}, minBlocks};
}

std::string LaunchBounds::checkParams(TransformContext &ctx, Target t, const PlanStep &step) const {
  for (const auto &[k, v] : step.params)
    if (k != "threads" && k != "min-blocks")
      return "unknown parameter '" + k + "'";
  BlockBound b = largestBlock(ctx, t.kernel);
  if (step.param("threads")) {
    std::optional<unsigned> threads = intParam(step, "threads");
    if (!threads || *threads < 1 || *threads > 1024)
      return "threads must be an integer from 1 to 1024";
    // A launch with more threads than the bound fails at run time.
    if (*threads < b.threads)
      return "threads=" + std::to_string(*threads) + " is below the block size " +
             std::to_string(b.threads) + " of launch #" + std::to_string(b.launch);
  }
  unsigned threads = step.param("threads") ? *intParam(step, "threads") : b.threads;
  if (step.param("min-blocks")) {
    std::optional<unsigned> m = intParam(step, "min-blocks");
    if (!m || *m < 1 || *m > 32)
      return "min-blocks must be an integer from 1 to 32";
    if (threads * *m > 2048)
      return "threads * min-blocks = " + std::to_string(threads * *m) +
             " exceeds the 2048 resident threads of a multiprocessor";
  }
  return "";
}

llvm::Error LaunchBounds::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
  const FunctionDecl *pat = editableDecl(ctx.unit.kernelDecl(t.kernel));
  unsigned threads =
      step.param("threads") ? *intParam(step, "threads") : largestBlock(ctx, t.kernel).threads;
  unsigned minBlocks = step.param("min-blocks") ? *intParam(step, "min-blocks") : 1;
  ctx.rewriter.InsertTextBefore(pat->getLocation(), "__launch_bounds__(" + std::to_string(threads) +
                                                        ", " + std::to_string(minBlocks) + ") ");
  return llvm::Error::success();
}
