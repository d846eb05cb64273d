// Per-kernel analysis over the ProgramModel: the affine form and the
// threadIdx.x stride of every global access, read/write sets per parameter,
// whether the kernel guards its index range, and the policy's features.
#ifndef CUDAL1_ANALYSIS_KERNELANALYSIS_H
#define CUDAL1_ANALYSIS_KERNELANALYSIS_H

#include "cudal1/Analysis/AffineIndex.h"
#include "cudal1/Frontend/ProgramModel.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir {
class MLIRContext;
}

namespace cudal1 {

struct AccessAnalysis {
  std::string affine; ///< the index as an affine expression over named variables; "" when not one
  Stride strideX;     ///< elements between adjacent threadIdx.x
  bool threadDependent = false;
  bool guarded = false; ///< a dominating condition bounds every thread dimension it uses
};

struct ParamSummary {
  bool reads = false, writes = false;
};

/// Version of the feature vector below; bump it when names or meanings change
/// (docs/Analysis.md lists them).
inline constexpr int featureVersion = 1;

struct KernelAnalysis {
  std::vector<AccessAnalysis> accesses; ///< parallel to Kernel::accesses
  std::vector<ParamSummary> params;     ///< parallel to Kernel::params
  /// Every access lies under a bound of the thread index (an if, an early
  /// return or a grid-stride loop), so running more threads than the
  /// original launch is safe.
  bool guarded = false;
  bool gridStride = false;
  std::vector<std::pair<std::string, double>> features;
};

KernelAnalysis analyzeKernel(const Kernel &k, mlir::MLIRContext &ctx);

} // namespace cudal1

#endif
