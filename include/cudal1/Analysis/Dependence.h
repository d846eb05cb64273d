// Dependences between consecutive launches of a host function, decided with
// MLIR's Presburger library: can one launch's writes meet the other's reads
// or writes, and if so only within the same thread (element to element) or
// across threads. The legality base for fusion and streams (docs/Analysis.md).
#ifndef CUDAL1_ANALYSIS_DEPENDENCE_H
#define CUDAL1_ANALYSIS_DEPENDENCE_H

#include "cudal1/Frontend/ProgramModel.h"

#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
}

namespace cudal1 {

enum class DependenceResult {
  Disjoint,    ///< the two launches never touch a common element
  SameThread,  ///< they meet only where global thread ids are equal
  CrossThread, ///< some thread touches an element another thread touched
  Unknown      ///< not decidable here (non-affine index, symbolic stride, offset pointer)
};
const char *toString(DependenceResult r);

struct BufferDependence {
  std::string buffer;
  std::string kind; ///< write-read, read-write or write-write (first launch, second launch)
  DependenceResult result = DependenceResult::Unknown;
  std::string detail; ///< a witness for cross-thread, the reason for unknown
};

struct LaunchDependence {
  unsigned first = 0, second = 0; ///< launch ids, first before second
  bool syncBetween = false;       ///< a host synchronization or copy lies between
  std::vector<BufferDependence> buffers;
  /// The worst result over all buffers (Disjoint when they share none).
  DependenceResult overall() const;
};

/// One pair of launches (first before second), consecutive or not.
LaunchDependence analyzeLaunchPair(const ProgramModel &model, unsigned first, unsigned second,
                                   mlir::MLIRContext &ctx);

/// Each pair of consecutive launches of `fn`.
std::vector<LaunchDependence> analyzeLaunchPairs(const ProgramModel &model, const HostFunction &fn,
                                                 mlir::MLIRContext &ctx);

/// The core test, exposed for unit tests: launches A and B of kernels with
/// the given normalized access indices, guards and launch dimensionality.
struct AccessInstance {
  std::string index;         ///< normalized
  std::vector<Guard> guards; ///< normalized
  unsigned launchDims = 0;   ///< 1..3; 0 when unknown (treated as 3)
  /// Renames kernel names to launch-independent ones (a parameter to its
  /// argument); identity when empty.
  std::vector<std::pair<std::string, std::string>> rename;
};
BufferDependence testAccessPair(const AccessInstance &a, const AccessInstance &b,
                                mlir::MLIRContext &ctx);

} // namespace cudal1

#endif
