// Enablement (issue 18 item 2): the legal space lists steps that a
// gatekeeper step makes legal (drop-sync before fuse, restrict before
// vectorize), the screen that finds them agrees with deriving every
// prerequisite plan through the plan driver, and the strategies propose the
// composed plans in the listing's order, where they derive.
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Frontend/ParsedUnit.h"
#include "cudal1/Rewrite/LegalSpace.h"
#include "cudal1/Tune/PolicyStrategy.h"
#include "cudal1/Tune/Strategy.h"
#include "cudal1/Tune/Tuner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

using namespace cudal1;

namespace {

RewriteInput input(const std::string &relative) {
  std::string file = std::string(CUDAL1_SOURCE_DIR) + "/" + relative;
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << file;
  return {file, ss.str(), analysisArgs({"-x", "cuda", "--cuda-gpu-arch=sm_90"}, nullptr)};
}

const char *const kChain = "bench/corpus/l2_elementwise_chain_synced.cu";

/// Programs with gatekeeper candidates of both kinds (syncs between
/// launches, kernels whose restrict is legal beside refused steps) and some
/// without: the screen must say what deriving says on each.
const char *const kInputs[] = {
    "test/cudal1-opt/enablement.cu",
    kChain,
    "test/Passes/fuse.cu",
    "test/Passes/drop-sync.cu",
    "test/Passes/graph.cu",
    "test/Passes/streams.cu",
    "test/Passes/vectorize.cu",
    "test/Passes/interchange.cu",
    "bench/corpus/l2_elementwise_chain.cu",
    "bench/corpus/l3_gru_sequence.cu",
    "bench/corpus/l3_mlp_forward.cu",
    "bench/corpus/l3_rnn_tanh.cu",
    "bench/corpus/l3_conjugate_gradient_double.cu",
    "bench/corpus/l2_bias_dropout_add.cu",
    "bench/corpus/hpc_stencil2d_5pt.cu",
};

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

size_t enabledCount(const LegalSpace &s) {
  size_t n = 0;
  for (const auto *list : {&s.kernels, &s.launches, &s.loops})
    for (const LegalSite &site : *list)
      for (const LegalTransform &t : site.transforms)
        n += !t.enabledBy.empty();
  return n;
}

size_t kernelNamed(const TuneSpace &s, const std::string &name) {
  for (size_t k = 0; k < s.kernels.size(); ++k)
    if (s.kernels[k].name == name)
      return k;
  ADD_FAILURE() << "no kernel " << name;
  return 0;
}

const ComposedStep *composedOf(const KernelState &k, const std::string &text) {
  for (const ComposedStep &c : k.composed)
    if (planText(c.steps()) == text)
      return &c;
  return nullptr;
}

} // namespace

// The cheaper analysis is proved equal to the reference on these inputs:
// the same listing, enabled steps, prerequisites and parameter spaces.
TEST(Enablement, ScreenAgreesWithDerive) {
  size_t enabled = 0;
  for (const char *rel : kInputs) {
    RewriteInput in = input(rel);
    auto unit = ParsedUnit::parse(in.file, in.code, in.args);
    ASSERT_TRUE(bool(unit)) << rel << ": " << llvm::toString(unit.takeError());
    auto t0 = std::chrono::steady_clock::now();
    llvm::Expected<LegalSpace> off = legalSpace(**unit, in, Enablement::Off);
    double tOff = seconds(t0);
    t0 = std::chrono::steady_clock::now();
    llvm::Expected<LegalSpace> screen = legalSpace(**unit, in, Enablement::Screen);
    double tScreen = seconds(t0);
    t0 = std::chrono::steady_clock::now();
    llvm::Expected<LegalSpace> derive = legalSpace(**unit, in, Enablement::Derive);
    double tDerive = seconds(t0);
    ASSERT_TRUE(off && screen && derive) << rel;
    EXPECT_EQ(printLegalSpaceJson(*screen), printLegalSpaceJson(*derive)) << rel;
    enabled += enabledCount(*screen);
    std::printf("%-48s enabled %2zu  off %.2fs  screen %.2fs  derive %.2fs\n", rel,
                enabledCount(*screen), tOff, tScreen, tDerive);
  }
  EXPECT_GE(enabled, 8u); // the inputs do enable steps (both kinds)
}

