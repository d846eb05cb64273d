/// `unroll`: `#pragma unroll N` on one loop of a kernel (docs/passes/unroll.md).
#ifndef CUDAL1_PASSES_UNROLL_H
#define CUDAL1_PASSES_UNROLL_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class Unroll : public Transform {
public:
  static constexpr const char *passName = "unroll";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "unroll a for loop by a factor (#pragma unroll)";
  }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  std::string checkParams(TransformContext &ctx, Target t, const PlanStep &step) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
