// The effect encoding (issue 17 item 2): a plan applied with the rewrite
// engine, the result analysed again, and the difference featurized. Checked
// by value on plans whose effect is known: a wider block, wider loads,
// fused launches, a dropped synchronization, warp shuffles for atomics.
#include "cudal1/Tune/Effect.h"
#include "cudal1/Frontend/CompileFlags.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace cudal1;

namespace {

/// Two elementwise kernels launched back to back with a sync between
/// them, a reduction by atomics, a 256-thread block.
const char *const kProgram = R"cuda(
#include <cstdio>
__global__ void add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}
__global__ void scale(float *c, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = c[i] * s;
}
__global__ void sum(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(out, x[i]);
}
int main() {
  int n = 1 << 20;
  float *a, *b, *c, *out;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&c, n * sizeof(float));
  cudaMalloc(&out, sizeof(float));
  dim3 block(256);
  dim3 grid((n + 255) / 256);
  for (int r = 0; r < 10; ++r) {
    add<<<grid, block>>>(a, b, c, n);
    scale<<<grid, block>>>(c, 0.5f, n);
  }
  cudaDeviceSynchronize();
  sum<<<grid, block>>>(c, out, n);
  cudaDeviceSynchronize();
  float h = 0;
  cudaMemcpy(&h, out, sizeof(float), cudaMemcpyDeviceToHost);
  printf("%f\n", h);
  return 0;
}
)cuda";

RewriteInput input() {
  return {"/tmp/cudal1-effect-test.cu", kProgram,
          analysisArgs({"-x", "cuda", "--cuda-gpu-arch=sm_90"}, nullptr)};
}

PlanStep step(const std::string &kernel, const std::string &transform,
              std::vector<std::pair<std::string, std::string>> params = {}) {
  PlanStep s;
  s.scope.kernel = kernel;
  s.transform = transform;
  s.params = std::move(params);
  return s;
}

double get(const EffectFeatures &e, const std::string &name) {
  for (const auto &[n, v] : e)
    if (n == name)
      return v;
  ADD_FAILURE() << "no effect feature " << name;
  return -1e9;
}

PlanStep at(const char *what, int id, const std::string &transform) {
  PlanStep s;
  (std::string(what) == "sync"   ? s.scope.sync
   : std::string(what) == "loop" ? s.scope.loop
                                 : s.scope.launch) = id;
  s.transform = transform;
  return s;
}

/// Nonzero values only, as "name=value" (failure messages).
std::string nonzero(const EffectFeatures &e) {
  std::string s;
  for (const auto &[n, v] : e)
    if (v != 0)
      s += n + "=" + std::to_string(v) + " ";
  return s;
}

TEST(Effect, KnownPlansByValue) {
  EffectCache cache(input());
  ASSERT_NE(cache.input(), nullptr);
  EXPECT_EQ(cache.input()->kernels.size(), 3u);
  EXPECT_EQ(cache.input()->launches.size(), 3u);
  EXPECT_EQ(cache.input()->launches[0].blockThreads, 256); // dim3 block(256)
  EXPECT_EQ(cache.input()->syncs, 2);

  // A wider block: the launch shape changes, the grid is recomputed.
  const EffectFeatures *e =
      cache.effectOf("add", {step("add", "launch-config", {{"block", "512"}})});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->size(), effectFeatureNames().size());
  for (size_t i = 0; i < e->size(); ++i)
    EXPECT_EQ((*e)[i].first, effectFeatureNames()[i]);
  EXPECT_EQ(get(*e, "target_runs"), 1);
  EXPECT_EQ(get(*e, "block_threads"), 512);
  EXPECT_EQ(get(*e, "block_threads_log2_delta"), 1);
  EXPECT_EQ(get(*e, "grid_changed"), 1);
  EXPECT_EQ(get(*e, "launch_sites_delta"), 0);
  EXPECT_EQ(get(*e, "vector_bytes"), 4);
  EXPECT_EQ(get(*e, "vector_bytes_log2_delta"), 0) << nonzero(*e);

  // Wider loads: 16-byte accesses (float4), 4x the float's.
  e = cache.effectOf("add", {step("add", "vectorize", {{"width", "16"}})});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(get(*e, "vector_bytes"), 16);
  EXPECT_EQ(get(*e, "vector_bytes_log2_delta"), 2);
  EXPECT_EQ(get(*e, "block_threads_log2_delta"), 0) << nonzero(*e);

  // Fusion: one launch fewer, one kernel more (the fused one, where add's
  // work now runs), one kernel fewer launched.
  e = cache.effectOf("add", {at("launch", 0, "fuse")});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(get(*e, "kernels_delta"), 1);
  EXPECT_EQ(get(*e, "launch_sites_delta"), -1);
  EXPECT_EQ(get(*e, "launched_kernels_delta"), -1);
  EXPECT_EQ(get(*e, "moved"), 1);
  EXPECT_EQ(get(*e, "target_runs"), 1);
  EXPECT_EQ(get(*e, "global_reads_delta"), 1) << nonzero(*e); // a, b, then c again

  // Atomics to warp shuffles.
  e = cache.effectOf("sum", {step("sum", "warp-reduce")});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(get(*e, "atomics_delta"), -1);
  EXPECT_EQ(get(*e, "shuffles_delta"), 1) << nonzero(*e);

  // A synchronization removed, on the host entry (no target kernel).
  e = cache.effectOf("(host)", {at("sync", 0, "drop-sync")});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(get(*e, "syncs_delta"), -1);
  EXPECT_EQ(get(*e, "target_runs"), 0);
  EXPECT_EQ(get(*e, "launch_sites_delta"), 0) << nonzero(*e);

  // The loop as a CUDA graph: graph calls appear.
  e = cache.effectOf("(host)", {at("loop", 0, "graph")});
  ASSERT_NE(e, nullptr);
  EXPECT_GT(get(*e, "graph_calls_delta"), 0) << nonzero(*e);

  // The reduction handed to a library (CUB): a library call, and what is
  // left of the kernel is the one-thread kernel that adds the result in.
  e = cache.effectOf("sum", {at("launch", 2, "library")});
  ASSERT_NE(e, nullptr);
  EXPECT_GT(get(*e, "library_calls_delta"), 0) << nonzero(*e);
  EXPECT_EQ(get(*e, "moved"), 1);
  EXPECT_EQ(get(*e, "block_threads"), 1);
  EXPECT_EQ(get(*e, "atomics_delta"), -1) << nonzero(*e);

  // Kernel attributes and qualifiers.
  e = cache.effectOf("add",
                     {step("add", "launch-bounds", {{"threads", "256"}, {"min-blocks", "2"}})});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(get(*e, "launch_bounds_threads"), 256);
  EXPECT_EQ(get(*e, "launch_bounds_min_blocks"), 2);
  // A composition: both steps' effects.
  e = cache.effectOf("add", {step("add", "restrict"), step("add", "vectorize", {{"width", "16"}})});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(get(*e, "restrict_pointer_params_delta"), 3);
  EXPECT_EQ(get(*e, "vector_bytes"), 16) << nonzero(*e);
}

