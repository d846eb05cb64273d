/// `fuse`: vertical fusion of a launch and the launch right after it into
/// one launch of a new kernel that runs both bodies in each thread
/// (docs/passes/fuse.md).
#ifndef CUDAL1_PASSES_FUSE_H
#define CUDAL1_PASSES_FUSE_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class Fuse : public Transform {
public:
  static constexpr const char *passName = "fuse";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "fuse a launch with the next one (same configuration, element-to-element dependences)";
  }
  Level level() const override { return Level::Launch; }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &, Target) const override { return {}; }
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
