/// `coarsen`: each thread handles F elements and the grid of one launch
/// shrinks by F (docs/passes/coarsen.md).
#ifndef CUDAL1_PASSES_COARSEN_H
#define CUDAL1_PASSES_COARSEN_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class Coarsen : public Transform {
public:
  static constexpr const char *passName = "coarsen";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "shrink the grid of a launch by a factor; the kernel becomes grid-stride so each "
           "thread handles several elements";
  }
  Level level() const override { return Level::Launch; }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  std::string checkParams(TransformContext &ctx, Target t, const PlanStep &step) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
  std::optional<LaunchRemapStep> remapLaunch(const PlanStep &step) const override;
};

} // namespace cudal1

#endif