// The worst case for the screen: N two-pointer kernels on fresh buffers,
// each launch followed by a synchronization. Every launch and every kernel
// is a candidate (drop-sync before fuse, restrict before vectorize); the
// screen still costs two more parses and one more question per refused
// step, not a parse per candidate.
TEST(Enablement, ScreenStaysLinear) {
  const int n = 1000;
  std::string code = "#include <cuda_runtime.h>\n";
  for (int i = 0; i < n; ++i)
    code += "__global__ void k" + std::to_string(i) +
            "(const float *a, float *b, float *c, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i < n) {\n    b[i] = a[i] + " +
            std::to_string(i % 97) + ".0f;\n    c[i] = a[i] * 2.0f;\n  }\n}\n";
  code += "int main() {\n  int n = 1 << 20;\n  float *x, *y, *z;\n"
          "  cudaMalloc(&x, n * 4);\n  cudaMalloc(&y, n * 4);\n  cudaMalloc(&z, n * 4);\n";
  for (int i = 0; i < n; ++i)
    code += "  k" + std::to_string(i) + "<<<(n + 255) / 256, 256>>>(x, y, z, n);\n" +
            "  cudaDeviceSynchronize();\n";
  code += "  return 0;\n}\n";
  RewriteInput in{"/tmp/cudal1-enablement-scaling.cu", code,
                  analysisArgs({"-x", "cuda", "--cuda-gpu-arch=sm_90"}, nullptr)};
  auto t0 = std::chrono::steady_clock::now();
  auto unit = ParsedUnit::parse(in.file, in.code, in.args);
  ASSERT_TRUE(bool(unit)) << llvm::toString(unit.takeError());
  double tParse = seconds(t0);
  t0 = std::chrono::steady_clock::now();
  llvm::Expected<LegalSpace> off = legalSpace(**unit, in, Enablement::Off);
  double tOff = seconds(t0);
  t0 = std::chrono::steady_clock::now();
  llvm::Expected<LegalSpace> screen = legalSpace(**unit, in, Enablement::Screen);
  double tScreen = seconds(t0);
  ASSERT_TRUE(off && screen);
  std::printf("%d kernels: parse %.2fs  listing off %.2fs  screen %.2fs, %zu enabled\n", n, tParse,
              tOff, tScreen, enabledCount(*screen));
  // n - 1 fuses (the last sync is needed before the return) and n
  // vectorizes, and one chain of fuse (count=3..8) per 8 launches of the
  // run, at its first launch (docs/passes/fuse.md).
  EXPECT_EQ(enabledCount(*screen), size_t(2 * n - 1 + n / 8));
  // Linear: a parse per candidate would be about n parses (minutes).
  EXPECT_LT(tScreen, 10 * (tParse + tOff) + 10);
}

// Every enabled step, applied after its prerequisites in the listed order,
// derives through the plan driver.
TEST(Enablement, ListedCompositionsDerive) {
  for (const char *rel : {"test/cudal1-opt/enablement.cu", kChain}) {
    RewriteInput in = input(rel);
    llvm::Expected<TuneSpace> space = collectTuneSpace(in);
    ASSERT_TRUE(bool(space)) << llvm::toString(space.takeError());
    size_t n = 0;
    for (const TuneKernel &k : space->kernels)
      for (const ComposedStep &c : k.composed) {
        ++n;
        llvm::Expected<std::string> src = applyPlan(in, planOf(c.steps()));
        EXPECT_TRUE(bool(src)) << planText(c.steps()) << ": "
                               << (src ? "" : llvm::toString(src.takeError()));
        // Without its prerequisites the step stays refused.
        llvm::Expected<std::string> alone = applyPlan(in, planOf({c.step}));
        EXPECT_FALSE(bool(alone)) << stepText(c.step);
        if (!alone)
          llvm::consumeError(alone.takeError());
      }
    EXPECT_GT(n, 0u) << rel;
  }
}

