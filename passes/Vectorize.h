/// `vectorize`: each thread of a guarded element-wise kernel handles W
/// consecutive elements through 8- or 16-byte vector loads and stores, with
/// a run-time alignment check, a scalar tail, and every launch's grid divided
/// by W (docs/passes/vectorize.md).
#ifndef CUDAL1_PASSES_VECTORIZE_H
#define CUDAL1_PASSES_VECTORIZE_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class Vectorize : public Transform {
public:
  static constexpr const char *passName = "vectorize";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "8- or 16-byte vector loads and stores for unit-stride accesses (alignment check, "
           "scalar tail); the grid of every launch shrinks accordingly";
  }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  std::string checkParams(TransformContext &ctx, Target t, const PlanStep &step) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
  std::string remapLaunchFor(const PlanStep &step, const std::vector<unsigned> &pointerElementBytes,
                             std::optional<LaunchRemapStep> &out) const override;
};

} // namespace cudal1

#endif
