/// `graph`: the launches of a host loop's iteration are captured once as a
/// CUDA graph and replayed; later iterations update the kernel arguments on
/// the executable graph (docs/passes/graph.md).
#ifndef CUDAL1_PASSES_GRAPH_H
#define CUDAL1_PASSES_GRAPH_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class Graph : public Transform {
public:
  static constexpr const char *passName = "graph";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "capture the launches of a host loop once as a CUDA graph and replay it per iteration";
  }
  Level level() const override { return Level::HostLoop; }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &, Target) const override { return {}; }
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
