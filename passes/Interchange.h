/// `interchange`: swaps the two loops of a perfect 2-deep nest inside a
/// thread when the inner loop then walks the contiguous dimension of more
/// accesses (docs/passes/interchange.md).
#ifndef CUDAL1_PASSES_INTERCHANGE_H
#define CUDAL1_PASSES_INTERCHANGE_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class Interchange : public Transform {
public:
  static constexpr const char *passName = "interchange";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "swap a perfect 2-deep loop nest so the inner loop walks unit-stride";
  }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  std::string checkParams(TransformContext &ctx, Target t, const PlanStep &step) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
