/// `loop-streams`: the iterations of a host loop whose body is one launch
/// are spread over S side streams (iteration i on stream i % S), forked
/// from the launch's stream before the loop and joined after it, when each
/// iteration's launch writes its own buffers (docs/passes/loop-streams.md).
#ifndef CUDAL1_PASSES_LOOPSTREAMS_H
#define CUDAL1_PASSES_LOOPSTREAMS_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class LoopStreams : public Transform {
public:
  static constexpr const char *passName = "loop-streams";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "spread the iterations of a loop of one launch over side streams";
  }
  Level level() const override { return Level::HostLoop; }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
