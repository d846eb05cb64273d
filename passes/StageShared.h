/// `stage-shared`: a kernel whose one store and its reads disagree on which
/// thread index is unit-stride (a naive transpose) stages its values through
/// a padded shared tile so that both sides coalesce
/// (docs/passes/stage-shared.md).
#ifndef CUDAL1_PASSES_STAGESHARED_H
#define CUDAL1_PASSES_STAGESHARED_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class StageShared : public Transform {
public:
  static constexpr const char *passName = "stage-shared";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "stage a transposing store through a padded shared tile (reads and writes coalesce)";
  }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  std::string checkParams(TransformContext &ctx, Target t, const PlanStep &step) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
  std::optional<LaunchRemapStep> remapLaunch(const PlanStep &step) const override;
};

} // namespace cudal1

#endif
