/// `grid-stride`: turns a guarded 1-D elementwise kernel into a grid-stride
/// loop, so that any grid size covers the whole range (docs/passes/grid-stride.md).
#ifndef CUDAL1_PASSES_GRIDSTRIDE_H
#define CUDAL1_PASSES_GRIDSTRIDE_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class GridStride : public Transform {
public:
  static constexpr const char *passName = "grid-stride";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "turn a guarded 1-D elementwise kernel into a grid-stride loop";
  }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