/// A derivation's source, or "refused: " and why.
std::string outcome(llvm::Expected<std::string> src) {
  return src ? *src : "refused: " + llvm::toString(src.takeError());
}

/// Plans that grow from one another: every prefix of `steps`, the whole
/// again, and the whole with its last step once more (refused there when
/// that step took a kernel's launches).
std::vector<Plan> growingPlans(const std::vector<PlanStep> &steps) {
  std::vector<Plan> plans;
  for (size_t n = 1; n <= steps.size(); ++n)
    plans.push_back(planOf(std::vector<PlanStep>(steps.begin(), steps.begin() + n)));
  plans.push_back(planOf(steps));
  std::vector<PlanStep> twice = steps;
  twice.push_back(steps.back());
  plans.push_back(Plan{twice});
  return plans;
}

// applyPlans spreads the plans of more than one step over threads, each with
// its own parse: every plan still gets the bytes applyPlan gives it (or the
// same refusal), reported once each and in order.
TEST(Enablement, ApplyPlansMatchesApplyPlanAcrossThreads) {
  RewriteInput in = input(kChain);
  llvm::Expected<TuneSpace> space = collectTuneSpace(in);
  ASSERT_TRUE(bool(space)) << llvm::toString(space.takeError());
  std::vector<Plan> plans;
  for (const TuneKernel &k : space->kernels) {
    for (const ComposedStep &c : k.composed) {
      plans.push_back(planOf(c.steps()));
      plans.push_back(planOf({c.step})); // refused alone
    }
    for (size_t j = 0; j < k.steps.size() && j < 2; ++j)
      plans.push_back(planOf({k.steps[j]}));
  }
  ASSERT_GT(plans.size(), 4u);
  std::vector<size_t> order;
  std::vector<std::string> got(plans.size());
  llvm::Error e = applyPlans(in, plans, [&](size_t i, llvm::Expected<std::string> src) {
    order.push_back(i);
    got[i] = outcome(std::move(src));
  });
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  ASSERT_EQ(order.size(), plans.size());
  for (size_t i = 0; i < order.size(); ++i)
    EXPECT_EQ(order[i], i);
  for (size_t i = 0; i < plans.size(); ++i)
    EXPECT_EQ(got[i], outcome(applyPlan(in, plans[i]))) << printPlan(plans[i]);
}

// Plans that begin with the same steps share the source after them, and
// applyPlans parses it once for all of them: as many parses as distinct
// prefixes that a plan continues from (the input's own included), each
// plan still getting applyPlan's bytes or its refusal, in order.
TEST(Enablement, PlansThatShareAPrefixShareItsParse) {
  RewriteInput in = input(kChain);
  llvm::Expected<TuneSpace> space = collectTuneSpace(in);
  ASSERT_TRUE(bool(space)) << llvm::toString(space.takeError());
  const TuneKernel &add = space->kernels[kernelNamed(*space, "addK")];
  ASSERT_GE(add.composed.size(), 2u);
  std::vector<PlanStep> chain = add.composed[1].steps();
  ASSERT_GE(chain.size(), 3u);
  // Every prefix of the chain, the chain twice, the chain with its last
  // step again (refused there), and the first drop-sync followed by each
  // of addK's own steps: three levels of a tree with shared nodes.
  std::vector<Plan> plans = growingPlans(chain);
  for (const PlanStep &s : add.steps)
    plans.push_back(planOf({chain[0], s}));
  std::set<std::string> continued;
  for (const Plan &p : plans)
    for (size_t n = 1; n < p.steps.size(); ++n)
      continued.insert(
          printPlan(Plan{std::vector<PlanStep>(p.steps.begin(), p.steps.begin() + n)}));
  std::vector<std::string> got(plans.size());
  std::vector<size_t> order;
  uint64_t before = ParsedUnit::parsesSoFar();
  llvm::Error e = applyPlans(in, plans, [&](size_t i, llvm::Expected<std::string> src) {
    order.push_back(i);
    got[i] = outcome(std::move(src));
  });
  uint64_t parses = ParsedUnit::parsesSoFar() - before;
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  EXPECT_EQ(parses, 1 + continued.size());
  EXPECT_LT(parses, 1 + plans.size()) << "fewer parses than one per plan";
  ASSERT_EQ(order.size(), plans.size());
  size_t refused = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    EXPECT_EQ(order[i], i);
    std::string want = outcome(applyPlan(in, plans[i]));
    refused += want.rfind("refused: ", 0) == 0;
    EXPECT_EQ(got[i], want) << printPlan(plans[i]);
  }
  EXPECT_GT(refused, 0u);
}

