// grid-stride: `int i = gid; ...; if (i < n) S` becomes
// `for (int i = gid; i < n; i += blockDim.x * gridDim.x) S` (the conversion
// itself is lib/Rewrite/GridStrideLoop.cpp, shared with coarsen and vectorize).
#include "GridStride.h"
#include "cudal1/Rewrite/GridStrideLoop.h"

using namespace cudal1;

std::string GridStride::legality(TransformContext &ctx, Target t) const {
  return gridstride::legality(ctx, t.kernel);
}

std::vector<ParamSpace> GridStride::space(TransformContext &, Target) const { return {}; }

llvm::Error GridStride::apply(TransformContext &ctx, Target t, const PlanStep &) const {
  gridstride::apply(ctx, t.kernel);
  return llvm::Error::success();
}
