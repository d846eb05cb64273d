// What a plan does to a launch's grid and block, as data that needs no LLVM
// (issue 15, the split path's kernel part): a closed set of steps, each the
// arithmetic one pass writes into the launches it rewrites. The passes
// return their step (Transform::remapLaunch), the tuner's replay applies
// them to the captured launches (replayLaunch, lib/Tune/ReplayEvaluator.cpp)
// and cudal1-eval applies the same steps, read from the kernel part's
// manifest (docs/formats/kernel-plans.md), on the GPU machine: both compute
// the launch with this code. A kernel bundle's variant line carries the
// remap (`remap=`), and the worker applies it to each captured launch.
//
// Text (one step each, ';' between steps, no blanks):
//   reshape(BX[xBY[xBZ]])  the same threads in blocks of BX x BY x BZ: each
//                          dimension's grid is (grid * block) / B rounded up
//                          (launch-config)
//   divide-x(F)            the x grid divided by F, rounded up; the block
//                          kept (coarsen)
//   lanes(L,K)             every thread along x becomes L lanes, in 1-D
//                          blocks of K threads: grid.x = ceil(grid.x *
//                          block.x * L / K), at most 2^31 - 1; grid y and z
//                          kept (warp-rows)
//   tiles(T,BY)            x and y covered by tiles of T threads, blocks of
//                          T x BY: grid.x|y = ceil(grid * block / T), grid.z
//                          times block.z (stage-shared)
#ifndef CUDAL1_EVAL_LAUNCHREMAP_H
#define CUDAL1_EVAL_LAUNCHREMAP_H

#include "cudal1/Eval/Bundle.h"
#include "cudal1/Eval/Error.h"
#include "cudal1/Eval/LaunchRemapStep.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cudal1 {

struct CapturedLaunch;

/// The steps of a plan, in the plan's order; empty: the launch is kept.
struct LaunchRemap {
  std::vector<LaunchRemapStep> steps;
  bool empty() const { return steps.empty(); }
  void apply(uint64_t grid[3], uint64_t block[3]) const;
  /// The steps' texts joined by ';' ("" when empty).
  std::string str() const;
  /// The configuration that replaces a captured launch of `grid` and
  /// `block` (grid and block both given; none when the remap is empty), or
  /// why the result is no CUDA launch (a block over 1024 threads, a grid
  /// over 2^31 - 1 along x or 65535 along y or z).
  Expected<LaunchOverride> overrideFor(const uint32_t grid[3], const uint32_t block[3]) const;
  /// Whether every launch of `launches` remaps to a CUDA launch (each on
  /// its own: a kernel launched with several shapes remaps each shape), or
  /// why one does not (overrideFor's message, with the launch's index).
  Status checkLaunches(const std::vector<CapturedLaunch> &launches) const;
  bool operator==(const LaunchRemap &o) const { return steps == o.steps; }
  bool operator!=(const LaunchRemap &o) const { return !(*this == o); }
};

/// Parses one step's text; the message says what is wrong with it.
Expected<LaunchRemapStep> parseLaunchRemapStep(const std::string &text);
/// Parses steps joined by ';' ("" is the empty remap).
Expected<LaunchRemap> parseLaunchRemap(const std::string &text);

} // namespace cudal1

#endif
