/// `async-copy`: a device-to-host cudaMemcpy runs asynchronously through a
/// pinned staging buffer, overlapped with the independent launches after it,
/// and is finished before the next statement that is not one of them
/// (docs/passes/async-copy.md).
#ifndef CUDAL1_PASSES_ASYNCCOPY_H
#define CUDAL1_PASSES_ASYNCCOPY_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class AsyncCopy : public Transform {
public:
  static constexpr const char *passName = "async-copy";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "a device-to-host copy through pinned memory, overlapped with the independent "
           "launches after it";
  }
  Level level() const override { return Level::HostCopy; }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &, Target) const override { return {}; }
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
