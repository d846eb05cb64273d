/// `library`: a recognized matrix product (GEMM) or matrix-vector product
/// (GEMV) kernel and its launch replaced by a cuBLAS call
/// (docs/passes/library.md). The variant links -lcublas.
#ifndef CUDAL1_PASSES_LIBRARY_H
#define CUDAL1_PASSES_LIBRARY_H

#include "cudal1/Rewrite/Transform.h"

namespace cudal1 {

class Library : public Transform {
public:
  static constexpr const char *passName = "library";
  llvm::StringRef name() const override { return passName; }
  llvm::StringRef summary() const override {
    return "replace a recognized GEMM/GEMV kernel launch by a cuBLAS call";
  }
  Level level() const override { return Level::Launch; }
  std::vector<std::string> links() const override { return {"cublas"}; }
  std::string legality(TransformContext &ctx, Target t) const override;
  /// None offered to the tuner: `handle=` (static, local, setup) only says
  /// where the cuBLAS handle is made, for measuring the set-up apart from
  /// the call (docs/passes/library.md "Handle").
  std::vector<ParamSpace> space(TransformContext &, Target) const override { return {}; }
  std::string checkParams(TransformContext &ctx, Target t, const PlanStep &step) const override;
  llvm::Error apply(TransformContext &ctx, Target t, const PlanStep &step) const override;
};

} // namespace cudal1

#endif