// A prefix cache shared by plans that grow from one another (as
// combinePlans' joinings do) gives every plan applyPlan's bytes or its
// refusal, also when a plan's prefix was applied by an earlier one.
TEST(Enablement, ThePrefixCacheGivesApplyPlansBytes) {
  RewriteInput in = input(kChain);
  llvm::Expected<TuneSpace> space = collectTuneSpace(in);
  ASSERT_TRUE(bool(space)) << llvm::toString(space.takeError());
  // addK's chain of 3 (three drop-syncs, then the fuse): every prefix,
  // growing; the whole plan again (from the cache); and the fuse once more
  // after it, refused at its last step (addK no longer runs).
  const TuneKernel &add = space->kernels[kernelNamed(*space, "addK")];
  ASSERT_GE(add.composed.size(), 2u);
  std::vector<Plan> plans = growingPlans(add.composed[1].steps());
  PlanPrefixCache cache;
  size_t refused = 0;
  for (const Plan &p : plans) {
    std::string got = outcome(applyPlan(in, p, cache));
    std::string want = outcome(applyPlan(in, p));
    refused += want.rfind("refused: ", 0) == 0;
    EXPECT_EQ(got, want) << printPlan(p);
  }
  EXPECT_EQ(refused, 1u); // the second fuse
}

// The chain program: each kernel's fuse is a composed step of that kernel,
// the loop's graph one of the host entry; a composed plan stays one part
// of its kernel's (the build applies the drop-sync with the fuse). The
// first launch also has the chain of 3 and of 4, after all three
// drop-syncs, last first.
TEST(Enablement, TheTuneSpaceCarriesCompositions) {
  llvm::Expected<TuneSpace> space = collectTuneSpace(input(kChain));
  ASSERT_TRUE(bool(space)) << llvm::toString(space.takeError());
  size_t a = kernelNamed(*space, "addK");
  const TuneKernel &add = space->kernels[a];
  ASSERT_EQ(add.composed.size(), 3u);
  EXPECT_EQ(planText(add.composed[0].steps()), "@sync#3: drop-sync; @addK: fuse");
  EXPECT_EQ(planText(add.composed[1].steps()),
            "@sync#5: drop-sync; @sync#4: drop-sync; @sync#3: drop-sync; @addK: fuse(count=3)");
  EXPECT_EQ(planText(add.composed[2].steps()),
            "@sync#5: drop-sync; @sync#4: drop-sync; @sync#3: drop-sync; @addK: fuse(count=4)");
  // The later kernels have the pair form only.
  EXPECT_EQ(space->kernels[kernelNamed(*space, "scaleSubK")].composed.size(), 1u);
  const TuneKernel &host = space->kernels.back();
  EXPECT_TRUE(host.host);
  ASSERT_EQ(host.composed.size(), 1u);
  EXPECT_EQ(planText(host.composed[0].steps()),
            "@sync#5: drop-sync; @sync#4: drop-sync; @sync#3: drop-sync; @loop#3: graph");
  Plan p = planOf(add.composed[0].steps());
  std::map<size_t, Plan> parts = space->partsOf(p);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts.begin()->first, a);
  EXPECT_EQ(parts.begin()->second, p);
  // A drop-sync alone is still the host's.
  parts = space->partsOf(planOf({add.composed[0].prerequisites[0]}));
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts.begin()->first, space->kernels.size() - 1);
  // With a step of another kernel after it, each keeps its own.
  Plan both = p;
  both.steps.push_back(space->kernels[kernelNamed(*space, "reluK")].steps[0]);
  EXPECT_EQ(space->partsOf(both).size(), 2u);
}

