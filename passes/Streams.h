/// `streams`: a launch runs on a side stream, concurrently with the
/// independent launches that follow it, joined before the next statement
/// that is not one of them (docs/passes/streams.md).
#ifndef CUDAL1_PASSES_STREAMS_H
#define CUDAL1_PASSES_STREAMS_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class Streams : public Transform {
public:
  static constexpr const char *passName = "streams";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "run a launch on a side stream, overlapping the independent launches after it";
  }
  Level level() const override { return Level::Launch; }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &, Target) const override { return {}; }
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
