/// `fuse`: vertical fusion of a launch and the launches right after it
/// (`count`, 2 by default) into one launch of a new kernel that runs their
/// bodies in order in each thread (docs/passes/fuse.md).
#ifndef CUDAL1_PASSES_FUSE_H
#define CUDAL1_PASSES_FUSE_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class Fuse : public Transform {
public:
  static constexpr const char *passName = "fuse";
  /// The longest chain offered and accepted (`count`): the listing stays
  /// linear in the number of launches (at most this many pair tests per
  /// launch, times half this many).
  static constexpr unsigned maxChain = 8;
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "fuse a launch with the next ones (same configuration, element-to-element dependences)";
  }
  Level level() const override { return Level::Launch; }
  /// Whether the launch and the next one fuse (count=2).
  std::string legality(TransformContext &ctx, Target t) const override;
  /// count=2..K where the launches up to K fuse as one chain (K >= 3);
  /// nothing (plain `fuse`, count=2) otherwise.
  std::vector<ParamSpace> space(TransformContext &ctx, Target t) const override;
  /// count=N: the N launches from the target fuse (every pair of them).
  std::string checkParams(TransformContext &ctx, Target t, const PlanStep &step) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
