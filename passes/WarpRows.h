/// `warp-rows`: a kernel where each thread loops over a row gives each row to
/// a group of lanes that strides it and combines with shuffles
/// (docs/passes/warp-rows.md).
#ifndef CUDAL1_PASSES_WARPROWS_H
#define CUDAL1_PASSES_WARPROWS_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class WarpRows : public Transform {
public:
  static constexpr const char *passName = "warp-rows";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "a row per group of lanes: coalesced row loops, shuffle reductions";
  }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  std::string checkParams(TransformContext &ctx, Target t, const PlanStep &step) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
  std::optional<LaunchRemapStep> remapLaunch(const PlanStep &step) const override;
};

} // namespace cudal1

#endif
