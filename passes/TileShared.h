/// `tile-shared`: shared-memory tiling of the canonical dot-product loop of a
/// matrix product, optionally with register blocking (rb outputs per thread)
/// (docs/passes/tile-shared.md).
#ifndef CUDAL1_PASSES_TILESHARED_H
#define CUDAL1_PASSES_TILESHARED_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class TileShared : public Transform {
public:
  static constexpr const char *passName = "tile-shared";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "stage the operands of a dot-product loop through shared-memory tiles";
  }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  std::string checkParams(TransformContext &ctx, Target t, const PlanStep &step) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
  std::optional<LaunchRemapStep> remapLaunch(const PlanStep &step) const override;

private:
  /// rb > 1: each thread computes rb outputs along y; the launches get
  /// blocks of tile x tile/rb threads.
  void applyRegisterBlocking(TransformContext &ctx, Target t, unsigned tile, unsigned rb) const;
};

} // namespace cudal1

#endif
