/// `coalesce`: swaps the x and y thread dimensions of a kernel and of its
/// launches when that makes more global accesses unit-stride along
/// threadIdx.x (docs/passes/coalesce.md).
#ifndef CUDAL1_PASSES_COALESCE_H
#define CUDAL1_PASSES_COALESCE_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class Coalesce : public Transform {
public:
  static constexpr const char *passName = "coalesce";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "swap the x and y thread dimensions (kernel and launches) to coalesce accesses";
  }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
