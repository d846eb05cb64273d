/// `warp-reduce`: an atomicAdd to a warp-uniform address becomes a
/// warp-shuffle sum with one atomic per warp (docs/passes/warp-reduce.md).
#ifndef CUDAL1_PASSES_WARPREDUCE_H
#define CUDAL1_PASSES_WARPREDUCE_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class WarpReduce : public Transform {
public:
  static constexpr const char *passName = "warp-reduce";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "sum an atomicAdd's values over the warp with shuffles; one atomic per warp";
  }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
