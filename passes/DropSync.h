/// `drop-sync`: removes a host synchronization that nothing on the host
/// depends on before the next synchronizing call (docs/passes/drop-sync.md).
#ifndef CUDAL1_PASSES_DROPSYNC_H
#define CUDAL1_PASSES_DROPSYNC_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class DropSync : public Transform {
public:
  static constexpr const char *passName = "drop-sync";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "remove a host synchronization that nothing depends on before the next one";
  }
  Level level() const override { return Level::HostSync; }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &, Target) const override { return {}; }
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
