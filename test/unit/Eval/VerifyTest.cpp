// The tolerance rule on hand-made buffers.
#include "cudal1/Eval/Verify.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace cudal1;

namespace {
VerifyResult run(const std::vector<float> &v, const std::vector<float> &o,
                 const std::vector<double> *ref, bool fastMath = false, Tolerance tol = {}) {
  VerifyResult r;
  CompareInput in;
  in.buffer = "arg 0";
  in.elem = ElemType::F32;
  in.variant = v.data();
  in.original = o.data();
  in.reference = ref ? ref->data() : nullptr;
  in.count = v.size();
  in.fastMath = fastMath;
  compareBuffer(in, tol, r);
  return r;
}
} // namespace

TEST(Verify, ArgTypes) {
  Expected<ArgType> t = parseArgType("f32*w");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->pointer && t->writeOnly && t->elem == ElemType::F32);
  EXPECT_EQ(formatArgType(*t), "f32*w");
  EXPECT_EQ(formatArgType(*parseArgType("b16")), "b16");
  EXPECT_EQ(parseArgType("i32")->elem, ElemType::I32);
  EXPECT_FALSE(parseArgType("f33").ok());
  EXPECT_FALSE(parseArgType("f32w").ok());
  EXPECT_FALSE(parseArgType("b").ok());
}

TEST(Verify, VariantAsGoodAsTheOriginalPasses) {
  std::vector<double> ref = {1.0, 2.0, 3.0};
  std::vector<float> o = {1.0f + 1e-6f, 2.0f, 3.0f - 2e-6f};
  std::vector<float> v = {1.0f - 2e-6f, 2.0f + 2e-7f, 3.0f + 4e-6f};
  VerifyResult r = run(v, o, &ref);
  EXPECT_TRUE(r.pass) << (r.mismatches.empty() ? "" : r.mismatches[0].got);
}

TEST(Verify, FarWorseThanTheOriginalFails) {
  std::vector<double> ref = {1.0, 2.0, 3.0};
  std::vector<float> o = {1.0f, 2.0f, 3.0f};
  std::vector<float> v = {1.0f, 2.001f, 3.0f};
  VerifyResult r = run(v, o, &ref);
  EXPECT_FALSE(r.pass);
  ASSERT_EQ(r.mismatches.size(), 1u);
  EXPECT_EQ(r.mismatches[0].index, 1u);
  EXPECT_NE(r.mismatches[0].expected.find("reference"), std::string::npos);
}

TEST(Verify, MoreAccurateThanAnInaccurateOriginalPasses) {
  // The DESIGN.md case: the float original is 25% off, the variant is right.
  std::vector<double> ref = {5.59e6};
  std::vector<float> o = {4.19e6f};
  std::vector<float> v = {5.5901e6f};
  EXPECT_TRUE(run(v, o, &ref).pass);
  // ... and the fallback (no reference) rejects it, as documented.
  EXPECT_FALSE(run(v, o, nullptr).pass);
}

TEST(Verify, NonFiniteWhereTheReferenceIsFiniteFails) {
  std::vector<double> ref = {1.0, 2.0};
  std::vector<float> o = {1.0f, 2.0f};
  float nan = std::numeric_limits<float>::quiet_NaN();
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(run({nan, 2.0f}, o, &ref).pass);
  EXPECT_FALSE(run({1.0f, inf}, o, &ref).pass);
  std::vector<double> refNan = {std::nan(""), 2.0};
  EXPECT_TRUE(run({nan, 2.0f}, {nan, 2.0f}, &refNan).pass);
  EXPECT_FALSE(run({0.0f, 2.0f}, {nan, 2.0f}, &refNan).pass);
}

TEST(Verify, FastMathIsLooserOnlyWhenAskedFor) {
  std::vector<double> ref = {1.0};
  std::vector<float> o = {1.0f};
  std::vector<float> v = {1.0f + 4e-5f};
  EXPECT_FALSE(run(v, o, &ref, false).pass);
  EXPECT_TRUE(run(v, o, &ref, true).pass);
}

