/// `fast-math`: single-precision math calls (and optionally float divisions)
/// become CUDA's fast intrinsics; plans with it are verified with the looser
/// tolerance (docs/passes/fast-math.md).
#ifndef CUDAL1_PASSES_FASTMATH_H
#define CUDAL1_PASSES_FASTMATH_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class FastMath : public Transform {
public:
  static constexpr const char *passName = "fast-math";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "expf/logf/sinf/... become __expf/__logf/__sinf/...; div=yes also a / b → __fdividef";
  }
  bool fastMath() const override { return true; }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
