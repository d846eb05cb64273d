/// `persistent`: a host loop of launches becomes one launch of a kernel that
/// runs the whole loop on the device, in one block (__syncthreads between
/// the phases), as a cooperative grid (grid.sync) or, where every element
/// stays with its thread, with the launches' own threads and no barrier
/// (docs/passes/persistent.md).
#ifndef CUDAL1_PASSES_PERSISTENT_H
#define CUDAL1_PASSES_PERSISTENT_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class Persistent : public Transform {
public:
  static constexpr const char *passName = "persistent";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "run a host loop of launches as one kernel that loops on the device (one block, a "
           "cooperative grid, or each thread owning its elements)";
  }
  Level level() const override { return Level::HostLoop; }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  std::string checkParams(TransformContext &ctx, Target t, const PlanStep &step) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
