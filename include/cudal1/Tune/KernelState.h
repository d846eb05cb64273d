// What a search strategy knows about one kernel when it proposes: the
// kernel, the GPU, the analysis features, the original's measured time and
// roofline floor, the legal steps, and the exemplars (every plan measured
// for this kernel on this GPU, earlier sessions' from the tuning database
// and this run's). Standard types only, so that it can cross into the
// policy's libtorch code unchanged.
#ifndef CUDAL1_TUNE_KERNELSTATE_H
#define CUDAL1_TUNE_KERNELSTATE_H

#include "cudal1/Eval/Measurement.h"
#include "cudal1/Tune/Space.h"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace cudal1 {

/// The GPU a kernel is tuned on: another GPU is an input, not a surprise.
/// Zero where unknown (a split path whose GPU is known only by name).
struct GpuDescriptor {
  std::string name; ///< "NVIDIA H200"
  std::string arch; ///< "sm_90"
  int smCount = 0;
  double memBandwidthGBs = 0;
  double l2Bytes = 0;
  double sharedPerSmBytes = 0;
  int registersPerSm = 0;
  int computeMajor = 0, computeMinor = 0;
};

/// What is known of a GPU by its name: the vendor's nominal figures for the
/// models cudal1 has been measured on (the H200, the H100), else the name
/// and architecture alone.
GpuDescriptor describeGpu(const std::string &name, const std::string &arch);

/// A plan's effect on its kernel (Tune/Effect.h): named values in a fixed order.
using EffectFeatures = std::vector<std::pair<std::string, double>>;
class EffectCache;

/// One plan measured for the kernel: the evaluator's Measurement as the
/// database or this run's tuner holds it (outcome, judge, speedup and
/// interval, times).
struct Exemplar {
  std::vector<PlanStep> steps;
  Measurement measured;
  std::string session;                  ///< the session that measured it (empty: this run's)
  bool thisRun = false;                 ///< measured in the running session
  std::optional<EffectFeatures> effect; ///< when known (Tune/Effect.h)
};

struct KernelState {
  std::string key, name;
  bool host = false;
  GpuDescriptor gpu;
  std::vector<std::pair<std::string, double>> features;
  int featureVersion = 0;
  /// The original kernel's own time in this run's measurements (replay:
  /// summed over its captured launches), and its floor.
  std::optional<double> originalMs;
  /// The original whole program's time in this run's program-level
  /// measurements: another quantity, never mixed into originalMs.
  std::optional<double> programMs;
  double floorBytes = 0, floorFlops = 0;
  std::vector<PlanStep> steps; ///< legal steps
  /// Steps legal after others, in the listing's order (TuneKernel::composed).
  std::vector<ComposedStep> composed;
  std::vector<Exemplar> exemplars;
  std::set<std::string> tried; ///< plan texts proposed in this run
  /// The effects of plans on the kernel's translation unit (Tune/Effect.h),
  /// shared by the unit's kernels; null where no source is at hand.
  std::shared_ptr<EffectCache> effects;
};

} // namespace cudal1

#endif
