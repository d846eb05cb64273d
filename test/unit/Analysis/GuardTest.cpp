// Guards in the model are structures {lhs, op, rhs} built from the AST, and
// the analysis reads them as such (issue 16 item 5).
#include "cudal1/Analysis/KernelAnalysis.h"
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Frontend/ParsedUnit.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace cudal1;

namespace {

std::unique_ptr<ParsedUnit> parse(const std::string &code) {
  auto u = ParsedUnit::parse("guards.cu", code, analysisArgs({}, nullptr));
  if (!u) {
    ADD_FAILURE() << llvm::toString(u.takeError());
    return nullptr;
  }
  return std::move(*u);
}

// The normalized global ids (fully parenthesized, a local replaced by its value).
const char *gx = "(((blockIdx.x * blockDim.x) + threadIdx.x))";
const char *gy = "(((blockIdx.y * blockDim.y) + threadIdx.y))";

TEST(GuardTest, ConjunctsAreSeparateComparisons) {
  auto u = parse("__global__ void k(float *a, int nx, int ny) {\n"
                 "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "  int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
                 "  if (x < nx && y <= ny) a[y * nx + x] = 0;\n"
                 "}\n");
  ASSERT_TRUE(u);
  const std::vector<MemAccess> &acc = u->model().kernels.at(0).accesses;
  ASSERT_EQ(acc.size(), 1u);
  const std::vector<Guard> &g = acc[0].guards;
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].lhs, gx);
  EXPECT_EQ(g[0].op, GuardOp::LT);
  EXPECT_EQ(g[0].rhs, "nx");
  EXPECT_EQ(g[1].lhs, gy);
  EXPECT_EQ(g[1].op, GuardOp::LE);
  EXPECT_EQ(g[1].rhs, "ny");
  EXPECT_EQ(g[1].str(), std::string(gy) + " <= ny");
}

TEST(GuardTest, EarlyReturnNegatesTheComparison) {
  auto u = parse("__global__ void k(float *a, int n) {\n"
                 "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "  if (i >= n || !(i != 3)) return;\n"
                 "  a[i] = 1;\n"
                 "}\n");
  ASSERT_TRUE(u);
  const std::vector<Guard> &g = u->model().kernels.at(0).accesses.at(0).guards;
  // !(i >= n || !(i != 3)) is i < n && i != 3.
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].op, GuardOp::LT);
  EXPECT_EQ(g[0].rhs, "n");
  EXPECT_EQ(g[1].op, GuardOp::NE);
  EXPECT_EQ(g[1].rhs, "3");
  for (GuardOp op : {GuardOp::LT, GuardOp::LE, GuardOp::GT, GuardOp::GE, GuardOp::EQ, GuardOp::NE})
    EXPECT_EQ(Guard({"a", op, "b"}).str(), std::string("a ") + toString(op) + " b");
}

// The analysis decides from the operator: `n > i` bounds i from above as
// `i < n` does, and `i != n` bounds nothing.
TEST(GuardTest, AnalysisReadsTheOperator) {
  auto u = parse("__global__ void lt(float *a, int n) {\n"
                 "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "  if (n > i) a[i] = 0;\n"
                 "}\n"
                 "__global__ void ne(float *a, int n) {\n"
                 "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "  if (i != n) a[i] = 0;\n"
                 "}\n");
  ASSERT_TRUE(u);
  mlir::MLIRContext ctx;
  const ProgramModel &m = u->model();
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.kernels[0].accesses.at(0).guards.at(0).op, GuardOp::GT);
  EXPECT_TRUE(analyzeKernel(m.kernels[0], ctx).guarded);
  EXPECT_EQ(m.kernels[1].accesses.at(0).guards.at(0).op, GuardOp::NE);
  EXPECT_FALSE(analyzeKernel(m.kernels[1], ctx).guarded);
}

} // namespace
