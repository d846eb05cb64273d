// launch-config: replaces the grid and block of one launch. Legal when the
// kernel guards its index range (or is grid-stride), so extra threads do
// nothing, and when what a thread does depends on its global id only, so
// that regrouping threads into other blocks changes nothing else.
#include "LaunchConfig.h"
#include "cudal1/Rewrite/RewriteUtils.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Expr.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include <optional>

#define DEBUG_TYPE "launch-config"

using namespace clang;
using namespace cudal1;

namespace {

/// The thread dimensions the kernel's accesses use (1, 2 or 3).
unsigned kernelDims(TransformContext &ctx, unsigned kernel) {
  for (const auto &[name, v] : ctx.analysis(kernel).features)
    if (name == "thread_dims")
      return std::max(1u, unsigned(v));
  return 1;
}

const std::vector<std::string> &shapes(unsigned dims) {
  static const std::vector<std::string> d1 = {"64", "128", "256", "512", "1024"};
  static const std::vector<std::string> d2 = {"32x4", "32x8", "16x16", "32x16", "64x4"};
  static const std::vector<std::string> d3 = {"32x4x2", "16x8x2", "8x8x4"};
  return dims == 1 ? d1 : dims == 2 ? d2 : d3;
}

/// The kernel's __launch_bounds__ thread limit, when it is a constant: a
/// launch with more threads per block fails at run time.
std::optional<unsigned> launchBoundsLimit(TransformContext &ctx, unsigned kernel) {
  const FunctionDecl *fd = ctx.unit.kernelDecl(kernel);
  const auto *lb = fd ? fd->getAttr<CUDALaunchBoundsAttr>() : nullptr;
  if (!lb || !lb->getMaxThreads())
    return std::nullopt;
  std::optional<llvm::APSInt> v = lb->getMaxThreads()->getIntegerConstantExpr(ctx.unit.ast());
  if (!v || v->isNegative())
    return std::nullopt;
  return unsigned(v->getZExtValue());
}

unsigned threadsOf(const std::vector<unsigned> &dims) {
  unsigned n = 1;
  for (unsigned d : dims)
    n *= d;
  return n;
}

} // namespace

std::string LaunchConfig::legality(TransformContext &ctx, Target t) const {
  if (t.launch < 0)
    return "needs a launch site";
  const KernelAnalysis &ka = ctx.analysis(t.kernel);
  const Kernel &k = ctx.model().kernels[t.kernel];
  if (!k.shared.empty() || !k.barriers.empty())
    return "the kernel uses shared memory or barriers, which depend on the block shape";
  if (!ka.guarded && !ka.gridStride)
    return "the kernel does not guard its index range, so extra threads would run out of bounds";
  const FunctionDecl *fd = ctx.unit.kernelDecl(t.kernel);
  if (usesWarpIntrinsics(fd))
    return "the kernel uses warp-level intrinsics";
  if (std::string why = dependsOnlyOnGlobalIds(ctx, t.kernel); !why.empty())
    return why;
  if (std::optional<unsigned> limit = launchBoundsLimit(ctx, t.kernel))
    if (threadsOf(*parseDims(shapes(kernelDims(ctx, t.kernel)).front())) > *limit)
      return "the kernel's __launch_bounds__(" + std::to_string(*limit) +
             ") is below every block shape offered";
  for (unsigned which : {0u, 1u}) {
    const Expr *e = launchConfigArg(ctx, t.launch, which);
    if (e)
      e = e->IgnoreUnlessSpelledInSource();
    if (!e || e->HasSideEffects(ctx.unit.ast(), /*IncludePossibleEffects=*/false))
      return "the launch configuration has side effects";
    if (std::string why; configRange(ctx, t.launch, which, &why).isInvalid())
      return why;
  }
  return "";
}

std::vector<ParamSpace> LaunchConfig::space(TransformContext &ctx, Target t) const {
  std::optional<unsigned> limit = launchBoundsLimit(ctx, t.kernel);
  std::vector<std::string> offered;
  for (const std::string &s : shapes(kernelDims(ctx, t.kernel)))
    if (!limit || threadsOf(*parseDims(s)) <= *limit)
      offered.push_back(s);
  return {{"block", offered}};
}

