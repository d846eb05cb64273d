// The policy's encoding: shapes, determinism, and the values of a few
// encodings checked position by position.
#include "cudal1/Policy/Encoding.h"

#include "PolicyTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace cudal1;
using namespace cudal1::test;

namespace {

EncodingSchema schemaFor(const std::vector<KernelState> &states) {
  std::vector<const KernelState *> ptrs;
  std::vector<std::vector<PlanStep>> plans;
  for (const KernelState &s : states) {
    ptrs.push_back(&s);
    for (const PlanStep &st : s.steps)
      plans.push_back({st});
  }
  return fitSchema(ptrs, plans, 1);
}

size_t indexOf(const std::vector<std::string> &v, const std::string &x) {
  return size_t(std::find(v.begin(), v.end(), x) - v.begin());
}

TEST(Encoding, ShapesFollowTheSchema) {
  std::vector<KernelState> ks = {kernelState("a", 0, 0), kernelState("b", 2, 0.5)};
  EncodingSchema s = schemaFor(ks);
  // Vocabularies: 6 transforms, 4 parameter names (block, factor, loop, width).
  EXPECT_EQ(s.transforms.size(), 6u);
  EXPECT_EQ(s.params, (std::vector<std::string>{"block", "factor", "loop", "width"}));
  EXPECT_EQ(s.stepDim(), 2u + 7u + 6u + 1u + 4u);
  EXPECT_EQ(s.planDim(), kPolicyStepCap * s.stepDim() + 2);
  EXPECT_EQ(encodeState(s, ks[0]).size(), s.stateDim());
  EXPECT_EQ(encodePlan(s, {ks[0].steps[0]}).size(), s.planDim());
  Exemplar e;
  e.steps = {ks[0].steps[1]};
  EXPECT_EQ(encodeExemplar(s, e).size(), s.exemplarDim());
  KernelState withEx = ks[0];
  withEx.exemplars.assign(kMaxExemplars + 5, e);
  EncodedInput in = encodeInput(s, withEx, {{ks[0].steps[0]}, {ks[0].steps[1], ks[0].steps[2]}});
  EXPECT_EQ(in.numExemplars, kMaxExemplars); // only the most recent ones
  EXPECT_EQ(in.exemplars.size(), size_t(kMaxExemplars) * s.exemplarDim());
  EXPECT_EQ(in.numPlans, 2u);
  EXPECT_EQ(in.plans.size(), 2u * s.planDim());
}

TEST(Encoding, DeterministicAndIndependentOfDataOrder) {
  std::vector<KernelState> ks = {kernelState("a", 0, 0), kernelState("b", 2, 0.5),
                                 kernelState("c", 1, 0.25)};
  EncodingSchema s1 = schemaFor(ks);
  std::reverse(ks.begin(), ks.end());
  EncodingSchema s2 = schemaFor(ks);
  EXPECT_EQ(s1.stateNames, s2.stateNames);
  EXPECT_EQ(s1.transforms, s2.transforms);
  for (size_t i = 0; i < s1.stateDim(); ++i) // sums in another order: equal to rounding
    EXPECT_NEAR(s1.stateMean[i], s2.stateMean[i], 1e-12);
  EXPECT_EQ(encodePlan(s1, ks[0].steps), encodePlan(s1, ks[0].steps));
  EXPECT_EQ(encodeState(s1, ks[1]), encodeState(s1, ks[1]));
}

TEST(Encoding, StateValuesAreNormalizedSignedLogs) {
  std::vector<KernelState> ks = {kernelState("a", 0, 0), kernelState("b", 3, 0.5)};
  EncodingSchema s = schemaFor(ks);
  size_t i = indexOf(s.stateNames, "kernel.atomics");
  ASSERT_LT(i, s.stateNames.size());
  // Two kernels: signed logs 0 and log(4); mean log(2), std log(2).
  EXPECT_NEAR(s.stateMean[i], std::log(4.0) / 2, 1e-12);
  EXPECT_NEAR(s.stateStd[i], std::log(4.0) / 2, 1e-12);
  std::vector<float> z = encodeState(s, ks[1]);
  EXPECT_NEAR(z[i], 1.0, 1e-6);
  EXPECT_NEAR(encodeState(s, ks[0])[i], -1.0, 1e-6);
  // Inputs equal on both kernels are constant: std 1, encoded as 0.
  size_t sm = indexOf(s.stateNames, "gpu.sm_count");
  ASSERT_LT(sm, s.stateNames.size());
  EXPECT_EQ(s.stateStd[sm], 1.0);
  EXPECT_EQ(z[sm], 0.0f);
  // Unknown inputs (no original time yet, a GPU known by name only) are the
  // training mean, not a 0 ms kernel on a 0-SM GPU.
  KernelState untimed = ks[1];
  untimed.originalMs.reset();
  untimed.gpu = describeGpu("Some Future GPU", "");
  std::pair<std::string, double> w;
  std::vector<float> zu = encodeState(s, untimed, &w);
  EXPECT_EQ(zu[indexOf(s.stateNames, "time.original_us")], 0.0f);
  EXPECT_EQ(zu[sm], 0.0f);
  EXPECT_EQ(w.first, "kernel.atomics"); // the largest |z| is a real input's
  // Far outside the range: the worst input is named.
  KernelState far = ks[1];
  far.features[0].second = 1e9;
  std::pair<std::string, double> worst;
  encodeState(s, far, &worst);
  EXPECT_EQ(worst.first, "kernel.atomics");
  EXPECT_GT(worst.second, 10);
}

TEST(Encoding, PlanValuesPositionByPosition) {
  std::vector<KernelState> ks = {kernelState("a", 0, 0)};
  EncodingSchema s = schemaFor(ks);
  unsigned d = s.stepDim(), T = unsigned(s.transforms.size());
  PlanStep lc = step("a", "launch-config", {{"block", "32x8"}});
  PlanStep un;
  un.scope.launch = 3;
  un.transform = "unroll";
  un.params = {{"loop", "0"}, {"factor", "4"}};
  std::vector<float> p = encodePlan(s, {lc, un});
  // Step 0: present, position 1/4, launch-config's one-hot, kernel scope, no site id.
  EXPECT_EQ(p[0], 1.0f);
  EXPECT_EQ(p[1], 0.25f);
  size_t lcId = 1 + indexOf(s.transforms, "launch-config");
  for (unsigned t = 0; t <= T; ++t)
    EXPECT_EQ(p[2 + t], t == lcId ? 1.0f : 0.0f) << t;
  EXPECT_EQ(p[2 + T + 1 + 0], 1.0f); // scope kind 0: a kernel
  EXPECT_EQ(p[2 + T + 1 + 6], 0.0f); // site id
  size_t block = 2 + T + 1 + 6 + 1 + indexOf(s.params, "block");
  EXPECT_FLOAT_EQ(p[block], float(std::log2(2.0 + 256)));
  // Step 1: a launch scope @#3, loop=0 differs from no loop.
  EXPECT_EQ(p[d + 1], 0.5f);
  EXPECT_EQ(p[d + 2 + T + 1 + 1], 1.0f); // scope kind 1: a launch
  EXPECT_FLOAT_EQ(p[d + 2 + T + 1 + 6], float(std::log2(5.0)));
  EXPECT_FLOAT_EQ(p[d + 2 + T + 1 + 6 + 1 + indexOf(s.params, "loop")], 1.0f);
  EXPECT_FLOAT_EQ(p[d + 2 + T + 1 + 6 + 1 + indexOf(s.params, "factor")], float(std::log2(6.0)));
  // Padding, step count, not truncated.
  for (unsigned i = 2 * d; i < kPolicyStepCap * d; ++i)
    EXPECT_EQ(p[i], 0.0f);
  EXPECT_EQ(p[kPolicyStepCap * d], 0.5f);
  EXPECT_EQ(p[kPolicyStepCap * d + 1], 0.0f);
  // An unknown transform takes slot 0; a plan over the cap is flagged.
  std::vector<float> u = encodePlan(s, {step("a", "no-such-pass")});
  EXPECT_EQ(u[2], 1.0f);
  std::vector<PlanStep> longPlan(kPolicyStepCap + 1, lc);
  EXPECT_EQ(encodePlan(s, longPlan)[kPolicyStepCap * d + 1], 1.0f);
}

TEST(Encoding, ExemplarCarriesItsResult) {
  std::vector<KernelState> ks = {kernelState("a", 0, 0)};
  EncodingSchema s = schemaFor(ks);
  Exemplar e;
  e.steps = {ks[0].steps[0]};
  e.measured.outcome = Outcome::Ok;
  e.measured.timed = true;
  e.measured.speedup = 2.0;
  e.thisRun = true;
  std::vector<float> x = encodeExemplar(s, e);
  unsigned b = s.planDim();
  EXPECT_FLOAT_EQ(x[b], float(std::log(2.0)));
  EXPECT_EQ(std::vector<float>(x.begin() + b + 1, x.end()),
            (std::vector<float>{1, 1, 0, 0, 1})); // timed, ok, not wrong, not failed, this run
  e.measured.outcome = Outcome::WrongAfterTiming;
  e.measured.timed = false;
  e.thisRun = false;
  x = encodeExemplar(s, e);
  EXPECT_EQ(std::vector<float>(x.begin() + b, x.end()), (std::vector<float>{0, 0, 0, 1, 0, 0}));
  e.measured.outcome = Outcome::CompileError;
  e.measured.speedup = 1e6; // not timed: the speedup is ignored
  x = encodeExemplar(s, e);
  EXPECT_EQ(std::vector<float>(x.begin() + b, x.end()), (std::vector<float>{0, 0, 0, 0, 1, 0}));
}

TEST(Encoding, EffectsAreNormalizedAndFlagged) {
  std::vector<KernelState> ks = {kernelState("a", 0, 0)};
  std::vector<const KernelState *> ptrs = {&ks[0]};
  std::vector<std::vector<PlanStep>> plans = {{ks[0].steps[2]}, {ks[0].steps[6]}, {ks[0].steps[4]}};
  // vectorize: 16-byte loads; launch-config: twice the block; restrict: no
  // effect known.
  EffectFeatures wide = {{"vector_bytes", 16}, {"block_threads_log2_delta", 0}};
  EffectFeatures block = {{"vector_bytes", 4}, {"block_threads_log2_delta", 1}};
  EncodingSchema s = fitSchema(ptrs, plans, 1, {&wide, &block, nullptr}, 1);
  EXPECT_EQ(s.effectVersion, 1);
  EXPECT_EQ(s.effectNames, (std::vector<std::string>{"block_threads_log2_delta", "vector_bytes"}));
  ASSERT_EQ(s.effectDim(), 3u);
  EXPECT_EQ(s.planDim(), kPolicyStepCap * s.stepDim() + 2 + 3);
  // Moments of the signed logs over the two plans with an effect.
  EXPECT_NEAR(s.effectMean[1], (std::log1p(16.0) + std::log1p(4.0)) / 2, 1e-12);
  EXPECT_NEAR(s.effectStd[1], (std::log1p(16.0) - std::log1p(4.0)) / 2, 1e-12);
  EXPECT_NEAR(s.effectMean[0], std::log1p(1.0) / 2, 1e-12);
  unsigned at = kPolicyStepCap * s.stepDim() + 2;
  std::vector<float> p = encodePlan(s, plans[0], &wide);
  EXPECT_EQ(p[at], 1.0f);             // known
  EXPECT_NEAR(p[at + 1], -1.0, 1e-6); // block: 0 against a mean of log(2)/2
  EXPECT_NEAR(p[at + 2], 1.0, 1e-6);  // 16 bytes: one deviation above
  // Unknown: the flag and every slot 0 (the training mean); the steps alone
  // are encoded the same either way.
  std::vector<float> u = encodePlan(s, plans[0]);
  EXPECT_EQ(std::vector<float>(u.begin() + at, u.end()), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(std::vector<float>(u.begin(), u.begin() + at),
            std::vector<float>(p.begin(), p.begin() + at));
  // A name the schema lacks is left out; one the effect lacks is 0.
  EffectFeatures other = {{"vector_bytes", 16}, {"no_such_effect", 5}};
  std::vector<float> o = encodePlan(s, plans[0], &other);
  EXPECT_EQ(o[at], 1.0f);
  EXPECT_EQ(o[at + 1], 0.0f);
  EXPECT_NEAR(o[at + 2], 1.0, 1e-6);
  // Exemplars carry their effect; encodeInput takes the plans' effects.
  Exemplar e;
  e.steps = plans[0];
  e.effect = wide;
  std::vector<float> x = encodeExemplar(s, e);
  EXPECT_EQ(std::vector<float>(x.begin(), x.begin() + s.planDim()), p);
  EncodedInput in = encodeInput(s, ks[0], plans, nullptr);
  std::vector<const EffectFeatures *> effects = {&wide, nullptr, &block};
  EncodedInput withEffects = encodeInput(s, ks[0], plans, &effects);
  EXPECT_EQ(in.plans[at], 0.0f);
  EXPECT_EQ(withEffects.plans[at], 1.0f);
  EXPECT_EQ(withEffects.plans[s.planDim() + at], 0.0f);
  EXPECT_EQ(withEffects.plans[2 * s.planDim() + at], 1.0f);
  // Without any effect there are no effect slots at all.
  EncodingSchema bare = fitSchema(ptrs, plans, 1, {nullptr, nullptr, nullptr}, 1);
  EXPECT_EQ(bare.effectVersion, 0);
  EXPECT_EQ(bare.effectDim(), 0u);
  EXPECT_EQ(encodePlan(bare, plans[0], &wide).size(), bare.planDim());
  // With effects, the schema round-trips through JSON.
  llvm::Expected<EncodingSchema> back = schemaFromJson(schemaToJson(s));
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_TRUE(*back == s);
  llvm::json::Object unsorted = *schemaToJson(s).getAsObject();
  unsorted["effects"] =
      llvm::json::Array{llvm::json::Object{{"name", "z"}, {"mean", 0.0}, {"std", 1.0}},
                        llvm::json::Object{{"name", "a"}, {"mean", 0.0}, {"std", 1.0}}};
  llvm::Expected<EncodingSchema> bad = schemaFromJson(llvm::json::Value(std::move(unsorted)));
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("'effects' must be sorted"), std::string::npos);
}

TEST(Encoding, SchemaJsonRoundTripAndRefusals) {
  std::vector<KernelState> ks = {kernelState("a", 0, 0), kernelState("b", 1, 1)};
  EncodingSchema s = schemaFor(ks);
  llvm::json::Value v = schemaToJson(s);
  llvm::Expected<EncodingSchema> back = schemaFromJson(v);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_TRUE(*back == s);

  llvm::json::Object bad = *v.getAsObject();
  bad["plan_dim"] = 3;
  llvm::Expected<EncodingSchema> e1 = schemaFromJson(llvm::json::Value(std::move(bad)));
  ASSERT_FALSE(bool(e1));
  EXPECT_NE(llvm::toString(e1.takeError()).find("dimensions do not match"), std::string::npos);

  llvm::json::Object unsorted = *v.getAsObject();
  unsorted["transforms"] = llvm::json::Array{"zeta", "alpha"};
  llvm::Expected<EncodingSchema> e2 = schemaFromJson(llvm::json::Value(std::move(unsorted)));
  ASSERT_FALSE(bool(e2));
  EXPECT_NE(llvm::toString(e2.takeError()).find("sorted"), std::string::npos);

  llvm::Expected<EncodingSchema> e3 = schemaFromJson(llvm::json::Value(42));
  ASSERT_FALSE(bool(e3));
  EXPECT_NE(llvm::toString(e3.takeError()).find("not an object"), std::string::npos);
}

} // namespace
