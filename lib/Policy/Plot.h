// The training curve as an SVG written directly (no plotting library is
// needed: matplotlib is not part of the toolchain).
#ifndef CUDAL1_LIB_POLICY_PLOT_H
#define CUDAL1_LIB_POLICY_PLOT_H

#include "Torch/Network.h"

#include <string>
#include <vector>

namespace cudal1 {

/// Six panels over the curve points of every stage (losses, pair accuracy,
/// top-1, verification accuracy, stage (c)'s return and found share), train
/// and validation each, stages marked; `title` above them.
std::string curveSvg(const std::vector<policynet::CurvePoint> &curve, const std::string &title);

} // namespace cudal1

#endif