TEST(Verify, IntegersAreExact) {
  std::vector<int> o = {1, 2, 3}, v = {1, 2, 4};
  VerifyResult r;
  CompareInput in;
  in.buffer = "arg 1";
  in.elem = ElemType::I32;
  in.variant = v.data();
  in.original = o.data();
  in.count = 3;
  compareBuffer(in, Tolerance(), r);
  EXPECT_FALSE(r.pass);
  ASSERT_EQ(r.mismatches.size(), 1u);
  EXPECT_EQ(r.mismatches[0].expected, "3");
  EXPECT_EQ(r.mismatches[0].got, "4");
  VerifyResult same;
  in.variant = o.data();
  compareBuffer(in, Tolerance(), same);
  EXPECT_TRUE(same.pass);
}

TEST(Verify, CountsAllButKeepsTheFirstFew) {
  std::vector<double> ref(100, 1.0);
  std::vector<float> o(100, 1.0f), v(100, 2.0f);
  VerifyResult r = run(v, o, &ref);
  EXPECT_EQ(r.badElements, 100u);
  EXPECT_EQ(r.mismatches.size(), 8u);
  EXPECT_EQ(r.mismatches[0].index, 0u);
}

TEST(Verify, FallbackScalesWithReductionLength) {
  std::vector<float> o = {1000.0f}, v = {1000.02f};
  EXPECT_FALSE(run(v, o, nullptr).pass);
  Tolerance tol;
  tol.reductionLength = 1 << 20;
  EXPECT_TRUE(run(v, o, nullptr, false, tol).pass);
}

TEST(Verify, ABaselineKeptAcrossChecksGivesTheSameVerdicts) {
  // A float sum's outputs: the reference, the original's roundoff, and
  // variants that reassociate (pass), copy the original (pass, by memcmp
  // when the original passes), or break some elements (fail).
  const size_t n = 4096;
  std::vector<double> ref(n);
  std::vector<float> orig(n), reassoc(n), broken(n);
  for (size_t i = 0; i < n; ++i) {
    ref[i] = std::sin(double(i) * 0.37) * 100.0;
    orig[i] = float(ref[i] * (1 + 3e-7 * std::cos(double(i))));
    reassoc[i] = float(ref[i] * (1 - 3e-7 * std::sin(double(i) * 1.3)));
    broken[i] = i % 97 == 0 ? orig[i] + 1.0f : orig[i];
  }
  std::vector<float> nonFiniteOriginal = orig;
  nonFiniteOriginal[5] = std::numeric_limits<float>::infinity(); // the original itself fails there
  Tolerance tol;
  auto verdict = [&](const std::vector<float> &v, const std::vector<float> &o, bool useBaseline,
                     bool fastMath) {
    CompareInput in;
    in.buffer = "arg 0";
    in.elem = ElemType::F32;
    in.variant = v.data();
    in.original = o.data();
    in.reference = ref.data();
    in.count = n;
    in.fastMath = fastMath;
    CompareBaseline b;
    if (useBaseline) {
      b = compareBaseline(in, tol);
      in.baseline = &b;
    }
    VerifyResult r;
    compareBuffer(in, tol, r);
    return std::make_pair(r.pass, r.badElements);
  };
  for (bool fastMath : {false, true}) {
    for (const std::vector<float> *v : {&orig, &reassoc, &broken})
      EXPECT_EQ(verdict(*v, orig, true, fastMath), verdict(*v, orig, false, fastMath));
    EXPECT_EQ(verdict(nonFiniteOriginal, nonFiniteOriginal, true, fastMath),
              verdict(nonFiniteOriginal, nonFiniteOriginal, false, fastMath));
  }
  EXPECT_TRUE(verdict(orig, orig, true, false).first);
  EXPECT_TRUE(verdict(reassoc, orig, true, false).first);
  EXPECT_FALSE(verdict(broken, orig, true, false).first);
  CompareInput self;
  self.elem = ElemType::F32;
  self.variant = self.original = orig.data();
  self.reference = ref.data();
  self.count = n;
  EXPECT_TRUE(compareBaseline(self, tol).originalPasses);
  self.variant = self.original = nonFiniteOriginal.data();
  EXPECT_FALSE(compareBaseline(self, tol).originalPasses);
}
