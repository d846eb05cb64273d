// The Presburger dependence test between two launches' accesses.
#include "cudal1/Analysis/Dependence.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace cudal1;

namespace {

const char *gid = "(blockIdx.x * blockDim.x + threadIdx.x)";

AccessInstance access(std::string index, std::vector<Guard> guards = {}, unsigned dims = 1) {
  return AccessInstance{std::move(index), std::move(guards), dims, {}};
}

TEST(DependenceTest, SameIndexIsSameThread) {
  mlir::MLIRContext ctx;
  Guard g{gid, GuardOp::LT, "n"};
  auto r = testAccessPair(access(gid, {g}), access(gid, {g}), ctx);
  EXPECT_EQ(r.result, DependenceResult::SameThread) << r.detail;
}

TEST(DependenceTest, NeighbourReadIsCrossThreadWithWitness) {
  mlir::MLIRContext ctx;
  auto r = testAccessPair(access(gid), access(std::string("(") + gid + " + 1)"), ctx);
  EXPECT_EQ(r.result, DependenceResult::CrossThread);
  EXPECT_NE(r.detail.find("thread (x="), std::string::npos) << r.detail;
}

TEST(DependenceTest, GuardsMakeHalvesDisjoint) {
  mlir::MLIRContext ctx;
  Guard g{gid, GuardOp::LT, "n"};
  auto r = testAccessPair(access(gid, {g}), access(std::string("(n + ") + gid + ")", {g}), ctx);
  EXPECT_EQ(r.result, DependenceResult::Disjoint) << r.detail;
  // Without the guard on the first launch its threads can reach the upper half.
  auto u = testAccessPair(access(gid), access(std::string("(n + ") + gid + ")", {g}), ctx);
  EXPECT_EQ(u.result, DependenceResult::CrossThread);
}

TEST(DependenceTest, DifferentSymbolsAreNotAssumedEqual) {
  mlir::MLIRContext ctx;
  AccessInstance a = access(std::string("(") + gid + " + off)");
  a.rename = {{"off", "[offsetA]"}};
  AccessInstance b = access(std::string("(") + gid + " + off)");
  b.rename = {{"off", "[offsetB]"}};
  EXPECT_EQ(testAccessPair(a, b, ctx).result, DependenceResult::CrossThread);
  b.rename = {{"off", "[offsetA]"}};
  EXPECT_EQ(testAccessPair(a, b, ctx).result, DependenceResult::SameThread);
}

TEST(DependenceTest, UnusedLaunchDimensionsCount) {
  mlir::MLIRContext ctx;
  // In a 2-D launch, threads with different y write the same x element.
  auto r = testAccessPair(access(gid, {}, 2), access(gid, {}, 2), ctx);
  EXPECT_EQ(r.result, DependenceResult::CrossThread);
}

TEST(DependenceTest, GridStrideLoopsCompareLogicalIndices) {
  mlir::MLIRContext ctx;
  std::string i = std::string("(") + gid + " + $k0 * (blockDim.x * gridDim.x))";
  auto r = testAccessPair(access(i, {Guard{i, GuardOp::LT, "n"}}),
                          access(gid, {Guard{gid, GuardOp::LT, "n"}}), ctx);
  EXPECT_EQ(r.result, DependenceResult::SameThread) << r.detail;
}

TEST(DependenceTest, SymbolicStrideIsUnknown) {
  mlir::MLIRContext ctx;
  auto r = testAccessPair(access(std::string(gid) + " * cols"), access(gid), ctx);
  EXPECT_EQ(r.result, DependenceResult::Unknown);
  EXPECT_FALSE(r.detail.empty());
}

TEST(DependenceTest, OpaqueIndexIsUnknown) {
  mlir::MLIRContext ctx;
  auto r = testAccessPair(access("?load"), access(gid), ctx);
  EXPECT_EQ(r.result, DependenceResult::Unknown);
}

} // namespace