TEST(Effect, DeterministicCachedAndNoneForRefusedPlans) {
  std::vector<std::vector<PlanStep>> plans = {{step("add", "launch-config", {{"block", "128"}})},
                                              {at("launch", 0, "fuse")},
                                              {step("sum", "warp-reduce")}};
  EffectCache a(input()), b(input());
  for (const auto &p : plans) {
    const EffectFeatures *x = a.effectOf(p[0].scope.kernel.empty() ? "add" : p[0].scope.kernel, p);
    const EffectFeatures *y = b.effectOf(p[0].scope.kernel.empty() ? "add" : p[0].scope.kernel, p);
    ASSERT_TRUE(x && y) << planText(p);
    ASSERT_EQ(x->size(), y->size());
    for (size_t i = 0; i < x->size(); ++i) {
      EXPECT_EQ((*x)[i].first, (*y)[i].first);
      EXPECT_EQ(0, std::memcmp(&(*x)[i].second, &(*y)[i].second, sizeof(double)))
          << planText(p) << " " << (*x)[i].first;
    }
  }
  EXPECT_EQ(a.computed(), 3u);
  // Asked again: from the cache, the same object.
  EXPECT_EQ(a.effectOf("sum", plans[2]), a.cached("sum", plans[2]));
  EXPECT_EQ(a.computed(), 3u);
  // warp-reduce is not legal on a kernel without atomics: no effect, and
  // that is remembered too.
  std::vector<PlanStep> refused = {step("add", "warp-reduce")};
  EXPECT_EQ(a.cached("add", refused), nullptr);
  EXPECT_EQ(a.effectOf("add", refused), nullptr);
  EXPECT_EQ(a.effectOf("add", refused), nullptr);
  EXPECT_EQ(a.computed(), 4u);
  // An input that does not parse has no effects, and says so by null.
  EffectCache bad(RewriteInput{"/tmp/cudal1-effect-bad.cu", "__global__ void k( {",
                               analysisArgs({"-x", "cuda", "--cuda-gpu-arch=sm_90"}, nullptr)});
  EXPECT_EQ(bad.input(), nullptr);
  EXPECT_EQ(bad.effectOf("k", {step("k", "restrict")}), nullptr);
}

// computeAll: the same values as effectOf one plan after the other (the
// plans applied together and analysed a thread each), each computed once,
// a refused plan remembered as none.
TEST(Effect, ComputedTogetherAsOneAfterTheOther) {
  std::vector<std::vector<PlanStep>> plans = {
      {step("add", "launch-config", {{"block", "128"}})},
      {step("add", "restrict"), step("add", "vectorize", {{"width", "16"}})},
      {step("add", "warp-reduce")}, // refused: no atomics
      {step("add", "restrict")}};
  EffectCache one(input()), all(input());
  all.computeAll("add", plans);
  EXPECT_EQ(all.computed(), 4u);
  all.computeAll("add", plans); // nothing new
  EXPECT_EQ(all.computed(), 4u);
  for (const auto &p : plans) {
    const EffectFeatures *x = one.effectOf("add", p);
    const EffectFeatures *y = all.cached("add", p);
    ASSERT_EQ(x == nullptr, y == nullptr) << planText(p);
    if (!x)
      continue;
    ASSERT_EQ(x->size(), y->size());
    for (size_t i = 0; i < x->size(); ++i) {
      EXPECT_EQ((*x)[i].first, (*y)[i].first);
      EXPECT_EQ(0, std::memcmp(&(*x)[i].second, &(*y)[i].second, sizeof(double)))
          << planText(p) << " " << (*x)[i].first;
    }
  }
  EXPECT_EQ(all.cached("add", plans[2]), nullptr);
  EXPECT_EQ(all.effectOf("add", plans[2]), nullptr);
  EXPECT_EQ(all.computed(), 4u); // remembered, not computed again
}

} // namespace
