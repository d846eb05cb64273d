// Small builders shared by the policy's tests.
#ifndef CUDAL1_TEST_UNIT_POLICY_POLICYTESTUTIL_H
#define CUDAL1_TEST_UNIT_POLICY_POLICYTESTUTIL_H

#include "cudal1/Tune/KernelState.h"

#include <string>
#include <vector>

namespace cudal1::test {

inline PlanStep step(const std::string &kernel, const std::string &transform,
                     std::vector<std::pair<std::string, std::string>> params = {}) {
  PlanStep s;
  s.scope.kernel = kernel;
  s.transform = transform;
  s.params = std::move(params);
  return s;
}

/// A kernel with a few analysis features and a few legal steps.
inline KernelState kernelState(const std::string &name, double atomics, double strided) {
  KernelState k;
  k.key = "k" + name;
  k.name = name;
  k.gpu = describeGpu("NVIDIA H200", "sm_90");
  k.featureVersion = 1;
  k.features = {{"atomics", atomics}, {"frac_strided", strided}, {"loops", 1}};
  k.originalMs = 0.5;
  k.steps = {step(name, "warp-reduce"),
             step(name, "coalesce"),
             step(name, "vectorize", {{"width", "16"}}),
             step(name, "vectorize", {{"width", "8"}}),
             step(name, "restrict"),
             step(name, "unroll", {{"loop", "0"}, {"factor", "4"}}),
             step(name, "launch-config", {{"block", "256"}}),
             step(name, "launch-config", {{"block", "32x8"}})};
  return k;
}

} // namespace cudal1::test

#endif
