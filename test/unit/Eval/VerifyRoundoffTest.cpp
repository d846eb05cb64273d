// The tolerance rule on the numbers of test/gpu/roundoff/program.cu's
// `row_sums`, computed on the CPU: the program's own data (its generator,
// first 256 rows), the original's order (one thread adds a row from left to
// right), warp-rows' order (lane l adds columns l, l+L, ..., then the
// xor-butterfly of passes/runtime/warp-rows-device.cuh), and the double
// reference. Float additions round the same on the CPU as on the GPU (no
// contraction applies to `s += x[..]`).
//
// On the H100 (2026-12-06) the element-by-element rule rejected every
// warp-rows variant of these sums although the rewrite only reassociates
// them: each row's error is one draw of its roundoff, and the ratio of two
// such draws exceeds k = 4 on some rows. These tests show that the pooled
// rule (Verify.h, PooledError) accepts the reassociations, that the old rule
// would not have, and that the faults and a really less accurate order are
// still rejected.
#include "cudal1/Eval/Verify.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace cudal1;

namespace {
constexpr int kCount = 8192, kN = 24, kRows = 256, kCols = 16384;

float uniform(unsigned long long &s) { // program.cu's generator
  s = s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (float)((s >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

struct RowSums {
  std::vector<float> x; // kRows x kCols
  std::vector<double> reference;
  std::vector<float> original;
};

const RowSums &rowSums() {
  static RowSums d = [] {
    RowSums d;
    unsigned long long seed = 12345;
    for (size_t i = 0; i < (size_t)kCount * kN * kN; ++i) // the LU matrices come first
      uniform(seed);
    d.x.resize((size_t)kRows * kCols);
    for (int r = 0; r < kRows; ++r) {
      float *row = d.x.data() + (size_t)r * kCols;
      for (int j = 0; j < kCols / 2; ++j)
        row[j] = uniform(seed);
      for (int j = 0; j < kCols / 2; ++j)
        row[kCols / 2 + j] = -row[j] + 1e-3f * uniform(seed);
    }
    for (int r = 0; r < kRows; ++r) {
      const float *row = d.x.data() + (size_t)r * kCols;
      double ref = 0;
      float s = 0;
      for (int j = 0; j < kCols; ++j) {
        ref += row[j];
        s += row[j];
      }
      d.reference.push_back(ref);
      d.original.push_back(s);
    }
    return d;
  }();
  return d;
}

/// warp-rows(lanes=L): strided partial sums, then the xor butterfly; lane 0
/// writes. `truncateBits` > 0 rounds every partial sum to that many mantissa
/// bits (a less accurate accumulator than float).
std::vector<float> warpRows(int lanes, int truncateBits = 0) {
  const RowSums &d = rowSums();
  auto round = [&](float v) {
    if (!truncateBits)
      return v;
    int e;
    double m = std::frexp((double)v, &e);
    double scale = std::ldexp(1.0, truncateBits);
    return (float)std::ldexp(std::nearbyint(m * scale) / scale, e);
  };
  std::vector<float> out;
  for (int r = 0; r < kRows; ++r) {
    const float *row = d.x.data() + (size_t)r * kCols;
    std::vector<float> v(lanes, 0.0f);
    for (int l = 0; l < lanes; ++l)
      for (int j = l; j < kCols; j += lanes)
        v[l] = round(v[l] + row[j]);
    for (int off = lanes / 2; off > 0; off /= 2) {
      std::vector<float> next(lanes);
      for (int l = 0; l < lanes; ++l)
        next[l] = round(v[l] + v[l ^ off]);
      v = next;
    }
    out.push_back(v[0]);
  }
  return out;
}

VerifyResult judge(const std::vector<float> &variant) {
  const RowSums &d = rowSums();
  VerifyResult r;
  CompareInput in;
  in.buffer = "arg 1";
  in.elem = ElemType::F32;
  in.variant = variant.data();
  in.original = d.original.data();
  in.reference = d.reference.data();
  in.count = variant.size();
  compareBuffer(in, Tolerance(), r);
  return r;
}

/// Rows the element-by-element rule (before the pooled one) rejects.
int rejectedElementwise(const std::vector<float> &variant) {
  const RowSums &d = rowSums();
  Tolerance t;
  double maxRef = 0;
  for (double r : d.reference)
    maxRef = std::max(maxRef, std::fabs(r));
  int bad = 0;
  for (int i = 0; i < kRows; ++i) {
    double r = d.reference[i];
    double allowed = t.k * std::fabs(d.original[i] - r) + t.rel32 * std::fabs(r) + t.abs32 * maxRef;
    bad += std::fabs(variant[i] - r) > allowed;
  }
  return bad;
}
} // namespace

TEST(VerifyRoundoff, TheRowSumsAreSensitive) {
  // The data do what program.cu says: the sums are small against their
  // terms, so any order moves them by 1e-4 or more relative.
  const RowSums &d = rowSums();
  std::vector<float> warp = warpRows(32);
  int moved = 0;
  for (int i = 0; i < kRows; ++i)
    moved += std::fabs(warp[i] - d.original[i]) > 1e-4 * std::fabs(d.original[i]);
  EXPECT_GT(moved, kRows / 2);
}

TEST(VerifyRoundoff, ReassociatedRowSumsPassThePooledRule) {
  for (int lanes : {32, 16, 8}) {
    std::vector<float> warp = warpRows(lanes);
    // The old rule rejected them: some rows' ratio of errors is above k.
    EXPECT_GT(rejectedElementwise(warp), 0) << "lanes=" << lanes;
    VerifyResult r = judge(warp);
    EXPECT_TRUE(r.pass) << "lanes=" << lanes << ": " << r.badElements << " bad"
                        << (r.mismatches.empty()
                                ? ""
                                : ", first " + r.mismatches[0].got + " " + r.mismatches[0].allowed)
                        << (r.notes.empty() ? "" : "; " + r.notes[0]);
  }
}

TEST(VerifyRoundoff, FaultsAreStillRejected) {
  std::vector<float> warp = warpRows(32);
  // skip-work: one row never written (the poison is a NaN).
  std::vector<float> skipped = warp;
  skipped[17] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(judge(skipped).pass);
  // partial-write: one row's sum is its first half only.
  std::vector<float> partial = warp;
  const RowSums &d = rowSums();
  float half = 0;
  for (int j = 0; j < kCols / 2; ++j)
    half += d.x[(size_t)40 * kCols + j];
  partial[40] = half;
  EXPECT_FALSE(judge(partial).pass);
  // off-by-one: every row gets its neighbour's sum.
  std::vector<float> shifted(warp.begin() + 1, warp.end());
  shifted.push_back(warp.back());
  VerifyResult r = judge(shifted);
  EXPECT_FALSE(r.pass);
  EXPECT_GT(r.badElements, size_t(kRows / 2));
  // One row missing a term of its first half (|x| = 0.25): a lost addition.
  // (A lost residual, 1e-3, is below what the float original itself
  // resolves here, about 5e-4 per row: no rule can see it.)
  std::vector<float> lost = warp;
  lost[99] += 0.25f;
  EXPECT_FALSE(judge(lost).pass);
}

TEST(VerifyRoundoff, AReallyLessAccurateOrderIsRejected) {
  // Partial sums kept to 14 mantissa bits instead of 24: every row is about
  // 2^10 times further off than a float order. The rule rejects it.
  VerifyResult r = judge(warpRows(32, 14));
  EXPECT_FALSE(r.pass);
}

TEST(VerifyRoundoff, AUniformlyWorseVariantFailsByItsRmsError) {
  // Every row 0.9 k times the pooled allowance from the reference: each
  // element passes, but the buffer is worse than the original everywhere,
  // and its RMS error says so.
  const RowSums &d = rowSums();
  std::vector<double> errs;
  for (int i = 0; i < kRows; ++i)
    errs.push_back(std::fabs(d.original[i] - d.reference[i]));
  PooledError pool = poolError(errs, d.reference);
  Tolerance t;
  std::vector<float> worse;
  double sumPool = 0, sumO = 0;
  for (int i = 0; i < kRows; ++i) {
    double step = 0.9 * t.k * pool.at(d.reference[i]);
    worse.push_back(float(d.reference[i] + (i % 2 ? step : -step)));
    sumPool += pool.at(d.reference[i]) * pool.at(d.reference[i]);
    sumO += errs[i] * errs[i];
  }
  // The premise: the pooled allowance is well above the typical error.
  ASSERT_GT(std::sqrt(sumPool / sumO), 1.3);
  VerifyResult r = judge(worse);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.badElements, 0u);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("RMS error"), std::string::npos) << r.notes[0];
}

TEST(VerifyRoundoff, PooledScaleIsAHighPercentileNotTheMaximum) {
  // One element of the original 1000x off does not loosen the others.
  std::vector<double> errs(1000, 1e-6), refs(1000, 1.0);
  errs[3] = 1e-3;
  PooledError p = poolError(errs, refs);
  EXPECT_NEAR(p.magnitude, 1.0, 1e-12);
  EXPECT_NEAR(p.at(1.0), 1e-6, 1e-12);
  // Few elements: the largest.
  PooledError few = poolError({1e-6, 1e-3}, {1.0, 1.0});
  EXPECT_NEAR(few.at(1.0), 1e-3, 1e-12);
  EXPECT_EQ(poolError({}, {}).at(5.0), 0.0);
}
