/// `break`: a test-only transform that makes a kernel wrong on purpose
/// (docs/passes/break.md). Registered only when CUDAL1_TEST_TRANSFORMS=1 is
/// in the environment, so that the judge's tests can propose faults through
/// `--tune` and check that every one is rejected; no user ever sees it.
#ifndef CUDAL1_PASSES_BREAK_H
#define CUDAL1_PASSES_BREAK_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

/// Whether the test-only transforms are registered in this process.
bool testTransformsEnabled();

class Break : public Transform {
public:
  static constexpr const char *passName = "break";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "TEST ONLY: a deliberately wrong kernel (off-by-one, race, skip-work, partial-write, "
           "side-stream)";
  }
  std::string legality(TransformContext &ctx, Target t) const override;
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  std::string checkParams(TransformContext &ctx, Target t, const PlanStep &step) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
  /// side-stream edits the kernel's launches: judged as a whole program.
  bool editsHostCode(const PlanStep &step) const override;
};

} // namespace cudal1

#endif