// On a hand-made space: the composition drop-sync; fuse is proposed first
// (fusion of an element-wise chain before access shape and launch shape),
// in the listing's order, and pairs include it.
TEST(Enablement, HeuristicProposesTheCompositionEarly) {
  auto step = [](const std::string &text) {
    llvm::Expected<Plan> p = parsePlan(text);
    EXPECT_TRUE(bool(p));
    return planOf(p->steps).steps.front();
  };
  KernelState k;
  k.name = "addK";
  k.steps = {step("@addK: launch-config(block=128)"), step("@addK: vectorize(width=16)"),
             step("@addK: restrict"), step("@addK: coarsen(factor=4)")};
  k.composed = {{{step("@sync#0: drop-sync")}, step("@addK: fuse")}};
  std::unique_ptr<SearchStrategy> h = makeStrategy("heuristic", 1);
  std::vector<Proposal> p = h->propose(k, 12);
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p[0].text(), "@sync#0: drop-sync; @addK: fuse");
  EXPECT_EQ(p[1].text(), "@addK: vectorize(width=16)");
  bool paired = false;
  for (const Proposal &x : p)
    paired |= x.text() == "@sync#0: drop-sync; @addK: fuse; vectorize(width=16)";
  EXPECT_TRUE(paired);
  // Once it verified faster, the greedy extension starts from it.
  Exemplar e;
  e.steps = p[0].steps;
  e.measured.outcome = Outcome::Ok;
  e.measured.timed = e.measured.faster = e.thisRun = true;
  e.measured.speedup = 1.6;
  k.exemplars.push_back(e);
  k.tried.insert(p[0].text());
  std::vector<Proposal> next = h->propose(k, 1);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].text(), "@sync#0: drop-sync; @addK: fuse; vectorize(width=16)");
}

// On the real space, through the tuner: the first plan for addK is the
// longest chain after its drop-syncs, and it derives (not refused).
TEST(Enablement, TheTunerDerivesTheHeuristicsComposition) {
  RewriteInput in = input(kChain);
  llvm::Expected<TuneSpace> space = collectTuneSpace(in);
  ASSERT_TRUE(bool(space)) << llvm::toString(space.takeError());
  std::unique_ptr<SearchStrategy> h = makeStrategy("heuristic", 1);
  Tuner t(in, *space, *h, TuneOptions{});
  std::vector<Candidate> c = t.proposeRound(1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(space->kernels[c[0].kernel].name, "addK");
  EXPECT_EQ(c[0].planText(),
            "@sync#5: drop-sync; @sync#4: drop-sync; @sync#3: drop-sync; @addK: fuse(count=4)");
  EXPECT_NE(c[0].variant.source.find("runs addK, scaleSubK, reluK then squareK"),
            std::string::npos);
  EXPECT_NE(c[0].variant.source.find("cudal1 drop-sync:"), std::string::npos);
}

// Random samples compositions as one move (prerequisites first); the
// policy's candidates include them.
TEST(Enablement, RandomAndPolicyCandidatesIncludeCompositions) {
  llvm::Expected<TuneSpace> space = collectTuneSpace(input(kChain));
  ASSERT_TRUE(bool(space)) << llvm::toString(space.takeError());
  const TuneKernel &add = space->kernels[kernelNamed(*space, "addK")];
  KernelState k;
  k.name = add.name;
  k.steps = add.steps;
  k.composed = add.composed;
  std::unique_ptr<SearchStrategy> r = makeStrategy("random", 7);
  unsigned fused = 0;
  for (const Proposal &p : r->propose(k, 40)) {
    std::string t = p.text();
    size_t f = t.find("fuse");
    if (f == std::string::npos)
      continue;
    ++fused;
    EXPECT_LT(t.find("@sync#3: drop-sync"), f) << t;
  }
  EXPECT_GT(fused, 0u);
  bool listed = false;
  for (const std::vector<PlanStep> &c : policyCandidates(k, 100000, false))
    listed |= planText(c) == "@sync#3: drop-sync; @addK: fuse";
  EXPECT_TRUE(listed);
  EXPECT_NE(composedOf(k, "@sync#3: drop-sync; @addK: fuse"), nullptr);
}