std::string LaunchConfig::checkParams(TransformContext &ctx, Target t, const PlanStep &step) const {
  auto b = step.param("block");
  if (!b)
    return "missing parameter block=N or block=XxY[xZ]";
  auto dims = parseDims(*b);
  if (!dims)
    return "block=" + *b + " is not a shape like 256 or 32x8 (each dimension 1 to 1024)";
  unsigned threads = 1;
  for (unsigned d : *dims)
    threads *= d;
  if (threads > 1024)
    return "block=" + *b + " has more than 1024 threads";
  if (std::optional<unsigned> limit = launchBoundsLimit(ctx, t.kernel); limit && threads > *limit)
    return "block=" + *b + " has " + std::to_string(threads) +
           " threads, more than the kernel's __launch_bounds__(" + std::to_string(*limit) +
           ") allows";
  if (dims->size() < kernelDims(ctx, t.kernel))
    return "the kernel uses " + std::to_string(kernelDims(ctx, t.kernel)) +
           " thread dimensions; block=" + *b + " has fewer";
  for (const auto &[key, v] : step.params)
    if (key != "block")
      return "unknown parameter '" + key + "'";
  return "";
}

llvm::Error LaunchConfig::apply(TransformContext &ctx, Target t, const PlanStep &step) const {
  ASTContext &ast = ctx.unit.ast();
  std::vector<unsigned> nb = *parseDims(*step.param("block"));
  nb.resize(3, 1);
  const Expr *grid = launchConfigArg(ctx, t.launch, 0);
  const Expr *block = launchConfigArg(ctx, t.launch, 1);
  const Expr *gs = grid->IgnoreUnlessSpelledInSource();
  const Expr *bs = block->IgnoreUnlessSpelledInSource();
  std::string g = spelled(ast, gs), b = spelled(ast, bs);
  std::string newGrid, newBlock;
  bool scalar =
      gs->getType()->isIntegerType() && bs->getType()->isIntegerType() && nb[1] == 1 && nb[2] == 1;
  if (scalar) {
    // Threads = grid * block, rounded up to whole new blocks.
    newGrid = "(unsigned)(((size_t)(" + g + ") * (" + b + ") + " + std::to_string(nb[0] - 1) +
              ") / " + std::to_string(nb[0]) + ")";
    newBlock = std::to_string(nb[0]);
  } else {
    static const char *axis[] = {"x", "y", "z"};
    newGrid = "dim3(";
    for (unsigned d = 0; d < 3; ++d) {
      std::string n = std::to_string(nb[d]);
      newGrid += std::string(d ? ", " : "") + "(dim3(" + g + ")." + axis[d] + " * dim3(" + b +
                 ")." + axis[d] + " + " + std::to_string(nb[d] - 1) + ") / " + n;
    }
    newGrid += ")";
    newBlock = "dim3(" + std::to_string(nb[0]) + ", " + std::to_string(nb[1]) + ", " +
               std::to_string(nb[2]) + ")";
  }
  ctx.rewriter.ReplaceText(configRange(ctx, t.launch, 0), newGrid);
  ctx.rewriter.ReplaceText(configRange(ctx, t.launch, 1), newBlock);
  return llvm::Error::success();
}

std::optional<LaunchRemapStep> LaunchConfig::remapLaunch(const PlanStep &step) const {
  // The same threads in blocks of the new shape, what apply writes (its
  // scalar form is the same arithmetic with y and z of 1).
  std::optional<std::string> b = step.param("block");
  std::optional<std::vector<unsigned>> dims = b ? parseDims(*b) : std::nullopt;
  if (!dims || dims->empty() || dims->size() > 3)
    return std::nullopt;
  dims->resize(3, 1);
  return LaunchRemapStep::reshape((*dims)[0], (*dims)[1], (*dims)[2]);
}
