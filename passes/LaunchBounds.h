/// `launch-bounds`: `__launch_bounds__(threads, minBlocks)` on a kernel whose
/// launches all use compile-time block sizes (docs/passes/launch-bounds.md).
#ifndef CUDAL1_PASSES_LAUNCHBOUNDS_H
#define CUDAL1_PASSES_LAUNCHBOUNDS_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class LaunchBounds : public Transform {
public:
  static constexpr const char *passName = "launch-bounds";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "__launch_bounds__(threads, min-blocks) from the file's constant block sizes";
  }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  std::string checkParams(TransformContext &ctx, Target t, const PlanStep &step) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
