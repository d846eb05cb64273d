/// `launch-config`: a new block shape at a launch site, with the grid derived
/// from the original so that at least the same threads run
/// (docs/passes/launch-config.md).
#ifndef CUDAL1_PASSES_LAUNCHCONFIG_H
#define CUDAL1_PASSES_LAUNCHCONFIG_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class LaunchConfig : public Transform {
public:
  static constexpr const char *passName = "launch-config";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "change the block shape of a launch; the grid covers at least the original threads";
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
