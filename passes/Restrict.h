/// `restrict`: `__restrict__` on a kernel's pointer parameters and `const` on
/// the read-only ones, when every launch in the file passes distinct buffers
/// (docs/passes/restrict.md).
#ifndef CUDAL1_PASSES_RESTRICT_H
#define CUDAL1_PASSES_RESTRICT_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class Restrict : public Transform {
public:
  static constexpr const char *passName = "restrict";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "__restrict__ on pointer parameters, const on read-only pointees";
  }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
